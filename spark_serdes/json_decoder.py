"""JSON Schema: the Python engine's batch decoder (framed JSON -> Arrow), reading as ``from_json``.

Each record is parsed with orjson, optionally validated against its writer schema (compiled
once per schema id and worker process with the project's jsonschema-rs validator, references
included), then converted to the reader's Spark type with Spark's ``from_json`` rules, so that
this engine and the native one give the same rows:

* ``bigint``: JSON integers in the long range (``1.0`` is not one); ``double``: any number;
  ``boolean``: ``true``/``false``; ``date``/``timestamp``: strings as Spark casts them
  (:mod:`spark_serdes.json_datetime`), and for timestamps integers as seconds since the epoch;
* ``string``: a JSON string as itself, any other value as its JSON text the way Spark's Jackson
  writes it (compact, doubles as Java's ``Double.toString``: ``1.0E10``, ``1.5E-7``);
* objects to structs by field name (other fields ignored, missing ones null), arrays, maps;
  ``null`` anywhere is null.

A value that does not fit makes the whole record malformed, with the JSON path of the value.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson
import pyarrow as pa
from pyspark.sql import types as T

from serdes._serde import fetch_writer_schema
from serdes.errors import SerializationError, UnknownSchemaError
from serdes.json_schema import compile_json_schema
from serdes.schema import Schema
from spark_serdes._frames import DecodeFailure, read_writer_frame
from spark_serdes._registry import client_for
from spark_serdes.avro import conform
from spark_serdes.json_datetime import parse_zone, string_to_days, string_to_micros

__all__ = ["JsonBatchDecoder", "jackson_text", "spark_converter"]

_LONG = 2**63
_ESCAPE = re.compile(r'[\x00-\x1f"\\]')
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


# JSON values (by class) that a field of a Spark type takes unchanged
_NONE = frozenset({type(None)})
_AS_IS: dict[type, frozenset[type]] = {
    T.StringType: frozenset({str, type(None)}),
    T.BooleanType: frozenset({bool, type(None)}),
    T.DoubleType: frozenset({float, type(None)}),
}


class _Mismatch(Exception):
    """A JSON value that does not fit the Spark type; ``path`` is filled in on the way out."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(expected)
        self.expected = expected
        self.value = value
        self.path: list[str | int] = []

    def describe(self) -> str:
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path[::-1])
        got = _json_kind(self.value)
        return f"the value at {where} is not {self.expected} (got {got})"


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {jackson_text(value)}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {jackson_text(value)}"
    if isinstance(value, str):
        return f"string {jackson_text(value[:60])}"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    if char in '"\\':
        return "\\" + char
    return f"\\u{ord(char):04X}"


def _java_double(value: float) -> str:
    """Java's ``Double.toString`` (shortest round-trip digits)."""
    if value != value or value in (float("inf"), float("-inf")):
        return {True: "NaN"}.get(value != value, "Infinity" if value > 0 else "-Infinity")
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # the decimal point sits after this many digits
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{text}"
        whole = text[:point].ljust(point, "0")
        return f"{prefix}{whole}.{text[point:] or '0'}"
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{point - 1}"


def jackson_text(value: Any) -> str:
    """A parsed JSON value as the text Spark's ``from_json`` puts in a string field."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return '"' + _ESCAPE.sub(_escape, value) + '"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, list):
        return "[" + ",".join(jackson_text(v) for v in value) + "]"
    return "{" + ",".join(jackson_text(k) + ":" + jackson_text(v) for k, v in value.items()) + "}"


def spark_converter(data_type: T.DataType, zone: dt.tzinfo) -> Callable[[Any], Any]:
    """A function from a parsed JSON value to the Python value of ``data_type``'s raw Arrow type.

    Dates become day numbers and timestamps microseconds (cast to Arrow's types afterwards).
    Raises ``_Mismatch`` for a value Spark's ``from_json`` would reject.
    """
    if isinstance(data_type, T.StringType):
        return lambda v: v if v is None or v.__class__ is str else jackson_text(v)
    if isinstance(data_type, T.LongType):

        def to_long(v: Any) -> Any:
            if v is None or (v.__class__ is int and -_LONG <= v < _LONG):
                return v
            raise _Mismatch("an integer in the long range", v)

        return to_long
    if isinstance(data_type, T.DoubleType):

        def to_double(v: Any) -> Any:
            if v is None or v.__class__ is float:
                return v
            if v.__class__ is int:
                return float(v)
            raise _Mismatch("a number", v)

        return to_double
    if isinstance(data_type, T.BooleanType):

        def to_boolean(v: Any) -> Any:
            if v is None or v is True or v is False:
                return v
            raise _Mismatch("a boolean", v)

        return to_boolean
    if isinstance(data_type, T.DateType):

        def to_date(v: Any) -> Any:
            if v is None:
                return None
            days = string_to_days(v) if v.__class__ is str else None
            if days is None or not -(2**31) <= days < 2**31:
                raise _Mismatch("a date Spark can read", v)
            return days

        return to_date
    if isinstance(data_type, T.TimestampType):

        def to_timestamp(v: Any) -> Any:
            if v is None:
                return None
            if v.__class__ is str:
                micros = string_to_micros(v, zone)
            elif v.__class__ is int and -_LONG <= v * 1_000_000 < _LONG:
                micros = v * 1_000_000
            else:
                micros = None
            if micros is None:
                raise _Mismatch("a timestamp Spark can read", v)
            return micros

        return to_timestamp
    if isinstance(data_type, T.ArrayType):
        element = spark_converter(data_type.elementType, zone)

        def to_array(v: Any) -> Any:
            if v is None:
                return None
            if v.__class__ is not list:
                raise _Mismatch("an array", v)
            out = []
            for i, item in enumerate(v):
                try:
                    out.append(element(item))
                except _Mismatch as exc:
                    exc.path.append(i)
                    raise
            return out

        return to_array
    if isinstance(data_type, T.MapType):
        value_of = spark_converter(data_type.valueType, zone)

        def to_map(v: Any) -> Any:
            if v is None:
                return None
            if v.__class__ is not dict:
                raise _Mismatch("an object", v)
            out = []
            for key, item in v.items():
                try:
                    out.append((key, value_of(item)))
                except _Mismatch as exc:
                    exc.path.append(key)
                    raise
            return out

        return to_map
    if isinstance(data_type, T.StructType):
        fields = [
            (f.name, spark_converter(f.dataType, zone), _AS_IS.get(type(f.dataType), _NONE))
            for f in data_type.fields
        ]

        def to_struct(v: Any) -> Any:
            if v is None:
                return None
            if v.__class__ is not dict:
                raise _Mismatch("an object", v)
            out = {}
            get = v.get
            for name, convert, as_is in fields:
                item = get(name)
                if item.__class__ in as_is:  # already the value (saves a call per field)
                    out[name] = item
                    continue
                try:
                    out[name] = convert(item)
                except _Mismatch as exc:
                    exc.path.append(name)
                    raise
            return out

        return to_struct
    raise ValueError(f"no JSON reading for Spark type {data_type.simpleString()}")


def _raw_arrow(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with dates as int32 days and timestamps as int64 microseconds."""
    if pa.types.is_date32(data_type):
        return pa.int32()
    if pa.types.is_timestamp(data_type):
        return pa.int64()
    if pa.types.is_struct(data_type):
        return pa.struct([f.with_type(_raw_arrow(f.type)) for f in data_type])
    if pa.types.is_map(data_type):
        return pa.map_(data_type.key_type, data_type.item_field.with_type(
            _raw_arrow(data_type.item_type)
        ))  # fmt: skip
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return pa.list_(data_type.value_field.with_type(_raw_arrow(data_type.value_type)))
    return data_type


class _Writer:
    __slots__ = ("compiled", "label", "offset")

    def __init__(self, label: str, compiled: Any, offset: int) -> None:
        self.label = label
        self.compiled = compiled
        self.offset = offset  # where the JSON starts: after the 5-byte id or 17-byte GUID frame


class JsonBatchDecoder:
    """Framed JSON values of one column -> an Arrow array of the reader's Spark type.

    ``writers`` maps the schema ids the driver knows to their ``Schema.to_dict()``; other ids
    are fetched from the registry once per process. ``validate``: check each record against
    its writer schema. ``permissive``: records that cannot be decoded (bad frame, unknown id,
    bad JSON, failed validation, a value that does not fit) become null and, with
    ``with_error``, a reason; registry outages still fail the task.
    """

    def __init__(
        self,
        conf: dict[str, Any],
        writers: dict[int, dict[str, Any]],
        spark_type: T.DataType,
        target: pa.DataType,
        permissive: bool,
        with_error: bool,
        validate: bool,
        time_zone: str,
    ) -> None:
        self.conf = conf
        self.known = dict(writers)
        zone = parse_zone(time_zone)
        if zone is None:
            raise ValueError(f"unknown session time zone {time_zone!r}")
        self.convert = spark_converter(spark_type, zone)
        self.target = target
        value_target = target.field(0).type if with_error else target
        self.value_target = value_target
        self.raw_type = _raw_arrow(value_target)
        self.permissive = permissive
        self.with_error = with_error
        self.validate = validate
        self.by_frame: dict[bytes, _Writer | str] = {}

    def _writer(self, data: bytes) -> _Writer:
        """The writer of a frame not seen yet (an id frame is keyed by its 5 bytes, a GUID
        frame by its 17)."""
        parsed, label = read_writer_frame(data)
        frame = data[: parsed.offset]
        known = self.known.get(parsed.schema_id) if parsed.schema_id is not None else None
        client = client_for(self.conf)
        if known is not None:
            schema = Schema.from_dict(known)
        else:
            try:
                schema, _ = fetch_writer_schema(client, parsed.schema_id, parsed.guid, None)
            except UnknownSchemaError as exc:
                self.by_frame[frame] = f"{label}: not found in the registry ({exc})"
                raise DecodeFailure(self.by_frame[frame]) from exc
            if (schema.schema_type or "AVRO") != "JSON":
                self.by_frame[frame] = (
                    f"{label}: is a {schema.schema_type or 'AVRO'} schema, not JSON"
                )
                raise DecodeFailure(self.by_frame[frame])
        compiled = None
        if self.validate:
            try:
                compiled = compile_json_schema(schema, client)
            except SerializationError as exc:
                raise DecodeFailure(f"{label}: {exc}") from exc
        entry = _Writer(label, compiled, parsed.offset)
        self.by_frame[frame] = entry
        return entry

    def _value(self, data: bytes) -> Any:
        by_frame = self.by_frame
        entry = by_frame.get(data[:5])
        if entry is None and data[:1] == b"\x01":
            entry = by_frame.get(data[:17])
        if entry is None:
            entry = self._writer(data)
        elif entry.__class__ is str:
            raise DecodeFailure(entry)
        assert isinstance(entry, _Writer)
        try:
            value = orjson.loads(data[entry.offset :])
        except orjson.JSONDecodeError as exc:
            raise DecodeFailure(f"{entry.label}: payload is not valid JSON: {exc}") from None
        if entry.compiled is not None:
            entry.compiled.check(value, f"{entry.label}: payload")
        try:
            return self.convert(value)
        except _Mismatch as exc:
            raise DecodeFailure(f"{entry.label}: {exc.describe()}") from None

    def decode(self, column: pa.Array) -> pa.Array:
        if column.null_count == len(column) and not self.with_error:
            # the native engine's fallback: rows it decoded itself arrive as nulls
            return conform(pa.nulls(len(column), self.raw_type), self.target)
        out: list[Any] = []
        errors: list[str | None] = []
        for data in column.to_pylist():
            if data is None:
                out.append(None)
                errors.append(None)
                continue
            try:
                out.append(self._value(data))
                errors.append(None)
            except SerializationError as exc:
                if not self.permissive:
                    raise
                out.append(None)
                errors.append(str(exc))
        array = conform(pa.array(out, type=self.raw_type), self.value_target)
        if self.with_error:
            return pa.StructArray.from_arrays(
                [array, pa.array(errors, pa.string())], fields=list(self.target)
            )
        return array
