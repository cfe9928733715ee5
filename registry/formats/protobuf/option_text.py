"""Option lists as a ``.proto`` text writes them, read the way Wire's ``OptionReader`` does.

Confluent prints a text schema's options as parsed (``(confluent.field_meta).tags = "a",
(confluent.field_meta).tags = "b"`` stays two options), where the compiled descriptor merges
them; the printer uses these for that. ``None`` is returned for anything not understood (the
printer then falls back to the descriptor's options).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from registry.formats.protobuf.options import Option, Prim

_TOKEN = re.compile(
    r"\s*(?:(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"  # 1 string
    r"|([-+]?(?:0[xX][0-9a-fA-F]+|\d[\w.+-]*|\.\d[\w.+-]*|inf|nan)(?![\w.]))"  # 2 number
    r"|([A-Za-z_][\w.]*)"  # 3 word
    r"|(\(\s*\.?[\w.]+\s*\))"  # 4 parenthesized name
    r"|(\[\s*[\w.]+(?:/[\w.]+)?\s*\](?=\s*[:{]))"  # 5 extension key in a map
    r"|([\[\]{}=:,;.]))"  # 6 punctuation
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a"}
_ESCAPES |= {"b": "\b", "f": "\f", "v": "\v", "?": "?"}


def unquoted(
    code: str, start: int, opens: str = "[{", closes: str = "]}", depth: int = 0
) -> Iterator[tuple[int, str, int]]:
    """``(index, character, nesting depth after it)`` for each character of ``code`` from
    ``start`` that stands outside a quoted string (quote marks and escapes are skipped).
    ``opens`` / ``closes`` are the marks that nest; ``depth`` is the nesting already open at
    ``start``."""
    i, quote = start, ""
    while i < len(code):
        ch = code[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        else:
            if ch in opens:
                depth += 1
            elif ch in closes:
                depth -= 1
            yield i, ch, depth
        i += 1


class _Fail(Exception):
    pass


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[int, str]] = []
        pos = 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None:
                if not text[pos:].strip():
                    break
                raise _Fail
            group = match.lastindex or 0
            self.tokens.append((group, match.group(group)))
            pos = match.end()
        self.index = 0

    def peek(self, value: str | None = None) -> tuple[int, str] | None:
        if self.index >= len(self.tokens):
            return None
        token = self.tokens[self.index]
        if value is not None and token[1] != value:
            return None
        return token

    def take(self, value: str | None = None) -> tuple[int, str]:
        token = self.peek(value)
        if token is None:
            raise _Fail
        self.index += 1
        return token


def field_options(text: str) -> list[Option] | None:
    """The options inside a field's ``[...]`` (without the brackets)."""
    try:
        reader = _Reader(text)
        result = []
        while True:
            result.append(_option(reader, "="))
            if reader.peek() is None:
                return result
            reader.take(",")
    except _Fail:
        return None


def _option(reader: _Reader, separator: str) -> Option:
    kind, token = reader.take()
    parenthesized = kind == 4
    if kind == 4:
        name = re.sub(r"\s+", "", token)[1:-1]
    elif kind == 5:
        name = "[" + re.sub(r"\s+", "", token)[1:-1] + "]"
    elif kind == 3:
        name = token
    else:
        raise _Fail
    sub: str | None = None
    if parenthesized and reader.peek("."):
        reader.take(".")
        sub_kind, sub = reader.take()
        if sub_kind != 3:
            raise _Fail
    if separator == ":" and reader.peek("{"):
        pass
    else:
        reader.take(separator)
    value_kind, value = _kind_and_value(reader, top=sub is None and separator == "=")
    if sub is not None:
        inner = Option(sub, value_kind, value if separator == ":" else _top(value_kind, value))
        return Option(name, "OPTION", inner, parenthesized)
    return Option(name, value_kind, value, parenthesized)


def _top(kind: str, value: Any) -> Any:
    return value.value if isinstance(value, Prim) else value


def _kind_and_value(reader: _Reader, *, top: bool) -> tuple[str, Any]:
    kind, token = reader.take()
    if token == "{":
        return "MAP", _map(reader)
    if token == "[":
        return "LIST", _list(reader)
    if kind == 1:
        return "STRING", _unquote(token)
    if kind == 2:
        return "NUMBER", token if top else Prim("NUMBER", token)
    if kind == 3:
        word_kind = "BOOLEAN" if token in ("true", "false") else "ENUM"
        return word_kind, token if top else Prim(word_kind, token)
    raise _Fail


def _map(reader: _Reader) -> dict[str, Any]:
    result: dict[str, Any] = {}
    while True:
        if reader.peek("}"):
            reader.take("}")
            return result
        option = _option(reader, ":")
        value = option.value
        if option.kind == "OPTION":
            nested = result.setdefault(option.name, {})
            if not isinstance(nested, dict):
                raise _Fail
            nested[value.name] = value.value
        else:
            previous = result.get(option.name)
            if previous is None:
                result[option.name] = value
            elif isinstance(previous, list):
                previous.extend(value if isinstance(value, list) else [value])
            else:
                result[option.name] = [previous, *(value if isinstance(value, list) else [value])]
        if not reader.peek(","):
            reader.peek(";") and reader.take(";")
        else:
            reader.take(",")


def _list(reader: _Reader) -> list[Any]:
    result: list[Any] = []
    while True:
        if reader.peek("]"):
            reader.take("]")
            return result
        result.append(_kind_and_value(reader, top=False)[1])
        if reader.peek(","):
            reader.take(",")
        elif not reader.peek("]"):
            raise _Fail


def _unquote(token: str) -> str:
    body = token[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            raise _Fail  # octal, hex and unicode escapes: leave it to the descriptor
        out.append(ch)
        i += 1
    return "".join(out)
