"""The probe reader: the least a reader schema can take from a writer record and still tell,
in Spark's PERMISSIVE ``from_avro``, whether the record decodes.

Resolving a writer record to a reader that lacks its fields, Avro reads past (skips) them
without building values, and a truncated or garbled payload still fails. What skipping does
not check is an enum's index (it reads an int) so the probe keeps every path of the writer
that leads to an enum; a union keeps all its branches (its index is checked), each branch as
little as resolves. One extra non-null boolean field, filled from its default, is null in
Spark's PERMISSIVE answer exactly when the record did not decode.
"""

from __future__ import annotations

import json
from typing import Any

from spark_serdes.avro import _qualified
from spark_serdes.types import named_types

__all__ = ["probe_reader"]

_NAMED = ("record", "error", "enum", "fixed")


def probe_reader(writer_text: str, field: str = "decoded") -> tuple[str, str] | None:
    """The probe reader for a writer record schema, as JSON text, and the name of its boolean
    field (``field``, made unique among the writer's fields); ``None`` for a writer that is not
    a record (its full PERMISSIVE decode is then the check)."""
    writer = _qualified(writer_text)
    if not isinstance(writer, dict) or writer.get("type") not in ("record", "error"):
        return None
    taken = {f["name"] for f in writer["fields"]}
    while field in taken:
        field += "_"
    named = named_types(writer)
    builder = _Builder(named, _names_with_enums(named))
    top = builder.build(writer, in_union=False)
    fields = top["fields"] if isinstance(top, dict) else []
    flag = {"name": field, "type": "boolean", "default": True}
    return json.dumps({"type": "record", "name": writer["name"], "fields": [*fields, flag]}), field


def _refs(schema: Any, named: dict[str, Any]) -> tuple[bool, set[str]]:
    """Whether ``schema`` has an enum outside any named type, and the named types it uses."""
    if isinstance(schema, list):
        found, refs = False, set()
        for branch in schema:
            f, r = _refs(branch, named)
            found, refs = found or f, refs | r
        return found, refs
    if isinstance(schema, str):
        return False, {schema} if schema in named else set()
    if not isinstance(schema, dict):
        return False, set()
    kind = schema.get("type")
    if kind in _NAMED and "name" in schema:
        return kind == "enum", {schema["name"]}
    if kind == "array":
        return _refs(schema["items"], named)
    if kind == "map":
        return _refs(schema["values"], named)
    if isinstance(kind, dict | list):
        return _refs(kind, named)
    return False, set()


def _names_with_enums(named: dict[str, Any]) -> set[str]:
    """The named types that are, or lead to, an enum (through fields, items, values,
    branches; recursive types included)."""
    edges: dict[str, set[str]] = {}
    out = set()
    for name, schema in named.items():
        if schema.get("type") == "enum":
            out.add(name)
        found, refs = False, set()
        for f in schema.get("fields", ()) if schema.get("type") in ("record", "error") else ():
            f_found, f_refs = _refs(f["type"], named)
            found, refs = found or f_found, refs | f_refs
        if found:
            out.add(name)
        edges[name] = refs
    changed = True
    while changed:
        changed = False
        for name, refs in edges.items():
            if name not in out and refs & out:
                out.add(name)
                changed = True
    return out


class _Builder:
    """Builds the pruned reader; every named type has one shape, defined at first use."""

    def __init__(self, named: dict[str, Any], with_enums: set[str]) -> None:
        self.named = named
        self.with_enums = with_enums
        self.defined: set[str] = set()

    def needed(self, schema: Any) -> bool:
        found, refs = _refs(schema, self.named)
        return found or bool(refs & self.with_enums)

    def build(self, schema: Any, in_union: bool) -> Any:
        """The pruned reader for ``schema``; ``None`` where nothing of it needs reading (never
        inside a union: every branch must resolve)."""
        if isinstance(schema, list):
            if not in_union and not self.needed(schema):
                return None
            return [self.build(branch, in_union=True) for branch in schema]
        if isinstance(schema, str):
            if schema not in self.named:  # a primitive
                return schema if in_union else None
            if not in_union and schema not in self.with_enums:
                return None
            if schema in self.defined:
                return schema
            return self.build(self.named[schema], in_union)
        kind = schema.get("type")
        if isinstance(kind, dict | list):
            return self.build(kind, in_union)
        if kind in _NAMED:
            name = schema["name"]
            if not in_union and name not in self.with_enums:
                return None
            if name in self.defined:
                return name
            self.defined.add(name)
            if kind == "enum":
                return {"type": "enum", "name": name, "symbols": schema["symbols"]}
            if kind == "fixed":
                return {"type": "fixed", "name": name, "size": schema["size"]}
            fields = []
            for f in schema["fields"]:
                pruned = self.build(f["type"], in_union=False)
                if pruned is not None:
                    fields.append({"name": f["name"], "type": pruned})
            return {"type": "record", "name": name, "fields": fields}
        if kind in ("array", "map"):
            key = "items" if kind == "array" else "values"
            inner = self.build(schema[key], in_union=False)
            if inner is None:
                if not in_union:
                    return None
                inner = self.build(schema[key], in_union=True)
            return {"type": kind, key: inner}
        return kind if in_union else None  # a primitive type object
