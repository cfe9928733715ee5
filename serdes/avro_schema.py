"""Avro schemas as the serializers use them: declarations, references, fastavro's parsed form.

``parse_avro_schema`` fetches a schema's references (each subject version once) and parses the
whole with fastavro; a top-level union gets its named types inlined so it stands alone.
"""

from __future__ import annotations

import json
from typing import Any

from fastavro import parse_schema

from serdes._serde import referenced_schemas
from serdes.errors import SerializationError
from serdes.schema import Schema

SCHEMA_TYPE = "AVRO"


def schema_loads(schema_str: str) -> Schema:
    """A declaration as confluent-kafka registers it: a bare primitive becomes ``{"type": ...}``."""
    text = schema_str.strip()
    if text and text[0] not in "{[":
        text = '{"type":' + text + "}"
    return Schema(text, schema_type=SCHEMA_TYPE)


def as_schema(value: Any) -> Schema | None:
    if value is None:
        return None
    if isinstance(value, str):
        return schema_loads(value)
    if isinstance(value, Schema):
        return value
    if hasattr(value, "schema_str") and hasattr(value, "to_dict"):  # confluent-kafka's Schema
        return Schema.from_dict(value.to_dict())
    raise TypeError("You must pass either schema string or schema object")


def parse_avro_schema(schema: Schema, client: Any) -> Any:
    """fastavro's parsed form of ``schema``, its references fetched (each subject version once)."""
    named: dict[str, Any] = {}
    no_client = (
        "schema references {subject} version {version} but no SchemaRegistryClient was given "
        "to fetch it"
    )
    for _, referenced in referenced_schemas(schema, client, no_client):
        parse_schema(json.loads(referenced.schema_str), named_schemas=named)
    if schema.schema_str is None:
        raise SerializationError("schema has no schema string")
    parsed = parse_schema(json.loads(schema.schema_str), named_schemas=named)
    if isinstance(parsed, list):
        # A top-level union has no place for fastavro's named types, and fastavro re-parses a
        # list on every read: inline each named type where first used, so it stands alone.
        return _ParsedUnion(parse_schema(_inline_named(parsed, named, set())), named)
    return parsed


def _inline_named(node: Any, named: dict[str, Any], defined: set[str]) -> Any:
    """``node`` with each named type's definition put where it is first referenced."""
    if isinstance(node, str):
        if node in named and node not in defined:
            defined.add(node)
            return _inline_named(named[node], named, defined)
        return node
    if isinstance(node, list):
        return [_inline_named(item, named, defined) for item in node]
    if isinstance(node, dict):
        name = node.get("name")
        if node.get("type") in ("record", "error", "enum", "fixed") and isinstance(name, str):
            defined.add(name)
        out = {}
        for key, value in node.items():
            if key.startswith("__"):
                continue
            if key in ("type", "items", "values"):
                value = _inline_named(value, named, defined)
            elif key == "fields":
                value = [{**f, "type": _inline_named(f["type"], named, defined)} for f in value]
            out[key] = value
        return out
    return node


class _ParsedUnion(list):
    """fastavro's parsed top-level union, with the named types (references included) it needs."""

    def __init__(self, branches: list[Any], named: dict[str, Any]) -> None:
        super().__init__(branches)
        self.named_schemas = named


def record_name(schema: Schema, parsed: Any) -> str | None:
    if isinstance(parsed, dict):
        declared = json.loads(schema.schema_str or "null")
        fallback = declared.get("type") if isinstance(declared, dict) else None
        return parsed.get("name", fallback)
    return None


def is_bytes_schema(parsed: Any) -> bool:
    return parsed == "bytes" or (isinstance(parsed, dict) and parsed.get("type") == "bytes")


# -- the guard: values fastavro would write wrongly without an error ----------------------------


def named_schemas(parsed: Any) -> dict[str, Any]:
    """The named types of a parsed schema; a top-level union's come from its branches."""
    if isinstance(parsed, dict):
        return dict(parsed.get("__named_schemas", {}))
    named: dict[str, Any] = dict(getattr(parsed, "named_schemas", {}))
    if isinstance(parsed, list):
        for branch in parsed:
            if isinstance(branch, dict):
                named.update(branch.get("__named_schemas", {}))
    return named
