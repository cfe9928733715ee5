"""CEL and CEL_FIELD rule executors (compiled engine)."""

from serdes.rules.cel.cel_executor import CelExecutor
from serdes.rules.cel.cel_field_executor import CelFieldExecutor

__all__ = ["CelExecutor", "CelFieldExecutor"]
