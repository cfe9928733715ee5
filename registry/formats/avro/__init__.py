"""The Avro schema format: Apache Avro Java 1.11 behaviour as Confluent Schema Registry 7.9 uses it.

``AvroFormat().parse(text, dependencies, strict=...)`` gives an :class:`AvroSchema` with
``canonical()``, ``normalized()`` and ``formatted(fmt)``; ``AvroFormat().compatibility_errors``
lists Confluent-style differences.
"""

from registry.formats.avro.format import AvroFormat, AvroSchema

__all__ = ["AvroFormat", "AvroSchema"]
