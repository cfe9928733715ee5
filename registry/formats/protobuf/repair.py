"""What Confluent accepts and protoc refuses, made compilable.

Confluent parses a ``.proto`` text with Square Wire's ``ProtoParser`` and only resolves the
types it needs; protoc checks much more. So that the registry accepts the same schemas, the
compiler retries a refused text after one of these repairs, each undone on the descriptors
protoc returns:

- an import that no reference and no bundled file provides: a stub file of that name that
  publicly imports every reference (Confluent resolves types from all references, whatever the
  import is called), or nothing when there are none;
- a custom option whose extension is not imported: ``confluent/meta.proto`` imported for the
  ``confluent.*_meta`` options; for any other option with a scalar value (or a scalar sub-field,
  ``(foo.bar).baz = 1``), an extension of that name declared in a generated file;
- a field number used twice in a message: compiled under a free number, then restored;
- ``option map_entry = true`` on a message (Wire does not check it): compiled without it, then
  restored;
- an rpc named like the message type it takes or returns (protoc resolves the type to the rpc):
  compiled under another name, then restored;
- a custom option set to an aggregate or a list (``= { a: 1 }``, ``= [1, 2]``) that nothing
  declares, or an option without parentheses that no options message has (``otherOption =
  "foo"``): left out of the compiled text (the printer prints it as written);
- a proto3 enum whose first value is not zero: compiled with a zero value before it, removed
  afterwards.

Everything else protoc refuses stays refused, with protoc's message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from google.protobuf.descriptor_pb2 import (
    DescriptorProto,
    EnumDescriptorProto,
    FileDescriptorProto,
)

from registry.formats.protobuf.option_text import unquoted
from registry.formats.protobuf.scan import matches_at, strip_comments

#: the generated file declaring custom options nothing imports
OPTIONS_FILE = "__registry_unresolved_options__.proto"
META_FILE = "confluent/meta.proto"
META_OPTIONS = frozenset(
    {
        "confluent.file_meta",
        "confluent.message_meta",
        "confluent.field_meta",
        "confluent.enum_meta",
        "confluent.enum_value_meta",
    }
)
#: protobuf's descriptor.proto options messages allow extensions from 1000 up
_FIRST_EXTENSION = 100_000_000
#: numbers a duplicated field is compiled under (below the largest field number)
_FIRST_PLACEHOLDER = 536_870_000
_IMPORT = re.compile(r'\bimport\s+(?:(public|weak)\s+)?"([^"\n]*)"\s*;')
_CODE_TOKEN = re.compile(
    r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|//[^\n]*|/\*.*?(?:\*/|\Z)"
    r"|\b(message|enum|service|oneof|extend|rpc)\b\s*([.\w]*)|(\{)|(\})|(\[)|(\])",
    re.DOTALL,
)
_SCALAR = re.compile(
    r"\s*(?:\.\s*([A-Za-z_][\w.]*))?\s*=\s*"
    r"(true|false|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|[-+]?(?:0[xX][0-9a-fA-F]+|"
    r"\d+\.\d*(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)|\.\d+(?:[eE][-+]?\d+)?|\d+|inf|nan)"
    r"|[A-Za-z_]\w*)(?![\w.])"
)
#: block keyword -> the options message its ``option`` statements set
_STATEMENT_OPTIONS = {
    None: "FileOptions",
    "message": "MessageOptions",
    "enum": "EnumOptions",
    "service": "ServiceOptions",
    "rpc": "MethodOptions",
    "oneof": "OneofOptions",
}


@dataclass
class Repairs:
    """The repairs applied so far and how to undo them on the compiled descriptors."""

    #: extra files (name -> text) written beside the schema
    files: dict[str, str] = field(default_factory=dict)
    #: imports appended to the schema, removed from its descriptor afterwards
    added_imports: list[str] = field(default_factory=list)
    #: (message full name, placeholder number, original number)
    numbers: list[tuple[str, int, int]] = field(default_factory=list)
    #: full names of messages whose ``map_entry`` option was removed
    map_entries: list[str] = field(default_factory=list)
    #: (service full name, placeholder name, original name)
    rpcs: list[tuple[str, str, str]] = field(default_factory=list)
    #: (package, name, options message) -> scalar type, or sub-field -> scalar type
    options: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)
    #: custom options set to an aggregate or a list that nothing declares: left out of the
    #: compiled text (the printer prints them as written)
    unresolved: set[str] = field(default_factory=set)
    #: zero values added before a proto3 enum's first (non-zero) value, removed afterwards
    zero_values: list[str] = field(default_factory=list)

    def undo(self, fd: FileDescriptorProto) -> None:
        """Restore what the repairs changed in the schema's own descriptor."""
        for name in self.added_imports:
            _remove_dependency(fd, name)
        for full, placeholder, number in self.numbers:
            message = _message(fd, full)
            if message is not None:
                for f in message.field:
                    if f.number == placeholder:
                        f.number = number
        if self.zero_values:
            _remove_enum_values(fd, set(self.zero_values))
        for full in self.map_entries:
            message = _message(fd, full)
            if message is not None:
                message.options.map_entry = True
        for full, placeholder, name in self.rpcs:
            for service in fd.service:
                if _join(fd.package, service.name) == full:
                    for method in service.method:
                        if method.name == placeholder:
                            method.name = name


def missing_imports(text: str, available: Iterable[str], exists: object) -> list[str]:
    """Imports of ``text`` that neither ``available`` (reference names) nor a bundled file
    (``exists(name)``) provides."""
    known = set(available)
    return [
        m.group(2)
        for m in matches_at(_IMPORT, strip_comments(text), "import")
        if m.group(2) not in known and not exists(m.group(2))  # type: ignore[operator]
    ]


def import_stub(references: Sequence[str]) -> str:
    """A file that makes every reference's types visible to whoever imports it."""
    return 'syntax = "proto3";\n' + "".join(f'import public "{r}";\n' for r in references)


def repair(text: str, error: tuple[int, int, str], package: str, repairs: Repairs) -> str | None:
    """``text`` changed so that protoc's first ``error`` (line, column, both 1-based, and
    message) goes away, recording how to undo it; None when it is not a repair we make."""
    line, column, message = error
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    offset = sum(len(x) + 1 for x in lines[: line - 1]) + max(column - 1, 0)
    match = re.match(r'Field number (\d+) has already been used in "([\w.]+)"', message)
    if match:
        return _renumber(text, offset, int(match[1]), match[2], repairs)
    if message.startswith("map_entry should not be set explicitly"):
        return _drop_map_entry(text, offset, package, repairs)
    match = re.match(r'"([\w.]+)" is not a message type', message)
    if match:
        return _rename_rpc(text, offset, match[1], package, repairs)
    match = re.match(r'Option "\(\.?([\w.]+)\)(?:\.[\w.]+)?" unknown', message)
    if match:
        return _declare_option(text, offset, match[1], repairs)
    match = re.match(r'Option "([A-Za-z_]\w*)" unknown', message)
    if match:  # a plain name no options message has: Confluent ignores it
        return _leave_out(text, match[1], repairs, plain=True)
    match = re.match(r'Option "\(\.?([\w.]+)\)" was already set', message)
    if match and any(k[0:2] == match[1].rpartition(".")[::2] for k in repairs.options):
        # a list (``= [1, 2]``, expanded) of an option declared as a single scalar
        return _leave_out(text, match[1], repairs)
    if message.startswith("The first enum value must be zero"):
        return _add_zero_value(text, offset, repairs)
    if message.startswith("Expected option value") and text[offset : offset + 1] == "[":
        return _expand_list(text, offset)
    return None


# ---- the repairs ------------------------------------------------------------------------------

_OPTION_NAME_BEFORE = re.compile(r"(\(\s*\.?[\w.]+\s*\)(?:\s*\.\s*[\w.]+)?|[\w.]+)\s*=\s*$")


def _expand_list(text: str, offset: int) -> str | None:
    """``name = [a, b]`` (Wire's list form of a repeated option) as protoc's ``name = a,
    name = b`` (in ``[...]``) or two ``option`` statements; the printer reads the original."""
    name = _OPTION_NAME_BEFORE.search(text[:offset])
    end = _closing(text, offset)
    if name is None or end is None:
        return None
    items = _split_top_level(text[offset + 1 : end])
    if not items:
        return None
    statement = re.search(r"\boption\s+$", text[: name.start()])
    joiner = "; option " if statement else ", "
    replacement = joiner.join(f"{name[1]} = {item.strip()}" for item in items)
    return text[: name.start()] + replacement + text[end + 1 :]


def _closing(text: str, start: int) -> int | None:
    for i, ch, depth in unquoted(text, start):
        if ch in "]}" and depth == 0:
            return i
    return None


def _split_top_level(text: str) -> list[str]:
    """``text``'s non-blank items between the commas outside strings, brackets and braces."""
    items, begin = [], 0
    for i, ch, depth in unquoted(text, 0):
        if ch == "," and depth == 0:
            items.append(text[begin:i])
            begin = i + 1
    items.append(text[begin:])
    return [item for item in items if item.strip()]


def _add_zero_value(text: str, offset: int, repairs: Repairs) -> str | None:
    """A proto3 enum whose first value is not zero (Wire does not check it): compiled with a
    zero value before it."""
    blocks = _blocks(text, offset)
    if not blocks or blocks[-1][0] != "enum":
        return None
    pattern = re.compile(r"\benum\s+" + re.escape(blocks[-1][1]) + r"\s*\{")
    openings = list(pattern.finditer(text, 0, offset))
    if not openings:
        return None
    opening = openings[-1]
    name = f"REGISTRY_ZERO_VALUE_{len(repairs.zero_values)}__"
    repairs.zero_values.append(name)
    return text[: opening.end()] + f" {name} = 0;" + text[opening.end() :]


def _remove_enum_values(fd: FileDescriptorProto, names: set[str]) -> None:
    def strip(enums: Iterable[EnumDescriptorProto]) -> None:
        for enum in enums:
            kept = [v for v in enum.value if v.name not in names]
            if len(kept) != len(enum.value):
                del enum.value[:]
                enum.value.extend(kept)

    def walk(messages: Iterable[DescriptorProto]) -> None:
        for message in messages:
            strip(message.enum_type)
            walk(message.nested_type)

    strip(fd.enum_type)
    walk(fd.message_type)


def _renumber(text: str, offset: int, number: int, message: str, repairs: Repairs) -> str | None:
    token = re.match(r"0[xX][0-9a-fA-F]+|\d+", text[offset:])
    if token is None or int(token[0], 0) != number:
        return None
    placeholder = _FIRST_PLACEHOLDER + len(repairs.numbers)
    repairs.numbers.append((message, placeholder, number))
    return text[:offset] + str(placeholder) + text[offset + len(token[0]) :]


def _drop_map_entry(text: str, offset: int, package: str, repairs: Repairs) -> str | None:
    start = text.rfind("option", 0, offset + 1)
    statement = re.compile(r"option\s+map_entry\s*=\s*true\s*;").match(text, start)
    blocks = _blocks(text, offset)
    if statement is None or not blocks or any(b[0] != "message" for b in blocks):
        return None
    repairs.map_entries.append(_join(package, ".".join(b[1] for b in blocks)))
    return text[:start] + " " * (statement.end() - start) + text[statement.end() :]


def _rename_rpc(
    text: str, offset: int, type_name: str, package: str, repairs: Repairs
) -> str | None:
    blocks = _blocks(text, offset)
    if not blocks or blocks[-1][0] != "service":
        return None
    rpc = None
    for candidate in re.finditer(r"\brpc\s+(\w+)", text[:offset]):
        rpc = candidate
    if rpc is None or rpc[1] != type_name.rsplit(".", 1)[-1]:
        return None
    placeholder = f"{rpc[1]}__registry_rpc_{len(repairs.rpcs)}"
    repairs.rpcs.append((_join(package, blocks[-1][1]), placeholder, rpc[1]))
    return text[: rpc.start(1)] + placeholder + text[rpc.end(1) :]


def _declare_option(text: str, offset: int, name: str, repairs: Repairs) -> str | None:
    if name in META_OPTIONS:
        if META_FILE in repairs.added_imports:
            return None
        return _add_import(text, META_FILE, repairs)
    close = text.find(")", offset)
    value = _SCALAR.match(text, close + 1) if close >= 0 else None
    if value is None and name not in repairs.unresolved:
        return _leave_out(text, name, repairs)
    if value is None:
        return None
    kind = _options_kind(text, offset)
    if kind is None:
        return None
    # an undotted name (``(my_option)``) is declared without a package (Confluent 8.x accepts
    # it as it accepts a dotted one: Wire does not resolve options)
    package, _, simple = name.rpartition(".")
    key = (package, simple, kind)
    if any(k[:2] == key[:2] and k != key for k in repairs.options):
        return None  # the same name on two kinds of element: one extension cannot do both
    subfields = repairs.options.setdefault(key, {})
    subfield = value[1] or ""
    if "." in subfield or subfield in subfields:
        return None
    if subfields and ("" in subfields) != (subfield == ""):
        return None  # set both as a whole and by sub-field
    subfields[subfield] = _scalar_type(value[2])
    for file_name in _write_options_files(repairs):
        if file_name not in repairs.added_imports:
            text = _add_import(text, file_name, repairs)
    return text


def _write_options_files(repairs: Repairs) -> list[str]:
    """The generated files declaring ``repairs.options`` (one per package), rewritten."""
    names = []
    for index, pkg in enumerate(sorted({k[0] for k in repairs.options})):
        file_name = OPTIONS_FILE.replace(".proto", f"_{index}.proto")
        repairs.files[file_name] = _options_file(pkg, repairs.options)
        names.append(file_name)
    return names


def _leave_out(text: str, name: str, repairs: Repairs, *, plain: bool = False) -> str | None:
    """``text`` with every assignment of the custom option ``name`` (``plain``: of the option
    named without parentheses) blanked out, lines and columns kept; the option no longer
    declared."""
    if name in repairs.unresolved:
        return None
    repairs.unresolved.add(name)
    package, _, simple = name.rpartition(".")
    for key in [k for k in repairs.options if k[:2] == (package, simple)]:
        del repairs.options[key]
        _write_options_files(repairs)
    chars = list(text)
    code = list(_masked(text))
    if plain:
        option = re.compile(r"(?<![\w.)])" + re.escape(name) + r"(?=\s*[=.])")
    else:
        option = re.compile(r"\(\s*\.?\s*" + re.escape(name) + r"\s*\)")
    blanked = False
    for match in option.finditer("".join(code)):
        masked = "".join(code)
        if masked[match.start()] == " ":
            continue  # inside an assignment blanked already
        span = _assignment(masked, match.start())
        if span is None:
            continue  # not an option assignment (a field of that name, a map key)
        blanked = True
        for i in range(*span):
            if chars[i] != "\n":
                chars[i] = code[i] = " "
    return "".join(chars) if blanked else None


def _masked(text: str) -> str:
    """``text`` with comments blanked and string contents replaced, lengths kept."""

    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        if token[0] in "\"'":
            return token[0] + re.sub(r"[^\n]", "x", token[1:-1]) + token[-1]
        return re.sub(r"[^\n]", " ", token)

    return re.sub(
        r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|//[^\n]*|/\*.*?(?:\*/|\Z)",
        blank,
        text,
        flags=re.DOTALL,
    )


def _assignment(code: str, start: int) -> tuple[int, int] | None:
    """The span to blank for the option assignment whose name starts at ``start``: the whole
    ``option ...;`` statement, or the item of a ``[...]`` list with one comma beside it (the
    whole list when it is the only item)."""
    before = code[:start].rstrip()
    if before.endswith("option") and not before[-7:-6].isalnum():
        for i, ch, depth in unquoted(code, start):
            if ch == ";" and depth == 0:
                return len(before) - len("option"), i + 1
        return None
    if not before or before[-1] not in "[,":
        return None
    for i, ch, depth in unquoted(code, start):
        if depth == 0 and ch == ",":
            return (len(before) - 1, i) if before[-1] == "," else (start, i + 1)
        if depth < 0 and ch == "]":
            if before[-1] == ",":
                return len(before) - 1, i
            return len(before) - 1, i + 1
    return None


def _add_import(text: str, name: str, repairs: Repairs) -> str:
    repairs.added_imports.append(name)
    return text + f'\nimport "{name}";\n'


def _options_file(package: str, options: dict[tuple[str, str, str], dict[str, str]]) -> str:
    """The extensions of ``package`` the schema uses without importing their definition."""
    out = ['syntax = "proto2";\n']
    if package:
        out.append(f"package {package};\n")
    out.append('import "google/protobuf/descriptor.proto";\n')
    for number, ((pkg, name, kind), subfields) in enumerate(options.items(), _FIRST_EXTENSION):
        if pkg != package:
            continue
        types = {}
        for sub, type_ in subfields.items():
            if type_.startswith("enum "):
                enum = f"{name}__{sub}__RegistryEnum"
                out.append(f"enum {enum} {{\n  {type_[5:]} = 0;\n}}\n")
                type_ = enum
            types[sub] = type_
        declared = types.get("")
        if declared is None:
            declared = f"{name}__RegistryOption"
            body = "".join(
                f"  optional {type_} {sub} = {i};\n"
                for i, (sub, type_) in enumerate(sorted(types.items()), start=1)
            )
            out.append(f"message {declared} {{\n{body}}}\n")
        out.append(
            f"extend google.protobuf.{kind} {{\n  optional {declared} {name} = {number};\n}}\n"
        )
    return "".join(out)


def _scalar_type(literal: str) -> str:
    if literal in ("true", "false"):
        return "bool"
    if literal[0].isalpha() or literal[0] == "_":
        return "enum " + literal  # an enum value: an enum with just that value is declared
    if literal[0] in "\"'":
        return "string"
    if re.fullmatch(r"[-+]?(0[xX][0-9a-fA-F]+|\d+)", literal):
        return "int64"
    return "double"


# ---- source structure ---------------------------------------------------------------------------


def _blocks(text: str, offset: int) -> list[tuple[str | None, str]]:
    """The named blocks (keyword, name) enclosing ``offset``; a ``[...]`` or other brace is
    ``(None, "[")`` / ``(None, "{")``."""
    stack: list[tuple[str | None, str]] = []
    pending: tuple[str, str] | None = None
    for token in _CODE_TOKEN.finditer(text, 0, offset):
        keyword, name, opened, closed, bracket, unbracket = token.groups()
        if keyword:
            pending = (keyword, name)
        elif opened:
            stack.append(pending if pending is not None else (None, "{"))
            pending = None
        elif closed:
            if stack:
                stack.pop()
            pending = None
        elif bracket:
            stack.append((None, "["))
        elif unbracket:
            if stack:
                stack.pop()
        elif token.group(0)[:1] not in "\"'/" and pending is not None:
            pending = None
    return [b for b in stack if b[0] is not None or b[1] == "["]


def _options_kind(text: str, offset: int) -> str | None:
    """Which options message the option at ``offset`` sets."""
    blocks = _blocks(text, offset)
    if blocks and blocks[-1] == (None, "["):
        owner = next((b[0] for b in reversed(blocks[:-1]) if b[0] is not None), None)
        if owner == "enum":
            return "EnumValueOptions"
        if owner in ("message", "oneof", "extend"):
            return "FieldOptions"
        return None
    named = [b for b in blocks if b[0] is not None]
    owner = named[-1][0] if named else None
    return _STATEMENT_OPTIONS.get(owner)


def _join(package: str, name: str) -> str:
    return f"{package}.{name}" if package else name


def _message(fd: FileDescriptorProto, full: str) -> DescriptorProto | None:
    def walk(messages: Iterable[DescriptorProto], scope: str) -> DescriptorProto | None:
        for message in messages:
            name = _join(scope, message.name)
            if name == full:
                return message
            found = walk(message.nested_type, name)
            if found is not None:
                return found
        return None

    return walk(fd.message_type, fd.package)


def _remove_dependency(fd: FileDescriptorProto, name: str) -> None:
    names = list(fd.dependency)
    if name not in names:
        return
    index = len(names) - 1 - names[::-1].index(name)
    public = [i - (i > index) for i in fd.public_dependency if i != index]
    weak = [i - (i > index) for i in fd.weak_dependency if i != index]
    del fd.dependency[index]
    del fd.public_dependency[:]
    fd.public_dependency.extend(public)
    del fd.weak_dependency[:]
    fd.weak_dependency.extend(weak)
