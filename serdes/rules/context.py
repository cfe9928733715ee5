"""What a rule executor or action is given and implements: RuleContext, FieldContext, the
executor/action base classes, the NONE and ERROR actions, and the rule errors.

Same names, attributes and methods as ``confluent_kafka.schema_registry.serde``'s, so an
executor written for confluent-kafka runs here unchanged.
"""

from __future__ import annotations

import abc
import contextvars
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from serdes.errors import SerializationError
from serdes.rules.model import Rule, RuleKind, RuleMode
from serdes.wildcard_matcher import wildcard_match

__all__ = [
    "DLQ_HEADER_PREFIX",
    "DLQ_RULE_EXCEPTION_HEADER",
    "DLQ_RULE_MODE_HEADER",
    "DLQ_RULE_NAME_HEADER",
    "DLQ_RULE_SUBJECT_HEADER",
    "DLQ_RULE_TOPIC_HEADER",
    "ErrorAction",
    "FieldContext",
    "FieldRuleExecutor",
    "FieldTransform",
    "FieldTransformer",
    "FieldType",
    "NoneAction",
    "RuleAction",
    "RuleBase",
    "RuleConditionError",
    "RuleContext",
    "RuleError",
    "RuleExecutor",
    "clear_original_key",
    "get_original_key",
    "metadata_properties",
    "metadata_tags",
    "rule_failure_message",
    "set_original_key",
]

DLQ_HEADER_PREFIX = "__rule."
DLQ_RULE_NAME_HEADER = DLQ_HEADER_PREFIX + "name"
DLQ_RULE_MODE_HEADER = DLQ_HEADER_PREFIX + "mode"
DLQ_RULE_SUBJECT_HEADER = DLQ_HEADER_PREFIX + "subject"
DLQ_RULE_TOPIC_HEADER = DLQ_HEADER_PREFIX + "topic"
DLQ_RULE_EXCEPTION_HEADER = DLQ_HEADER_PREFIX + "exception"

# The key a key serializer/deserializer saw, for the value side's DLQ record (as confluent).
_ORIGINAL_KEY: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "serdes_original_key", default=None
)


def set_original_key(key: Any) -> None:
    _ORIGINAL_KEY.set(key)


def get_original_key() -> Any:
    return _ORIGINAL_KEY.get()


def clear_original_key() -> None:
    _ORIGINAL_KEY.set(None)


class FieldType(StrEnum):
    RECORD = "RECORD"
    ENUM = "ENUM"
    ARRAY = "ARRAY"
    MAP = "MAP"
    COMBINED = "COMBINED"
    FIXED = "FIXED"
    STRING = "STRING"
    BYTES = "BYTES"
    INT = "INT"
    LONG = "LONG"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    BOOLEAN = "BOOLEAN"
    NULL = "NULL"


_PRIMITIVES = frozenset(
    {
        FieldType.INT,
        FieldType.LONG,
        FieldType.FLOAT,
        FieldType.DOUBLE,
        FieldType.BOOLEAN,
        FieldType.NULL,
        FieldType.STRING,
        FieldType.BYTES,
    }
)


def metadata_tags(schema: Any) -> dict[str, list[str]]:
    """A schema's metadata ``tags`` (ours or confluent-kafka's Metadata)."""
    meta = getattr(schema, "metadata", None) if schema is not None else None
    tags = getattr(meta, "tags", None) if meta is not None else None
    if tags is None:
        return {}
    return tags.tags if hasattr(tags, "tags") else tags


def metadata_properties(schema: Any) -> dict[str, str]:
    """A schema's metadata ``properties`` (ours or confluent-kafka's Metadata)."""
    meta = getattr(schema, "metadata", None) if schema is not None else None
    props = getattr(meta, "properties", None) if meta is not None else None
    if props is None:
        return {}
    return props.properties if hasattr(props, "properties") else props


class FieldContext:
    """The field a field-level transform is applied to."""

    __slots__ = (
        "containing_message",
        "field_descriptor",
        "field_type",
        "full_name",
        "name",
        "tags",
    )

    def __init__(
        self,
        containing_message: Any,
        full_name: str,
        name: str,
        field_type: FieldType,
        tags: set[str],
        field_descriptor: Any = None,
    ) -> None:
        self.containing_message = containing_message
        self.full_name = full_name
        self.name = name
        self.field_type = field_type
        self.tags = tags
        self.field_descriptor = field_descriptor

    def is_primitive(self) -> bool:
        return self.field_type in _PRIMITIVES

    def type_name(self) -> str:
        return self.field_type.name


class RuleContext:
    """One rule being run on one message: the schemas, the mode, the rule and its neighbours."""

    __slots__ = (
        "_field_contexts",
        "enabled_env",
        "field_transformer",
        "index",
        "inline_tags",
        "original_key",
        "original_value",
        "rule",
        "rule_mode",
        "rules",
        "ser_ctx",
        "source",
        "subject",
        "target",
    )

    def __init__(
        self,
        enabled_env: str | None,
        ser_ctx: Any,
        source: Any,
        target: Any,
        subject: str | None,
        rule_mode: RuleMode,
        rule: Rule,
        index: int,
        rules: list[Rule] | tuple[Rule, ...],
        inline_tags: dict[str, set[str]] | None,
        field_transformer: FieldTransformer | None,
        original_key: Any = None,
        original_value: Any = None,
    ) -> None:
        self.enabled_env = enabled_env
        self.ser_ctx = ser_ctx
        self.source = source
        self.target = target
        self.subject = subject
        self.rule_mode = rule_mode
        self.rule = rule
        self.index = index
        self.rules = rules
        self.inline_tags = inline_tags
        self.field_transformer = field_transformer
        self.original_key = original_key
        self.original_value = original_value
        self._field_contexts: list[FieldContext] = []

    def get_parameter(self, name: str) -> str | None:
        """The rule's ``params[name]``, else the target schema's metadata property ``name``."""
        params = self.rule.params
        if params is not None:
            value = params.params.get(name)
            if value is not None:
                return value
        return metadata_properties(self.target).get(name)

    def current_field(self) -> FieldContext | None:
        return self._field_contexts[-1] if self._field_contexts else None

    def enter_field(
        self,
        containing_message: Any,
        full_name: str,
        name: str,
        field_type: FieldType,
        tags: set[str] | None,
        field_descriptor: Any = None,
    ) -> FieldContext:
        if tags is not None:
            all_tags = set(tags)
        elif self.inline_tags is not None:
            all_tags = set(self.inline_tags.get(full_name, ()))
        else:
            all_tags = set()
        all_tags.update(self.get_tags(full_name))
        fc = FieldContext(
            containing_message, full_name, name, field_type, all_tags, field_descriptor
        )
        self._field_contexts.append(fc)
        return fc

    def get_tags(self, full_name: str) -> set[str]:
        """The tags the target schema's metadata ``tags`` patterns give ``full_name``."""
        result: set[str] = set()
        for pattern, tags in metadata_tags(self.target).items():
            if wildcard_match(full_name, pattern):
                result.update(tags)
        return result

    def exit_field(self) -> None:
        if self._field_contexts:
            self._field_contexts.pop()


FieldTransform = Callable[[RuleContext, FieldContext, Any], Any]
FieldTransformer = Callable[[RuleContext, FieldTransform, Any], Any]


class RuleBase(metaclass=abc.ABCMeta):
    """What executors and actions share: a ``type`` name, ``configure`` and ``close``."""

    def configure(self, client_conf: dict[str, Any], rule_conf: dict[str, Any]) -> None:  # noqa: B027
        """Called by each serde built with this executor/action (client and rule conf)."""

    @abc.abstractmethod
    def type(self) -> str:
        raise NotImplementedError

    def close(self) -> None:  # noqa: B027
        """Release resources (a DLQ producer, KMS clients)."""


class RuleExecutor(RuleBase):
    """Runs a rule on a whole message: a condition returns a truth value, a transform the
    new message."""

    @abc.abstractmethod
    def transform(self, ctx: RuleContext, message: Any) -> Any:
        raise NotImplementedError


class FieldRuleExecutor(RuleExecutor):
    """Runs a rule on each field the rule's tags select, through the format's field walker."""

    @abc.abstractmethod
    def new_transform(self, ctx: RuleContext) -> FieldTransform:
        raise NotImplementedError

    def transform(self, ctx: RuleContext, message: Any) -> Any:
        if ctx.rule_mode in (RuleMode.WRITE, RuleMode.UPGRADE):
            for other in ctx.rules[: ctx.index]:
                if self.are_transforms_with_same_tag(ctx.rule, other):
                    return message  # an earlier transform with the same tags wins
        elif ctx.rule_mode in (RuleMode.READ, RuleMode.DOWNGRADE):
            for other in ctx.rules[ctx.index + 1 :]:
                if self.are_transforms_with_same_tag(ctx.rule, other):
                    return message  # a later one (run earlier on read) wins
        if ctx.field_transformer is None:
            raise RuleError(f"no field walker for rule {ctx.rule.name} of type {ctx.rule.type}")
        return ctx.field_transformer(ctx, self.new_transform(ctx), message)

    @staticmethod
    def are_transforms_with_same_tag(rule1: Rule, rule2: Rule) -> bool:
        return (
            bool(rule1.tags)
            and rule1.kind == RuleKind.TRANSFORM
            and rule1.kind == rule2.kind
            and rule1.mode == rule2.mode
            and rule1.type == rule2.type
            and rule1.tags == rule2.tags
        )


class RuleAction(RuleBase):
    """What happens after a rule: ``ex`` is None on success."""

    @abc.abstractmethod
    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        raise NotImplementedError


class RuleError(Exception):
    """A rule could not be run, or failed."""


class RuleConditionError(RuleError):
    """A CONDITION rule evaluated to false: the message is the rule's doc, else its expr."""

    def __init__(self, rule: Rule) -> None:
        super().__init__(self.error_message(rule))

    @staticmethod
    def error_message(rule: Rule) -> str:
        if rule.doc:
            return rule.doc
        if rule.expr:
            return f"Rule expr failed: {rule.expr}"
        return f"Rule failed: {rule.name}"


def store_field_result(ctx: RuleContext, result: Any) -> bool:
    """What a walker does with a field rule's result: a CONDITION that gave ``False`` fails
    (``RuleConditionError``) and any other CONDITION result is dropped (``False``); a
    TRANSFORM's result is the field's new value (``True``: store it)."""
    if ctx.rule.kind is RuleKind.CONDITION:
        if result is False:
            raise RuleConditionError(ctx.rule)
        return False
    return True


def rule_failure_message(rule: Rule, ex: Exception | None) -> str:
    """What a failed rule's ``SerializationError`` says, as the JavaScript client words it:
    ``rule NAME failed: REASON`` (the reason: the condition's doc or expression, the executor's
    error), or ``rule NAME failed`` when there is none."""
    reason = str(ex) if ex is not None else ""
    return f"rule {rule.name} failed: {reason}" if reason else f"rule {rule.name} failed"


class ErrorAction(RuleAction):
    """Fail the serialization (raise ``SerializationError`` from the rule's error)."""

    def type(self) -> str:
        return "ERROR"

    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        text = rule_failure_message(ctx.rule, ex)
        if ex is None:
            raise SerializationError(text)
        raise SerializationError(text) from ex


class NoneAction(RuleAction):
    """Do nothing."""

    def type(self) -> str:
        return "NONE"

    def run(self, ctx: RuleContext, message: Any, ex: Exception | None) -> None:
        return None
