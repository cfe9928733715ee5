"""Topic set-up of the Kafka store: create the record log, the election topic and the keys topic
when missing, and refuse a record log that would lose or reorder records."""

from __future__ import annotations

import logging
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from registry.store.kafka_settings import KafkaSettings, KafkaStoreError

log = logging.getLogger(__name__)


def ensure_topics(admin: AdminClient, settings: KafkaSettings) -> str:
    """Create the store's topics that are missing, check the record log; returns the cluster
    id. Raises :class:`KafkaStoreError` for a topic that cannot be made or used."""
    timeout = settings.init_timeout
    metadata = admin.list_topics(timeout=timeout)
    cluster_id = metadata.cluster_id or "unknown"
    brokers = max(1, len(metadata.brokers))
    replication = settings.replication_factor or min(brokers, 3)
    wanted = [
        NewTopic(settings.topic, 1, replication, config={"cleanup.policy": "compact"}),
        # heartbeats only matter for seconds: an hour of them is kept, in small segments
        NewTopic(
            settings.election_topic,
            1,
            replication,
            config={"cleanup.policy": "delete", "retention.ms": "3600000", "segment.ms": "600000"},
        ),
    ]
    if settings.keys_topic:
        wanted.append(
            NewTopic(settings.keys_topic, 1, replication, config={"cleanup.policy": "compact"})
        )
    missing = [t for t in wanted if t.topic not in metadata.topics]
    if missing:
        if settings.replication_factor is None and replication < 3:
            log.warning(
                "creating topics with replication factor %d (%d live brokers); use at least 3 "
                "in production",
                replication,
                brokers,
            )
        for name, future in admin.create_topics(missing, request_timeout=timeout).items():
            try:
                future.result(timeout=timeout)
                log.info("created topic %s", name)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise KafkaStoreError(f"cannot create topic {name}: {exc}") from exc
        metadata = _wait_for_topics(admin, [t.topic for t in wanted], timeout)
    _checked(admin, settings, metadata)
    return cluster_id


#: errors of a topic the cluster has just created, or of a broker restarting: asked again
_NOT_YET = frozenset(
    {
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.BROKER_NOT_AVAILABLE,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
    }
)
#: pause between two checks of a topic not yet known everywhere
_RETRY_PAUSE = 0.25


def _checked(admin: AdminClient, settings: KafkaSettings, metadata: Any) -> None:
    """:func:`_check_topic`, asked again for up to ``init_timeout`` while the cluster does not
    know the topic everywhere yet: on three brokers a topic just created (by us or by another
    instance starting at the same time) is in the metadata of the broker that answered before
    the broker asked for its configuration has it (``UNKNOWN_TOPIC_OR_PART``)."""
    deadline = time.monotonic() + settings.init_timeout
    while True:
        try:
            _check_topic(admin, settings, metadata)
            return
        except KafkaException as exc:
            err = exc.args[0] if exc.args else None
            code = err.code() if isinstance(err, KafkaError) else None
            if code not in _NOT_YET or time.monotonic() + _RETRY_PAUSE >= deadline:
                raise
            log.info("topic %s not usable yet, asking again: %s", settings.topic, exc)
        except _Unavailable as exc:
            if time.monotonic() + _RETRY_PAUSE >= deadline:
                raise KafkaStoreError(str(exc)) from exc
            log.info("%s, asking again", exc)
        time.sleep(_RETRY_PAUSE)
        metadata = admin.list_topics(timeout=max(1.0, deadline - time.monotonic()))


class _Unavailable(Exception):
    """The schemas topic is in the metadata with an error (not yet created everywhere)."""


def _wait_for_topics(admin: AdminClient, names: list[str], timeout: float) -> Any:
    """Metadata once every topic in ``names`` shows up (new topics take a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        metadata = admin.list_topics(timeout=timeout)
        if (
            all(n in metadata.topics and metadata.topics[n].error is None for n in names)
            or time.monotonic() >= deadline
        ):
            return metadata
        time.sleep(0.1)


def _check_topic(admin: AdminClient, settings: KafkaSettings, metadata: Any) -> None:
    topic = settings.topic
    info = metadata.topics.get(topic)
    if info is None or info.error is not None:
        raise _Unavailable(f"topic {topic} is not available: {info and info.error}")
    if len(info.partitions) != 1:
        raise KafkaStoreError(
            f"the schemas topic {topic} must have exactly 1 partition to keep the records "
            f"in one total order, but it has {len(info.partitions)}"
        )
    resource = ConfigResource("topic", topic)
    configs = admin.describe_configs([resource])[resource].result(timeout=settings.init_timeout)
    policy = configs.get("cleanup.policy")
    value = policy.value if policy is not None else None
    if value != "compact":
        raise KafkaStoreError(
            f"the schemas topic {topic} must have cleanup.policy=compact (retention would "
            f"delete schemas; compaction keeps the latest record of every key), but it is "
            f"{value!r}"
        )
    replicas = len(info.partitions[0].replicas)
    wanted = settings.replication_factor
    if wanted is not None and replicas < wanted:
        log.warning(
            "topic %s has replication factor %d, less than the %d asked for",
            topic,
            replicas,
            wanted,
        )
