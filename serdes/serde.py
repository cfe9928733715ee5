"""What ``confluent_kafka.schema_registry.serde`` exports that applications import.

``SchemaId`` (handed to ``schema.id.serializer``/``schema.id.deserializer`` callables),
``SubjectNameStrategyType`` and the ``subject.name.strategy.conf`` keys. The data-contract
rule errors (``RuleError``, ``RuleConditionError``) belong here too, from the rules package.
"""

from serdes.strategies import FALLBACK_TYPE, KAFKA_CLUSTER_ID, SubjectNameStrategyType
from serdes.wire import SchemaId

__all__ = ["FALLBACK_TYPE", "KAFKA_CLUSTER_ID", "SchemaId", "SubjectNameStrategyType"]
