"""The import path of ``confluent_kafka.schema_registry._async.json_schema``."""

from serdes.json_schema import AsyncJSONDeserializer, AsyncJSONSerializer

__all__ = ["AsyncJSONDeserializer", "AsyncJSONSerializer"]
