"""The JSON Schema field walker: visits a document's properties along its schema and applies
a field transform to the string/number/boolean/enum fields the rule's tags select.

As confluent-kafka's ``common/json_schema.transform``: field names are JSON paths from
``$`` (``$.address.city``); a property's tags are its ``confluent:tags`` plus those of the
schema's metadata ``tags`` patterns; ``allOf`` subschemas are all walked, the first
``oneOf`` subschema the value matches, every matching ``anyOf`` one; ``$ref`` is followed
within the document (``#/...``) and into referenced schemas (by the reference's name).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema_rs

from serdes.rules.context import (
    FieldTransform,
    FieldTransformer,
    FieldType,
    RuleContext,
    store_field_result,
)

__all__ = ["json_field_transformer", "json_field_type"]

_LEAVES = frozenset(
    {FieldType.ENUM, FieldType.STRING, FieldType.INT, FieldType.DOUBLE, FieldType.BOOLEAN}
)
_SCALARS = {
    "string": FieldType.STRING,
    "integer": FieldType.INT,
    "number": FieldType.DOUBLE,
    "boolean": FieldType.BOOLEAN,
    "null": FieldType.NULL,
    "array": FieldType.ARRAY,
}


def json_field_type(schema: Any) -> FieldType:
    if isinstance(schema, bool) or not isinstance(schema, dict):
        return FieldType.COMBINED
    kind = schema.get("type")
    if schema.get("const") is not None or schema.get("enum") is not None:
        return FieldType.ENUM
    if kind == "object":
        return FieldType.RECORD if schema.get("properties") else FieldType.MAP
    if isinstance(kind, str) and kind in _SCALARS:
        return _SCALARS[kind]
    if schema.get("properties") is not None:
        return FieldType.RECORD
    return FieldType.NULL


def _json_type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Walker:
    def __init__(self, root: Any, resources: Callable[[], dict[str, Any]]) -> None:
        self.root = root
        self._resources = resources
        self._loaded: dict[str, Any] | None = None
        self._validators: dict[int, Any] = {}

    def resolve(self, ref: str, base: Any) -> Any:
        name, _, pointer = ref.partition("#")
        if name:
            if self._loaded is None:
                self._loaded = self._resources()
            doc = self._loaded.get(name)
            if doc is None:
                return None
        else:
            doc = base
        for part in (p for p in pointer.split("/") if p):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(doc, list):
                doc = doc[int(part)]
            elif isinstance(doc, dict):
                doc = doc.get(part)
            else:
                return None
        return doc

    def matches(self, schema: Any, value: Any) -> bool:
        validator = self._validators.get(id(schema))
        if validator is None:
            doc = schema
            if isinstance(schema, dict) and isinstance(self.root, dict):
                doc = {**schema}
                for key in ("$defs", "definitions"):
                    if key in self.root and key not in doc:
                        doc[key] = self.root[key]
            try:
                validator = jsonschema_rs.validator_for(doc)
            except Exception:
                return False
            self._validators[id(schema)] = validator
        try:
            return bool(validator.is_valid(value))
        except Exception:
            return False

    def walk(
        self, ctx: RuleContext, schema: Any, base: Any, path: str, message: Any, fn: FieldTransform
    ) -> Any:
        if message is None or schema is None or isinstance(schema, bool):
            return message
        fc = ctx.current_field()
        if fc is not None:
            fc.field_type = json_field_type(schema)
        kinds = schema.get("type")
        if isinstance(kinds, list) and kinds:
            actual = _json_type_of(message)
            for kind in kinds:
                if kind == actual or (kind == "number" and actual == "integer"):
                    return self.walk(ctx, {**schema, "type": kind}, base, path, message, fn)
        all_of, any_of, one_of = schema.get("allOf"), schema.get("anyOf"), schema.get("oneOf")
        if all_of is not None or any_of is not None or one_of is not None:
            if all_of is not None:
                for sub in all_of:
                    message = self.walk(ctx, sub, base, path, message, fn)
            elif one_of is not None:
                for sub in one_of:
                    if self.matches(sub, message):
                        message = self.walk(ctx, sub, base, path, message, fn)
                        break
            else:
                for sub in any_of:
                    if self.matches(sub, message):
                        message = self.walk(ctx, sub, base, path, message, fn)
            props = schema.get("properties")
            if props is not None and isinstance(message, dict):
                for name, prop in props.items():
                    if isinstance(prop, dict):
                        self.field(ctx, path, name, message, prop, base, fn)
            items = schema.get("items")
            if items is not None and isinstance(message, list):
                message = [self.walk(ctx, items, base, path, item, fn) for item in message]
            return message
        items = schema.get("items")
        if items is not None and isinstance(message, list):
            return [self.walk(ctx, items, base, path, item, fn) for item in message]
        ref = schema.get("$ref")
        if ref is not None:
            target = self.resolve(ref, base)
            name = ref.partition("#")[0]
            new_base = self._loaded.get(name, base) if name and self._loaded else base
            return self.walk(ctx, target, new_base, path, message, fn)
        kind = json_field_type(schema)
        if kind is FieldType.RECORD:
            if not isinstance(message, dict):
                return message
            for name, prop in (schema.get("properties") or {}).items():
                if isinstance(prop, dict):
                    self.field(ctx, path, name, message, prop, base, fn)
            return message
        if kind in _LEAVES and fc is not None:
            tags = ctx.rule.tags
            if not tags or not fc.tags.isdisjoint(tags):
                return fn(ctx, fc, message)
        return message

    def field(
        self,
        ctx: RuleContext,
        path: str,
        name: str,
        message: dict[str, Any],
        prop: dict[str, Any],
        base: Any,
        fn: FieldTransform,
    ) -> None:
        full_name = f"{path}.{name}"
        try:
            inline = set(prop.get("confluent:tags") or ())
            ctx.enter_field(message, full_name, name, json_field_type(prop), inline)
            value = message.get(name)
            if value is not None:
                result = self.walk(ctx, prop, base, full_name, value, fn)
                if store_field_result(ctx, result):
                    message[name] = result
        finally:
            ctx.exit_field()


def json_field_transformer(doc: Any, resources: Callable[[], dict[str, Any]]) -> FieldTransformer:
    """The field walker for documents of the schema ``doc``; ``resources`` gives the
    referenced schemas by reference name (called the first time a ``$ref`` needs one)."""
    walker = _Walker(doc, resources)

    def transformer(ctx: RuleContext, fn: FieldTransform, message: Any) -> Any:
        return walker.walk(ctx, doc, doc, "$", message, fn)

    return transformer


def json_references(schema: Any, client: Any) -> dict[str, Any]:
    """The documents ``schema`` references, by reference name (transitively)."""
    import json

    out: dict[str, Any] = {}

    def add(refs: Any) -> None:
        for ref in refs or ():
            if ref.name in out or client is None:
                continue
            referenced = client.get_version(ref.subject, ref.version, True)
            out[ref.name] = json.loads(referenced.schema.schema_str)
            add(referenced.schema.references)

    add(getattr(schema, "references", None))
    return out
