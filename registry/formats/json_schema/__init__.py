"""The JSON Schema format: Confluent Schema Registry 7.9 behaviour (Everit model, Jackson texts,
``json-schema-provider`` diff rules) plus 8.2's ``compatibilityPolicy``.

``JsonSchemaFormat(policy="STRICT").parse(text, dependencies, strict=...)`` gives a
:class:`JsonSchema` with ``canonical()`` and ``normalized()``;
``JsonSchemaFormat().compatibility_errors(reader, writer, policy="LENIENT")`` lists
Confluent-style differences.
"""

from registry.formats.json_schema.differences import LENIENT, STRICT, Difference
from registry.formats.json_schema.format import JsonSchema, JsonSchemaFormat

__all__ = ["LENIENT", "STRICT", "Difference", "JsonSchema", "JsonSchemaFormat"]
