"""Numbers in request paths, read as Java's ``Integer.parseInt`` reads them (Confluent's path
parameters are Java ints): an optional ``+`` or ``-``, then decimal digits (any script's, as
``Character.digit`` allows), nothing else (no ``_``, no spaces), within 32 bits. The routers and
the auth middleware both read path numbers through :func:`java_int`, so they see one number.
A version is trimmed first (Confluent's ``VersionId`` calls ``trim()``); an id is not (Jersey
converts it as is).
"""

from __future__ import annotations

import re
import unicodedata

_INT = re.compile(r"[+-]?\d+")
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def java_trim(text: str) -> str:
    """Java's ``String.trim``: code points up to U+0020 removed from both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def java_int(text: str) -> int | None:
    """The int ``text`` spells, or None where ``Integer.parseInt`` throws."""
    if not _INT.fullmatch(text):
        return None
    # leading zeros are Java's to skip; past them, more than ten digits cannot fit in 32 bits
    # (and Python's int() refuses strings of more than 4,300 digits outright)
    sign = text[0] if text[0] in "+-" else ""
    start = len(sign)
    while start < len(text) - 1 and unicodedata.digit(text[start]) == 0:
        start += 1
    if len(text) - start > len(str(INT_MAX)):
        return None
    value = int(sign + text[start:])
    return value if INT_MIN <= value <= INT_MAX else None
