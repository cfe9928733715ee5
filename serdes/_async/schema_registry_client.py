"""The import path of ``confluent_kafka.schema_registry._async.schema_registry_client``."""

from serdes._async.client import AsyncSchemaRegistryClient

__all__ = ["AsyncSchemaRegistryClient"]
