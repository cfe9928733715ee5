"""JSON Schema encoding of Spark columns: call-time check, native ``to_json``, Python engine.

The call-time check compares the column's Spark type with the schema where the schema says
plainly what it wants (``type``, ``properties``, ``required``, ``additionalProperties: false``,
``items``); parts using ``$ref``, ``oneOf``/``anyOf``/``allOf`` or no ``type`` are left to the
per-record validation.

Python engine: a batch becomes Python values once; timestamps and dates become the RFC 3339
strings ``orjson`` writes for ``datetime``/``date`` values, decimals JSON numbers, binary base64
strings (as Spark's ``to_json``), maps objects; each record is validated (``validate``) with
``serdes.json_schema``'s compiled validator and written with ``orjson.dumps``, so the bytes are
``serdes.json_schema.JSONSerializer``'s for the same values.

Native engine: ``to_json(column, {"ignoreNullFields": "false"})`` behind the frame. Its bytes
equal the Python engine's (same key order, no spaces, ``null`` kept) for strings, integers,
booleans, nulls, dates, binary, nested structs, arrays and string-keyed maps, and for doubles
written the same way by Java and Python (e.g. ``0.5``, ``1234.25``); they differ for
timestamps (Spark writes ``2024-01-01T12:30:15.123Z``, orjson ``...15.123000+00:00``), for
doubles Java writes in exponent form (``1.0E7`` vs ``10000000.0``), for float (32-bit) columns
and for decimals.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import orjson
import pyarrow as pa
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serdes.errors import SerializationError
from serdes.json_schema import compile_json_schema
from serdes.schema import Schema, SchemaReference
from spark_serdes._registry import client_for
from spark_serdes.arrow_values import arrow_to_pylist, spark_type_of
from spark_serdes.encoder_udf import encoder_udf

__all__ = ["JsonBatchEncoder", "check_json_type", "json_column"]

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = (*_INTEGRAL, T.FloatType, T.DoubleType, T.DecimalType)
_ACCEPTS: dict[str, tuple[type, ...]] = {
    "string": (T.StringType, T.DateType, T.TimestampType, T.TimestampNTZType, T.BinaryType),
    "integer": _INTEGRAL,
    "number": _NUMERIC,
    "boolean": (T.BooleanType,),
    "object": (T.StructType, T.MapType),
    "array": (T.ArrayType,),
    "null": (T.NullType,),
}
_COMPOSED = ("$ref", "oneOf", "anyOf", "allOf", "not", "if", "$dynamicRef")

Fixer = Callable[[Any], Any]


def check_json_type(dtype: T.DataType, schema: Any, path: str) -> None:
    """Raise ``ValueError`` where the Spark type plainly cannot match the schema."""
    if not isinstance(schema, dict) or any(k in schema for k in _COMPOSED):
        return
    where = f"field {path}" if path else "the column"
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        accepted = tuple(t for k in kinds for t in _ACCEPTS.get(k, ()))
        if not isinstance(dtype, accepted) and not isinstance(dtype, T.NullType):
            raise ValueError(
                f"{where}: Spark type {dtype.simpleString()} cannot be JSON type "
                f"{' or '.join(kinds)}"
            )
    if isinstance(dtype, T.StructType):
        properties = schema.get("properties") or {}
        given = {f.name for f in dtype.fields}
        missing = [n for n in schema.get("required") or [] if n not in given]
        if missing:
            raise ValueError(f"{where}: required property(ies) {missing} missing from the struct")
        if schema.get("additionalProperties") is False:
            extra = [n for n in given if n not in properties]
            if extra:
                raise ValueError(
                    f"{where}: struct field(s) {extra} are not properties of the schema, which "
                    f"allows no additional properties (properties: {sorted(properties)})"
                )
        for field in dtype.fields:
            if field.name in properties:
                sub = f"{path}.{field.name}" if path else field.name
                check_json_type(field.dataType, properties[field.name], sub)
    elif isinstance(dtype, T.ArrayType) and isinstance(schema.get("items"), dict):
        check_json_type(dtype.elementType, schema["items"], f"{path}[]")


def _fixer(dtype: T.DataType) -> Fixer | None:
    """Arrow's Python values of ``dtype`` -> JSON values (None only where a change is needed)."""
    if isinstance(dtype, T.StructType):
        fixes = [(f.name, _fixer(f.dataType)) for f in dtype.fields]
        fixes = [(n, fn) for n, fn in fixes if fn is not None]
        if not fixes:
            return None

        def struct(value: dict[str, Any]) -> dict[str, Any]:
            for name, fn in fixes:
                item = value[name]
                if item is not None:
                    value[name] = fn(item)
            return value

        return struct
    if isinstance(dtype, T.ArrayType):
        item = _fixer(dtype.elementType)
        if item is None:
            return None
        return lambda items: [None if v is None else item(v) for v in items]
    if isinstance(dtype, T.MapType):
        val = _fixer(dtype.valueType)
        key: Fixer = (lambda k: k) if isinstance(dtype.keyType, T.StringType) else str
        if val is None:
            return lambda pairs: {key(k): v for k, v in pairs}
        return lambda pairs: {key(k): None if v is None else val(v) for k, v in pairs}
    if isinstance(dtype, T.TimestampType | T.TimestampNTZType | T.DateType):
        return _iso
    if isinstance(dtype, T.DecimalType):
        return float
    if isinstance(dtype, T.BinaryType):
        return lambda v: base64.standard_b64encode(v).decode("ascii")
    return None


def _iso(value: dt.date) -> str:
    return value.isoformat()


class JsonBatchEncoder:
    """Arrow values -> framed JSON documents (null stays null), optionally validated."""

    def __init__(
        self,
        conf: dict[str, Any],
        schema: tuple[str, list[tuple[str, str, int]]] | None,
        spark_type: str | None,
        prefix: bytes,
        label: str,
    ) -> None:
        self.prefix = prefix
        self.label = label
        self.fix = None if spark_type is None else _fixer(T._parse_datatype_json_string(spark_type))
        self.fixes: dict[pa.DataType, Fixer | None] = {}  # per input type, when fitted here
        self.compiled = None
        if schema is not None:
            text, refs = schema
            references = [SchemaReference(n, s, v) for n, s, v in refs]
            self.compiled = compile_json_schema(Schema(text, "JSON", references), client_for(conf))

    def encode(self, column: pa.Array) -> pa.Array:
        if column.null_count == len(column):
            return pa.nulls(len(column), pa.binary())
        values = arrow_to_pylist(column)
        fix, compiled, prefix = self.fix, self.compiled, self.prefix
        out: list[bytes | None] = []
        for value in values:
            if value is None:
                out.append(None)
                continue
            if fix is not None:
                value = fix(value)
            if compiled is not None:
                try:
                    compiled.check(value, "record")
                except SerializationError as exc:
                    raise SerializationError(f"{self.label}: {exc}") from None
            out.append(prefix + orjson.dumps(value))
        return pa.array(out, pa.binary())


_ENCODERS: dict[str, JsonBatchEncoder] = {}


def json_column(
    column: Column, dtype: T.DataType | None, writer: Any, opts: dict[str, Any]
) -> Column:
    """The encoded column: native ``to_json`` + frame, or the Python engine's Arrow UDF.

    ``dtype`` None (the Spark type is not known before the query runs): the Python engine checks
    each input Arrow type on the workers, once per process, with the call-time check's messages;
    the native engine (``to_json``, which needs no type) and ``auto`` without validation take
    the column as it is (Spark refuses a column ``to_json`` cannot write when it analyses it).
    """
    where = f"to_confluent_json ({writer.label})"
    try:
        doc = json.loads(writer.schema.schema_str or "")
    except ValueError as exc:
        raise ValueError(f"{where}: schema is not JSON: {exc}") from None
    if dtype is not None:
        try:
            check_json_type(dtype, doc, "")
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    engine, validate = opts["engine"], opts["validate"]
    composite = dtype is None or isinstance(dtype, T.StructType | T.MapType | T.ArrayType)
    if engine == "native" and not composite:
        assert dtype is not None
        raise ValueError(
            f"{where}: the native engine (Spark's to_json) takes "
            f"structs, maps and arrays, not {dtype.simpleString()}; use engine auto or python"
        )
    if engine == "native" or (engine == "auto" and not validate and composite):
        text = F.to_json(column, {"ignoreNullFields": "false"})
        return F.concat(F.lit(writer.prefix), F.encode(text, "UTF-8"))
    conf, prefix, label = writer.conf, writer.prefix, writer.label
    schema = None
    if validate:
        refs = [(r.name, r.subject, int(r.version)) for r in writer.schema.references or []]
        schema = (writer.schema.schema_str, refs)
    spark_type = None if dtype is None else dtype.json()
    key = json.dumps(["json", conf, schema, spark_type, label], default=str)

    def encode(values: pa.Array) -> pa.Array:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = JsonBatchEncoder(conf, schema, spark_type, prefix, label)
            _ENCODERS[key] = encoder
        if spark_type is None:
            fix = encoder.fixes.get(values.type, False)
            if fix is False:
                found = spark_type_of(values.type)
                try:
                    check_json_type(found, doc, "")
                except ValueError as exc:
                    raise ValueError(f"{where}: {exc}") from None
                fix = encoder.fixes[values.type] = _fixer(found)
            encoder.fix = fix
        return encoder.encode(values)

    return encoder_udf(encode, column)
