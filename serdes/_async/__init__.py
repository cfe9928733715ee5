"""The asyncio faces of serdes: the sync code run with its I/O awaited (see ``bridge``).

``serdes.AsyncSchemaRegistryClient``, ``serdes.avro.AsyncAvroSerializer`` (and the Protobuf and
JSON Schema ones) are the public names; the modules here mirror confluent-kafka's ``_async``
import paths.
"""
