"""Subject name strategies: which subject a record's schema is registered under.

Plain functions ``(ctx, record_name) -> subject`` as in confluent-kafka (any such callable can be
passed as ``subject.name.strategy``), the ``subject.name.strategy.type`` names (TOPIC, RECORD,
TOPIC_RECORD, ASSOCIATED), and ``AssociatedNameStrategy``, confluent-kafka 2.14+'s default: ask
the registry which subject is associated with the topic (``/associations``; a 404 means "none"),
else fall back to ``subject.name.strategy.fallback.type`` (TOPIC by default). Its answers are
cached per (topic, key or value, record name).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from confluent_kafka.serialization import MessageField, SerializationContext

from serdes.errors import SchemaRegistryError, SerializationError

__all__ = [
    "FALLBACK_TYPE",
    "KAFKA_CLUSTER_ID",
    "AssociatedNameStrategy",
    "SubjectNameStrategyType",
    "record_subject_name_strategy",
    "reference_subject_name_strategy",
    "resolve_strategy",
    "topic_record_subject_name_strategy",
    "topic_subject_name_strategy",
]

KAFKA_CLUSTER_ID = "subject.name.strategy.kafka.cluster.id"
FALLBACK_TYPE = "subject.name.strategy.fallback.type"

Strategy = Callable[..., "str | None"]


def topic_subject_name_strategy(ctx: SerializationContext | None, record_name: str | None) -> str:
    """``{topic}-key`` or ``{topic}-value``."""
    if ctx is None:
        raise ValueError(
            "SerializationContext is required for topic_subject_name_strategy. Either provide "
            "a SerializationContext or use record_subject_name_strategy."
        )
    return ctx.topic + "-" + ctx.field


def topic_record_subject_name_strategy(
    ctx: SerializationContext | None, record_name: str | None
) -> str | None:
    """``{topic}-{fully qualified record name}``."""
    if ctx is None:
        raise ValueError(
            "SerializationContext is required for topic_record_subject_name_strategy. Either "
            "provide a SerializationContext or use record_subject_name_strategy."
        )
    return ctx.topic + "-" + record_name if record_name is not None else None


def record_subject_name_strategy(
    ctx: SerializationContext | None, record_name: str | None
) -> str | None:
    """``{fully qualified record name}``; needs no context."""
    return record_name


def reference_subject_name_strategy(
    ctx: SerializationContext | None, schema_ref: Any
) -> str | None:
    """The subject of a Protobuf import: its file name."""
    return schema_ref.name if schema_ref is not None else None


class SubjectNameStrategyType(StrEnum):
    NONE = "NONE"
    TOPIC = "TOPIC"
    RECORD = "RECORD"
    TOPIC_RECORD = "TOPIC_RECORD"
    ASSOCIATED = "ASSOCIATED"


_BY_TYPE: dict[SubjectNameStrategyType, Strategy] = {
    SubjectNameStrategyType.TOPIC: topic_subject_name_strategy,
    SubjectNameStrategyType.RECORD: record_subject_name_strategy,
    SubjectNameStrategyType.TOPIC_RECORD: topic_record_subject_name_strategy,
}


def _strategy_type(value: Any, key: str) -> SubjectNameStrategyType:
    if isinstance(value, SubjectNameStrategyType):
        return value
    try:
        return SubjectNameStrategyType(str(value).upper())
    except ValueError:
        valid = ", ".join(t.value for t in SubjectNameStrategyType)
        raise ValueError(f"Invalid value for {key}: {value}. Valid values are: {valid}") from None


class AssociatedNameStrategy:
    """The subject associated with the topic in the registry, else a fallback strategy."""

    def __init__(self, cache_capacity: int = 1000) -> None:
        self._cache: dict[tuple[str, bool, str | None], str] = {}
        self._capacity = cache_capacity
        self._lock = threading.Lock()
        self._cluster_id_resolver: Callable[[], str] | None = None

    def set_cluster_id_resolver(self, resolver: Callable[[], str]) -> None:
        self._cluster_id_resolver = resolver

    def _namespace(self, conf: dict[str, Any] | None) -> str:
        configured = (conf or {}).get(KAFKA_CLUSTER_ID)
        if configured:
            return str(configured)
        if self._cluster_id_resolver is None:
            return "-"
        try:
            resolved = self._cluster_id_resolver()
        except Exception as exc:
            raise SerializationError(
                "associated name strategy: could not resolve the Kafka cluster id; set "
                f"{KAFKA_CLUSTER_ID} to supply it explicitly: {exc}"
            ) from exc
        if not resolved:
            raise SerializationError(
                f"associated name strategy: empty Kafka cluster id; set {KAFKA_CLUSTER_ID}"
            )
        return resolved

    def _load(
        self,
        ctx: SerializationContext,
        record_name: str | None,
        client: Any,
        conf: dict[str, Any] | None,
    ) -> str | None:
        fallback = SubjectNameStrategyType.TOPIC
        if conf is not None and conf.get(FALLBACK_TYPE) is not None:
            fallback = _strategy_type(conf[FALLBACK_TYPE], FALLBACK_TYPE)
        if client is None:
            return topic_subject_name_strategy(ctx, record_name)
        kind = "key" if ctx.field == MessageField.KEY else "value"
        try:
            found = client.get_associations_by_resource_name(
                ctx.topic, self._namespace(conf), "topic", [kind], 0, -1
            )
        except SchemaRegistryError as exc:
            if exc.http_status_code != 404:
                raise
            found = []
        if len(found) > 1:
            raise SerializationError(f"Multiple associated subjects found for topic {ctx.topic}")
        if found:
            return found[0].subject
        if fallback == SubjectNameStrategyType.NONE:
            raise SerializationError(f"No associated subject found for topic {ctx.topic}")
        if fallback == SubjectNameStrategyType.ASSOCIATED:
            raise ValueError(
                f"Invalid value for {FALLBACK_TYPE}: ASSOCIATED cannot be used as a fallback"
            )
        return _BY_TYPE[fallback](ctx, record_name)

    def __call__(
        self,
        ctx: SerializationContext | None,
        record_name: str | None,
        schema_registry_client: Any = None,
        conf: dict[str, Any] | None = None,
    ) -> str | None:
        if ctx is None:
            raise ValueError(
                "SerializationContext is required for AssociatedNameStrategy. Either provide a "
                "SerializationContext or use a different strategy."
            )
        if ctx.topic is None:
            return None
        key = (ctx.topic, ctx.field == MessageField.KEY, record_name)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        subject = self._load(ctx, record_name, schema_registry_client, conf)
        if subject is not None:
            with self._lock:
                if len(self._cache) >= self._capacity:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[key] = subject
        return subject

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()


def resolve_strategy(
    strategy: Any, strategy_type: Any, strategy_conf: dict[str, Any] | None, client: Any
) -> Callable[[SerializationContext | None, str | None], str | None]:
    """The ``(ctx, record_name) -> subject`` function for a serde's strategy settings.

    ``subject.name.strategy`` (a callable) wins over ``subject.name.strategy.type``; with
    neither, ASSOCIATED (as confluent-kafka 2.14+). An ``AssociatedNameStrategy`` gets the
    client and the strategy conf bound in.
    """
    if strategy is not None:
        if not callable(strategy):
            raise ValueError("subject.name.strategy must be callable")
        chosen = strategy
    elif strategy_type is not None:
        kind = _strategy_type(strategy_type, "subject.name.strategy.type")
        if kind == SubjectNameStrategyType.NONE:
            raise ValueError(
                "Invalid subject.name.strategy.type: NONE cannot be used as a subject name "
                "strategy."
            )
        chosen = (
            AssociatedNameStrategy()
            if kind == SubjectNameStrategyType.ASSOCIATED
            else (_BY_TYPE[kind])
        )
    else:
        chosen = AssociatedNameStrategy()
    if isinstance(chosen, AssociatedNameStrategy):
        bound = chosen

        def associated(ctx: SerializationContext | None, record_name: str | None) -> str | None:
            return bound(ctx, record_name, client, strategy_conf)

        associated.strategy = bound  # type: ignore[attr-defined]
        return associated
    return chosen
