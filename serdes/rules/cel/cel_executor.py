"""CEL rules (type ``CEL``): a condition or transform over the whole message, bound as
``message``; ``guard; expr`` runs ``expr`` only where ``guard`` holds (as confluent-kafka).

Evaluated by the compiled (Rust) engine of ``common-expression-language``, or, for the
common subset (field access, comparisons, boolean logic, literals, ``in``, ``size``, string
tests), by a Python translation made once (serdes.rules.cel.fastpath), which reads only the
fields the expression names. Each expression is compiled once per executor.
"""

from __future__ import annotations

import datetime
import logging
import threading
from typing import Any

import cel

from serdes.rules.cel.fastpath import compile_fast
from serdes.rules.cel.functions import EXTRA_FUNCTIONS
from serdes.rules.cel.values import from_cel_message, needs_conversion, to_cel
from serdes.rules.context import RuleContext, RuleExecutor
from serdes.rules.model import RuleKind
from serdes.rules.registry import RuleRegistry

__all__ = ["CelExecutor"]

log = logging.getLogger(__name__)


class _Compiled:
    """One expression: its Python translation when it is in the fast subset, else the
    engine's program (with the extra functions or ``now`` when it uses them)."""

    __slots__ = ("fast", "functions", "now", "program")

    def __init__(self, expr: str) -> None:
        self.program = cel.compile(expr)  # also the syntax check, for both paths
        self.fast = compile_fast(expr)
        self.functions = {name: fn for name, fn in EXTRA_FUNCTIONS.items() if name in expr}
        self.now = "now" in expr

    def run(self, args: dict[str, Any]) -> Any:
        if self.fast is not None:
            return self.fast(args)
        if self.now and "now" not in args:
            args["now"] = datetime.datetime.now(tz=datetime.UTC)
        if self.functions:
            context = cel.Context()
            for name, fn in self.functions.items():
                context.add_function(name, fn)
            for name, value in args.items():
                context.add_variable(name, value)
            return self.program.execute(context)
        return self.program.execute(args)


class CelExecutor(RuleExecutor):
    """Executor of ``CEL`` rules."""

    def __init__(self) -> None:
        self._compiled: dict[str, tuple[_Compiled | None, _Compiled]] = {}
        self._lock = threading.Lock()

    def type(self) -> str:
        return "CEL"

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        bound = to_cel(message) if needs_conversion(message) else message
        return self.execute(ctx, message, {"message": bound})

    def _program(self, expr: str) -> tuple[_Compiled | None, _Compiled]:
        found = self._compiled.get(expr)
        if found is None:  # compiled once per expression
            index = expr.find(";")
            guard: _Compiled | None = None
            body = expr
            if index >= 0:
                if expr[:index].strip():
                    guard = _Compiled(expr[:index])
                body = expr[index + 1 :]
            found = (guard, _Compiled(body))
            with self._lock:
                self._compiled[expr] = found
        return found

    def execute(self, ctx: RuleContext, message: Any, args: dict[str, Any]) -> Any:
        """Evaluate the rule's expression with ``args`` bound; ``message`` is the value the
        rule applies to (returned unchanged where a guard does not hold)."""
        expr = ctx.rule.expr
        if expr is None:
            log.warning("Expression from rule %s is None", ctx.rule.name)
            return message
        guard, body = self._program(expr)
        if guard is None and body.fast is not None and ctx.rule.kind is RuleKind.CONDITION:
            return body.fast(args)  # the common case, without the detours below
        if guard is not None and not _evaluate(guard, args):
            return True if ctx.rule.kind is RuleKind.CONDITION else message
        result = _evaluate(body, args)
        if ctx.rule.kind is RuleKind.CONDITION:
            return result
        return from_cel_message(result, message)

    @classmethod
    def register(cls) -> None:
        RuleRegistry.register_rule_executor(cls())


def _evaluate(compiled: _Compiled, args: dict[str, Any]) -> Any:
    try:
        return compiled.run(args)
    except ValueError as exc:
        if "Conversion Error" not in str(exc):
            raise
        # A value the engine does not bind as is (a date, a UUID...): convert and retry.
        return compiled.run({k: to_cel(v) for k, v in args.items()})
