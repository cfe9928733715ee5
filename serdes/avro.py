"""Avro serializer and deserializer (fastavro) with Schema Registry framing.

Same constructor arguments, ``conf`` keys and bytes as ``confluent_kafka.schema_registry.avro``.
Faster because everything per schema is done once: the parsed writer schema and its framing
prefix per subject (serializer), a decoder per writer schema id (deserializer), fastavro's own
writer->reader resolution without re-walking the schema for every message.

Stricter where confluent-kafka writes or returns a wrong value silently: a float in an
int/long field (fastavro truncates it), an int outside 32 bits in an int field, a non-boolean
in a boolean field, a finite double beyond float range in a float field, and bytes left over
after a decoded record all raise ``SerializationError`` naming the field. For every record
that matches its schema the bytes are exactly confluent-kafka's.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from typing import Any

from confluent_kafka.serialization import (
    Deserializer,
    MessageField,
    SerializationContext,
    Serializer,
)
from fastavro import parse_schema, schemaless_reader, schemaless_writer

from serdes import wire
from serdes._async.serde import AsyncDeserializer, AsyncSerializer
from serdes._serde import (
    DESERIALIZER_KEYS,
    SERIALIZER_KEYS,
    SerdeConf,
    call_dict_hook,
    fetch_writer_schema,
    register_or_lookup,
    subject_or_none,
)
from serdes.avro_guard import compile_guard, mismatch
from serdes.avro_schema import (
    SCHEMA_TYPE,
    as_schema,
    is_bytes_schema,
    named_schemas,
    parse_avro_schema,
    record_name,
)
from serdes.errors import SerializationError, like
from serdes.rules.context import set_original_key
from serdes.rules.engine import RuleRunner
from serdes.rules.plan import read_plan, write_plan
from serdes.rules.walk_avro import avro_field_transformer, avro_inline_tags
from serdes.schema import Schema

__all__ = [
    "AsyncAvroDeserializer",
    "AsyncAvroSerializer",
    "AvroDeserializer",
    "AvroSerializer",
    "parse_avro_schema",
]

_BytesIO = io.BytesIO
_VALUE = MessageField.VALUE
_KEY = MessageField.KEY


def _probe_write_data() -> Callable[..., None] | None:
    """fastavro's compiled ``write_data`` when it behaves as ``schemaless_writer`` does inside.

    Writing straight into a bytearray that already holds the frame prefix saves the BytesIO,
    the per-call named-schema copy and a buffer copy. Checked against the public API at
    import; on any difference (another fastavro version) the public API is used.
    """
    try:
        from fastavro._write import write_data
    except ImportError:
        return None
    probe = parse_schema(
        {
            "type": "record",
            "name": "P",
            "fields": [
                {"name": "a", "type": "int"},
                {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["X", "Y"]}},
                {"name": "u", "type": ["null", "P"], "default": None},
            ],
        }
    )
    record = {"a": -3, "e": "Y", "u": {"a": 7, "e": "X", "u": None}}
    try:
        buf = bytearray(b"\x00")
        write_data(buf, record, probe, probe["__named_schemas"], "", _WRITE_OPTIONS)
        expected = _BytesIO()
        schemaless_writer(expected, probe, record)
        return write_data if bytes(buf[1:]) == expected.getvalue() else None
    except Exception:
        return None


_WRITE_OPTIONS = {"strict": False, "strict_allow_default": False, "disable_tuple_notation": False}
_write_data = _probe_write_data()


class _Writer:
    """Per subject: the framing prefix (or SchemaId for other id serializers) and the schema."""

    __slots__ = ("guard", "is_bytes", "named", "parsed", "prefix", "rules", "schema_id")

    def __init__(self, parsed: Any, schema_id: wire.SchemaId, prefix: bytes | None) -> None:
        self.parsed = parsed
        self.named = named_schemas(parsed)
        self.schema_id = schema_id
        self.prefix = prefix
        self.is_bytes = is_bytes_schema(parsed)
        self.guard = compile_guard(parsed)
        self.rules: Any = None  # a serdes.rules.plan.WritePlan when the schema has rules


class AvroSerializer(Serializer):
    """Avro binary with Schema Registry framing (``confluent_kafka...avro.AvroSerializer``).

    ``conf``: ``auto.register.schemas`` (True), ``normalize.schemas`` (False), ``use.schema.id``,
    ``use.latest.version`` (False), ``use.latest.with.metadata``, ``subject.name.strategy``
    (callable), ``subject.name.strategy.type`` (TOPIC, RECORD, TOPIC_RECORD, ASSOCIATED: the
    default), ``subject.name.strategy.conf``, ``schema.id.serializer``, ``validate.strict``,
    ``validate.strict.allow.default``.
    """

    _default_conf: dict[str, Any] = {
        **SERIALIZER_KEYS,
        "validate.strict": False,
        "validate.strict.allow.default": False,
    }

    def __init__(
        self,
        schema_registry_client: Any,
        schema_str: str | Schema | None = None,
        to_dict: Callable[[object, SerializationContext], dict] | None = None,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client
        self._conf = SerdeConf(conf, self._default_conf, schema_registry_client, serializer=True)
        self._rules = RuleRunner(schema_registry_client, rule_conf, rule_registry)
        self._latest_writers: dict[Any, _Writer] = {}
        self._latest_seen: dict[str, tuple[Any, _Writer]] = {}
        self._strict = SerdeConf._bool(self._conf.raw, "validate.strict")
        self._strict_allow_default = SerdeConf._bool(
            self._conf.raw, "validate.strict.allow.default"
        )
        if to_dict is not None and not callable(to_dict):
            raise ValueError(
                "to_dict must be callable with the signature "
                "to_dict(object, SerializationContext)->dict"
            )
        self._to_dict = to_dict
        self._schema = as_schema(schema_str)
        self._parsed_cache: dict[Schema, Any] = {}
        self._lock = threading.Lock()
        self._writers: dict[str | None, _Writer] = {}
        if self._schema is not None:
            self._parsed = self._parse(self._schema)
            self._schema_name = record_name(self._schema, self._parsed)
        else:
            self._parsed = None
            self._schema_name = None
        self._subject_name = self._conf.subject_name
        self._by_topic = not self._conf.strategy_is_custom and not self._conf.uses_latest
        self._value_writers: dict[str, _Writer] = {}
        self._key_writers: dict[str, _Writer] = {}
        self._write_kwargs: dict[str, Any] = {}
        if self._strict:
            self._write_kwargs["strict"] = True
        if self._strict_allow_default:
            self._write_kwargs["strict_allow_default"] = True
        self._write_options: dict[str, bool] | None = None
        if _write_data is not None:
            self._write_options = {
                **_WRITE_OPTIONS,
                "strict": self._strict,
                "strict_allow_default": self._strict_allow_default,
            }

    def _parse(self, schema: Schema) -> Any:
        parsed = self._parsed_cache.get(schema)
        if parsed is None:
            parsed = parse_avro_schema(schema, self._registry)
            self._parsed_cache[schema] = parsed
        return parsed

    def _writer(self, subject: str | None) -> _Writer:
        """Register or look up the schema under ``subject`` (once) and build its writer."""
        with self._lock:
            found = self._writers.get(subject)
            if found is not None:
                return found
            if self._schema is None:
                raise SerializationError(
                    "AvroSerializer has no schema: pass schema_str, or use.latest.version"
                )
            if subject is None:
                raise SerializationError(
                    f"the subject name strategy gave no subject for record {self._schema_name!r}"
                )
            rs = register_or_lookup(self._registry, self._conf, subject, self._schema)
            writer = self._make_writer(self._parsed, rs.schema_id, rs.guid)
            self._writers[subject] = writer
            return writer

    def _make_writer(self, parsed: Any, schema_id: int | None, guid: str | None) -> _Writer:
        sid = wire.SchemaId(SCHEMA_TYPE, schema_id, guid)
        prefix = (
            wire.id_prefix(schema_id) if self._conf.prefix_ids and schema_id is not None else None
        )
        return _Writer(parsed, sid, prefix)

    def _latest_writer(self, subject: str) -> _Writer:
        rs = self._conf.latest_schema(self._registry, subject)
        assert rs is not None
        seen = self._latest_seen.get(subject)
        if seen is not None and seen[0] is rs:  # the client's cached answer: no hashing
            return seen[1]
        key = (subject, rs.schema_id, rs.guid, rs.schema)
        found = self._latest_writers.get(key)
        if found is None:
            with self._lock:
                parsed = self._parse(rs.schema)
                found = self._make_writer(parsed, rs.schema_id, rs.guid)
                found.rules = write_plan(
                    self._rules,
                    rs.schema,
                    lambda: avro_field_transformer(parsed),
                    lambda: avro_inline_tags(parsed),
                    subject,
                )
                if found.rules is not None and found.rules.has_encoding:
                    found.prefix = None  # the payload is rewritten before framing
                self._latest_writers[key] = found
        self._latest_seen[subject] = (rs, found)
        return found

    def _writer_for(self, ctx: SerializationContext | None) -> _Writer:
        subject = self._subject_name(ctx, self._schema_name)
        if self._conf.uses_latest and subject is not None:
            return self._latest_writer(subject)
        writer = self._writers.get(subject)
        if writer is None:
            writer = self._writer(subject)
        if self._by_topic and ctx is not None:
            cache = self._value_writers if ctx.field == _VALUE else self._key_writers
            cache[ctx.topic] = writer
        return writer

    def __call__(self, obj: object, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if ctx is not None and ctx.field == _KEY:
            set_original_key(obj)  # for a DLQ record of the value's rules (as confluent)
        if self._by_topic and ctx is not None:
            # Built-in strategies give one subject per (topic, field): skip the strategy call.
            cache = self._value_writers if ctx.field == _VALUE else self._key_writers
            writer = cache.get(ctx.topic)
            if writer is None:
                writer = self._writer_for(ctx)
        else:
            writer = self._writer_for(ctx)
        value = obj if self._to_dict is None else call_dict_hook(self._to_dict, obj, ctx)
        if writer.rules is not None:
            value = writer.rules.domain(ctx, writer.rules.subject, value)
        if writer.is_bytes:
            body = value if isinstance(value, bytes) else str(value).encode()
            if writer.prefix is not None:
                return writer.prefix + body
            return self._framed(writer, body, ctx)
        if writer.guard is not None:
            writer.guard(value)
        try:
            if self._write_options is not None:
                buf = bytearray(writer.prefix or b"")
                _write_data(buf, value, writer.parsed, writer.named, "", self._write_options)
                if writer.prefix is not None:
                    return bytes(buf)
                body = bytes(buf)
            else:
                out = _BytesIO()
                if writer.prefix is not None:
                    out.write(writer.prefix)
                schemaless_writer(out, writer.parsed, value, **self._write_kwargs)
                if writer.prefix is not None:
                    return out.getvalue()
                body = out.getvalue()
        except SerializationError:
            raise
        except Exception as exc:
            raise mismatch(value, writer.parsed, exc) from exc
        return self._framed(writer, body, ctx)

    def _framed(self, writer: _Writer, body: bytes, ctx: SerializationContext | None) -> bytes:
        if writer.rules is not None and writer.rules.has_encoding:
            body = writer.rules.encoding(ctx, writer.rules.subject, body)
        return self._conf.schema_id_serializer(body, ctx, writer.schema_id)


class _Reader:
    """Per writer schema (and reader schema): decode the data after the frame."""

    __slots__ = ("is_bytes", "label", "reader", "rules", "writer")

    def __init__(self, writer: Any, reader: Any, label: str) -> None:
        self.writer = writer
        self.reader = reader
        self.label = label
        self.is_bytes = is_bytes_schema(writer)
        self.rules: Any = None  # a serdes.rules.plan.ReadPlan when there are rules to run


def _undecodable(reader: _Reader, exc: BaseException) -> SerializationError:
    return like(
        exc,
        f"payload does not decode as Avro with writer schema {reader.label}: "
        f"{type(exc).__name__}: {exc}",
    )


def _left_over(reader: _Reader, end: int, size: int) -> SerializationError:
    return SerializationError(
        f"payload does not decode as Avro with writer schema {reader.label}: {size - end} bytes "
        f"left over after the record (bytes {end}-{size - 1}); it was written with a different "
        "schema"
    )


def _read(reader: _Reader, data: bytes, offset: int, return_record_name: bool) -> Any:
    """The value encoded in ``data`` from ``offset`` on (all of it: bytes left over fail)."""
    if reader.is_bytes:
        return bytes(data[offset:])
    stream = _BytesIO(data)
    stream.seek(offset)
    try:
        value = schemaless_reader(stream, reader.writer, reader.reader, return_record_name)
    except Exception as exc:
        raise _undecodable(reader, exc) from exc
    if stream.tell() != len(data):
        raise _left_over(reader, stream.tell(), len(data))
    return value


class AvroDeserializer(Deserializer):
    """Avro binary with Schema Registry framing to dicts (``...avro.AvroDeserializer``).

    ``schema_str`` is the reader schema (writer->reader resolution per Avro's rules); without
    it, the writer schema. ``conf``: ``use.latest.version``, ``use.latest.with.metadata`` (the
    subject's latest schema as reader schema), ``subject.name.strategy``(``.type``/``.conf``),
    ``schema.id.deserializer``.
    """

    _default_conf: dict[str, Any] = dict(DESERIALIZER_KEYS)

    def __init__(
        self,
        schema_registry_client: Any,
        schema_str: str | Schema | None = None,
        from_dict: Callable[[dict, SerializationContext], object] | None = None,
        return_record_name: bool = False,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
    ) -> None:
        self._registry = schema_registry_client
        self._conf = SerdeConf(conf, self._default_conf, schema_registry_client, serializer=False)
        self._rules = RuleRunner(schema_registry_client, rule_conf, rule_registry)
        self._schema = as_schema(schema_str)
        self._parsed_cache: dict[Schema, Any] = {}
        self._reader_schema = self._parse(self._schema) if self._schema is not None else None
        if from_dict is not None and not callable(from_dict):
            raise ValueError(
                "from_dict must be callable with the signature "
                "from_dict(SerializationContext, dict) -> object"
            )
        self._from_dict = from_dict
        if not isinstance(return_record_name, bool):
            raise ValueError("return_record_name must be a boolean value")
        self._return_record_name = return_record_name
        self._lock = threading.Lock()
        # Fast path: key is the schema id (or (subject, id) with a custom strategy, whose
        # subjects may name different contexts).
        self._readers: dict[Any, _Reader] = {}
        self._fast: dict[bytes, _Reader] = {}
        self._plain = (
            self._conf.dual_ids
            and not self._conf.use_latest_version
            and self._conf.use_latest_with_metadata is None
            and not self._conf.strategy_is_custom
        )

    def _parse(self, schema: Schema) -> Any:
        parsed = self._parsed_cache.get(schema)
        if parsed is None:
            parsed = parse_avro_schema(schema, self._registry)
            self._parsed_cache[schema] = parsed
        return parsed

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if data is None:
            return None
        if ctx is not None and ctx.field == _KEY:
            set_original_key(data)  # for a DLQ record of the value's rules (as confluent)
        if ctx is None or not ctx.headers:
            # Steady state: the 5-byte frame (magic 0 and id) names the reader.
            reader = self._fast.get(data[:5])
            if reader is not None:
                if self._from_dict is not None:
                    return self._decode(reader, data, 5, ctx)
                return _read(reader, data, 5, self._return_record_name)
        return self._deserialize(data, ctx)

    def _deserialize(self, data: bytes, ctx: SerializationContext | None) -> Any:
        if self._conf.dual_ids:
            header = wire.schema_id_header(ctx)
            if header is not None:
                frame = wire.read_frame(header)
                frame.offset = 0
            else:
                frame = wire.read_frame(data)
        else:
            sid = wire.SchemaId(SCHEMA_TYPE)
            rest = self._conf.schema_id_deserializer(data, ctx, sid)
            frame = wire.Frame(sid.id, sid.guid, None, 0)
            data = rest.read() if hasattr(rest, "read") else bytes(rest)
        subject = subject_or_none(self._conf.subject_name, ctx, None)
        key: Any = frame.schema_id if frame.schema_id is not None else str(frame.guid)
        if self._conf.strategy_is_custom:
            key = (subject, key)
        if self._conf.uses_latest and subject is not None:
            # The latest schema comes from the client's (TTL) cache on every message; the
            # reader for a (writer, latest) pair is built once.
            latest = self._conf.latest_schema(self._registry, subject)
            key = (key, subject, latest.schema_id if latest is not None else None)
        reader = self._readers.get(key)
        if reader is None:
            reader = self._load(frame, subject, ctx, key)
        return self._decode(reader, data, frame.offset, ctx)

    def _load(
        self, frame: wire.Frame, subject: str | None, ctx: SerializationContext | None, key: Any
    ) -> _Reader:
        label = f"id {frame.schema_id}" if frame.schema_id is not None else f"GUID {frame.guid}"
        if self._registry is None:
            raise SerializationError(f"schema {label}: no SchemaRegistryClient to fetch it with")
        writer_schema, _ = fetch_writer_schema(self._registry, frame.schema_id, frame.guid, subject)
        writer = self._parse(writer_schema)
        if subject is None and ctx is not None and isinstance(writer, dict):
            subject = self._conf.subject_name(ctx, writer.get("name"))
        reader_schema = self._reader_schema
        target = self._schema if self._schema is not None else writer_schema
        latest = None
        if self._conf.uses_latest and subject is not None:
            latest = self._conf.latest_schema(self._registry, subject)
            if latest is not None:
                reader_schema = self._parse(latest.schema)
                target = latest.schema
        parsed_target = reader_schema if reader_schema is not None else writer
        plan = read_plan(
            self._rules,
            self._registry,
            subject,
            writer_schema,
            target,
            latest,
            lambda: avro_field_transformer(parsed_target),
            lambda: avro_inline_tags(parsed_target),
        )
        if plan is not None and plan.migrations:
            reader_schema = None  # decode as written; the migration rules do the rest
        reader = _Reader(writer, reader_schema, label)
        reader.rules = plan
        with self._lock:
            self._readers[key] = reader
            if self._plain and frame.schema_id is not None and plan is None:
                self._fast[wire.id_prefix(frame.schema_id)] = reader
        return reader

    def _decode(
        self, reader: _Reader, data: bytes, offset: int, ctx: SerializationContext | None
    ) -> Any:
        plan = reader.rules
        if plan is not None:
            original = data
            subject = subject_or_none(self._conf.subject_name, ctx, None)
            if subject is None and ctx is not None and isinstance(reader.writer, dict):
                subject = self._conf.subject_name(ctx, reader.writer.get("name"))
            if plan.has_encoding:
                data = plan.encoding(ctx, subject, bytes(data[offset:]), original)
                offset = 0
        value = _read(reader, data, offset, self._return_record_name)
        if plan is not None:
            value = plan.decoded(ctx, subject, value, original)
        if self._from_dict is not None:
            return call_dict_hook(self._from_dict, value, ctx)
        return value


# -- asyncio ------------------------------------------------------------------------------------


class AsyncAvroSerializer(AsyncSerializer):
    """``AvroSerializer`` for asyncio (confluent-kafka's ``avro.AsyncAvroSerializer``).

    ``ser = await AsyncAvroSerializer(...)`` with ``AvroSerializer``'s arguments and an
    ``AsyncSchemaRegistryClient``; ``await ser(obj, ctx)`` gives ``AvroSerializer``'s bytes.
    """

    sync_class = AvroSerializer


class AsyncAvroDeserializer(AsyncDeserializer):
    """``AvroDeserializer`` for asyncio (confluent-kafka's ``avro.AsyncAvroDeserializer``).

    ``de = await AsyncAvroDeserializer(...)`` with ``AvroDeserializer``'s arguments and an
    ``AsyncSchemaRegistryClient``; ``await de(data, ctx)`` gives ``AvroDeserializer``'s value.
    """

    sync_class = AvroDeserializer
