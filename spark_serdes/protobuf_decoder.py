"""Protobuf: descriptors from registered schemas, and the Python engine's batch decoder.

The driver turns the reader schema (the subject version, its references resolved) into a list
of serialized ``FileDescriptorProto`` files, and every writer schema id it knows into the map
``message index path -> message full name`` of its file; both travel to the Python workers in
the column function's closure. A worker builds the reader's message class once, and a
converter from parsed messages to the tuples of the Arrow struct, compiled once per descriptor
following :mod:`spark_serdes.protobuf_types` (which fields Spark keeps, presence, enum names,
timestamps, unsigned integers as Java's signed ones).

Each record: frame (magic 0, schema id, message indexes) -> the writer's message full name,
which must be the reader's; the payload is then parsed with the reader's descriptor, so fields
match by number and fields the reader does not have are ignored, as Spark's ``from_protobuf``
does (which also fails a record whose unknown fields reuse a number the reader declares).
"""

from __future__ import annotations

import keyword
import math
import threading
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from google.protobuf.unknown_fields import UnknownFieldSet

from serdes.errors import SchemaRegistryError, SerializationError
from serdes.protobuf import _add_builtin, _file_proto, _is_builtin
from serdes.schema import Schema
from spark_serdes._frames import DecodeFailure, read_writer_frame
from spark_serdes._registry import client_for, conf_key
from spark_serdes.avro import conform
from spark_serdes.protobuf_types import field_kind, struct_field

__all__ = [
    "ROOT_FILE",
    "ProtobufBatchDecoder",
    "build_pool",
    "compile_converter",
    "find_message",
    "message_paths",
    "schema_files",
]

#: the name the registered schema's own file gets in a pool (its imports keep theirs)
ROOT_FILE = "default"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_UNSIGNED32 = frozenset({FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32})
_UNSIGNED64 = frozenset({FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64})

Files = list[tuple[str, str]]
Converter = Callable[[Any], Any]


# -- schemas and descriptors ---------------------------------------------------------------------


def schema_files(client: Any, schema: Schema, label: str) -> Files:
    """``(file name, base64 FileDescriptorProto)`` of a schema's imports (depth first), then
    of the schema itself as :data:`ROOT_FILE`; well-known imports are left to the pool."""
    files: Files = []
    seen: set[str] = set()

    def add_references(refs: Any) -> None:
        for ref in refs or ():
            if ref.name in seen or _is_builtin(ref.name):
                continue
            seen.add(ref.name)
            referenced = client.get_version(ref.subject, ref.version, True, "serialized")
            add_references(referenced.schema.references)
            files.append((ref.name, referenced.schema.schema_str or ""))

    add_references(schema.references)
    files.append((ROOT_FILE, schema.schema_str or ""))
    return files


def build_pool(files: Files, label: str) -> descriptor_pool.DescriptorPool:
    """A descriptor pool holding ``files`` (and the well-known files they import)."""
    pool = descriptor_pool.DescriptorPool()
    for name, text in files:
        proto = _file_proto(name, text, label)
        for dep in proto.dependency:
            if _is_builtin(dep):
                _add_builtin(pool, dep)
        try:
            pool.Add(proto)
        except Exception as exc:
            raise SerializationError(
                f"schema {label}: file {name} does not build: {type(exc).__name__}: {exc}"
            ) from exc
    return pool


def message_paths(schema_str: str, label: str) -> dict[tuple[int, ...], str]:
    """Every message of a schema's file by its message index path (map entries not counted,
    as :mod:`serdes.protobuf` reads the paths)."""
    proto = _file_proto(ROOT_FILE, schema_str, label)
    out: dict[tuple[int, ...], str] = {}

    def walk(messages: Any, scope: str, path: tuple[int, ...]) -> None:
        nested = [m for m in messages if not m.options.map_entry]
        for index, message in enumerate(nested):
            full = f"{scope}.{message.name}" if scope else message.name
            out[(*path, index)] = full
            walk(message.nested_type, full, (*path, index))

    walk(proto.message_type, proto.package, ())
    return out


def _all_messages(file: FileDescriptor) -> list[Descriptor]:
    out: list[Descriptor] = []

    def walk(desc: Descriptor) -> None:
        out.append(desc)
        for nested in desc.nested_types:
            if not nested.GetOptions().map_entry:
                walk(nested)

    for desc in file.message_types_by_name.values():
        walk(desc)
    return out


def find_message(file: FileDescriptor, message: str | None, label: str) -> Descriptor:
    """The message ``message`` (full or simple name) of the file; its first one by default."""
    messages = _all_messages(file)
    if not messages:
        raise ValueError(f"schema {label} declares no message")
    if message is None:
        return messages[0]
    wanted = message.lstrip(".")
    by_full = [m for m in messages if m.full_name == wanted]
    if by_full:
        return by_full[0]
    by_simple = [m for m in messages if m.name == wanted]
    if len(by_simple) == 1:
        return by_simple[0]
    names = ", ".join(m.full_name for m in messages)
    if by_simple:
        raise ValueError(
            f"message name {message!r} is ambiguous in schema {label}: "
            f"{', '.join(m.full_name for m in by_simple)}; give the full name"
        )
    raise ValueError(f"schema {label} has no message {message!r}; its messages: {names}")


# -- parsed message -> Arrow struct tuple --------------------------------------------------------


def _signed32(value: int) -> int:
    return value - 0x1_0000_0000 if value > 0x7FFF_FFFF else value


def _signed64(value: int) -> int:
    return value - 0x1_0000_0000_0000_0000 if value > _INT64_MAX else value


def _micros(value: Message) -> int:
    """Timestamp/Duration as microseconds, as Spark: seconds * 10^6 + nanos / 1000 (truncated)."""
    seconds: int = value.seconds  # type: ignore[attr-defined]
    nanos: int = value.nanos  # type: ignore[attr-defined]
    micros = seconds * 1_000_000 + (nanos // 1000 if nanos >= 0 else -(-nanos // 1000))
    if not _INT64_MIN <= micros <= _INT64_MAX:
        raise DecodeFailure(
            f"{value.DESCRIPTOR.full_name} of {seconds} seconds does not fit in microseconds "
            "(a long), as Spark's from_protobuf fails it"
        )
    return micros


def _enum_names(fd: FieldDescriptor) -> Converter:
    enum = fd.enum_type
    names = {number: value.name for number, value in enum.values_by_number.items()}
    # protobuf-java names an open enum's unknown number so; Spark reports that name
    unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"

    def name(number: int) -> str:
        found = names.get(number)
        return found if found is not None else f"{unknown}{number}"

    return name


def _element(fd: FieldDescriptor, ancestors: tuple[str, ...]) -> Converter | None:
    """The conversion of one value of ``fd`` (None: taken as protobuf gives it)."""
    kind = field_kind(fd)
    if kind == "int":
        return _signed32 if fd.type in _UNSIGNED32 else None
    if kind == "long":
        return _signed64 if fd.type in _UNSIGNED64 else None
    if kind == "enum":
        return _enum_names(fd)
    if kind in ("timestamp", "duration"):
        return _micros
    if kind == "message":
        desc = fd.message_type
        return _compile(desc, (*ancestors, desc.full_name))
    return None


def _attr(name: str) -> str:
    """``m.<name>`` as Python source (``getattr`` for names that are Python keywords)."""
    return f"getattr(m, {name!r})" if keyword.iskeyword(name) else f"m.{name}"


def _call(bound: dict[str, Converter], convert: Converter | None, arg: str) -> str:
    """``arg`` through ``convert`` as Python source; the function is bound as a default."""
    if convert is None:
        return arg
    key = f"_c{len(bound)}"
    bound[key] = convert
    return f"{key}({arg})"


def _field_source(
    fd: FieldDescriptor, ancestors: tuple[str, ...], bound: dict[str, Converter]
) -> tuple[list[str], str]:
    """Statements and the expression reading ``fd`` from message ``m``, with Spark's presence
    rules (``emit.default.values`` off): repeated and map fields always; fields with presence
    when set (or, in proto2, with an explicit default: the default when unset); proto3 fields
    without presence only when not their zero value (a zero is not on the wire)."""
    value = _attr(fd.name)
    if field_kind(fd) == "map":
        entry = fd.message_type
        key = _element(entry.fields_by_name["key"], ancestors)
        item = _element(entry.fields_by_name["value"], ancestors)
        if key is None and item is None:
            return [], f"list({value}.items())"  # pairs: what pa.array takes for a map
        pair = f"({_call(bound, key, 'a')}, {_call(bound, item, 'b')})"
        return [], f"[{pair} for a, b in {value}.items()]"
    convert = _element(fd, ancestors)
    if fd.is_repeated:
        if convert is None:
            return [], f"list({value})"
        return [], f"[{_call(bound, convert, 'x')} for x in {value}]"
    if fd.has_presence and not fd.has_default_value:
        return [], f"({_call(bound, convert, value)} if m.HasField({fd.name!r}) else None)"
    if fd.has_presence:
        return [], _call(bound, convert, value)
    if fd.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        # -0.0 is not the default value (it is written on the wire), 0.0 is
        return [f"v = {value}"], "(v if v or _copysign(1.0, v) < 0 else None)"
    if convert is None:
        return [], f"({value} or None)"
    return [f"v = {value}"], f"({_call(bound, convert, 'v')} if v else None)"


def _compile(desc: Descriptor, ancestors: tuple[str, ...]) -> Converter:
    """One Python function per message type: reads each kept field, returns the tuple."""
    bound: dict[str, Converter] = {}
    lines: list[str] = []
    names: list[str] = []
    for fd in desc.fields:
        if struct_field(fd, ancestors) is None:
            continue
        statements, expression = _field_source(fd, ancestors, bound)
        lines += statements
        names.append(f"f{len(names)}")
        lines.append(f"{names[-1]} = {expression}")
    lines.append(f"return ({''.join(n + ', ' for n in names)})")
    defaults = "".join(f", {key}={key}" for key in bound)
    source = f"def convert(m, _copysign=_copysign{defaults}):\n    " + "\n    ".join(lines)
    scope: dict[str, Any] = {"_copysign": math.copysign, **bound}
    exec(compile(source, f"<protobuf converter {desc.full_name}>", "exec"), scope)
    return scope["convert"]  # type: ignore[no-any-return]


def compile_converter(desc: Descriptor) -> Converter:
    """``message -> tuple`` of the Arrow struct of ``message_to_spark(desc)``."""
    return _compile(desc, (desc.full_name,))


def _loose(data_type: pa.DataType) -> pa.DataType:
    """``data_type`` with every field nullable: what ``pa.array`` builds, before ``conform``."""
    if pa.types.is_struct(data_type):
        return pa.struct([pa.field(f.name, _loose(f.type)) for f in data_type])
    if pa.types.is_map(data_type):
        return pa.map_(data_type.key_type, _loose(data_type.item_type))
    if pa.types.is_list(data_type):
        return pa.list_(_loose(data_type.value_type))
    return data_type


# -- the batch decoder ---------------------------------------------------------------------------

_PATHS: dict[tuple[str, int | str], dict[tuple[int, ...], str]] = {}
_PATHS_LOCK = threading.Lock()


def _fetched_paths(
    conf: dict[str, Any], schema_id: int | None, guid: Any, label: str
) -> dict[tuple[int, ...], str]:
    """The message paths of a writer (id or GUID) the driver did not know: one request per
    process."""
    key = (conf_key(conf), schema_id if schema_id is not None else str(guid))
    paths = _PATHS.get(key)
    if paths is not None:
        return paths
    client = client_for(conf)
    try:
        if schema_id is not None:
            schema = client.get_schema(schema_id, None, "serialized")
        else:
            schema = client.get_schema_by_guid(str(guid), "serialized")
    except SchemaRegistryError as exc:
        if exc.http_status_code == 404:
            raise DecodeFailure(f"{label}: not found in the registry ({exc})") from exc
        raise
    if (schema.schema_type or "AVRO") != "PROTOBUF":
        raise DecodeFailure(f"{label}: is a {schema.schema_type or 'AVRO'} schema, not Protobuf")
    paths = message_paths(schema.schema_str or "", label)
    with _PATHS_LOCK:
        _PATHS[key] = paths
    return paths


def _has_required(desc: Descriptor, seen: set[str]) -> bool:
    """Whether messages of ``desc`` can miss a proto2 ``required`` field (at any depth)."""
    seen.add(desc.full_name)
    for fd in desc.fields:
        if fd.is_required:
            return True
        sub = fd.message_type
        if sub is not None and sub.full_name not in seen and _has_required(sub, seen):
            return True
    return False


class _Frame:
    """What one frame prefix (magic, id, indexes) resolves to."""

    __slots__ = ("error", "label", "offset")

    def __init__(self, offset: int, label: str, error: str | None) -> None:
        self.offset = offset
        self.label = label
        self.error = error


class ProtobufBatchDecoder:
    """Framed Protobuf values of one column -> an Arrow array of the reader message's type.

    ``reader_files``: the reader schema's files (:func:`schema_files`); ``message``: the
    reader message's full name; ``writers``: message paths of the ids the driver knows (others
    are fetched once per process). ``permissive``: records that cannot be decoded become null
    (with ``with_error``, and a reason); registry outages still fail the task.
    """

    def __init__(
        self,
        conf: dict[str, Any] | None,
        reader_files: Files,
        message: str,
        writers: dict[int, dict[tuple[int, ...], str]],
        target: pa.DataType,
        permissive: bool,
        with_error: bool,
    ) -> None:
        self.conf = conf
        pool = build_pool(reader_files, "reader")
        self.desc = pool.FindMessageTypeByName(message)
        self.message = message
        self.parse = GetMessageClass(self.desc).FromString
        self.convert = compile_converter(self.desc)
        self.numbers = frozenset(fd.number for fd in self.desc.fields)
        self.has_required = _has_required(self.desc, set())
        self.writers = dict(writers)
        self.target = target
        self.value_type = target.field(0).type if with_error else target
        self.raw_type = _loose(self.value_type)
        self.permissive = permissive
        self.with_error = with_error
        self.frames: dict[bytes, _Frame] = {}

    def _frame(self, data: bytes) -> _Frame:
        parsed, label = read_writer_frame(data, with_indexes=True)
        schema_id = parsed.schema_id
        paths = self.writers.get(schema_id) if schema_id is not None else None
        if paths is None:
            if self.conf is None:
                raise DecodeFailure(f"{label}: unknown, and no registry was configured")
            paths = _fetched_paths(self.conf, schema_id, parsed.guid, label)
            if schema_id is not None:
                self.writers[schema_id] = paths
        indexes = parsed.message_indexes or [0]
        name = paths.get(tuple(indexes))
        error = None
        if name is None:
            error = f"{label}: message index path {indexes} does not exist in the schema"
        elif name != self.message:
            error = (
                f"{label}: the record is a {name} (message indexes {indexes}), not the "
                f"reader's message {self.message}"
            )
        frame = _Frame(parsed.offset, label, error)
        self.frames[data[: parsed.offset]] = frame
        return frame

    def _record(self, data: bytes) -> Any:
        frames = self.frames
        frame = frames.get(data[:6]) if len(data) > 5 and data[5] == 0 else None
        if frame is None and len(data) > 17 and data[0] == 1 and data[17] == 0:
            frame = frames.get(data[:18])  # a GUID frame, message index path [0]
        if frame is None:
            frame = self._frame(data)
        if frame.error is not None:
            raise DecodeFailure(frame.error)
        try:
            message = self.parse(data[frame.offset :])
        except Exception as exc:
            raise DecodeFailure(
                f"{frame.label}: payload does not decode as Protobuf message {self.message}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        unknown = UnknownFieldSet(message)
        if len(unknown):
            clash = sorted({f.field_number for f in unknown} & self.numbers)
            if clash:
                raise DecodeFailure(
                    f"{frame.label}: field number {clash[0]} of {self.message} has another "
                    "wire type in the record than in the reader's schema (Spark's "
                    "from_protobuf fails such records too)"
                )
        if self.has_required and not message.IsInitialized():
            raise DecodeFailure(
                f"{frame.label}: message {self.message} misses required fields: "
                f"{', '.join(message.FindInitializationErrors())}"
            )
        return self.convert(message)

    def decode(self, column: pa.Array) -> pa.Array:
        out: list[Any] = []
        errors: list[str | None] | None = [] if self.with_error else None
        record = self._record
        for data in column.to_pylist():
            if data is None:
                out.append(None)
                if errors is not None:
                    errors.append(None)
                continue
            try:
                out.append(record(data))
            except SerializationError as exc:
                if not self.permissive:
                    raise
                out.append(None)
                if errors is not None:
                    errors.append(str(exc))
                continue
            if errors is not None:
                errors.append(None)
        array = conform(pa.array(out, type=self.raw_type), self.value_type)
        if errors is None:
            return array
        return pa.StructArray.from_arrays(
            [array, pa.array(errors, pa.string())], fields=list(self.target)
        )
