"""Scans of a whole Protobuf source text that never hold the GIL for long: each call into the
regex engine is bounded by one token or one candidate, found with ``str.find`` or a one-character
class. A single ``re.sub`` or ``finditer`` over a large text ran in C for its whole length (a
``\\bword`` pattern tries every position: 0.05-0.09 s per MB), and the event loop, ``/live``
included, waited for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_COMMENT_OR_QUOTE = re.compile(r"[\"'/]")
#: a string literal (``\\.`` escapes anything, a newline included), runs matched in C
_QUOTED = {
    q: re.compile(q + r"[^" + q + r"\\\n]*(?:\\.[^" + q + r"\\\n]*)*" + q, re.DOTALL) for q in "\"'"
}


def comment_end(text: str, at: int) -> int:
    """Where the comment starting at ``text[at]`` ends: the newline that ends a ``//`` comment
    (kept), the index after the ``*/`` of a ``/* */`` one, ``len(text)`` for one that runs to
    the end; ``at`` itself when no comment starts there."""
    if text.startswith("//", at):
        end = text.find("\n", at)
    elif text.startswith("/*", at):
        end = text.find("*/", at + 2)
        end = end + 2 if end >= 0 else -1
    else:
        return at
    return end if end >= 0 else len(text)


def strip_comments(text: str) -> str:
    """``text`` with each comment replaced by a space, string literals kept (a comment marker in
    a string is not a comment). An unterminated ``/*`` runs to the end. Linear, and each call
    into C is bounded by one token: one ``re.sub`` over the whole text held the GIL for its
    whole scan (0.05-0.08 s on 960 KB, a stall of every other request)."""
    out: list[str] = []
    pos = 0
    while True:
        found = _COMMENT_OR_QUOTE.search(text, pos)
        if found is None:
            out.append(text[pos:])
            return "".join(out)
        at = found.start()
        if text[at] == "/":
            end = comment_end(text, at)
            if end == at:  # a lone slash
                out.append(text[pos : at + 1])
                pos = at + 1
            else:
                out.append(text[pos:at] + " ")
                pos = end
            continue
        literal = _QUOTED[text[at]].match(text, at)
        end = literal.end() if literal is not None else at + 1  # unterminated: not a literal
        out.append(text[pos:end])
        pos = end


def matches_at(pattern: re.Pattern[str], code: str, word: str) -> Iterator[re.Match[str]]:
    """The matches ``pattern.finditer(code)`` finds, for a pattern that starts with ``word``
    (after an optional ``\\b``): the candidates are found with ``str.find``."""
    at = code.find(word)
    while at >= 0:
        match = pattern.match(code, at)
        if match is None:
            at = code.find(word, at + 1)
            continue
        yield match
        at = code.find(word, max(match.end(), at + 1))
