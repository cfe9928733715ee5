"""The import path of ``confluent_kafka.schema_registry._async.avro``."""

from serdes.avro import AsyncAvroDeserializer, AsyncAvroSerializer

__all__ = ["AsyncAvroDeserializer", "AsyncAvroSerializer"]
