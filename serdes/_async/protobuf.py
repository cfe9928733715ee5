"""The import path of ``confluent_kafka.schema_registry._async.protobuf``."""

from serdes.protobuf import AsyncProtobufDeserializer, AsyncProtobufSerializer

__all__ = ["AsyncProtobufDeserializer", "AsyncProtobufSerializer"]
