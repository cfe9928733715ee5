"""Schema -> Spark type, following Spark's own converters so results equal the native functions'.

Avro follows spark-avro's ``SchemaConverters.toSqlType``: records to structs (field nullability
from the field's type), ``[null, T]`` unions to a nullable ``T``, ``[int, long]`` to long,
``[float, double]`` to double, other unions to ``member0..n`` structs of nullable fields, enums
and ``uuid`` to strings, ``date`` to date, ``timestamp-*`` to timestamp, ``local-timestamp-*``
to timestamp without time zone, ``decimal`` to decimal, maps to string-keyed maps, ``time-*``
staying int/long.

The input is fastavro's parsed form of a schema (fully qualified names, each named type defined
once and then referred to by name), as :func:`serdes.avro.parse_avro_schema` returns it.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import types as T

__all__ = ["avro_to_spark", "named_types", "spark_nullable"]

_PRIMITIVES: dict[str, T.DataType] = {
    "boolean": T.BooleanType(),
    "int": T.IntegerType(),
    "long": T.LongType(),
    "float": T.FloatType(),
    "double": T.DoubleType(),
    "string": T.StringType(),
    "bytes": T.BinaryType(),
}


def named_types(parsed: Any) -> dict[str, Any]:
    """Every named type defined in a parsed schema, by full name."""
    out: dict[str, Any] = (
        dict(parsed.get("__named_schemas", {})) if isinstance(parsed, dict) else {}
    )

    def walk(schema: Any) -> None:
        if isinstance(schema, list):
            for branch in schema:
                walk(branch)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "error", "enum", "fixed") and "name" in schema:
                out.setdefault(schema["name"], schema)
            if kind in ("record", "error"):
                for field in schema.get("fields", ()):
                    walk(field["type"])
            elif kind == "array":
                walk(schema["items"])
            elif kind == "map":
                walk(schema["values"])
            elif isinstance(kind, dict | list):
                walk(kind)

    walk(parsed)
    return out


def avro_to_spark(parsed: Any) -> T.DataType:
    """The Spark type spark-avro's ``from_avro`` gives this (reader) schema."""
    named = named_types(parsed)
    return _to_sql(parsed, named, ())[0]


def _to_sql(schema: Any, named: dict[str, Any], stack: tuple[str, ...]) -> tuple[T.DataType, bool]:
    """(type, nullable) for one Avro schema."""
    if isinstance(schema, str):
        if schema == "null":
            return T.NullType(), True
        if schema in _PRIMITIVES:
            return _PRIMITIVES[schema], False
        if schema not in named:
            raise ValueError(f"Avro schema refers to unknown type {schema!r}")
        return _to_sql(named[schema], named, stack)
    if isinstance(schema, list):
        return _union(schema, named, stack)
    kind = schema["type"]
    logical = schema.get("logicalType")
    if isinstance(kind, dict | list):
        return _to_sql(kind, named, stack)
    if kind == "int" and logical == "date":
        return T.DateType(), False
    if kind == "long" and logical in ("timestamp-millis", "timestamp-micros"):
        return T.TimestampType(), False
    if kind == "long" and logical in ("local-timestamp-millis", "local-timestamp-micros"):
        return T.TimestampNTZType(), False
    if kind in ("bytes", "fixed") and logical == "decimal":
        return T.DecimalType(int(schema["precision"]), int(schema.get("scale", 0))), False
    if kind in _PRIMITIVES or kind == "null":
        return _to_sql(kind, named, stack)
    if kind == "fixed":
        return T.BinaryType(), False
    if kind == "enum":
        return T.StringType(), False
    if kind == "array":
        element, nullable = _to_sql(schema["items"], named, stack)
        return T.ArrayType(element, containsNull=nullable), False
    if kind == "map":
        value, nullable = _to_sql(schema["values"], named, stack)
        return T.MapType(T.StringType(), value, valueContainsNull=nullable), False
    if kind in ("record", "error"):
        name = schema["name"]
        if name in stack:
            raise ValueError(
                f"Found recursive reference in Avro schema, which can not be processed by Spark: "
                f"{name}"
            )
        fields = []
        for field in schema["fields"]:
            data_type, nullable = _to_sql(field["type"], named, (*stack, name))
            fields.append(T.StructField(field["name"], data_type, nullable))
        return T.StructType(fields), False
    raise ValueError(f"unsupported Avro type {kind!r}")


def _union(branches: list[Any], named: dict[str, Any], stack: tuple[str, ...]) -> tuple[Any, bool]:
    kinds = [_kind(b, named) for b in branches]
    if "null" in kinds:
        rest = [b for b, k in zip(branches, kinds, strict=True) if k != "null"]
        if not rest:
            return T.NullType(), True
        if len(rest) == 1:
            return _to_sql(rest[0], named, stack)[0], True
        return _union(rest, named, stack)[0], True
    if len(branches) == 1:
        return _to_sql(branches[0], named, stack)
    if len(branches) == 2 and set(kinds) == {"int", "long"}:
        return T.LongType(), False
    if len(branches) == 2 and set(kinds) == {"float", "double"}:
        return T.DoubleType(), False
    fields = [
        T.StructField(f"member{i}", _to_sql(b, named, stack)[0], True)
        for i, b in enumerate(branches)
    ]
    return T.StructType(fields), False


def _kind(schema: Any, named: dict[str, Any]) -> str:
    """Avro's ``Schema.getType`` of one union branch."""
    if isinstance(schema, str):
        if schema in named:
            return str(named[schema]["type"])
        return schema
    if isinstance(schema, list):
        return "union"
    kind = schema["type"]
    return _kind(kind, named) if isinstance(kind, dict | list) else str(kind)


def spark_nullable(data_type: T.DataType) -> T.DataType:
    """Spark's ``DataType.asNullable``: what PERMISSIVE mode makes of the result type."""
    if isinstance(data_type, T.StructType):
        return T.StructType(
            [T.StructField(f.name, spark_nullable(f.dataType), True) for f in data_type.fields]
        )
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(spark_nullable(data_type.elementType), True)
    if isinstance(data_type, T.MapType):
        return T.MapType(
            spark_nullable(data_type.keyType), spark_nullable(data_type.valueType), True
        )
    return data_type
