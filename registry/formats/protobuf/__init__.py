"""The Protobuf schema format: protoc parsing, Confluent Schema Registry 7.9 texts and rules.

``ProtobufFormat().parse(text, dependencies, strict=...)`` gives a :class:`ProtobufSchema` with
``canonical()``, ``normalized()`` and ``formatted(fmt)`` (``serialized``, ``ignore_extensions``);
``ProtobufFormat().compatibility_errors`` lists Confluent-style differences.
"""

from registry.formats.protobuf.format import ProtobufFormat, ProtobufSchema

__all__ = ["ProtobufFormat", "ProtobufSchema"]
