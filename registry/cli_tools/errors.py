"""The one exception type of the command-line tools: a usage or input error (exit code 2)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_INCOMPATIBLE = 1
EXIT_ERROR = 2


class ToolError(Exception):
    """Bad usage or input: a missing or unparseable file, an unknown revision, an unreachable
    registry. The message says what and where; the command exits with code 2."""
