"""JSON string literals as Jackson (Confluent's JSON library) writes them; shared by the
formats whose canonical texts are JSON (Avro, JSON Schema)."""

from __future__ import annotations

import re

# Jackson escapes '"', '\\' and C0 controls. Lone UTF-16 surrogates (a "\ud800" escape in the
# input) cannot be written as UTF-8 at all, so they are escaped too instead of failing later.
_ESCAPE_RE = re.compile('[\\x00-\\x1f"\\\\\ud800-\udfff]')
_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group(0)
    short = _SHORT_ESCAPES.get(ch)
    return short if short is not None else f"\\u{ord(ch):04X}"


def quote(text: str) -> str:
    """``text`` as a JSON string literal, escaped as Jackson does."""
    if _ESCAPE_RE.search(text) is None:
        return f'"{text}"'
    return '"' + _ESCAPE_RE.sub(_escape_char, text) + '"'
