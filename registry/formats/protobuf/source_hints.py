"""How a ``.proto`` text spelled what its compiled descriptor normalises: type names, option
lists as written, which messages declare ``map_entry`` themselves. Confluent prints a text
schema as Wire parsed it; the printer (``printer.Printer``) reads these to do the same."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from registry.formats.protobuf.elements import Element, parse_elements, walk
from registry.formats.protobuf.options import Option
from registry.formats.protobuf.scan import matches_at, strip_comments

_FIELD = re.compile(
    r"(map\s*<\s*[.\w]+\s*,\s*([.\w]+)\s*>|[.\w]+)\s+(\w+)\s*=\s*(0[xX][0-9a-fA-F]+|\d+)"
)
_RPC = re.compile(
    r"\brpc\s+(\w+)\s*\(\s*(?:stream\s+)?([.\w]+)\s*\)\s*returns\s*\(\s*(?:stream\s+)?([.\w]+)\s*\)"
)
_EXTEND = re.compile(r"\bextend\s+([.\w]+)\s*\{")
_OPTION_STATEMENT = re.compile(r"\boption\b")
_SYNTAX = re.compile(r"^\s*syntax\s*=", re.MULTILINE)


@dataclass
class SourceHints:
    """How the source text spelled type names (keyed by field name and number, rpc name) and
    the options it wrote on each element (Confluent prints a text schema's options as Wire
    parsed them; the descriptor merges and reorders them)."""

    fields: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    rpcs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    extends: list[str] = field(default_factory=list)
    syntax_declared: bool = False
    #: the file-level options in the order written (custom ones by extension name)
    file_options: list[str] = field(default_factory=list)
    #: a field's options as written, by (message path, field name, number), when they set a
    #: custom option
    field_options: dict[tuple[str, str, int], list[Option]] = field(default_factory=dict)
    #: the file-level option statements as written, when one sets a custom option
    file_written: list[Option] | None = None
    #: the same for messages, by path in the file (``Outer.Inner``)
    message_written: dict[str, list[Option]] = field(default_factory=dict)
    #: enums (by path), enum constants (by enum path and name), services (by name) and rpcs
    #: (by service and rpc name): their options as written
    enum_written: dict[str, list[Option]] = field(default_factory=dict)
    constant_written: dict[tuple[str, str], list[Option]] = field(default_factory=dict)
    service_written: dict[str, list[Option]] = field(default_factory=dict)
    rpc_written: dict[tuple[str, str], list[Option]] = field(default_factory=dict)
    #: messages (by path) the text declares ``option map_entry = true`` on: Confluent prints
    #: them, and the fields of their type, as written (a map only in the normalized text)
    explicit_maps: set[str] = field(default_factory=set)
    #: oneofs (by message path and oneof name): their options as written
    oneof_written: dict[tuple[str, str], list[Option]] = field(default_factory=dict)
    #: custom options the descriptors do not hold (``Compiled.unresolved``)
    unresolved: frozenset[str] = frozenset()

    @classmethod
    def of(cls, text: str, unresolved: frozenset[str] = frozenset()) -> SourceHints:
        """``unresolved``: the custom options left out of the compiled text."""
        code = strip_comments(text)
        hints = cls(syntax_declared=bool(_SYNTAX.search(code)), unresolved=unresolved)
        for match in _FIELD.finditer(code):
            spelled = match.group(2) or match.group(1)
            number = int(match.group(4), 0)
            hints.fields.setdefault((match.group(3), number), []).append(spelled)
        for match in matches_at(_RPC, code, "rpc"):
            hints.rpcs.setdefault(match.group(1), []).append((match.group(2), match.group(3)))
        hints.extends = [m.group(1) for m in matches_at(_EXTEND, code, "extend")]
        # a ``[...]`` without a custom option prints the same from the descriptor
        if _OPTION_STATEMENT.search(code) or ("[" in code and "(" in code) or unresolved:
            hints._written(parse_elements(text))
        return hints

    def _written(self, root: Element) -> None:
        self.file_options = list(dict.fromkeys(option_key(n) for n in root.written.names))
        if self._custom(root.written.options):
            self.file_written = root.written.options
        self._fields("", root)
        for path, element in walk(root):
            options = element.written.options
            if element.kind in ("message", "group", "oneof", "extend"):
                if element.kind == "message" and self._custom(options):
                    self.message_written[path] = options  # type: ignore[assignment]
                if element.kind == "message" and "map_entry" in element.written.names:
                    self.explicit_maps.add(path)
                elif element.kind == "oneof" and options:
                    self.oneof_written[(path, element.name)] = options
                self._fields(path, element)
            elif element.kind == "enum":
                if options:
                    self.enum_written[path] = options
                for constant in element.fields:
                    if constant.written.options:
                        self.constant_written[(path, constant.name)] = constant.written.options
            elif element.kind == "service" and options:
                self.service_written[path] = options
            elif element.kind == "rpc" and options:
                service, _, rpc = path.rpartition(".")
                self.rpc_written[(service, rpc)] = options

    def _fields(self, path: str, element: Element) -> None:
        for f in element.fields:
            if self._custom(f.written.options):
                self.field_options.setdefault((path, f.name, f.number), f.written.options)  # type: ignore[arg-type]

    def _custom(self, options: list[Option] | None) -> bool:
        """Whether ``options`` set a custom option (printed as written)."""
        return bool(options) and any(
            o.parenthesized or o.name in self.unresolved
            for o in options  # type: ignore[union-attr]
        )


def option_key(written: str) -> str:
    """The name an option statement sets: ``(.a.b)`` -> ``a.b``, ``java_package`` as is."""
    name = re.sub(r"\s+", "", written)
    if name.startswith("("):
        name = name[1 : name.index(")")]
    return name.lstrip(".")
