"""Avro: self-contained schema texts, and the Python engine's batch decoder (framed bytes -> Arrow).

The decoder runs inside Spark's Python workers on Arrow batches. Per writer schema id it keeps
one prepared (writer, reader) pair of fastavro schemas, keyed by the 5 frame bytes, so a record
costs one dict lookup and one call of fastavro's reader; the decoded dicts become one Arrow
struct array per batch. Logical types other than ``decimal`` are read as their plain Avro
values (days, millis, micros, strings) and become Arrow dates/timestamps by a cast of the whole
column, which is much cheaper than fastavro building a ``datetime`` per value.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from fastavro import parse_schema, schemaless_reader

from serdes._serde import fetch_writer_schema
from serdes.avro import parse_avro_schema
from serdes.errors import SchemaRegistryError, SerializationError
from serdes.schema import Schema
from spark_serdes._frames import DecodeFailure, read_writer_frame
from spark_serdes._registry import client_for
from spark_serdes.types import named_types

__all__ = ["AvroBatchDecoder", "inline_schema", "raw_arrow_type", "strip_logical_types"]

_KEEP_LOGICAL = {"decimal"}


def map_types(
    schema: Any, node: Callable[[dict[str, Any]], dict[str, Any]], name: Any = None
) -> Any:
    """A copy of an Avro schema tree with ``node`` applied to every type object (before its
    children are walked) and ``name`` (default: unchanged) to every type given by name."""
    if isinstance(schema, list):
        return [map_types(branch, node, name) for branch in schema]
    if isinstance(schema, str):
        return name(schema) if name is not None else schema
    if not isinstance(schema, dict):
        return schema
    out = node(schema)
    kind = out.get("type")
    if kind in ("record", "error"):
        out["fields"] = [
            {**field, "type": map_types(field["type"], node, name)} for field in out["fields"]
        ]
    elif kind == "array":
        out["items"] = map_types(out["items"], node, name)
    elif kind == "map":
        out["values"] = map_types(out["values"], node, name)
    elif isinstance(kind, dict | list):
        out["type"] = map_types(kind, node, name)
    return out


def inline_schema(parsed: Any) -> Any:
    """fastavro's parsed schema as plain JSON with every named type defined at first use.

    Referenced schemas (from other subjects) become part of the text, which is what Spark's
    ``from_avro`` and a worker without registry access need.
    """
    named = dict(parsed.get("__named_schemas", {})) if isinstance(parsed, dict) else {}
    defined: set[str] = set()

    def node(schema: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in schema.items() if not k.startswith("__")}
        if out.get("type") in ("record", "error", "enum", "fixed") and "name" in out:
            defined.add(out["name"])
        return out

    def name(ref: str) -> Any:
        if ref in named and ref not in defined:
            return map_types(named[ref], node, name)
        return ref

    return map_types(parsed, node, name)


def schema_json(schema: Schema, client: Any) -> str:
    """A registered Avro schema as one self-contained JSON text (references inlined)."""
    if not schema.references:
        text = (schema.schema_str or "").strip()
        return text if text[:1] in "{[" else json.dumps({"type": json.loads(text)})
    return json.dumps(inline_schema(parse_avro_schema(schema, client)))


def strip_logical_types(schema: Any) -> Any:
    """The schema with logical types removed (``decimal`` kept): decoded as plain values."""

    def node(schema: dict[str, Any]) -> dict[str, Any]:
        out = dict(schema)
        if out.get("logicalType") not in _KEEP_LOGICAL:
            out.pop("logicalType", None)
        return out

    return map_types(schema, node)


_RAW_PRIMITIVES = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
}
_RAW_LOGICAL = {
    ("int", "date"): pa.date32(),
    ("long", "timestamp-millis"): pa.timestamp("ms", tz="UTC"),
    ("long", "timestamp-micros"): pa.timestamp("us", tz="UTC"),
    ("long", "local-timestamp-millis"): pa.timestamp("ms"),
    ("long", "local-timestamp-micros"): pa.timestamp("us"),
}


def _kind(schema: Any, named: dict[str, Any]) -> str:
    if isinstance(schema, str):
        return str(named[schema]["type"]) if schema in named else schema
    if isinstance(schema, list):
        return "union"
    kind = schema["type"]
    return _kind(kind, named) if isinstance(kind, dict | list) else str(kind)


def raw_arrow_type(schema: Any) -> pa.DataType:
    """The Arrow type the decoded (logical-types-stripped) values are built as.

    Shaped as spark-avro's Spark type (same unions, member structs, nullability ignored) with
    timestamps in the schema's own unit, so that a cast gives Spark's Arrow type.
    """
    named = named_types(schema)
    return _raw(schema, named)


def _raw(schema: Any, named: dict[str, Any]) -> pa.DataType:
    if isinstance(schema, str):
        if schema in _RAW_PRIMITIVES:
            return _RAW_PRIMITIVES[schema]
        return _raw(named[schema], named)
    if isinstance(schema, list):
        kinds = [_kind(b, named) for b in schema]
        rest = [b for b, k in zip(schema, kinds, strict=True) if k != "null"]
        rest_kinds = [k for k in kinds if k != "null"]
        if not rest:
            return pa.null()
        if len(rest) == 1:
            return _raw(rest[0], named)
        if len(rest) == 2 and set(rest_kinds) == {"int", "long"}:
            return pa.int64()
        if len(rest) == 2 and set(rest_kinds) == {"float", "double"}:
            return pa.float64()
        return pa.struct([pa.field(f"member{i}", _raw(b, named)) for i, b in enumerate(rest)])
    kind = schema["type"]
    if isinstance(kind, dict | list):
        return _raw(kind, named)
    logical = schema.get("logicalType")
    if (kind, logical) in _RAW_LOGICAL:
        return _RAW_LOGICAL[(kind, logical)]
    if kind in ("bytes", "fixed") and logical == "decimal":
        return pa.decimal128(int(schema["precision"]), int(schema.get("scale", 0)))
    if kind in _RAW_PRIMITIVES:
        return _RAW_PRIMITIVES[kind]
    if kind == "fixed":
        return pa.binary()
    if kind == "enum":
        return pa.string()
    if kind == "array":
        return pa.list_(_raw(schema["items"], named))
    if kind == "map":
        return pa.map_(pa.string(), _raw(schema["values"], named))
    if kind in ("record", "error"):
        return pa.struct([pa.field(f["name"], _raw(f["type"], named)) for f in schema["fields"]])
    raise ValueError(f"unsupported Avro type {kind!r}")


def _zero(data_type: pa.DataType) -> pa.Scalar:
    if pa.types.is_boolean(data_type):
        return pa.scalar(False, data_type)
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return pa.scalar("", data_type)
    if pa.types.is_binary(data_type) or pa.types.is_large_binary(data_type):
        return pa.scalar(b"", data_type)
    if pa.types.is_decimal(data_type):
        import decimal

        return pa.scalar(decimal.Decimal(0), data_type)
    if pa.types.is_date32(data_type):
        return pa.scalar(0, pa.int32()).cast(data_type)
    if pa.types.is_date64(data_type) or pa.types.is_timestamp(data_type):
        return pa.scalar(0, pa.int64()).cast(data_type)
    return pa.scalar(0, data_type)


def conform(array: pa.Array, data_type: pa.DataType, nullable: bool = True) -> pa.Array:
    """``array`` (built with nullable fields) as ``data_type``, Spark's Arrow type.

    Arrow keeps the children of a null struct (a tombstone, an unused union member) as nulls,
    which a non-nullable Spark field rejects; those slots get a zero value instead, hidden
    behind the parent's null. Casts each leaf to its Spark type (timestamp units).
    """
    mask = array.is_null() if nullable and array.null_count else None
    if pa.types.is_struct(data_type):
        children = [
            conform(array.field(i), field.type, field.nullable) for i, field in enumerate(data_type)
        ]
        return pa.StructArray.from_arrays(children, fields=list(data_type), mask=mask)
    if pa.types.is_map(data_type):
        keys = conform(array.keys, data_type.key_type, False)
        items = conform(array.items, data_type.item_type, data_type.item_field.nullable)
        return pa.MapArray.from_arrays(array.offsets, keys, items, type=data_type, mask=mask)
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        field = data_type.value_field
        values = conform(array.values, field.type, field.nullable)
        cls = pa.ListArray if pa.types.is_list(data_type) else pa.LargeListArray
        return cls.from_arrays(array.offsets, values, type=data_type, mask=mask)
    if array.type != data_type:
        array = array.cast(data_type)
    if not nullable and array.null_count:
        array = array.fill_null(_zero(data_type))
    return array


# -- values fastavro returns for unions that Spark turns into member structs ---------------------

_PY_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "int": (int,),
    "long": (int,),
    "float": (float,),
    "double": (float,),
    "string": (str,),
    "enum": (str,),
    "bytes": (bytes,),
    "fixed": (bytes,),
    "array": (list,),
    "map": (dict,),
    "record": (dict,),
    "error": (dict,),
}


def value_fixer(schema: Any) -> Callable[[Any], Any] | None:
    """A function turning fastavro's value for ``schema`` into the member-struct shape, if needed.

    ``None`` when the schema has no union that Spark maps to ``member0..n`` (the common case:
    then the decoded dicts go to Arrow untouched).
    """
    named = named_types(schema)
    return _fixer(schema, named, ())


def _fixer(schema: Any, named: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if isinstance(schema, str):
        if schema in named and schema not in stack:
            return _fixer(named[schema], named, stack)
        return None
    if isinstance(schema, list):
        return _union_fixer(schema, named, stack)
    kind = schema["type"]
    if isinstance(kind, dict | list):
        return _fixer(kind, named, stack)
    if kind in ("record", "error"):
        inner = (*stack, schema["name"])
        fixes = [(f["name"], _fixer(f["type"], named, inner)) for f in schema["fields"]]
        fixes = [(n, fn) for n, fn in fixes if fn is not None]
        if not fixes:
            return None

        def fix_record(value: Any) -> Any:
            if value is None:
                return None
            for name, fn in fixes:
                value[name] = fn(value.get(name))
            return value

        return fix_record
    if kind == "array":
        item = _fixer(schema["items"], named, stack)
        if item is None:
            return None
        return lambda value: None if value is None else [item(v) for v in value]
    if kind == "map":
        val = _fixer(schema["values"], named, stack)
        if val is None:
            return None
        return lambda value: None if value is None else {k: val(v) for k, v in value.items()}
    return None


def _union_fixer(branches: list[Any], named: dict[str, Any], stack: tuple[str, ...]) -> Any:
    kinds = [_kind(b, named) for b in branches]
    rest = [b for b, k in zip(branches, kinds, strict=True) if k != "null"]
    rest_kinds = [k for k in kinds if k != "null"]
    if len(rest) <= 1 or (
        len(rest) == 2 and set(rest_kinds) in ({"int", "long"}, {"float", "double"})
    ):
        return _fixer(rest[0], named, stack) if rest else None
    members = []
    for i, (branch, kind) in enumerate(zip(rest, rest_kinds, strict=True)):
        name = None
        if isinstance(branch, str) and branch in named:
            name = branch
        elif isinstance(branch, dict) and "name" in branch:
            name = branch["name"]
        types: tuple[type, ...] = _PY_TYPES.get(kind, (object,))
        if isinstance(branch, dict) and branch.get("logicalType") == "decimal":
            import decimal

            types = (decimal.Decimal,)
        members.append((f"member{i}", name, types, _fixer(branch, named, stack)))
    keys = [m[0] for m in members]

    def fix_union(value: Any) -> Any:
        if value is None:
            return None
        out = dict.fromkeys(keys)
        if isinstance(value, tuple):  # (record name, value) for unions of several records
            record_name, value = value
            for key, name, _, fn in members:
                if name == record_name:
                    out[key] = fn(value) if fn is not None else value
                    return out
        for key, _, types, fn in members:
            if isinstance(value, types) and not (isinstance(value, bool) and bool not in types):
                out[key] = fn(value) if fn is not None else value
                return out
        raise SerializationError(f"no union branch matches a {type(value).__name__} value")

    return fix_union


# -- the batch decoder -----------------------------------------------------------------------------


_READ_OPTIONS = {
    "return_record_name": True,
    "return_record_name_override": True,
    "handle_unicode_errors": "strict",
    "return_named_type": False,
    "return_named_type_override": False,
}


def _probe_read_data() -> Callable[..., Any] | None:
    """fastavro's compiled ``_read_data`` when it reads as ``schemaless_reader`` does.

    Calling it directly skips the per-call schema checks of the public function (half the
    time of a small record). Checked against the public API at import, with and without a
    reader schema; on any difference (another fastavro version) the public API is used.
    """
    try:
        from fastavro._read import _read_data
    except ImportError:
        return None
    point = {"type": "record", "name": "P", "fields": [{"name": "x", "type": "int"}]}
    label = {"type": "record", "name": "L", "fields": [{"name": "t", "type": "string"}]}
    writer_doc = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "a", "type": "int"},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
            {"name": "u", "type": ["null", point, label]},
            {"name": "m", "type": {"type": "map", "values": ["null", "string"]}},
        ],
    }
    reader_doc = copy.deepcopy(writer_doc)
    reader_doc["fields"][0]["type"] = "long"
    reader_doc["fields"].append({"name": "n", "type": "string", "default": "d"})
    try:
        from fastavro import schemaless_writer

        writer = parse_schema(copy.deepcopy(writer_doc))
        reader = parse_schema(copy.deepcopy(reader_doc))
        buf = io.BytesIO()
        schemaless_writer(buf, writer, {"a": 3, "e": "Y", "u": ("L", {"t": "z"}), "m": {"k": None}})
        data = buf.getvalue()
        for r in (None, reader):
            read = _make_read(writer, r, _read_data)
            expected = schemaless_reader(io.BytesIO(data), writer, r, True, True)
            if read(io.BytesIO(data)) != expected:
                return None
        return _read_data
    except Exception:
        return None


def _make_read(writer: Any, reader: Any, read_data: Any) -> Callable[[io.BytesIO], Any]:
    if read_data is None:
        return lambda stream: schemaless_reader(stream, writer, reader, True, True)
    named: dict[str, dict[str, Any]] = {"writer": {}, "reader": {}}
    writer = parse_schema(writer, named["writer"])
    if reader is not None:
        reader = parse_schema(reader, named["reader"])
    options = _READ_OPTIONS
    return lambda stream: read_data(stream, writer, named, reader, options)


_read_data = _probe_read_data()


class _Writer:
    __slots__ = ("label", "offset", "read")

    def __init__(self, writer: Any, reader: Any, label: str) -> None:
        self.read = _make_read(writer, reader, _read_data)
        self.label = label
        self.offset = 5  # where the Avro data starts: after the id frame, or the GUID frame's 17


class AvroBatchDecoder:
    """Framed Avro values of one column -> an Arrow array of the reader schema's Spark type.

    ``writers`` maps the schema ids the driver already knows to self-contained schema texts;
    other ids are fetched from the registry once per process. ``permissive``: records that
    cannot be decoded (bad frame, unknown id, bad Avro) become null and, with
    ``with_error``, a reason; registry outages still fail the task.
    """

    def __init__(
        self,
        conf: dict[str, Any] | None,
        reader_json: str,
        writers: dict[int, str],
        target: pa.DataType,
        permissive: bool,
        with_error: bool,
    ) -> None:
        self.conf = conf
        qualified = _qualified(reader_json)
        reader = strip_logical_types(qualified)
        self.reader_text = json.dumps(reader, sort_keys=True)
        self.reader = parse_schema(copy.deepcopy(reader))
        self.raw_type = raw_arrow_type(qualified)
        self.fix = value_fixer(reader)
        self.target = target
        self.permissive = permissive
        self.with_error = with_error
        self.known = dict(writers)
        self.by_frame: dict[bytes, _Writer] = {}

    def _writer(self, data: bytes) -> _Writer:
        """The writer of a frame not seen yet (an id frame is keyed by its 5 bytes, a GUID
        frame by its 17)."""
        parsed, label = read_writer_frame(data)
        text = self.known.get(parsed.schema_id) if parsed.schema_id is not None else None
        if text is None:
            if self.conf is None:
                raise DecodeFailure(f"{label}: unknown, and no registry was configured")
            client = client_for(self.conf)
            try:
                schema, _ = fetch_writer_schema(client, parsed.schema_id, parsed.guid, None)
            except SchemaRegistryError as exc:
                if exc.http_status_code == 404:
                    raise DecodeFailure(f"{label}: not found in the registry ({exc})") from exc
                raise
            if (schema.schema_type or "AVRO") != "AVRO":
                raise DecodeFailure(f"{label}: is a {schema.schema_type} schema, not Avro")
            text = schema_json(schema, client)
        writer = strip_logical_types(_qualified(text))
        same = json.dumps(writer, sort_keys=True) == self.reader_text
        entry = _Writer(parse_schema(copy.deepcopy(writer)), None if same else self.reader, label)
        entry.offset = parsed.offset
        self.by_frame[data[: parsed.offset]] = entry
        return entry

    def decode(self, column: pa.Array) -> pa.Array:
        if column.null_count == len(column) and not self.with_error:
            # the native engine's fallback: rows it decoded itself arrive as nulls
            return conform(pa.nulls(len(column), self.raw_type), self.target)
        values = column.to_pylist()
        out: list[Any] = []
        errors: list[str | None] | None = [] if self.with_error else None
        by_frame = self.by_frame
        bytes_io = io.BytesIO
        for data in values:
            if data is None:
                out.append(None)
                if errors is not None:
                    errors.append(None)
                continue
            try:
                entry = by_frame.get(data[:5])
                if entry is None:
                    entry = by_frame.get(data[:17]) if data[:1] == b"\x01" else None
                    if entry is None:
                        entry = self._writer(data)
                stream = bytes_io(data)
                stream.seek(entry.offset)
                try:
                    value = entry.read(stream)
                except Exception as exc:
                    raise DecodeFailure(
                        f"{entry.label}: payload does not decode as Avro: "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                if stream.tell() != len(data):
                    raise DecodeFailure(
                        f"{entry.label}: {len(data) - stream.tell()} bytes left over after the "
                        "record; it was not written with this schema"
                    )
            except SerializationError as exc:
                if not self.permissive:
                    raise
                out.append(None)
                if errors is not None:
                    errors.append(str(exc))
                continue
            out.append(value)
            if errors is not None:
                errors.append(None)
        if self.fix is not None:
            fix = self.fix
            out = [None if v is None else fix(v) for v in out]
        array = pa.array(out, type=self.raw_type)
        target = self.target
        if self.with_error:
            assert errors is not None
            array = conform(array, target.field(0).type)
            return pa.StructArray.from_arrays(
                [array, pa.array(errors, pa.string())], fields=list(target)
            )
        return conform(array, target)


def _qualified(text: str) -> Any:
    """A schema text as JSON with fully qualified names (fastavro's parse, inlined)."""
    doc = json.loads(text)
    return inline_schema(parse_schema(doc if not isinstance(doc, str) else {"type": doc}))
