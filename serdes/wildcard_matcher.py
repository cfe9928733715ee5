"""Wildcard matching of dotted field names, as the rule set's ``tags`` mapping uses it.

``?`` is one character and ``*`` any run of characters within one dotted name part; ``**``
crosses parts (``a.**.x``'s ``**.*`` collapses to ``**``). Same results as
``confluent_kafka.schema_registry.wildcard_matcher.wildcard_match``.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["wildcard_match"]

_SPECIAL = frozenset(".+{}()|^$[]")


@lru_cache(maxsize=4096)
def _compile(matcher: str, separator: str = ".") -> re.Pattern[str]:
    src = matcher.replace("**" + separator + "*", "**")
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
                out.append("[^" + re.escape(separator) + "]*")
        elif c == "?":
            out.append("[^" + re.escape(separator) + "]")
        elif c == "\\":
            nxt = src[i] if i < len(src) else "\\"
            i += 1
            out.append(re.escape(nxt))
        elif c in _SPECIAL:
            out.append("\\" + c)
        else:
            out.append(c)
    return re.compile("".join(out))


def wildcard_match(text: str, matcher: str) -> bool:
    """True when the whole of ``text`` matches the wildcard pattern ``matcher``."""
    return _compile(matcher).fullmatch(text) is not None
