"""CEL_FIELD rules: an expression run on each primitive field the rule's tags select.

Bound: ``value`` (the field's value), ``fullName``, ``name``, ``typeName`` (``STRING``,
``INT``...), ``tags`` and ``message`` (the record holding the field), as confluent-kafka.
"""

from __future__ import annotations

from typing import Any

from serdes.rules.cel.cel_executor import CelExecutor
from serdes.rules.cel.values import needs_conversion, to_cel
from serdes.rules.context import FieldContext, FieldRuleExecutor, FieldTransform, RuleContext
from serdes.rules.registry import RuleRegistry

__all__ = ["CelFieldExecutor"]


class CelFieldExecutor(FieldRuleExecutor):
    """Executor of ``CEL_FIELD`` rules."""

    def __init__(self) -> None:
        self._executor = CelExecutor()

    def type(self) -> str:
        return "CEL_FIELD"

    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        return self._field_transform

    def _field_transform(self, ctx: RuleContext, field_ctx: FieldContext, value: Any) -> Any:
        if not field_ctx.is_primitive():
            return value
        container = field_ctx.containing_message
        args = {
            "value": value,
            "fullName": field_ctx.full_name,
            "name": field_ctx.name,
            "typeName": field_ctx.type_name(),
            "tags": sorted(field_ctx.tags),
            "message": to_cel(container) if needs_conversion(container) else container,
        }
        return self._executor.execute(ctx, value, args)

    @classmethod
    def register(cls) -> None:
        RuleRegistry.register_rule_executor(cls())
