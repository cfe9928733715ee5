"""Protobuf encoding of Spark struct columns (the inverse of Spark's Protobuf -> Spark mapping).

On the driver, :func:`protobuf_column` builds the writer schema's descriptors (references
included, as ``serdes.protobuf.ProtobufDeserializer`` does), picks the message, checks the
struct's fields against it by name and type, and returns an Arrow UDF. The UDF's closure carries
the serialized file descriptors, so workers never ask the registry.

In the workers a batch becomes Python values once; each row is passed to the message class's
constructor (nested messages and map values as dicts, enums by name or number, repeated fields
as lists), after converting what Spark's representation differs in: timestamps (Arrow
microseconds) to ``google.protobuf.Timestamp``, day-time intervals to ``Duration``, plain values
to wrapper messages (``Int32Value``...), maps from Arrow's key/value pairs. A null field leaves
the Protobuf field unset. Serialized deterministically (map entries by key), so equal rows give
equal bytes; ``serdes.protobuf.ProtobufSerializer`` does not sort map entries, so its bytes are
equal to these when every map has at most one entry.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor
from google.protobuf.message_factory import GetMessageClass
from pyspark.sql import Column
from pyspark.sql import types as T

from serdes import wire
from serdes.errors import SerializationError
from serdes.protobuf import ProtobufDeserializer, _add_builtin, _is_builtin, message_index_path
from spark_serdes.arrow_values import arrow_to_pylist, raw_arrow, spark_type_of
from spark_serdes.encoder_udf import encoder_udf

__all__ = ["ProtobufBatchEncoder", "protobuf_column"]

_FD = FieldDescriptor
_INT32 = (_FD.TYPE_INT32, _FD.TYPE_SINT32, _FD.TYPE_SFIXED32)
_INT64 = (_FD.TYPE_INT64, _FD.TYPE_SINT64, _FD.TYPE_SFIXED64)
_UINT = (_FD.TYPE_UINT32, _FD.TYPE_FIXED32, _FD.TYPE_UINT64, _FD.TYPE_FIXED64)
_SMALL = (T.ByteType, T.ShortType, T.IntegerType)
_INTEGRAL = (*_SMALL, T.LongType)
_WRAPPERS = {
    "google.protobuf.DoubleValue": _FD.TYPE_DOUBLE,
    "google.protobuf.FloatValue": _FD.TYPE_FLOAT,
    "google.protobuf.Int64Value": _FD.TYPE_INT64,
    "google.protobuf.UInt64Value": _FD.TYPE_UINT64,
    "google.protobuf.Int32Value": _FD.TYPE_INT32,
    "google.protobuf.UInt32Value": _FD.TYPE_UINT32,
    "google.protobuf.BoolValue": _FD.TYPE_BOOL,
    "google.protobuf.StringValue": _FD.TYPE_STRING,
    "google.protobuf.BytesValue": _FD.TYPE_BYTES,
}
_TIMESTAMP = "google.protobuf.Timestamp"
_DURATION = "google.protobuf.Duration"


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _scalar_ok(kind: int, dtype: T.DataType) -> bool:
    """Whether a Spark value of ``dtype`` can be written to a scalar field of ``kind``."""
    if kind in _INT32:
        return isinstance(dtype, _SMALL)
    if kind in _INT64 or kind in _UINT:
        return isinstance(dtype, _INTEGRAL) or (
            kind in (_FD.TYPE_UINT64, _FD.TYPE_FIXED64)
            and isinstance(dtype, T.DecimalType)
            and dtype.scale == 0
            and dtype.precision <= 20
        )
    if kind == _FD.TYPE_FLOAT:
        return isinstance(dtype, (*_INTEGRAL, T.FloatType))
    if kind == _FD.TYPE_DOUBLE:
        return isinstance(dtype, (*_INTEGRAL, T.FloatType, T.DoubleType))
    if kind == _FD.TYPE_BOOL:
        return isinstance(dtype, T.BooleanType)
    if kind == _FD.TYPE_STRING:
        return isinstance(dtype, T.StringType)
    if kind == _FD.TYPE_BYTES:
        return isinstance(dtype, T.BinaryType)
    if kind == _FD.TYPE_ENUM:
        return isinstance(dtype, (T.StringType, *_INTEGRAL))
    return False


Fixer = Callable[[Any], Any]


def _timestamp(micros: int) -> dict[str, int]:
    seconds, rest = divmod(micros, 1_000_000)
    return {"seconds": seconds, "nanos": rest * 1000}


def _duration(value: dt.timedelta) -> dict[str, int]:
    micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    seconds = int(micros / 1_000_000)  # Duration: seconds and nanos share the sign
    return {"seconds": seconds, "nanos": (micros - seconds * 1_000_000) * 1000}


class _Plan:
    """Checks (struct type, descriptor) at call time; builds the per-row value fixers."""

    def check_message(self, dtype: T.DataType, desc: Descriptor, path: str) -> Fixer | None:
        where = f"field {path}" if path else "the column"
        if not isinstance(dtype, T.StructType):
            raise ValueError(
                f"{where}: Spark type {dtype.simpleString()} cannot be written as message "
                f"{desc.full_name} (a struct is needed)"
            )
        fields = desc.fields_by_name
        extra = [f.name for f in dtype.fields if f.name not in fields]
        if extra:
            raise ValueError(
                f"{where}: struct field(s) {extra} are not fields of message {desc.full_name} "
                f"(its fields: {sorted(fields)})"
            )
        given = {f.name for f in dtype.fields}
        for field in desc.fields:
            if field.is_required and field.name not in given:
                raise ValueError(
                    f"{where}: required field {field.name} of message {desc.full_name} is "
                    "missing from the struct"
                )
        fixes: list[tuple[str, Fixer]] = []
        for spark_field in dtype.fields:
            sub = f"{path}.{spark_field.name}" if path else spark_field.name
            fix = self.check_field(spark_field.dataType, fields[spark_field.name], sub)
            if fix is not None:
                fixes.append((spark_field.name, fix))
        oneofs = [
            (o.name, [f.name for f in o.fields if f.name in given])
            for o in desc.oneofs
            if len([f for f in o.fields if f.name in given]) > 1
        ]
        if not fixes and not oneofs:
            return None

        def message(value: dict[str, Any]) -> dict[str, Any]:
            for name, fn in fixes:
                item = value[name]
                if item is not None:
                    value[name] = fn(item)
            for oneof, names in oneofs:
                present = [n for n in names if value[n] is not None]
                if len(present) > 1:
                    raise SerializationError(
                        f"oneof {oneof} of {desc.full_name} has several fields set: {present}"
                    )
            return value

        return message

    def check_field(self, dtype: T.DataType, field: FieldDescriptor, path: str) -> Fixer | None:
        if _is_map(field):
            entry = field.message_type
            if not isinstance(dtype, T.MapType):
                raise ValueError(
                    f"field {path}: Spark type {dtype.simpleString()} cannot be written as a "
                    f"Protobuf map (a map is needed)"
                )
            key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
            if not _scalar_ok(key_field.type, dtype.keyType):
                raise ValueError(
                    f"field {path}: map keys of Spark type {dtype.keyType.simpleString()} "
                    f"cannot be Protobuf {_type_name(key_field)} keys"
                )
            inner = self.check_single(dtype.valueType, value_field, f"{path}{{}}")
            if inner is None:
                return dict
            return lambda pairs: {k: None if v is None else inner(v) for k, v in pairs}
        if field.is_repeated:
            if not isinstance(dtype, T.ArrayType):
                raise ValueError(
                    f"field {path}: Spark type {dtype.simpleString()} cannot be written as "
                    f"repeated {_type_name(field)} (an array is needed)"
                )
            inner = self.check_single(dtype.elementType, field, f"{path}[]")
            if inner is None:
                return None
            return lambda items: [None if v is None else inner(v) for v in items]
        return self.check_single(dtype, field, path)

    def check_single(self, dtype: T.DataType, field: FieldDescriptor, path: str) -> Fixer | None:
        message = field.message_type
        if message is None:
            if not _scalar_ok(field.type, dtype):
                raise ValueError(
                    f"field {path}: Spark type {dtype.simpleString()} cannot be written as "
                    f"Protobuf {_type_name(field)}"
                )
            if isinstance(dtype, T.DecimalType):
                return int
            return None
        name = message.full_name
        if name == _TIMESTAMP and isinstance(dtype, T.TimestampType | T.TimestampNTZType):
            return _timestamp
        if name == _DURATION and isinstance(dtype, T.DayTimeIntervalType):
            return _duration
        if name in _WRAPPERS and not isinstance(dtype, T.StructType):
            inner_field = message.fields_by_name["value"]
            if not _scalar_ok(inner_field.type, dtype):
                raise ValueError(
                    f"field {path}: Spark type {dtype.simpleString()} cannot be written as {name}"
                )
            return lambda v: {"value": v}
        return self.check_message(dtype, message, path)


def _type_name(field: FieldDescriptor) -> str:
    if field.message_type is not None:
        return field.message_type.full_name
    if field.enum_type is not None:
        return f"enum {field.enum_type.full_name}"
    names = {v: k for k, v in vars(_FD).items() if k.startswith("TYPE_")}
    return names.get(field.type, str(field.type))[5:].lower()


def _files(file: FileDescriptor) -> tuple[list[str], list[bytes]]:
    """Well-known imports by name, and the others' serialized protos, dependencies first."""
    builtins: list[str] = []
    protos: list[bytes] = []
    seen: set[str] = set()

    def visit(current: FileDescriptor) -> None:
        if current.name in seen:
            return
        seen.add(current.name)
        if _is_builtin(current.name):
            builtins.append(current.name)
            return
        for dep in current.dependencies:
            visit(dep)
        protos.append(current.serialized_pb)

    visit(file)
    return builtins, protos


def _find_message(file: FileDescriptor, message: str | None, label: str) -> Descriptor:
    tops = list(file.message_types_by_name.values())
    if not tops:
        raise ValueError(f"schema {label} declares no message")
    if message is None:
        return tops[0]
    found: list[Descriptor] = []

    def walk(descs: list[Descriptor]) -> None:
        for d in descs:
            if message in (d.full_name, d.name) or d.full_name.endswith("." + message):
                found.append(d)
            walk([n for n in d.nested_types if not n.GetOptions().map_entry])

    walk(tops)
    if len(found) != 1:
        names = []
        walk_all: list[Descriptor] = list(tops)
        while walk_all:
            d = walk_all.pop(0)
            names.append(d.full_name)
            walk_all.extend(n for n in d.nested_types if not n.GetOptions().map_entry)
        what = "no" if not found else "more than one"
        raise ValueError(f"schema {label} has {what} message {message!r} (messages: {names})")
    return found[0]


def _index_path(desc: Descriptor) -> list[int]:
    """The message index path, map entry types not counted.

    As ``serdes.protobuf.ProtobufDeserializer`` reads it: registries place the synthesized map
    entry types at different positions among the nested types (ours before the declared
    messages), so counting them would make the path depend on where the schema came from.
    """
    if desc.containing_type is None:
        return message_index_path(desc)
    siblings = [n for n in desc.containing_type.nested_types if not n.GetOptions().map_entry]
    return [*_index_path(desc.containing_type), siblings.index(desc)]


class ProtobufBatchEncoder:
    """Arrow struct values -> framed Protobuf bytes (null stays null)."""

    def __init__(
        self,
        builtins: list[str],
        protos: list[bytes],
        message: str,
        prefix: bytes,
        label: str,
        fix: Fixer | None,
    ) -> None:
        pool = descriptor_pool.DescriptorPool()
        for name in builtins:
            _add_builtin(pool, name)
        for data in protos:
            pool.Add(descriptor_pb2.FileDescriptorProto.FromString(data))
        self.cls = GetMessageClass(pool.FindMessageTypeByName(message))
        self.message = message
        self.prefix = prefix
        self.label = label
        self.fix = fix
        self.fixes: dict[pa.DataType, Fixer | None] = {}  # per input type, when fitted here

    def encode(self, column: pa.Array) -> pa.Array:
        if column.null_count == len(column):
            return pa.nulls(len(column), pa.binary())
        raw = raw_arrow(column.type)
        values = arrow_to_pylist(column.cast(raw) if raw != column.type else column)
        cls, fix, prefix = self.cls, self.fix, self.prefix
        out: list[bytes | None] = []
        for value in values:
            if value is None:
                out.append(None)
                continue
            try:
                if fix is not None:
                    value = fix(value)
                body = cls(**value).SerializeToString(deterministic=True)
            except Exception as exc:
                raise SerializationError(
                    f"{self.label}: record does not encode as {self.message}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            out.append(prefix + body)
        return pa.array(out, pa.binary())


_ENCODERS: dict[str, ProtobufBatchEncoder] = {}


def protobuf_column(
    column: Column, dtype: T.DataType | None, writer: Any, message: str | None
) -> tuple[Column, bytes]:
    """The Arrow UDF column encoding ``column`` with the writer schema's ``message``, and the
    message's index path as it is written after the schema id.

    ``dtype`` None (the Spark type is not known before the query runs): each input Arrow type
    is checked on the workers, once per process, with the call-time check's messages.
    """
    label = writer.label
    where = f"to_confluent_protobuf ({label})"
    reader = ProtobufDeserializer(None, schema_registry_client=writer.client)
    try:
        pool, file_name = reader._pool(wire.Frame(writer.schema_id, None, None, 0), None, label)
    except SerializationError as exc:
        raise ValueError(f"{where}: {exc}") from None
    file = pool.FindFileByName(file_name)
    try:
        desc = _find_message(file, message, label)
        if dtype is not None:
            _Plan().check_message(dtype, desc, "")  # call-time errors; workers rebuild the fixers
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    indexes = wire.encode_message_indexes(_index_path(desc))
    prefix = wire.id_prefix(writer.schema_id) + indexes
    builtins, protos = _files(file)
    full_name = desc.full_name
    spark_json = None if dtype is None else dtype.json()
    key = json.dumps(["protobuf", writer.schema_id, full_name, label, spark_json])

    def encode(values: pa.Array) -> pa.Array:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = ProtobufBatchEncoder(builtins, protos, full_name, prefix, label, None)
            if spark_json is not None:
                spark_type = T._parse_datatype_json_string(spark_json)
                encoder.fix = _Plan().check_message(spark_type, encoder.cls.DESCRIPTOR, "")
            _ENCODERS[key] = encoder
        if spark_json is None:
            fix = encoder.fixes.get(values.type, False)
            if fix is False:
                try:
                    fix = _Plan().check_message(
                        spark_type_of(values.type), encoder.cls.DESCRIPTOR, ""
                    )
                except ValueError as exc:
                    raise ValueError(f"{where}: {exc}") from None
                encoder.fixes[values.type] = fix
            encoder.fix = fix
        return encoder.encode(values)

    return encoder_udf(encode, column), indexes
