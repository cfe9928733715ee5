"""JSONATA rules: a JSONata expression that rewrites the whole message, used as migration
rules (UPGRADE/DOWNGRADE) between versions of a subject.

Evaluated by ``jsonatapy`` (a Rust implementation): each expression compiled once.
"""

from __future__ import annotations

import threading
from typing import Any

import jsonatapy

from serdes.rules.context import RuleContext, RuleExecutor
from serdes.rules.registry import RuleRegistry

__all__ = ["JsonataExecutor"]


class JsonataExecutor(RuleExecutor):
    """Executor of ``JSONATA`` rules."""

    def __init__(self) -> None:
        self._compiled: dict[str, Any] = {}
        self._lock = threading.Lock()

    def type(self) -> str:
        return "JSONATA"

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        expr = ctx.rule.expr
        if expr is None:
            return message
        compiled = self._compiled.get(expr)
        if compiled is None:
            compiled = jsonatapy.compile(expr)
            with self._lock:
                self._compiled[expr] = compiled
        return compiled.evaluate(message)

    @classmethod
    def register(cls) -> None:
        RuleRegistry.register_rule_executor(cls())
