"""The Avro field walker: visits the fields of a record (a dict) along its parsed schema
(fastavro's form) and applies a field transform to those the rule's tags select.

As confluent-kafka's ``common/avro.transform``: a field's name is ``Record.field`` with the
record's full name; its tags are its ``confluent:tags`` plus those the schema's metadata
``tags`` patterns give; a union is walked along the branch the value matches; a CONDITION
failing on a field raises ``RuleConditionError``.
"""

from __future__ import annotations

import contextvars
from typing import Any

from serdes.rules.context import (
    FieldTransform,
    FieldTransformer,
    FieldType,
    RuleContext,
    store_field_result,
)

__all__ = ["avro_field_transformer", "avro_inline_tags"]

# The fields worth visiting per record for the rule being run (None: all of them).
_VISIT: contextvars.ContextVar[dict[str, tuple[dict[str, Any], ...]] | None] = (
    contextvars.ContextVar("serdes_avro_visit", default=None)
)

_TYPES = {
    "record": FieldType.RECORD,
    "error": FieldType.RECORD,
    "enum": FieldType.ENUM,
    "array": FieldType.ARRAY,
    "map": FieldType.MAP,
    "union": FieldType.COMBINED,
    "fixed": FieldType.FIXED,
    "string": FieldType.STRING,
    "bytes": FieldType.BYTES,
    "int": FieldType.INT,
    "long": FieldType.LONG,
    "float": FieldType.FLOAT,
    "double": FieldType.DOUBLE,
    "boolean": FieldType.BOOLEAN,
    "null": FieldType.NULL,
}


def _named(parsed: Any) -> dict[str, Any]:
    return parsed.get("__named_schemas", {}) if isinstance(parsed, dict) else {}


def _resolve(schema: Any, named: dict[str, Any]) -> Any:
    while isinstance(schema, str) and schema in named:
        schema = named[schema]
    return schema


def field_type(schema: Any, named: dict[str, Any]) -> FieldType:
    schema = _resolve(schema, named)
    if isinstance(schema, list):
        return FieldType.COMBINED
    kind = schema.get("type") if isinstance(schema, dict) else schema
    if isinstance(kind, (dict, list)):
        return field_type(kind, named)
    return _TYPES.get(kind, FieldType.NULL)


def _accepts(schema: Any, value: Any, named: dict[str, Any]) -> bool:
    """Whether ``value`` can be written as ``schema`` (to pick a union branch)."""
    schema = _resolve(schema, named)
    if isinstance(schema, list):  # a union nested in a record being matched
        return any(_accepts(branch, value, named) for branch in schema)
    kind = schema.get("type") if isinstance(schema, dict) else schema
    if isinstance(kind, (dict, list)):
        return _accepts(kind, value, named)
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("int", "long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("float", "double"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind in ("bytes", "fixed"):
        return isinstance(value, (bytes, bytearray))
    if kind == "enum":
        return isinstance(value, str) and value in schema.get("symbols", ())
    if kind == "array":
        return isinstance(value, (list, tuple))
    if kind == "map":
        return isinstance(value, dict)
    if kind in ("record", "error"):
        if not isinstance(value, dict):
            return False
        return all(f["name"] in value or "default" in f for f in schema["fields"]) and all(
            _accepts(f["type"], value[f["name"]], named)
            for f in schema["fields"]
            if f["name"] in value
        )
    return False


def _branch_name(schema: Any, named: dict[str, Any]) -> str | None:
    schema = _resolve(schema, named) if not isinstance(schema, str) else schema
    if isinstance(schema, str):
        return schema
    return schema.get("name") if isinstance(schema, dict) else None


def _union(schema: list[Any], value: Any, named: dict[str, Any]) -> tuple[Any, Any]:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        for branch in schema:
            name = _branch_name(branch, named)
            if name == value[0] or (name and name.rsplit(".", 1)[-1] == value[0]):
                return branch, value[1]
        return None, value
    if isinstance(value, dict) and isinstance(value.get("-type"), str):
        # fastavro's way to name the branch of a record: {"-type": "ns.Name", ...fields}
        for branch in schema:
            if _branch_name(branch, named) == value["-type"]:
                return branch, value
    for branch in schema:
        if _accepts(branch, value, named):
            return branch, value
    return None, value


def _records_in(schema: Any, named: dict[str, Any], seen: set[str] | None = None) -> set[str]:
    """The record names a field type holds directly (through unions, arrays, maps)."""
    out: set[str] = set()
    if isinstance(schema, str):
        schema = named.get(schema, schema)
    if isinstance(schema, list):
        for branch in schema:
            out |= _records_in(branch, named)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in ("record", "error"):
            out.add(schema["name"])
        elif kind == "array":
            out |= _records_in(schema["items"], named)
        elif kind == "map":
            out |= _records_in(schema["values"], named)
        elif isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind in named):
            out |= _records_in(kind, named)
    return out


def _fields_to_visit(
    ctx: RuleContext, parsed: Any, named: dict[str, Any]
) -> dict[str, tuple[dict[str, Any], ...]]:
    """Per record, the fields a rule with tags can do anything to: those whose tags meet
    the rule's, and those whose type holds a record with such a field. Visiting only these
    gives the same result as visiting all (the others are never transformed)."""
    wanted = set(ctx.rule.tags or ())
    records: dict[str, dict[str, Any]] = {}
    if isinstance(parsed, dict) and parsed.get("type") in ("record", "error"):
        records[parsed["name"]] = parsed
    pending = [parsed, *named.values()]
    while pending:
        schema = pending.pop()
        for name in _records_in(schema, named):
            record = named.get(name)
            if record is None and isinstance(schema, dict) and schema.get("name") == name:
                record = schema
            if record is not None and name not in records:
                records[name] = record
                pending.extend(f["type"] for f in record["fields"])
    inline = ctx.inline_tags or {}

    def tagged(record: str, field: dict[str, Any]) -> bool:
        full = f"{record}.{field['name']}"
        return not wanted.isdisjoint(inline.get(full, ())) or not wanted.isdisjoint(
            ctx.get_tags(full)
        )

    holds = {
        r: [_records_in(f["type"], named) for f in rec["fields"]] for r, rec in records.items()
    }
    relevant = {r: any(tagged(r, f) for f in rec["fields"]) for r, rec in records.items()}
    changed = True
    while changed:
        changed = False
        for r in records:
            if not relevant[r] and any(relevant.get(x, False) for h in holds[r] for x in h):
                relevant[r] = changed = True
    return {
        r: tuple(
            f
            for f, h in zip(rec["fields"], holds[r], strict=True)
            if tagged(r, f) or any(relevant.get(x, False) for x in h)
        )
        for r, rec in records.items()
    }


def _walk(
    ctx: RuleContext, schema: Any, named: dict[str, Any], message: Any, fn: FieldTransform
) -> Any:
    if schema is None:
        return message
    schema = _resolve(schema, named)
    fc = ctx.current_field()
    if fc is not None:
        fc.field_type = field_type(schema, named)
    if isinstance(schema, list):
        branch, inner = _union(schema, message, named)
        if branch is None:
            return message
        result = _walk(ctx, branch, named, inner, fn)
        if isinstance(message, tuple) and len(message) == 2 and _accepts(branch, result, named):
            return (message[0], result)
        return result
    if isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind in named):
            return _walk(ctx, kind, named, message, fn)
        if kind == "array":
            if not isinstance(message, list):
                return message
            return [_walk(ctx, schema["items"], named, item, fn) for item in message]
        if kind == "map":
            if not isinstance(message, dict):
                return message
            return {k: _walk(ctx, schema["values"], named, v, fn) for k, v in message.items()}
        if kind in ("record", "error"):
            if not isinstance(message, dict):
                return message
            record = schema["name"]
            visit = _VISIT.get()
            fields = visit.get(record, ()) if visit is not None else schema["fields"]
            for field in fields:
                name = field["name"]
                if name in message:
                    _field(ctx, record, field, named, message, fn)
            return message
    if fc is not None:
        tags = ctx.rule.tags
        if not tags or not fc.tags.isdisjoint(tags):
            return fn(ctx, fc, message)
    return message


def _field(
    ctx: RuleContext,
    record: str,
    field: dict[str, Any],
    named: dict[str, Any],
    message: dict[str, Any],
    fn: FieldTransform,
) -> None:
    name = field["name"]
    try:
        ctx.enter_field(message, f"{record}.{name}", name, field_type(field["type"], named), None)
        result = _walk(ctx, field["type"], named, message[name], fn)
        if store_field_result(ctx, result):
            message[name] = result
    finally:
        ctx.exit_field()


def avro_inline_tags(parsed: Any) -> dict[str, set[str]]:
    """``Record.field`` (full record names) to the field's ``confluent:tags``."""
    named = dict(_named(parsed))
    if isinstance(parsed, dict) and parsed.get("name") and parsed["name"] not in named:
        named[parsed["name"]] = parsed
    tags: dict[str, set[str]] = {}
    seen: set[str] = set()

    def visit(schema: Any) -> None:
        if isinstance(schema, str):
            schema = named.get(schema)
        if isinstance(schema, list):
            for branch in schema:
                visit(branch)
            return
        if not isinstance(schema, dict):
            return
        kind = schema.get("type")
        if isinstance(kind, (dict, list)):
            visit(kind)
        elif kind == "array":
            visit(schema.get("items"))
        elif kind == "map":
            visit(schema.get("values"))
        elif kind in ("record", "error"):
            record = schema.get("name")
            if record in seen:
                return
            seen.add(record)
            for field in schema.get("fields", ()):
                if field.get("confluent:tags") is not None:
                    tags.setdefault(f"{record}.{field['name']}", set()).update(
                        field["confluent:tags"]
                    )
                visit(field.get("type"))

    visit(parsed)
    return tags


def avro_field_transformer(parsed: Any) -> FieldTransformer:
    """The field walker for messages of the parsed schema ``parsed``."""
    named = _named(parsed)
    plans: dict[Any, tuple[Any, Any, dict[str, tuple[dict[str, Any], ...]]]] = {}

    def transformer(ctx: RuleContext, fn: FieldTransform, message: Any) -> Any:
        if not ctx.rule.tags:
            return _walk(ctx, parsed, named, message, fn)
        key = (id(ctx.target), id(ctx.inline_tags), tuple(ctx.rule.tags))
        found = plans.get(key)
        if found is None or found[0] is not ctx.target or found[1] is not ctx.inline_tags:
            found = (ctx.target, ctx.inline_tags, _fields_to_visit(ctx, parsed, named))
            plans[key] = found
        token = _VISIT.set(found[2])
        try:
            return _walk(ctx, parsed, named, message, fn)
        finally:
            _VISIT.reset(token)

    return transformer
