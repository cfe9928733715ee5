"""Protobuf message descriptor -> Spark type, as spark-protobuf's ``from_protobuf`` gives it.

Follows ``SchemaConverters.toSqlType`` of Spark 4.1 (connector/protobuf) with the default
options (``enums.as.ints``, ``upcast.unsigned.ints``, ``unwrap.primitive.wrapper.types``,
``convert.any.fields.to.json``, ``retain.empty.message.types`` all false,
``recursive.fields.max.depth`` unset):

* int32, sint32, sfixed32, uint32, fixed32 -> int (the unsigned ones as Java's signed int);
  int64, sint64, sfixed64, uint64, fixed64 -> long; float, double, bool, string;
  bytes -> binary; enums -> string (the value's name);
* a message named ``Timestamp`` / ``Duration`` whose two fields are ``seconds`` and ``nanos``
  -> timestamp / ``interval day to second`` (Spark matches the simple name, not the package);
* other messages -> structs (wrappers and ``google.protobuf.Any`` too: ``struct<value: T>``,
  ``struct<type_url: string, value: binary>``); a message with no fields left is dropped
  (and a repeated or map field of it with it);
* a message that contains itself (directly or through others) -> an error;
* repeated -> ``array<T>`` without nulls; map fields -> ``map<K, V>`` without null values;
* every field nullable except proto2 ``required`` ones; oneof members are plain fields.

The same rules decide, in :mod:`spark_serdes.protobuf_decoder`, how a value is converted.
"""

from __future__ import annotations

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from pyspark.sql import types as T

__all__ = [
    "RecursiveProtobufSchemaError",
    "field_kind",
    "is_map",
    "message_to_spark",
    "struct_field",
]

_INT = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_FIXED32,
    }
)
_LONG = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
    }
)
_SCALARS: dict[int, T.DataType] = {
    FieldDescriptor.TYPE_FLOAT: T.FloatType(),
    FieldDescriptor.TYPE_DOUBLE: T.DoubleType(),
    FieldDescriptor.TYPE_BOOL: T.BooleanType(),
    FieldDescriptor.TYPE_STRING: T.StringType(),
    FieldDescriptor.TYPE_BYTES: T.BinaryType(),
    FieldDescriptor.TYPE_ENUM: T.StringType(),
}
_MESSAGES = frozenset({FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP})


class RecursiveProtobufSchemaError(ValueError):
    """The message contains itself: Spark refuses it unless told how deep to go."""


def _seconds_nanos(desc: Descriptor, name: str) -> bool:
    fields = desc.fields
    return (
        desc.name == name
        and len(fields) == 2
        and fields[0].name == "seconds"
        and fields[1].name == "nanos"
    )


def is_map(fd: FieldDescriptor) -> bool:
    """A map field (a repeated field of a ``map_entry`` message)."""
    return fd.type in _MESSAGES and fd.is_repeated and fd.message_type.GetOptions().map_entry


def field_kind(fd: FieldDescriptor) -> str:
    """How a field's values are read: ``int``, ``long``, ``scalar``, ``enum``, ``timestamp``,
    ``duration``, ``map`` or ``message`` (``uint*``/``fixed*`` are ``int``/``long``)."""
    if fd.type in _INT:
        return "int"
    if fd.type in _LONG:
        return "long"
    if fd.type == FieldDescriptor.TYPE_ENUM:
        return "enum"
    if fd.type in _MESSAGES:
        if _seconds_nanos(fd.message_type, "Duration"):
            return "duration"
        if _seconds_nanos(fd.message_type, "Timestamp"):
            return "timestamp"
        if is_map(fd):
            return "map"
        return "message"
    return "scalar"


def _element_type(fd: FieldDescriptor, ancestors: tuple[str, ...]) -> T.DataType | None:
    """The Spark type of one value of ``fd`` (before ``array``); None when Spark drops it."""
    kind = field_kind(fd)
    if kind == "int":
        return T.IntegerType()
    if kind == "long":
        return T.LongType()
    if kind == "duration":
        return T.DayTimeIntervalType(T.DayTimeIntervalType.DAY, T.DayTimeIntervalType.SECOND)
    if kind == "timestamp":
        return T.TimestampType()
    if kind == "map":
        entry = fd.message_type
        key = _element_type(entry.fields_by_name["key"], ancestors)
        value = _element_type(entry.fields_by_name["value"], ancestors)
        if key is None or value is None:
            return None
        return T.MapType(key, value, valueContainsNull=False)
    if kind == "message":
        name = fd.message_type.full_name
        if name in ancestors:
            raise RecursiveProtobufSchemaError(
                f"Found recursive reference in Protobuf schema, which can not be processed by "
                f"Spark by default: {fd.full_name} (message {name} contains itself through "
                f"{' -> '.join((*ancestors, name))}); Spark's from_protobuf refuses it unless "
                "the option recursive.fields.max.depth is set, which this function does not "
                "offer"
            )
        fields = _struct_fields(fd.message_type, (*ancestors, name))
        return T.StructType(fields) if fields else None
    return _SCALARS[fd.type]


def struct_field(fd: FieldDescriptor, ancestors: tuple[str, ...]) -> T.StructField | None:
    """Spark's ``StructField`` for ``fd`` inside the messages ``ancestors``; None if dropped."""
    data_type = _element_type(fd, ancestors)
    if data_type is None:
        return None
    if isinstance(data_type, T.MapType):
        return T.StructField(fd.name, data_type, True)
    if fd.is_repeated:
        return T.StructField(fd.name, T.ArrayType(data_type, containsNull=False), True)
    return T.StructField(fd.name, data_type, not fd.is_required)


def _struct_fields(desc: Descriptor, ancestors: tuple[str, ...]) -> list[T.StructField]:
    fields = (struct_field(fd, ancestors) for fd in desc.fields)
    return [f for f in fields if f is not None]


def message_to_spark(desc: Descriptor) -> T.StructType:
    """The Spark type ``from_protobuf`` gives messages of ``desc`` (FAILFAST mode)."""
    return T.StructType(_struct_fields(desc, (desc.full_name,)))
