"""Wildcards over dot-separated names (``confluent_kafka.schema_registry.wildcard_matcher``).

``?`` is one character and ``*`` any run of characters within one name segment; ``**`` any run
across segments (``alice.bob.eve`` matches ``a**`` but not ``a*``); a backslash is read as
Confluent's matcher reads it. The whole text must match. Verdicts checked against
confluent-kafka's on random patterns (tests/test_serdes_dropin.py); compiled patterns cached.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["wildcard_match"]

_SEPARATOR = "."
_LITERAL = frozenset(".+{}()|^$")


def wildcard_match(text: str, matcher: str) -> bool:
    """Whether all of ``text`` matches the wildcard pattern ``matcher``."""
    return _compiled(matcher).fullmatch(text) is not None


@lru_cache(maxsize=1024)
def _compiled(matcher: str) -> re.Pattern[str]:
    return re.compile(_to_regexp(matcher))


def _to_regexp(pattern: str) -> str:
    sep = re.escape(_SEPARATOR)
    src = pattern.replace("**" + _SEPARATOR + "*", "**")
    out: list[str] = []
    i = 0
    while i < len(src):
        c = src[i]
        i += 1
        if c == "*":
            if i < len(src) and src[i] == "*":
                out.append(".*")
                i += 1
            else:
                out.append(f"[^{sep}]*")
        elif c == "?":
            out.append(f"[^{sep}]")
        elif c == "\\":
            # As Confluent's matcher (Java's, ported): a backslash before the last character
            # emits an escaped backslash and passes the next character through to the regular
            # expression; otherwise it is a literal backslash.
            if i + 1 < len(src):
                out.append("\\\\" + src[i])
                i += 1
            else:
                out.append("\\\\")
        elif c in _LITERAL:
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)
