"""What ``confluent_kafka.schema_registry.serde`` exports that applications import.

``SchemaId`` (handed to ``schema.id.serializer``/``schema.id.deserializer`` callables),
``SubjectNameStrategyType`` and the ``subject.name.strategy.conf`` keys, and the data-contract
rule names (``RuleError``, ``RuleConditionError``, ``RuleContext``, the DLQ headers, ...) from
the rules package.
"""

from serdes.rules.context import (
    DLQ_HEADER_PREFIX,
    DLQ_RULE_EXCEPTION_HEADER,
    DLQ_RULE_MODE_HEADER,
    DLQ_RULE_NAME_HEADER,
    DLQ_RULE_SUBJECT_HEADER,
    DLQ_RULE_TOPIC_HEADER,
    ErrorAction,
    FieldContext,
    FieldRuleExecutor,
    FieldTransform,
    FieldTransformer,
    FieldType,
    NoneAction,
    RuleAction,
    RuleBase,
    RuleConditionError,
    RuleContext,
    RuleError,
    RuleExecutor,
    clear_original_key,
    get_original_key,
    set_original_key,
)
from serdes.rules.engine import Migration
from serdes.strategies import FALLBACK_TYPE, KAFKA_CLUSTER_ID, SubjectNameStrategyType
from serdes.wire import SchemaId

__all__ = [
    "DLQ_HEADER_PREFIX",
    "DLQ_RULE_EXCEPTION_HEADER",
    "DLQ_RULE_MODE_HEADER",
    "DLQ_RULE_NAME_HEADER",
    "DLQ_RULE_SUBJECT_HEADER",
    "DLQ_RULE_TOPIC_HEADER",
    "FALLBACK_TYPE",
    "KAFKA_CLUSTER_ID",
    "ErrorAction",
    "FieldContext",
    "FieldRuleExecutor",
    "FieldTransform",
    "FieldTransformer",
    "FieldType",
    "Migration",
    "NoneAction",
    "RuleAction",
    "RuleBase",
    "RuleConditionError",
    "RuleContext",
    "RuleError",
    "RuleExecutor",
    "SchemaId",
    "SubjectNameStrategyType",
    "clear_original_key",
    "get_original_key",
    "set_original_key",
]
