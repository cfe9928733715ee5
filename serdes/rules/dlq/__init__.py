"""The DLQ rule action."""

from serdes.rules.dlq.dlq_action import DlqAction, FieldRedactionExecutor

__all__ = ["DlqAction", "FieldRedactionExecutor"]
