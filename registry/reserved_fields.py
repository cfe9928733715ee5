"""Reserved fields (Confluent 8.x ``validateFields``): the ``confluent:reserved`` metadata
property names fields, comma separated, that a schema must not have at its top level, and that a
later version may not drop from its own ``confluent:reserved``.

Follows ``AbstractSchemaRegistry.validateReservedFields`` and ``ParsedSchema.getReservedFields``
(confluentinc/schema-registry 8.x); the top-level fields are each format's
``hasTopLevelField``. Pure functions: the caller decides whether ``validateFields`` is on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from registry.formats.base import ParsedSchema
from registry.path_numbers import java_trim

RESERVED = "confluent:reserved"
FIELD_REMOVED = (
    "The new schema has reserved field %s removed from its metadata which is present in the "
    "old schema's metadata."
)
FIELD_CONFLICTS = "The new schema has field that conflicts with the reserved field %s."


def reserved_fields(metadata: dict[str, Any] | None) -> list[str]:
    """``getReservedFields``: the trimmed, non-empty names of ``confluent:reserved``, in the
    order Java's ``HashSet`` (``Collectors.toSet()``) iterates them."""
    properties = (metadata or {}).get("properties") if isinstance(metadata, dict) else None
    value = properties.get(RESERVED) if isinstance(properties, dict) else None
    if not isinstance(value, str):
        return []
    names = [java_trim(name) for name in value.split(",")]
    return java_hash_set_order(name for name in names if name)


def reserved_field_errors(
    new: ParsedSchema,
    new_metadata: dict[str, Any] | None,
    previous_metadata: dict[str, Any] | None,
    has_previous: bool,
) -> list[str]:
    """``validateReservedFields``: the reserved names the previous version had and the new
    one drops, then the reserved names the new schema has as top-level fields."""
    updated = reserved_fields(new_metadata)
    messages: list[str] = []
    if has_previous:
        kept = set(updated)
        messages += [
            FIELD_REMOVED % name for name in reserved_fields(previous_metadata) if name not in kept
        ]
    if updated:
        fields = top_level_fields(new)
        messages += [FIELD_CONFLICTS % name for name in updated if name in fields]
    return messages


def top_level_fields(schema: ParsedSchema) -> set[str]:
    """The names each format's ``hasTopLevelField`` finds: an Avro record's fields, a JSON
    Schema's ``properties`` keys, the fields (not those of a ``oneof``) of a Protobuf file's
    top-level messages."""
    if schema.schema_type == "AVRO":
        root = json.loads(schema.canonical())
        if isinstance(root, dict) and root.get("type") == "record":
            return {str(f.get("name")) for f in root.get("fields") or [] if isinstance(f, dict)}
        return set()
    if schema.schema_type == "JSON":
        document = getattr(schema, "document", None)
        properties = document.get("properties") if isinstance(document, dict) else None
        return set(properties) if isinstance(properties, dict) else set()
    if schema.schema_type == "PROTOBUF":
        descriptor = schema.descriptor  # type: ignore[attr-defined]
        return {
            field.name
            for message in descriptor.message_type
            for field in message.field
            if not field.HasField("oneof_index") or field.proto3_optional
        }
    return set()


def java_hash_set_order(names: Iterable[str]) -> list[str]:
    """Distinct ``names`` in a ``java.util.HashSet``'s iteration order (buckets by the spread
    ``String.hashCode``, a bucket in insertion order; the table doubles past 3/4 full)."""
    distinct = list(dict.fromkeys(names))
    capacity = 16
    while len(distinct) > capacity * 3 // 4:
        capacity *= 2
    position = {name: index for index, name in enumerate(distinct)}
    return sorted(distinct, key=lambda n: (_spread(_java_hash(n)) & (capacity - 1), position[n]))


def _java_hash(text: str) -> int:
    units = text.encode("utf-16-be")
    value = 0
    for i in range(0, len(units), 2):
        value = (31 * value + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return value


def _spread(h: int) -> int:
    return h ^ (h >> 16)
