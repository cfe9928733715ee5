"""Schema Registry client and Kafka serializers, a drop-in for ``confluent_kafka.schema_registry``.

    from serdes import SchemaRegistryClient, Schema
    from serdes.avro import AvroSerializer, AvroDeserializer

Same configuration keys, method names, constructor arguments and bytes on the wire as
confluent-kafka's; faster. This package never imports the ``registry`` server package.

Data-contract rules (CEL, CEL_FIELD, JSONATA, actions NONE/ERROR/DLQ) run as in
confluent-kafka: see ``serdes.rules``. The serializer/deserializer builders are not provided.

asyncio: ``AsyncSchemaRegistryClient`` and ``serdes.avro.AsyncAvroSerializer`` (and the
deserializer, and the Protobuf and JSON Schema ones) run this same code with its registry calls
awaited (``serdes._async``).

``SchemaRegistryClient({"url": "mock://scope"})`` is an in-memory registry for unit tests
(``serdes.mock_client``).
"""

# the in-memory client registers itself for ``mock://`` URLs (serdes.client_schemes)
from serdes import mock_client as _mock_client  # noqa: F401  (isort: after serdes.client)
from serdes._async.client import AsyncSchemaRegistryClient
from serdes.associations import (
    Association,
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    AssociationInfo,
    AssociationResponse,
)
from serdes.client import SchemaRegistryClient
from serdes.errors import SchemaRegistryError, SerializationError, UnknownSchemaError
from serdes.rules.model import (
    MetadataProperties,
    MetadataTags,
    Rule,
    RuleKind,
    RuleMode,
    RuleParams,
)
from serdes.schema import (
    ConfigCompatibilityLevel,
    Metadata,
    RegisteredSchema,
    RuleSet,
    Schema,
    SchemaReference,
    SchemaVersion,
    ServerConfig,
)
from serdes.strategies import (
    AssociatedNameStrategy,
    SubjectNameStrategyType,
    record_subject_name_strategy,
    reference_subject_name_strategy,
    topic_record_subject_name_strategy,
    topic_subject_name_strategy,
)
from serdes.wire import (
    dual_schema_id_deserializer,
    header_schema_id_serializer,
    prefix_schema_id_deserializer,
    prefix_schema_id_serializer,
)

__all__ = [
    "AssociatedNameStrategy",
    "Association",
    "AssociationCreateOrUpdateInfo",
    "AssociationCreateOrUpdateRequest",
    "AssociationInfo",
    "AssociationResponse",
    "AsyncSchemaRegistryClient",
    "ConfigCompatibilityLevel",
    "Metadata",
    "MetadataProperties",
    "MetadataTags",
    "RegisteredSchema",
    "Rule",
    "RuleKind",
    "RuleMode",
    "RuleParams",
    "RuleSet",
    "Schema",
    "SchemaReference",
    "SchemaRegistryClient",
    "SchemaRegistryError",
    "SchemaVersion",
    "SerializationError",
    "ServerConfig",
    "SubjectNameStrategyType",
    "UnknownSchemaError",
    "dual_schema_id_deserializer",
    "header_schema_id_serializer",
    "prefix_schema_id_deserializer",
    "prefix_schema_id_serializer",
    "record_subject_name_strategy",
    "reference_subject_name_strategy",
    "topic_record_subject_name_strategy",
    "topic_subject_name_strategy",
]
