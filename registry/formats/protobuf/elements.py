"""The elements of a ``.proto`` text as Square Wire's ``ProtoParser`` sees them: messages,
fields, oneofs, enums and their constants, services and rpcs, each with its options as written
and where they stand in the text.

Confluent works on this tree, not on a compiled descriptor: it prints options as parsed
(``source_hints.SourceHints``), finds inline tags in it (``ProtobufSchema.inlineTaggedEntities``)
and rewrites it to add or remove tags (``modifySchemaTags``). The text has been compiled by
protoc already, so the scan is lenient: what it does not understand it skips.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from registry.formats.protobuf.option_text import field_options
from registry.formats.protobuf.options import Option

_TOKEN = re.compile(
    r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|//[^\n]*|/\*.*?(?:\*/|\Z)"
    r"|\.?[A-Za-z_][\w.]*|[-+]?\.?\d[\w.+-]*|\S",
    re.DOTALL,
)
_OPTION_NAME = re.compile(r"\s*(\(\s*\.?\s*[\w.]+\s*\)|[\w.]+)")
_BLOCKS = ("message", "enum", "service", "extend", "oneof")
_SKIPPED = ("syntax", "edition", "package", "import", "reserved", "extensions")


@dataclass
class Written:
    """Options written on one element: ``None`` when one could not be read."""

    options: list[Option] | None = field(default_factory=list)
    #: (start, end) of each ``option ...;`` statement, or of the ``[...]`` list
    spans: list[tuple[int, int]] = field(default_factory=list)
    #: the name each ``option`` statement sets, as written (``(foo.bar)``, ``java_package``)
    names: list[str] = field(default_factory=list)

    def add(self, text: str | None, span: tuple[int, int]) -> None:
        self.spans.append(span)
        parsed = field_options(text) if text is not None else None
        if parsed is None or self.options is None:
            self.options = None
        else:
            self.options.extend(parsed)


@dataclass
class FieldElement:
    name: str
    number: int
    written: Written
    #: where ``[...]`` would go: just before the ``;`` (or the group's ``{``)
    end: int


@dataclass
class Element:
    """A message, enum, service, rpc, oneof or extend block (``kind``)."""

    kind: str
    name: str
    written: Written = field(default_factory=Written)
    #: just after the ``{`` (where a first ``option`` statement may go), -1 without a body
    body: int = -1
    fields: list[FieldElement] = field(default_factory=list)
    children: list[Element] = field(default_factory=list)


class _Tokens:
    """The tokens of a text (comments left out). Where each stands in the text is worked out
    only when ``positions`` is set (a tag rewrite needs it, printing hints do not)."""

    def __init__(self, text: str, *, positions: bool) -> None:
        self.text = text
        raw: list[str] = _TOKEN.findall(text)
        self.tokens = [t for t in raw if not t.startswith(("//", "/*"))]
        self.starts: list[int] = []
        if positions:
            at = 0
            for token in raw:
                at = text.index(token, at)
                if not token.startswith(("//", "/*")):
                    self.starts.append(at)
                at += len(token)
        self.size = len(self.tokens)
        self.i = 0

    def peek(self, ahead: int = 0) -> str:
        index = self.i + ahead
        return self.tokens[index] if index < self.size else ""

    def next(self) -> str:
        self.i += 1
        return self.tokens[self.i - 1] if self.i <= self.size else ""

    def start(self, index: int) -> int:
        """Where token ``index`` starts (0 without positions)."""
        if not self.starts:
            return 0
        return self.starts[index] if index < self.size else len(self.text)

    def end(self, index: int) -> int:
        if not self.starts:
            return 0
        return self.starts[index] + len(self.tokens[index]) if index < self.size else len(self.text)

    def joined(self, first: int, last: int) -> str:
        """Tokens ``first`` to ``last`` (excluded) as one text."""
        return " ".join(self.tokens[first:last])

    def skip_statement(self) -> int:
        """Past the ``;`` ending the statement (outside brackets and braces), or to the
        ``}`` closing the block; the index just past the statement's last token."""
        depth = 0
        while self.i < self.size:
            token = self.next()
            if token in ("{", "[", "("):
                depth += 1
            elif token in ("}", "]", ")"):
                depth -= 1
                if depth < 0:
                    self.i -= 1
                    return self.i
            elif token == ";" and depth == 0:
                return self.i
        return self.i

    def skip_group(self, open_: str, close: str) -> int:
        """Past the matching ``close`` of the ``open_`` just taken; the index of ``close``."""
        depth = 1
        while self.i < self.size:
            token = self.next()
            if token == open_:
                depth += 1
            elif token == close:
                depth -= 1
                if depth == 0:
                    return self.i - 1
        return self.i


def parse_elements(text: str, *, positions: bool = False) -> Element:
    """The file as an element of kind ``file`` (its children the top-level types); with
    ``positions``, the spans and insertion points of options are filled in."""
    tokens = _Tokens(text, positions=positions)
    root = Element("file", "")
    _body(tokens, root, top=True)
    return root


def _body(tokens: _Tokens, element: Element, *, top: bool = False) -> None:
    while tokens.i < tokens.size:
        token = tokens.peek()
        if token == "}":
            tokens.next()
            if not top:
                return
            continue
        if token == ";":
            tokens.next()
        elif token == "option":
            first = tokens.i
            tokens.next()
            last = tokens.skip_statement()
            done = tokens.tokens[last - 1] == ";" if last > first + 1 else False
            statement = tokens.joined(first + 1, last - 1 if done else last)
            span = (tokens.start(first), tokens.end(last - 1))
            element.written.add(statement if done else None, span)
            name = _OPTION_NAME.match(statement)
            if name is not None:
                element.written.names.append(name.group(1))
        elif token in _BLOCKS and _is_name(tokens.peek(1)) and tokens.peek(2) == "{":
            tokens.next()
            name = tokens.next()
            child = Element(token, name, body=tokens.end(tokens.i))
            tokens.next()
            element.children.append(child)
            _body(tokens, child)
        elif token == "rpc":
            _rpc(tokens, element)
        elif token in _SKIPPED or element.kind in ("file", "service"):
            tokens.skip_statement()
        else:
            _field(tokens, element)


def _is_name(token: str) -> bool:
    return bool(token) and (token[0].isalpha() or token[0] in "_.")


def _rpc(tokens: _Tokens, service: Element) -> None:
    tokens.next()
    rpc = Element("rpc", tokens.next())
    service.children.append(rpc)
    while tokens.i < tokens.size:
        token = tokens.next()
        if token == "(":
            tokens.skip_group("(", ")")
        elif token == ";":
            return
        elif token == "{":
            rpc.body = tokens.end(tokens.i - 1)
            _body(tokens, rpc)
            if tokens.peek() == ";":
                tokens.next()
            return
        elif token == "}":
            tokens.i -= 1
            return


def _field(tokens: _Tokens, owner: Element) -> None:
    """A field (message, oneof, extend, group) or an enum constant: the tokens up to ``=``
    name it, then its number, ``[...]`` and ``;`` (or a group's body)."""
    words: list[str] = []
    while tokens.i < tokens.size and tokens.peek() not in ("=", ";", "{", "}"):
        token = tokens.next()
        if token == "<":
            depth = 1
            while tokens.i < tokens.size and depth:
                depth += {"<": 1, ">": -1}.get(tokens.next(), 0)
            token = "map<>"
        words.append(token)
    if tokens.peek() != "=" or not words:
        tokens.skip_statement()
        return
    tokens.next()
    number = _number(tokens.next())
    if number is None:
        tokens.skip_statement()
        return
    written = Written()
    if tokens.peek() == "[":
        first = tokens.i
        tokens.next()
        close = tokens.skip_group("[", "]")
        written.add(tokens.joined(first + 1, close), (tokens.start(first), tokens.end(close)))
    end = tokens.start(tokens.i)
    is_group = len(words) >= 2 and words[-2] == "group"
    owner.fields.append(FieldElement(words[-1], number, written, end))
    if tokens.peek() == "{":
        group = Element("group" if is_group else "block", words[-1], body=tokens.end(tokens.i))
        tokens.next()
        owner.children.append(group)
        _body(tokens, group)
    elif tokens.peek() == ";":
        tokens.next()
    else:
        tokens.skip_statement()


def _number(token: str) -> int | None:
    try:
        return int(token, 0)
    except ValueError:
        pass
    try:
        return int(token, 8)  # protobuf's octal ``010``
    except ValueError:
        return None


def walk(element: Element, path: str = "") -> list[tuple[str, Element]]:
    """Every element below ``element`` with its path (``Outer.Inner``; rpcs ``Service.rpc``;
    a oneof's path is its message's, as its fields belong to the message)."""
    out: list[tuple[str, Element]] = []
    for child in element.children:
        if child.kind in ("oneof", "extend"):
            child_path = path
        else:
            child_path = f"{path}.{child.name}" if path else child.name
        out.append((child_path, child))
        out.extend(walk(child, child_path))
    return out
