"""JSON Schema -> Spark type: the natural Spark type of the values a schema allows.

Rules, applied to the reader schema (a ``$ref`` is followed first, and ``true`` / ``{}`` allow
anything):

==========================================================  ====================================
JSON Schema                                                 Spark type
==========================================================  ====================================
``{"type": "object", "properties": {...}}`` (``type`` may   ``struct`` with the fields in
be left out when ``properties`` is given)                   ``properties`` order; a field is
                                                            nullable unless it is ``required``
                                                            and its schema does not allow null
``{"type": "object", "additionalProperties": S}`` with no   ``map<string, T(S)>``
``properties`` (S a schema, not ``true``/``false``)
``{"type": "string"}``                                      ``string``
``... "format": "date"`` / ``"date-time"``                  ``date`` / ``timestamp``, parsed as
                                                            Spark's ``from_json`` parses them
``{"type": "integer"}``                                     ``bigint`` (long)
``{"type": "number"}``, ``["integer", "number"]``            ``double``
``{"type": "boolean"}``                                     ``boolean``
``{"type": "array", "items": S}``                           ``array<T(S)>`` (``items`` absent:
                                                            ``array<string>`` of raw JSON)
``["null", T]``, ``oneOf``/``anyOf`` of ``{"type": "null"}``  ``T``, nullable
and one other schema, ``allOf`` of one schema
``enum`` / ``const`` whose values are all strings           ``string`` (all integers: ``bigint``,
(``null`` allowed among them)                               all booleans: ``boolean``)
``$ref``: ``#/definitions/X``, ``#/$defs/X`` (any JSON      the referenced schema's type
pointer into the same document), or the name of a schema
reference (another subject's schema), optionally with a
``#/...`` pointer into it
anything else: ``{}``, ``true``, free unions (``["string",  ``string`` holding the value's JSON
"integer"]``, ``oneOf`` of several schemas), ``{"type":     text (a string value as itself)
"object"}`` with no properties, ``{"type": "null"}``,
tuples (``items`` as a list, ``prefixItems``), ``allOf``
of several schemas
==========================================================  ====================================

When a schema has ``type``, ``properties``, ``items``, ``enum`` or ``const``, those decide;
``oneOf``/``anyOf``/``allOf`` next to them only constrain values and are ignored for the type.
A ``$ref`` that leads back to a schema it is inside (a recursive schema) raises ``ValueError``:
Spark types cannot be recursive.

The column functions return this type made nullable (every field, element and value), as
Spark's ``from_json`` does with its schema: a JSON document may leave out any field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import types as T

__all__ = ["json_schema_to_spark", "resolve_pointer"]

_SCALARS: dict[str, T.DataType] = {
    "integer": T.LongType(),
    "number": T.DoubleType(),
    "boolean": T.BooleanType(),
    "string": T.StringType(),
}
_FORMATS: dict[str, T.DataType] = {"date": T.DateType(), "date-time": T.TimestampType()}
_DECIDING = ("type", "properties", "items", "enum", "const")


def json_schema_to_spark(schema: Any, references: Mapping[str, Any] | None = None) -> T.DataType:
    """The Spark type of ``schema`` (a parsed JSON Schema document).

    ``references`` maps the names a ``$ref`` may use for other subjects' schemas (the schema
    references' ``name``) to those parsed documents.
    """
    return _Mapper(dict(references or {})).map(schema, schema, ())[0]


def resolve_pointer(document: Any, pointer: str, ref: str) -> Any:
    """The part of ``document`` a JSON pointer (``/definitions/X``, RFC 6901) names."""
    node = document
    if pointer in ("", "/"):
        return document if pointer == "" else _step(document, "", ref)
    if not pointer.startswith("/"):
        raise ValueError(f"$ref {ref!r}: {pointer!r} is not a JSON pointer")
    for raw in pointer[1:].split("/"):
        node = _step(node, raw.replace("~1", "/").replace("~0", "~"), ref)
    return node


def _step(node: Any, key: str, ref: str) -> Any:
    if isinstance(node, dict) and key in node:
        return node[key]
    if isinstance(node, list) and key.isdigit() and int(key) < len(node):
        return node[int(key)]
    raise ValueError(f"$ref {ref!r}: {key!r} not found in the schema")


class _Mapper:
    def __init__(self, references: dict[str, Any]) -> None:
        self.references = references

    def map(
        self, schema: Any, document: Any, stack: tuple[tuple[int, str], ...]
    ) -> tuple[T.DataType, bool]:
        """(type, nullable) of one schema; ``document`` is the one its ``$ref``s point into."""
        if schema is True or schema == {}:
            return T.StringType(), True
        if schema is False:
            raise ValueError("the schema false allows no value; it has no Spark type")
        if not isinstance(schema, dict):
            raise ValueError(f"not a JSON schema: {schema!r}")
        if "$ref" in schema:
            return self._ref(schema["$ref"], document, stack)
        if any(key in schema for key in _DECIDING):
            return self._typed(schema, document, stack)
        for key in ("oneOf", "anyOf", "allOf"):
            if key in schema:
                return self._combined(key, schema[key], document, stack)
        return T.StringType(), True

    def _ref(
        self, ref: Any, document: Any, stack: tuple[tuple[int, str], ...]
    ) -> tuple[T.DataType, bool]:
        if not isinstance(ref, str):
            raise ValueError(f"$ref must be a string, not {ref!r}")
        name, _, pointer = ref.partition("#")
        if name:
            if name not in self.references:
                known = sorted(self.references) or "none"
                raise ValueError(
                    f"$ref {ref!r} names no schema reference of this schema (references: {known})"
                )
            document = self.references[name]
        key = (id(document), pointer)
        if key in stack:
            raise ValueError(
                f"recursive $ref {ref!r}: the schema contains itself, and Spark types cannot be "
                "recursive"
            )
        target = resolve_pointer(document, pointer, ref)
        return self.map(target, document, (*stack, key))

    def _typed(
        self, schema: dict[str, Any], document: Any, stack: tuple[tuple[int, str], ...]
    ) -> tuple[T.DataType, bool]:
        if "enum" in schema or "const" in schema:
            values = schema["enum"] if "enum" in schema else [schema["const"]]
            return _of_values(values)
        kinds = schema.get("type")
        if kinds is None:
            kinds = "object" if "properties" in schema else "array" if "items" in schema else None
        if kinds is None:
            return T.StringType(), True
        listed = [kinds] if isinstance(kinds, str) else list(kinds)
        nullable = "null" in listed
        rest = sorted({k for k in listed if k != "null"})
        if rest == ["integer", "number"]:
            rest = ["number"]
        if len(rest) != 1:
            return T.StringType(), True
        kind = rest[0]
        if kind == "object":
            return self._object(schema, document, stack)[0], nullable
        if kind == "array":
            items = schema.get("items", True)
            if isinstance(items, list) or "prefixItems" in schema:
                return T.StringType(), nullable
            element, element_nullable = self.map(items, document, stack)
            return T.ArrayType(element, element_nullable), nullable
        if kind == "string":
            return _FORMATS.get(schema.get("format"), T.StringType()), nullable
        if kind in _SCALARS:
            return _SCALARS[kind], nullable
        raise ValueError(f"unknown JSON Schema type {kind!r}")

    def _object(
        self, schema: dict[str, Any], document: Any, stack: tuple[tuple[int, str], ...]
    ) -> tuple[T.DataType, bool]:
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties:
            required = set(schema.get("required") or ())
            fields = []
            for name, sub in properties.items():
                data_type, nullable = self.map(sub, document, stack)
                fields.append(T.StructField(name, data_type, nullable or name not in required))
            return T.StructType(fields), False
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and properties is None:
            value, value_nullable = self.map(extra, document, stack)
            return T.MapType(T.StringType(), value, value_nullable), False
        return T.StringType(), True

    def _combined(
        self, key: str, branches: Any, document: Any, stack: tuple[tuple[int, str], ...]
    ) -> tuple[T.DataType, bool]:
        if not isinstance(branches, list) or not branches:
            raise ValueError(f"{key} must be a non-empty list of schemas")
        if key == "allOf":
            if len(branches) == 1:
                return self.map(branches[0], document, stack)
            return T.StringType(), True
        rest = [b for b in branches if not _is_null(b)]
        if len(rest) != 1:
            return T.StringType(), True
        data_type, nullable = self.map(rest[0], document, stack)
        return data_type, nullable or len(rest) < len(branches)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null" and len(schema) == 1


def _of_values(values: Any) -> tuple[T.DataType, bool]:
    if not isinstance(values, list) or not values:
        raise ValueError("enum must be a non-empty list")
    nullable = any(v is None for v in values)
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, str) for v in present):
        return T.StringType(), nullable
    if present and all(isinstance(v, bool) for v in present):
        return T.BooleanType(), nullable
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return T.LongType(), nullable
    return T.StringType(), True
