"""JSON Schema serializer and deserializer with Schema Registry framing.

Same constructor arguments (in confluent-kafka's order), ``conf`` keys and bytes as
``confluent_kafka.schema_registry.json_schema``: the document is ``orjson.dumps`` of the value
(as confluent-kafka writes it when orjson is installed) behind the id prefix. Validation uses a
compiled jsonschema-rs validator per schema (references resolved from the registry) instead of
python-jsonschema; like python-jsonschema, ``format`` is not asserted. A failing document
raises ``SerializationError`` with the JSON path of the offending value.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jsonschema_rs
import orjson
from confluent_kafka.serialization import (
    Deserializer,
    MessageField,
    SerializationContext,
    Serializer,
)

from serdes import wire
from serdes._async.serde import AsyncDeserializer, AsyncSerializer
from serdes._serde import (
    DESERIALIZER_KEYS,
    SERIALIZER_KEYS,
    SerdeConf,
    call_dict_hook,
    fetch_writer_schema,
    referenced_schemas,
    register_or_lookup,
)
from serdes.errors import SerializationError, like
from serdes.rules.context import set_original_key
from serdes.rules.engine import RuleRunner
from serdes.rules.plan import read_plan, write_plan
from serdes.rules.walk_json import json_field_transformer, json_references
from serdes.schema import Schema

__all__ = ["AsyncJSONDeserializer", "AsyncJSONSerializer", "JSONDeserializer", "JSONSerializer"]

_SCHEMA_TYPE = "JSON"
_VALUE = MessageField.VALUE
_KEY = MessageField.KEY


def _as_schema(value: Any) -> Schema | None:
    if value is None:
        return None
    if isinstance(value, str):
        return Schema(value, schema_type=_SCHEMA_TYPE)
    if isinstance(value, Schema):
        return value
    if hasattr(value, "schema_str") and hasattr(value, "to_dict"):  # confluent-kafka's Schema
        return Schema.from_dict(value.to_dict())
    raise TypeError("You must pass either str or Schema")


def _path(parts: Any) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


class _Compiled:
    """A schema parsed once: its document, its validator, its title (the record name)."""

    __slots__ = ("doc", "title", "validator")

    def __init__(self, doc: Any, validator: Any) -> None:
        self.doc = doc
        self.validator = validator
        self.title = doc.get("title") if isinstance(doc, dict) else None

    def check(self, value: Any, what: str) -> None:
        try:
            self.validator.validate(value)
        except jsonschema_rs.ValidationError as exc:
            raise SerializationError(
                f"{what} does not match the JSON schema at {_path(exc.instance_path)}: "
                f"{exc.message}"
            ) from None
        except ValueError as exc:  # a value jsonschema-rs cannot take (e.g. a set)
            raise SerializationError(f"{what} is not a JSON value: {exc}") from None


def compile_json_schema(schema: Schema, client: Any) -> _Compiled:
    """Parse ``schema`` and compile its validator with its references (fetched once each)."""
    no_client = (
        'schema_registry_client must be provided if "schema_str" is a Schema instance with '
        "references"
    )
    resources: list[tuple[str, Any]] = []
    for ref, referenced in referenced_schemas(schema, client, no_client):
        if ref.name is None:
            raise SerializationError(f"schema reference to {ref.subject} has no name")
        resources.append((ref.name, orjson.loads(referenced.schema_str)))
    try:
        doc = orjson.loads(schema.schema_str or "")
    except orjson.JSONDecodeError as exc:
        raise SerializationError(f"schema is not JSON: {exc}") from None
    options: dict[str, Any] = {"validate_formats": False}
    if resources:
        options["registry"] = jsonschema_rs.Registry(resources)
    try:
        validator = jsonschema_rs.validator_for(doc, **options)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
        raise SerializationError(f"invalid JSON schema: {exc}") from None
    return _Compiled(doc, validator)


def _title(schema: Schema) -> str | None:
    """The ``title`` of a schema's document; ``SerializationError`` if the text is not JSON."""
    try:
        doc = orjson.loads(schema.schema_str or "")
    except orjson.JSONDecodeError as exc:
        raise SerializationError(f"schema is not JSON: {exc}") from None
    title = doc.get("title") if isinstance(doc, dict) else None
    return title if isinstance(title, str) else None


def _encode(value: Any) -> bytes:
    return orjson.dumps(value)


class JSONSerializer(Serializer):
    """JSON documents with Schema Registry framing (``...json_schema.JSONSerializer``).

    ``conf``: ``auto.register.schemas``, ``normalize.schemas``, ``use.schema.id``,
    ``use.latest.version``, ``use.latest.with.metadata``,
    ``subject.name.strategy``(``.type``/``.conf``), ``schema.id.serializer``, ``validate`` (True).
    """

    _default_conf: dict[str, Any] = {**SERIALIZER_KEYS, "validate": True}

    def __init__(
        self,
        schema_str: str | Schema | None,
        schema_registry_client: Any,
        to_dict: Callable[[object, SerializationContext], dict] | None = None,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
        json_encode: Callable[[Any], str | bytes] | None = None,
    ) -> None:
        self._registry = schema_registry_client
        self._conf = SerdeConf(conf, self._default_conf, schema_registry_client, serializer=True)
        self._rules = RuleRunner(schema_registry_client, rule_conf, rule_registry)
        self._plans: dict[Any, Any] = {}
        self._validate = SerdeConf._bool(self._conf.raw, "validate")
        if to_dict is not None and not callable(to_dict):
            raise ValueError(
                "to_dict must be callable with the signature "
                "to_dict(object, SerializationContext)->dict"
            )
        self._to_dict = to_dict
        self._encode = json_encode or _encode
        self._schema = _as_schema(schema_str)
        self._compiled_cache: dict[Schema, _Compiled] = {}
        # As confluent-kafka: the text is parsed now (its title names the record), the validator
        # built when first needed - with ``use.latest.version`` it may never be (the given text
        # can then ``$ref`` what only the registered version's references resolve).
        self._schema_name = _title(self._schema) if self._schema is not None else None
        self._lock = threading.Lock()
        self._writers: dict[str, tuple[bytes | None, wire.SchemaId, _Compiled]] = {}
        self._value_writers: dict[str, tuple[bytes | None, wire.SchemaId, _Compiled]] = {}
        self._key_writers: dict[str, tuple[bytes | None, wire.SchemaId, _Compiled]] = {}
        self._by_topic = not self._conf.strategy_is_custom and not self._conf.uses_latest

    def _compile(self, schema: Schema) -> _Compiled:
        found = self._compiled_cache.get(schema)
        if found is None:
            found = compile_json_schema(schema, self._registry)
            self._compiled_cache[schema] = found
        return found

    def _make(
        self, schema_id: int | None, guid: str | None, compiled: _Compiled, plan: Any = None
    ) -> Any:
        sid = wire.SchemaId(_SCHEMA_TYPE, schema_id, guid)
        prefix = (
            wire.id_prefix(schema_id) if self._conf.prefix_ids and schema_id is not None else None
        )
        return prefix, sid, compiled, plan

    def _plan(self, schema: Schema, compiled: _Compiled) -> Any:
        """The WRITE rules of ``schema`` (serdes.rules.plan.WritePlan), built once."""
        if schema not in self._plans:
            self._plans[schema] = write_plan(
                self._rules,
                schema,
                lambda: json_field_transformer(
                    compiled.doc, lambda: json_references(schema, self._registry)
                ),
                lambda: None,
            )
        return self._plans[schema]

    def _writer_for(self, ctx: SerializationContext | None) -> Any:
        subject = self._conf.subject_name(ctx, self._schema_name)
        if subject is None:
            raise SerializationError(
                f"the subject name strategy gave no subject for schema {self._schema_name!r}"
            )
        if self._conf.uses_latest:
            rs = self._conf.latest_schema(self._registry, subject)
            assert rs is not None
            compiled = self._compile(rs.schema)
            return self._make(rs.schema_id, rs.guid, compiled, self._plan(rs.schema, compiled))
        writer = self._writers.get(subject)
        if writer is None:
            with self._lock:
                writer = self._writers.get(subject)
                if writer is None:
                    if self._schema is None:
                        raise SerializationError("JSONSerializer has no schema")
                    compiled = self._compile(self._schema)
                    rs = register_or_lookup(self._registry, self._conf, subject, self._schema)
                    writer = self._make(rs.schema_id, rs.guid, compiled)
                    self._writers[subject] = writer
        if self._by_topic and ctx is not None:
            (self._value_writers if ctx.field == _VALUE else self._key_writers)[ctx.topic] = writer
        return writer

    def __call__(self, obj: object, ctx: SerializationContext | None = None) -> bytes | None:
        if obj is None:
            return None
        if ctx is not None and ctx.field == _KEY:
            set_original_key(obj)  # for a DLQ record of the value's rules (as confluent)
        writer = None
        if self._by_topic and ctx is not None:
            writer = (self._value_writers if ctx.field == _VALUE else self._key_writers).get(
                ctx.topic
            )
        if writer is None:
            writer = self._writer_for(ctx)
        prefix, sid, compiled, plan = writer
        value = obj if self._to_dict is None else call_dict_hook(self._to_dict, obj, ctx)
        if plan is not None:
            value = plan.domain(ctx, self._conf.subject_name(ctx, self._schema_name), value)
        if self._validate:
            compiled.check(value, "record")
        try:
            body = self._encode(value)
        except TypeError as exc:
            raise like(exc, f"record is not JSON-serializable: {exc}") from exc
        if body.__class__ is str:
            body = body.encode("utf-8")  # type: ignore[union-attr]
        if plan is not None and plan.has_encoding:
            subject = self._conf.subject_name(ctx, self._schema_name)
            return self._conf.schema_id_serializer(plan.encoding(ctx, subject, body), ctx, sid)
        if prefix is not None:
            return prefix + body  # type: ignore[operator]
        return self._conf.schema_id_serializer(body, ctx, sid)


class JSONDeserializer(Deserializer):
    """Schema Registry framed JSON to values (``...json_schema.JSONDeserializer``).

    ``schema_str`` is the schema to validate against (the writer schema when None and a client
    is given). ``conf``: ``use.latest.version``, ``use.latest.with.metadata``,
    ``subject.name.strategy``(``.type``/``.conf``), ``schema.id.deserializer``, ``validate``.
    """

    _default_conf: dict[str, Any] = {**DESERIALIZER_KEYS, "validate": True}

    def __init__(
        self,
        schema_str: str | Schema | None,
        from_dict: Callable[[dict, SerializationContext], object] | None = None,
        schema_registry_client: Any = None,
        conf: dict[str, Any] | None = None,
        rule_conf: dict[str, Any] | None = None,
        rule_registry: Any = None,
        json_decode: Callable[[bytes], Any] | None = None,
    ) -> None:
        self._registry = schema_registry_client
        if schema_str is None and schema_registry_client is None:
            raise ValueError(
                "schema_registry_client must be provided if schema_str is not provided"
            )
        self._conf = SerdeConf(conf, self._default_conf, schema_registry_client, serializer=False)
        self._validate = SerdeConf._bool(self._conf.raw, "validate")
        self._rules = RuleRunner(schema_registry_client, rule_conf, rule_registry)
        self._plans: dict[Any, Any] = {}
        self._schema = _as_schema(schema_str)
        self._compiled_cache: dict[Schema, _Compiled] = {}
        self._reader = self._compile(self._schema) if self._schema is not None else None
        if from_dict is not None and not callable(from_dict):
            raise ValueError(
                "from_dict must be callable with the signature "
                "from_dict(dict, SerializationContext) -> object"
            )
        self._from_dict = from_dict
        self._decode_json = json_decode or orjson.loads
        self._lock = threading.Lock()
        self._validators: dict[Any, tuple[_Compiled | None, str, Any]] = {}
        self._plain = (
            self._conf.dual_ids and not self._conf.strategy_is_custom and not self._conf.uses_latest
        )

    def _compile(self, schema: Schema) -> _Compiled:
        found = self._compiled_cache.get(schema)
        if found is None:
            found = compile_json_schema(schema, self._registry)
            self._compiled_cache[schema] = found
        return found

    def __call__(self, data: bytes | None, ctx: SerializationContext | None = None) -> Any:
        if data is None:
            return None
        if ctx is not None and ctx.field == _KEY:
            set_original_key(data)  # for a DLQ record of the value's rules (as confluent)
        if self._plain and len(data) > 4 and data[0] == 0 and (ctx is None or not ctx.headers):
            found = self._validators.get(int.from_bytes(data[1:5], "big"))
            if found is not None:
                return self._decode(found, data, 5, ctx)
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
            sid = wire.SchemaId(_SCHEMA_TYPE)
            rest = self._conf.schema_id_deserializer(data, ctx, sid)
            frame = wire.Frame(sid.id, sid.guid, None, 0)
            data = rest.read() if hasattr(rest, "read") else bytes(rest)
        subject = self._conf.subject_name(ctx, None) if ctx is not None else None
        ident: Any = frame.schema_id if frame.schema_id is not None else str(frame.guid)
        key = (subject, ident) if self._conf.strategy_is_custom else ident
        found = None if self._conf.uses_latest else self._validators.get(key)
        if found is None:
            found = self._load(frame, subject)
            if not self._conf.uses_latest:
                with self._lock:
                    self._validators[key] = found
        return self._decode(found, data, frame.offset, ctx)

    def _load(self, frame: wire.Frame, subject: str | None) -> tuple[_Compiled | None, str, Any]:
        label = f"id {frame.schema_id}" if frame.schema_id is not None else f"GUID {frame.guid}"
        if self._registry is None:
            return self._reader, label, None
        writer_schema, _ = fetch_writer_schema(self._registry, frame.schema_id, frame.guid, subject)
        latest = None
        if self._conf.uses_latest and subject is not None:
            latest = self._conf.latest_schema(self._registry, subject)
        if latest is not None:
            target, compiled = latest.schema, self._compile(latest.schema)
        elif self._reader is not None and self._schema is not None:
            target, compiled = self._schema, self._reader
        else:
            target, compiled = writer_schema, self._compile(writer_schema)
        key = (subject, writer_schema, target, latest.version if latest is not None else None)
        if key not in self._plans:
            self._plans[key] = read_plan(
                self._rules,
                self._registry,
                subject,
                writer_schema,
                target,
                latest,
                lambda: json_field_transformer(
                    compiled.doc, lambda: json_references(target, self._registry)
                ),
                lambda: None,
            )
        return compiled, label, self._plans[key]

    def _decode(
        self,
        found: tuple[_Compiled | None, str, Any],
        data: bytes,
        offset: int,
        ctx: SerializationContext | None,
    ) -> Any:
        compiled, label, plan = found
        original = data
        if plan is not None:
            subject = self._conf.subject_name(ctx, None) if ctx is not None else None
            if plan.has_encoding:
                data, offset = plan.encoding(ctx, subject, bytes(data[offset:]), original), 0
        try:
            value = self._decode_json(data[offset:])
        except (orjson.JSONDecodeError, ValueError) as exc:
            raise like(exc, f"payload of schema {label} is not valid JSON: {exc}") from exc
        if plan is not None:
            value = plan.decoded(ctx, subject, value, original)
        if self._validate and compiled is not None:
            compiled.check(value, f"payload of schema {label}")
        if self._from_dict is not None:
            return call_dict_hook(self._from_dict, value, ctx)
        return value


# -- asyncio ------------------------------------------------------------------------------------


class AsyncJSONSerializer(AsyncSerializer):
    """``JSONSerializer`` for asyncio (confluent-kafka's ``json_schema.AsyncJSONSerializer``).

    ``ser = await AsyncJSONSerializer(...)`` with ``JSONSerializer``'s arguments and an
    ``AsyncSchemaRegistryClient``; ``await ser(obj, ctx)`` gives ``JSONSerializer``'s bytes.
    """

    sync_class = JSONSerializer


class AsyncJSONDeserializer(AsyncDeserializer):
    """``JSONDeserializer`` for asyncio (confluent-kafka's ``json_schema.AsyncJSONDeserializer``).

    ``de = await AsyncJSONDeserializer(...)`` with ``JSONDeserializer``'s arguments and an
    ``AsyncSchemaRegistryClient``; ``await de(data, ctx)`` gives ``JSONDeserializer``'s value.
    """

    sync_class = JSONDeserializer
