"""Protobuf serializer and deserializer with Schema Registry framing.

Same constructor arguments, ``conf`` keys and bytes as ``confluent_kafka.schema_registry.protobuf``:
the schema is registered as the base64 ``FileDescriptorProto`` of the message's file, its imports
registered first under ``reference.subject.name.strategy`` subjects (well-known google/confluent
types skipped with ``skip.known.types``), and the frame carries the message index path.

The deserializer parses into ``message_type`` when given (as confluent-kafka), or, with
``message_type=None``, builds descriptors from the writer schema fetched from the registry
(references included) and returns a dict: field names as declared, enums as names, nested
messages as dicts (None when unset), repeated fields as lists, maps as dicts.

Per (topic, field) the serializer keeps the complete frame prefix, so a message costs one
``SerializeToString`` and one concatenation; the deserializer keeps the message class per
(schema id, message index path).
"""

from __future__ import annotations

import base64
import importlib
import threading
from collections.abc import Callable
from typing import Any

from confluent_kafka.serialization import (
    Deserializer,
    MessageField,
    SerializationContext,
    Serializer,
)
from google.protobuf import descriptor_pb2, descriptor_pool, json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor, FileDescriptor
from google.protobuf.message import DecodeError, Message
from google.protobuf.message_factory import GetMessageClass

from serdes import confluent_protos, wire
from serdes._async.serde import AsyncDeserializer, AsyncSerializer
from serdes._serde import (
    DESERIALIZER_KEYS,
    SERIALIZER_KEYS,
    SerdeConf,
    fetch_writer_schema,
    register_or_lookup,
)
from serdes.errors import SerializationError
from serdes.protobuf_decimal import decimal_to_protobuf, protobuf_to_decimal
from serdes.rules.context import set_original_key
from serdes.rules.engine import RuleRunner
from serdes.rules.plan import read_plan, write_plan
from serdes.rules.walk_protobuf import proto_field_transformer
from serdes.schema import Schema, SchemaReference
from serdes.strategies import reference_subject_name_strategy

__all__ = [
    "AsyncProtobufDeserializer",
    "AsyncProtobufSerializer",
    "ProtobufDeserializer",
    "ProtobufSerializer",
    "decimal_to_protobuf",
    "message_index_path",
    "message_to_dict",
    "protobuf_to_decimal",
]

_SCHEMA_TYPE = "PROTOBUF"
_VALUE = MessageField.VALUE
_KEY = MessageField.KEY


def _is_builtin(name: str) -> bool:
    return name.startswith(("confluent/", "google/protobuf/", "google/type/"))


def _declared(nested: Any) -> list[Descriptor]:
    """The nested messages as declared: protoc's synthetic map entry types left out."""
    return [m for m in nested if not m.GetOptions().map_entry]


def message_index_path(desc: Descriptor) -> list[int]:
    """Where ``desc`` sits in its file: top-level index, then nested indexes.

    Map entry types (``TagsEntry`` for a ``map<..> tags`` field) are not counted, as Confluent's
    Java and JavaScript clients count (confluent-kafka-python counts them, so its path for a
    message declared after a map field is one higher; the deserializer reads both).
    """
    path: list[int] = []
    current = desc
    while current.containing_type is not None:
        parent = current.containing_type
        path.append(_declared(parent.nested_types).index(current))
        current = parent
    path.append(list(current.file.message_types_by_name.values()).index(current))
    path.reverse()
    return path


def _file_schema_str(file: FileDescriptor) -> str:
    return base64.standard_b64encode(file.serialized_pb).decode("ascii")


# confluent-kafka's name for it, which tests written against it import
_schema_to_str = _file_schema_str


class ProtobufSerializer(Serializer):
    """Protobuf messages with Schema Registry framing (``...protobuf.ProtobufSerializer``).

    ``conf``: ``auto.register.schemas``, ``normalize.schemas``, ``use.schema.id``,
    ``use.latest.version``, ``use.latest.with.metadata``, ``skip.known.types`` (True),
    ``subject.name.strategy``(``.type``/``.conf``), ``reference.subject.name.strategy``,
    ``schema.id.serializer``, ``use.deprecated.format`` (must be False).
    """

    _default_conf: dict[str, Any] = {
        **SERIALIZER_KEYS,
        "skip.known.types": True,
        "reference.subject.name.strategy": reference_subject_name_strategy,
        "use.deprecated.format": False,
    }

    def __init__(
        self,
        msg_type: Any,
        schema_registry_client: Any,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client
        self._conf = SerdeConf(conf, self._default_conf, schema_registry_client, serializer=True)
        self._rules = RuleRunner(schema_registry_client, rule_conf, rule_registry)
        self._plans: dict[Any, Any] = {}
        raw = self._conf.raw
        self._skip_known_types = SerdeConf._bool(raw, "skip.known.types")
        if SerdeConf._bool(raw, "use.deprecated.format"):
            raise ValueError("use.deprecated.format is no longer supported")
        self._ref_subject = raw["reference.subject.name.strategy"]
        if not callable(self._ref_subject):
            raise ValueError("reference.subject.name.strategy must be callable")
        self._msg_class = msg_type
        self._descriptor: Descriptor = msg_type.DESCRIPTOR
        self._name = self._descriptor.full_name
        self._indexes = message_index_path(self._descriptor)
        self._index_bytes = wire.encode_message_indexes(self._indexes)
        self._schema_str = _file_schema_str(self._descriptor.file)
        self._lock = threading.Lock()
        self._by_subject: dict[str, tuple[bytes | None, wire.SchemaId]] = {}
        # (topic -> complete frame prefix) per field, for built-in strategies and prefix framing
        self._value_prefixes: dict[str, bytes] = {}
        self._key_prefixes: dict[str, bytes] = {}
        self._by_topic = not self._conf.strategy_is_custom and not self._conf.uses_latest

    def _references(self, ctx: SerializationContext | None, file: FileDescriptor) -> list[Any]:
        """Register (or look up) the imports of ``file``, depth first; their references."""
        refs = []
        for dep in file.dependencies:
            if self._skip_known_types and _is_builtin(dep.name):
                continue
            dep_refs = self._references(ctx, dep)
            subject = self._ref_subject(ctx, dep)
            schema = Schema(_file_schema_str(dep), _SCHEMA_TYPE, dep_refs)
            if self._conf.auto_register:
                self._registry.register_schema(
                    subject, schema, normalize_schemas=self._conf.normalize
                )
            found = self._registry.lookup_schema(
                subject, schema, normalize_schemas=self._conf.normalize
            )
            refs.append(SchemaReference(dep.name, subject, found.version))
        return refs

    def _frame_for(
        self, schema_id: int | None, guid: str | None, plan: Any = None
    ) -> tuple[bytes | None, wire.SchemaId, Any]:
        sid = wire.SchemaId(_SCHEMA_TYPE, schema_id, guid, list(self._indexes))
        prefix = None
        if self._conf.prefix_ids and schema_id is not None:
            prefix = wire.id_prefix(schema_id) + self._index_bytes
        return prefix, sid, plan

    def _plan(self, schema: Schema) -> Any:
        """The WRITE rules of ``schema`` (serdes.rules.plan.WritePlan), built once. Fields
        are walked along the message class's descriptor (its tags are the schema's when the
        class was generated from the registered schema)."""
        if schema not in self._plans:
            self._plans[schema] = write_plan(
                self._rules, schema, lambda: proto_field_transformer(self._descriptor), lambda: None
            )
        return self._plans[schema]

    def _frame(
        self, ctx: SerializationContext | None
    ) -> tuple[bytes | None, wire.SchemaId, Any] | None:
        if ctx is None:
            return None  # as confluent-kafka: no context, no subject, no registration
        subject = self._conf.subject_name(ctx, self._name)
        if subject is None:
            return None
        if self._conf.uses_latest:
            rs = self._conf.latest_schema(self._registry, subject)
            assert rs is not None
            return self._frame_for(rs.schema_id, rs.guid, self._plan(rs.schema))
        found = self._by_subject.get(subject)
        if found is None:
            with self._lock:
                found = self._by_subject.get(subject)
                if found is None:
                    refs = self._references(ctx, self._descriptor.file)
                    schema = Schema(self._schema_str, _SCHEMA_TYPE, refs)
                    rs = register_or_lookup(self._registry, self._conf, subject, schema)
                    found = self._frame_for(rs.schema_id, rs.guid)
                    self._by_subject[subject] = found
        if self._by_topic and found[0] is not None:
            cache = self._value_prefixes if ctx.field == _VALUE else self._key_prefixes
            cache[ctx.topic] = found[0]
        return found

    def __call__(self, message: Any, ctx: SerializationContext | None = None) -> bytes | None:
        if message.__class__ is self._msg_class and ctx is not None:  # None is not the class
            prefix = (self._value_prefixes if ctx.field == _VALUE else self._key_prefixes).get(
                ctx.topic
            )
            if prefix is not None:
                return prefix + message.SerializeToString()
        if message is None:
            return None
        if ctx is not None and ctx.field == _KEY:
            set_original_key(message)  # for a DLQ record of the value's rules (as confluent)
        if not isinstance(message, self._msg_class):
            raise ValueError(f"message must be of type {self._msg_class} not {type(message)}")
        frame = self._frame(ctx)
        plan = frame[2] if frame is not None else None
        if plan is not None:
            message = plan.domain(ctx, self._conf.subject_name(ctx, self._name), message)
        try:
            body = message.SerializeToString()
        except Exception as exc:  # e.g. required fields missing in proto2
            raise SerializationError(
                f"message {self._name} does not serialize: {type(exc).__name__}: {exc}"
            ) from exc
        if frame is None:
            sid = wire.SchemaId(_SCHEMA_TYPE, None, None, list(self._indexes))
            return self._conf.schema_id_serializer(body, ctx, sid)
        prefix, sid, _ = frame
        if plan is not None and plan.has_encoding:
            subject = self._conf.subject_name(ctx, self._name)
            return self._conf.schema_id_serializer(plan.encoding(ctx, subject, body), ctx, sid)
        if prefix is not None:
            return prefix + body
        return self._conf.schema_id_serializer(body, ctx, sid)


# -- reading -----------------------------------------------------------------------------------


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_ENUM:
        named = field.enum_type.values_by_number.get(value)
        return named.name if named is not None else value
    return value


def message_to_dict(message: Message) -> dict[str, Any]:
    """A parsed message as plain Python values (every declared field present)."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            if value_field.message_type is not None:
                out[field.name] = {k: message_to_dict(v) for k, v in value.items()}
            else:
                out[field.name] = {k: _scalar(value_field, v) for k, v in value.items()}
        elif field.is_repeated:
            if field.message_type is not None:
                out[field.name] = [message_to_dict(v) for v in value]
            else:
                out[field.name] = [_scalar(field, v) for v in value]
        elif field.message_type is not None:
            out[field.name] = message_to_dict(value) if message.HasField(field.name) else None
        else:
            out[field.name] = _scalar(field, value)
    return out


def _file_proto(name: str, schema_str: str, label: str) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    try:
        proto.ParseFromString(base64.standard_b64decode(schema_str.encode("ascii")))
    except Exception as exc:
        raise SerializationError(
            f"schema {label} is not a serialized FileDescriptorProto: {exc}"
        ) from exc
    proto.name = name
    return proto


def _add_builtin(pool: descriptor_pool.DescriptorPool, name: str) -> None:
    """Copy a well-known file (google/protobuf/*, google/type/*, confluent/*) into ``pool``:
    the default pool's (importing google's generated module if needed), else, for confluent's
    two files, serdes' own (:mod:`serdes.confluent_protos`; confluent-kafka's modules are not
    imported: they load its whole ``schema_registry`` package)."""
    try:
        pool.FindFileByName(name)
        return
    except KeyError:
        pass
    default = descriptor_pool.Default()
    proto = None
    try:
        found = default.FindFileByName(name)
    except KeyError:
        proto = confluent_protos.file_proto(name)
        if proto is None and name.startswith("google/"):
            try:
                importlib.import_module(name[: -len(".proto")].replace("/", ".") + "_pb2")
                found = default.FindFileByName(name)
            except (ImportError, KeyError):
                pass
            else:
                proto = descriptor_pb2.FileDescriptorProto.FromString(found.serialized_pb)
        if proto is None:
            raise SerializationError(f"well-known import {name} is not available") from None
    else:
        proto = descriptor_pb2.FileDescriptorProto.FromString(found.serialized_pb)
    for dep in proto.dependency:
        _add_builtin(pool, dep)
    pool.Add(proto)


class _Decoder:
    __slots__ = ("cls", "label", "migrate", "name", "parse", "rules", "to_dict")

    def __init__(self, cls: Any, label: str, to_dict: bool) -> None:
        self.cls = cls
        self.label = label
        self.to_dict = to_dict
        self.rules: Any = None  # a serdes.rules.plan.ReadPlan when there are rules to run
        self.name: str | None = None  # the writer message's full name (for the subject)
        self.migrate: Any = None  # (writer class, reader class) when migrations run
        from_string = cls.FromString
        if to_dict:

            def parse(data: bytes) -> Any:
                return message_to_dict(from_string(data))

            self.parse: Callable[[bytes], Any] = parse
        else:
            self.parse = from_string


class ProtobufDeserializer(Deserializer):
    """Schema Registry framed Protobuf to messages (``...protobuf.ProtobufDeserializer``).

    ``message_type`` None: dicts, from descriptors built out of the writer schema.
    ``conf``: ``use.latest.version``, ``use.latest.with.metadata``,
    ``subject.name.strategy``(``.type``/``.conf``), ``schema.id.deserializer``,
    ``use.deprecated.format`` (must be False).
    """

    _default_conf: dict[str, Any] = {**DESERIALIZER_KEYS, "use.deprecated.format": False}

    def __init__(
        self,
        message_type: Any,
        conf: dict[str, Any] | None = None,
        schema_registry_client: Any = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client
        self._conf = SerdeConf(conf, self._default_conf, schema_registry_client, serializer=False)
        self._rules = RuleRunner(schema_registry_client, rule_conf, rule_registry)
        self._writer_schemas: dict[Any, Schema] = {}
        if SerdeConf._bool(self._conf.raw, "use.deprecated.format"):
            raise ValueError("use.deprecated.format is no longer supported")
        if message_type is None and schema_registry_client is None:
            raise ValueError(
                "ProtobufDeserializer needs a message_type or a schema registry client"
            )
        self._msg_class = GetMessageClass(message_type.DESCRIPTOR) if message_type else None
        self._lock = threading.Lock()
        self._decoders: dict[Any, _Decoder] = {}
        self._pools: dict[Any, tuple[descriptor_pool.DescriptorPool, str]] = {}
        self._plain = self._conf.dual_ids and not self._conf.strategy_is_custom
        # frame bytes -> the decoder's parse function, for the common [0] index path
        self._fast: dict[bytes, Callable[[bytes], Any]] = {}

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if data is None:
            return None
        if ctx is not None and ctx.field == _KEY:
            set_original_key(data)  # for a DLQ record of the value's rules (as confluent)
        if ctx is None or not ctx.headers:
            # Steady state: the 6-byte frame (magic 0, id, index path [0]) names the parser.
            parse = self._fast.get(data[:6])
            if parse is not None:
                try:
                    return parse(data[6:])
                except DecodeError as exc:
                    label = self._decoders[int.from_bytes(data[1:5], "big")].label
                    raise SerializationError(
                        f"payload does not decode as Protobuf message of schema {label}: {exc}"
                    ) from exc
        return self._deserialize(data, ctx)

    def _deserialize(self, data: bytes, ctx: SerializationContext | None) -> Any:
        if self._conf.dual_ids:
            header = wire.schema_id_header(ctx)
            if header is not None:
                frame = wire.read_frame(header, with_indexes=True)
                frame.offset = 0
            else:
                frame = wire.read_frame(data, with_indexes=True)
        else:
            sid = wire.SchemaId(_SCHEMA_TYPE)
            rest = self._conf.schema_id_deserializer(data, ctx, sid)
            frame = wire.Frame(sid.id, sid.guid, sid.message_indexes or [0], 0)
            data = rest.read() if hasattr(rest, "read") else bytes(rest)
        indexes = frame.message_indexes or [0]
        ident: Any = frame.schema_id if frame.schema_id is not None else str(frame.guid)
        subject = None
        if self._conf.strategy_is_custom and ctx is not None:
            subject = self._conf.subject_name(ctx, None)
        key: Any = (subject, ident, tuple(indexes))
        latest = None
        if self._conf.uses_latest and ctx is not None and self._registry is not None:
            latest_subject = subject or self._conf.subject_name(ctx, None)
            if latest_subject is not None:
                latest = self._conf.latest_schema(self._registry, latest_subject)
                key = (*key, latest.schema_id if latest is not None else None)
        decoder = self._decoders.get(key)
        if decoder is None:
            decoder = self._load(frame, indexes, subject, ctx, latest)
            with self._lock:
                self._decoders[key] = decoder
                if (
                    self._plain
                    and decoder.rules is None
                    and indexes == [0]
                    and frame.schema_id is not None
                    and (frame.offset == 6)
                ):
                    self._decoders[frame.schema_id] = decoder
                    self._fast[wire.id_prefix(frame.schema_id) + b"\x00"] = decoder.parse
        if decoder.rules is not None:
            return self._decode_with_rules(decoder, data, frame.offset, ctx)
        return self._decode(decoder, data, frame.offset)

    def _decode_with_rules(
        self, decoder: _Decoder, data: bytes, offset: int, ctx: SerializationContext | None
    ) -> Any:
        plan = decoder.rules
        subject = self._conf.subject_name(ctx, None) if ctx is not None else None
        if subject is None and ctx is not None:
            subject = self._conf.subject_name(ctx, decoder.name)
        if plan.has_encoding:
            data, offset = plan.encoding(ctx, subject, bytes(data[offset:]), data), 0
        cls = decoder.migrate[0] if decoder.migrate is not None else decoder.cls
        try:
            message = cls.FromString(data[offset:])
        except DecodeError as exc:
            raise SerializationError(
                f"payload does not decode as Protobuf message of schema {decoder.label}: {exc}"
            ) from exc
        if decoder.migrate is not None and ctx is not None and subject is not None:
            # As confluent-kafka: the migration rules see the message as JSON, and the result
            # is read into the reader schema's message.
            value = plan.migrate(ctx, subject, json_format.MessageToDict(message, True))
            message = json_format.ParseDict(value, decoder.migrate[1]())
        message = plan.domain(ctx, subject, message, data)
        return message_to_dict(message) if decoder.to_dict else message

    def _load(
        self,
        frame: wire.Frame,
        indexes: list[int],
        subject: str | None,
        ctx: SerializationContext | None,
        latest: Any = None,
    ) -> _Decoder:
        label = f"id {frame.schema_id}" if frame.schema_id is not None else f"GUID {frame.guid}"
        if self._registry is None:
            assert self._msg_class is not None
            return _Decoder(self._msg_class, label, False)
        if subject is None and ctx is not None:
            subject = self._conf.subject_name(ctx, None)
        pool, file_name = self._pool(frame, subject, label)
        desc = self._message_descriptor(pool.FindFileByName(file_name), indexes, label)
        if self._msg_class is not None:
            decoder = _Decoder(self._msg_class, f"{label} ({desc.full_name})", False)
        else:
            decoder = _Decoder(GetMessageClass(desc), f"{label} ({desc.full_name})", True)
        writer = self._writer_schemas.get(
            frame.schema_id if frame.schema_id is not None else str(frame.guid)
        )
        decoder.name = desc.full_name
        target, reader_desc = writer, desc
        if latest is not None:
            latest_frame = wire.Frame(latest.schema_id, latest.guid, None, 0)
            pool2, file2 = self._pool(latest_frame, subject, f"id {latest.schema_id}")
            reader_file = pool2.FindFileByName(file2)
            reader_desc = reader_file.message_types_by_name.get(
                desc.name, self._message_descriptor(reader_file, [0], f"id {latest.schema_id}")
            )
            target = latest.schema
        decoder.rules = read_plan(
            self._rules,
            self._registry,
            subject,
            writer,
            target,
            latest,
            lambda: proto_field_transformer(reader_desc),
            lambda: None,
        )
        if decoder.rules is not None and decoder.rules.migrations:
            decoder.migrate = (GetMessageClass(desc), GetMessageClass(reader_desc))
        return decoder

    def _pool(
        self, frame: wire.Frame, subject: str | None, label: str
    ) -> tuple[descriptor_pool.DescriptorPool, str]:
        key = frame.schema_id if frame.schema_id is not None else str(frame.guid)
        cached = self._pools.get(key)
        if cached is not None:
            return cached
        schema, _ = fetch_writer_schema(
            self._registry, frame.schema_id, frame.guid, subject, "serialized"
        )
        self._writer_schemas[key] = schema
        pool = descriptor_pool.DescriptorPool()
        seen: set[str] = set()

        def add_references(refs: Any) -> None:
            for ref in refs or ():
                if ref.name in seen:
                    continue
                seen.add(ref.name)
                if _is_builtin(ref.name):
                    _add_builtin(pool, ref.name)
                    continue
                referenced = self._registry.get_version(
                    ref.subject, ref.version, True, "serialized"
                )
                add_references(referenced.schema.references)
                proto = _file_proto(ref.name, referenced.schema.schema_str, f"{ref.subject}")
                self._add(pool, proto)

        add_references(schema.references)
        root = _file_proto("default", schema.schema_str or "", label)
        self._add(pool, root)
        result = (pool, root.name)
        with self._lock:
            self._pools[key] = result
        return result

    @staticmethod
    def _add(
        pool: descriptor_pool.DescriptorPool, proto: descriptor_pb2.FileDescriptorProto
    ) -> None:
        for dep in proto.dependency:
            if _is_builtin(dep):
                _add_builtin(pool, dep)
        pool.Add(proto)

    @staticmethod
    def _message_descriptor(file: FileDescriptor, indexes: list[int], label: str) -> Descriptor:
        # Nested indexes count declared messages, not map entry types (Confluent's Java and
        # JavaScript clients, and our serializer). confluent-kafka-python counts the entries
        # too, where protoc put them: an index past the declared messages is read its way.
        # In a descriptor in protoc's order that names a message among all the nested types;
        # Confluent's descriptor (format=serialized) appends the entries instead, so there it
        # is read in the order protoc gives Confluent's canonical text (fields, hence the map
        # entries, before the nested messages): the declared message ``entries`` further back.
        messages = list(file.message_types_by_name.values())
        desc: Descriptor | None = None
        for depth, index in enumerate(indexes):
            if depth > 0 and index >= len(messages) and desc is not None:
                every = list(desc.nested_types)
                entries = len(every) - len(messages)
                if index < len(every) and not every[index].GetOptions().map_entry:
                    messages = every
                elif 0 <= index - entries < len(messages):
                    index -= entries
            if not 0 <= index < len(messages):
                where = "top-level" if depth == 0 else f"nested in {desc.full_name}"  # type: ignore[union-attr]
                raise SerializationError(
                    f"message index path {indexes} does not exist in schema {label}: index "
                    f"{index} out of range, {len(messages)} {where} message(s)"
                )
            desc = messages[index]
            messages = _declared(desc.nested_types)
        assert desc is not None
        return desc

    @staticmethod
    def _decode(decoder: _Decoder, data: bytes, offset: int) -> Any:
        try:
            message = decoder.cls.FromString(data[offset:])
        except DecodeError as exc:
            raise SerializationError(
                f"payload does not decode as Protobuf message of schema {decoder.label}: {exc}"
            ) from exc
        if decoder.to_dict:
            return message_to_dict(message)
        return message


# -- asyncio ------------------------------------------------------------------------------------


class AsyncProtobufSerializer(AsyncSerializer):
    """``ProtobufSerializer`` for asyncio (confluent-kafka's ``protobuf.AsyncProtobufSerializer``).

    ``ser = await AsyncProtobufSerializer(...)`` with ``ProtobufSerializer``'s arguments and an
    ``AsyncSchemaRegistryClient``; ``await ser(obj, ctx)`` gives ``ProtobufSerializer``'s bytes.
    """

    sync_class = ProtobufSerializer


class AsyncProtobufDeserializer(AsyncDeserializer):
    """``ProtobufDeserializer`` for asyncio (``protobuf.AsyncProtobufDeserializer`` of confluent).

    ``de = await AsyncProtobufDeserializer(...)`` with ``ProtobufDeserializer``'s arguments and an
    ``AsyncSchemaRegistryClient``; ``await de(data, ctx)`` gives ``ProtobufDeserializer``'s value.
    """

    sync_class = ProtobufDeserializer
