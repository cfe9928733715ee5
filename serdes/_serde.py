"""What the Avro, Protobuf and JSON Schema serdes share: configuration, subject resolution,
schema registration/lookup per subject, and the checks that keep a wrong value from passing.

Each serde keeps per-subject (serializers) or per-schema-id (deserializers) state built once,
so the steady state is: strategy call, one dict lookup, encode or decode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka.serialization import SerializationContext

from serdes import wire
from serdes.errors import (
    SchemaRegistryError,
    SerializationError,
    SerializationValueError,
    UnknownSchemaError,
)
from serdes.schema import RegisteredSchema, Schema
from serdes.strategies import resolve_strategy

__all__ = [
    "DESERIALIZER_KEYS",
    "SERIALIZER_KEYS",
    "SerdeConf",
    "call_dict_hook",
    "check_no_rules",
    "fetch_writer_schema",
    "referenced_schemas",
    "register_or_lookup",
    "subject_or_none",
]

SERIALIZER_KEYS: dict[str, Any] = {
    "auto.register.schemas": True,
    "normalize.schemas": False,
    "use.schema.id": None,
    "use.latest.version": False,
    "use.latest.with.metadata": None,
    "subject.name.strategy.type": None,
    "subject.name.strategy.conf": None,
    "subject.name.strategy": None,
    "schema.id.serializer": wire.prefix_schema_id_serializer,
    "validation.rules.execution": "DISABLED",
    "validation.rules.fail.fast": False,
    "validation.rules.executor": None,
}
DESERIALIZER_KEYS: dict[str, Any] = {
    "use.latest.version": False,
    "use.latest.with.metadata": None,
    "subject.name.strategy.type": None,
    "subject.name.strategy.conf": None,
    "subject.name.strategy": None,
    "schema.id.deserializer": wire.dual_schema_id_deserializer,
}


def _is_default(fn: Any, ours: Any) -> bool:
    """Ours or confluent-kafka's function of the same name (same behaviour)."""
    return fn is ours or (
        getattr(fn, "__name__", None) == ours.__name__
        and str(getattr(fn, "__module__", "")).startswith("confluent_kafka.schema_registry")
    )


class SerdeConf:
    """A serde's ``conf`` checked the way confluent-kafka checks it (unknown keys, types)."""

    def __init__(
        self,
        conf: dict[str, Any] | None,
        defaults: dict[str, Any],
        client: Any,
        serializer: bool,
    ) -> None:
        merged = dict(defaults)
        if conf is not None:
            merged.update(conf)
        unknown = [k for k in merged if k not in defaults]
        if unknown:
            raise ValueError(f"Unrecognized properties: {', '.join(unknown)}")
        self.raw = merged

        self.use_latest_version = self._bool(merged, "use.latest.version")
        meta = merged["use.latest.with.metadata"]
        if meta is not None and not isinstance(meta, dict):
            raise ValueError("use.latest.with.metadata must be a dict value")
        self.use_latest_with_metadata: dict[str, str] | None = meta
        self.strategy_is_custom = merged["subject.name.strategy"] is not None
        self.subject_name = resolve_strategy(
            merged["subject.name.strategy"],
            merged["subject.name.strategy.type"],
            merged["subject.name.strategy.conf"],
            client,
        )
        self.use_schema_id: int | None = None
        if serializer:
            self.auto_register = self._bool(merged, "auto.register.schemas")
            self.normalize = self._bool(merged, "normalize.schemas")
            use_id = merged["use.schema.id"]
            if use_id is not None and (isinstance(use_id, bool) or not isinstance(use_id, int)):
                raise ValueError("use.schema.id must be an int value")
            self.use_schema_id = use_id
            if self.use_latest_version and self.auto_register:
                raise ValueError("cannot enable both use.latest.version and auto.register.schemas")
            id_ser = merged["schema.id.serializer"]
            if not callable(id_ser):
                raise ValueError("schema.id.serializer must be callable")
            self.schema_id_serializer: Callable[..., bytes] = id_ser
            self.prefix_ids = _is_default(id_ser, wire.prefix_schema_id_serializer)
            execution = str(
                getattr(
                    merged["validation.rules.execution"],
                    "value",
                    merged["validation.rules.execution"],
                )
            )
            if execution.upper() != "DISABLED":
                raise ValueError(
                    "validation.rules.execution is not supported by serdes (data-contract "
                    "rules are not executed); leave it DISABLED"
                )
        else:
            id_de = merged["schema.id.deserializer"]
            if not callable(id_de):
                raise ValueError("schema.id.deserializer must be callable")
            self.schema_id_deserializer: Callable[..., Any] = id_de
            self.dual_ids = _is_default(id_de, wire.dual_schema_id_deserializer)
        self.uses_latest = bool(
            self.use_latest_version
            or self.use_latest_with_metadata
            or self.use_schema_id is not None
        )

    @staticmethod
    def _bool(conf: dict[str, Any], key: str) -> bool:
        value = conf[key]
        if not isinstance(value, bool):
            raise ValueError(f"{key} must be a boolean value")
        return value

    def latest_schema(self, client: Any, subject: str) -> RegisteredSchema | None:
        """The schema ``use.schema.id``/``use.latest.with.metadata``/``use.latest.version`` say."""
        if self.use_schema_id is not None:
            schema = client.get_schema(self.use_schema_id, subject)
            found = client.get_registered_by_subject_id(subject, self.use_schema_id)
            if found is not None:
                return found
            return client.lookup_schema(subject, schema, normalize_schemas=False, deleted=True)
        if self.use_latest_with_metadata is not None:
            return client.get_latest_with_metadata(
                subject, self.use_latest_with_metadata, deleted=True
            )
        if self.use_latest_version:
            return client.get_latest_version(subject)
        return None


def call_dict_hook(hook: Callable[[Any, Any], Any], value: Any, ctx: Any) -> Any:
    """A serde's ``to_dict`` / ``from_dict`` callable applied to ``value`` (as confluent-kafka,
    it needs a SerializationContext)."""
    if ctx is None:
        raise TypeError("SerializationContext cannot be None")
    return hook(value, ctx)


def register_or_lookup(
    client: Any, conf: SerdeConf, subject: str, schema: Schema
) -> RegisteredSchema:
    """Register ``schema`` under ``subject`` (``auto.register.schemas``) or find its id."""
    if conf.auto_register:
        return client.register_schema_full_response(
            subject, schema, normalize_schemas=conf.normalize
        )
    return client.lookup_schema(subject, schema, normalize_schemas=conf.normalize)


def check_no_rules(schema: Any, where: str) -> None:
    """Refuse schemas carrying data-contract rules where they are not run (the Spark
    encoders): running without them would be wrong. The serdes run them (serdes.rules)."""
    rule_set = getattr(schema, "rule_set", None)
    if rule_set is None:
        return
    doc = rule_set.to_dict() if hasattr(rule_set, "to_dict") else dict(rule_set)
    kinds = [k for k in ("migrationRules", "domainRules", "encodingRules") if doc.get(k)]
    if kinds:
        raise SerializationError(
            f"{where} carries data-contract rules ({', '.join(kinds)}); this encoder does "
            "not execute rules, so it refuses rather than produce a result without them"
        )


def fetch_writer_schema(
    client: Any, schema_id: int | None, guid: Any, subject: str | None, fmt: str | None = None
) -> tuple[Schema, str | None]:
    """The writer schema of a frame (in ``fmt``, e.g. Protobuf's ``serialized``); a 404 becomes
    ``UnknownSchemaError`` naming the id/GUID."""
    try:
        if schema_id is not None:
            if hasattr(client, "get_schema_full_response"):
                rs = client.get_schema_full_response(schema_id, subject, fmt)
                return rs.schema, rs.guid
            return client.get_schema(schema_id, subject, fmt), None
        if guid is not None:
            return client.get_schema_by_guid(str(guid), fmt), str(guid)
    except SchemaRegistryError as exc:
        if exc.http_status_code == 404:
            what = f"id {schema_id}" if schema_id is not None else f"GUID {guid}"
            raise UnknownSchemaError(what, exc) from exc
        raise
    raise SerializationError("Schema ID or GUID is not set")


def subject_or_none(
    fn: Callable[[SerializationContext | None, str | None], str | None],
    ctx: SerializationContext | None,
    record_name: str | None,
) -> str | None:
    """The subject for a deserializer: only computed when there is a context (as confluent)."""
    if ctx is None:
        return None
    return fn(ctx, record_name)


def referenced_schemas(schema: Schema, client: Any, no_client: str) -> list[tuple[Any, Schema]]:
    """``schema``'s references and theirs, each subject version fetched once, dependencies
    before the schemas that use them: ``(reference, referenced schema)`` pairs.

    ``no_client`` is the message when there are references but no client to fetch them
    (``{subject}`` and ``{version}`` in it name the first reference).
    """
    found: list[tuple[Any, Schema]] = []
    seen: set[tuple[str, int]] = set()

    def add(refs: Any) -> None:
        for ref in refs or ():
            if ref.subject is None or ref.version is None:
                raise SerializationError(f"schema reference {ref.name!r} lacks subject or version")
            key = (ref.subject, int(ref.version))
            if key in seen:
                continue
            seen.add(key)
            if client is None:
                raise SerializationValueError(
                    no_client.format(subject=ref.subject, version=ref.version)
                )
            referenced = client.get_version(ref.subject, ref.version, True)
            add(referenced.schema.references)
            found.append((ref, referenced.schema))

    add(schema.references)
    return found
