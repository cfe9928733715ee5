"""Regular expressions taken from schemas (``patternProperties``), run in linear time.

A schema's regex runs against property names during the compatibility check, on the server,
for any reader of a subject: it must never backtrack. Patterns compile with RE2, whose running
time is linear in the input; RE2 has no backreferences or lookaround (Java's regex, which
Confluent's checker uses, has), so such a pattern is kept as written and reported with a clear
error when the comparison needs to run it (:class:`UnsupportedPattern`), never run by a
backtracking engine. A pattern no engine accepts (invalid syntax) matches nothing, as before.
"""

from __future__ import annotations

import re

import re2

from registry.errors import RegistryError

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


class UnsupportedPattern(RegistryError):
    """A schema pattern that cannot run in linear time, met where the check must run it."""

    def __init__(self, pattern: str) -> None:
        super().__init__(
            42201,
            f"Invalid schema: the patternProperties regex '{pattern}' uses backreferences or "
            "lookaround, which this registry does not run (they can take exponential time)",
        )


class SchemaPattern:
    """A ``patternProperties`` key: ``search`` as Java's ``Matcher.find``."""

    __slots__ = ("_compiled", "pattern", "supported")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: object | None = None
        self.supported = True
        try:
            self._compiled = re2.compile(pattern, options=_OPTIONS)
        except (re2.error, TypeError, ValueError, OverflowError):
            # valid for a backtracking engine (lookaround, backreferences): refuse to run it
            self.supported = not _compiles_elsewhere(pattern)

    def search(self, text: str) -> bool:
        if self._compiled is not None:
            return self._compiled.search(text) is not None  # type: ignore[attr-defined]
        if not self.supported:
            raise UnsupportedPattern(self.pattern)
        return False

    def __repr__(self) -> str:
        return f"SchemaPattern({self.pattern!r})"


def _compiles_elsewhere(pattern: str) -> bool:
    """Whether a backtracking engine accepts ``pattern`` (compiling it runs nothing)."""
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return False
    return True
