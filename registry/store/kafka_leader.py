"""The Kafka store's write path: the leader election, the leader's transactional producer, and
producing one write's records in one transaction.

Every instance joins the consumer group ``election.group`` subscribed to the one-partition
``election.topic`` (``cooperative-sticky``, so a joining instance does not move leadership). The
member assigned partition 0 is the leader; its ``client.id`` is its advertised URL, which the
others read with ``describe_consumer_groups`` to forward writes to it. A new leader's
``init_transactions`` (fixed ``transactional.id``) aborts what the old leader left open and
fences it; it then reads to the end of the topic before it decides anything.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from registry import errors
from registry.records import KEYS_LOG, Record
from registry.store.kafka_reader import TopicReader
from registry.store.kafka_settings import KafkaSettings

log = logging.getLogger(__name__)

_TIMEOUT_CODES = frozenset(
    {KafkaError._TIMED_OUT, KafkaError._MSG_TIMED_OUT, KafkaError.REQUEST_TIMED_OUT}
)
_TOO_LARGE_CODES = frozenset({KafkaError.MSG_SIZE_TOO_LARGE})


class Leadership:
    """This instance's part in the election and, while it leads, its producer."""

    def __init__(
        self,
        settings: KafkaSettings,
        client: Callable[..., dict[str, Any]],
        stop: threading.Event,
        catch_up: Callable[[float], bool],
    ) -> None:
        self.settings = settings
        self._client = client
        self._stop = stop
        self._catch_up = catch_up
        #: this instance's URL as other instances reach it
        self.advertised_url: str | None = None
        self.admin: AdminClient | None = None
        self.lock = threading.Condition()
        self.assigned = False
        self.producer: Producer | None = None
        self._leader_url: str | None = None  # another member's URL, when it leads
        self._leader_known = False
        self.error: str | None = None
        self.settled = threading.Event()  # a leader was known at least once
        #: the end of the topic right after our last commit (its commit marker included), or
        #: -1: while the topic still ends there nobody else has written since
        self.written_end = -1

    # ---- who leads -------------------------------------------------------------------------

    def leader_url(self) -> str | None:
        """The advertised URL of the leader: ours when we lead (or are becoming the leader),
        None when unknown."""
        if self.assigned:
            return self.advertised_url
        return self._leader_url

    def run(self) -> None:
        """The election thread: stay in the group until the store stops."""
        session = self.settings.election_session_timeout_ms
        conf = self._client(
            **{
                "group.id": self.settings.election_group,
                "client.id": self.advertised_url or "no-http",
                "session.timeout.ms": session,
                "heartbeat.interval.ms": max(100, session // 4),
                "partition.assignment.strategy": "cooperative-sticky",
                "enable.auto.commit": False,
                "auto.offset.reset": "latest",
            }
        )
        try:
            consumer = Consumer(conf)
            consumer.subscribe(
                [self.settings.election_topic],
                on_assign=self._on_assign,
                on_revoke=self._on_revoke,
                on_lost=self._on_revoke,
            )
        except KafkaException as exc:
            self.error = str(exc)
            log.error("cannot join the leader election: %s", exc)
            return
        next_lookup = 0.0
        try:
            while not self._stop.is_set():
                try:
                    consumer.poll(0.1)
                except KafkaException as exc:
                    log.warning("leader election: %s", exc)
                with self.lock:
                    assigned, producer = self.assigned, self.producer
                if assigned and producer is None:
                    self._become_leader()
                elif not assigned and time.monotonic() >= next_lookup:
                    next_lookup = time.monotonic() + 0.5
                    self._lookup_leader()
        finally:
            with self.lock:
                self.assigned = False
                self.producer = None
                self.lock.notify_all()
            try:
                consumer.close()  # leave the group: another instance takes over at once
            except (KafkaException, RuntimeError) as exc:
                log.warning("leaving the leader election: %s", exc)

    def _on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        if any(p.partition == 0 for p in partitions):
            log.info("assigned the election partition: becoming the leader")
            with self.lock:
                self.assigned = True
                self.lock.notify_all()

    def _on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        if any(p.partition == 0 for p in partitions):
            with self.lock:
                was = self.producer is not None
                self.assigned = False
                self.producer = None
                self.lock.notify_all()
            if was:
                log.warning("lost the election partition: no longer the leader")

    def _become_leader(self) -> None:
        timeout = self.settings.write_timeout
        producer = Producer(
            self._client(
                **{
                    "transactional.id": self.settings.transactional_id,
                    "enable.idempotence": True,
                    "acks": "all",
                    "linger.ms": 0,
                    "transaction.timeout.ms": 60_000,
                    "message.timeout.ms": int(timeout * 1000),
                    "client.id": f"{self.advertised_url or 'no-http'}-writer",
                }
            )
        )
        try:
            producer.init_transactions(timeout)
        except KafkaException as exc:
            log.warning("leader: init_transactions failed, retrying: %s", exc)
            self._stop.wait(0.5)
            return
        # every transaction of an earlier leader is now committed or aborted and that leader is
        # fenced: what is below the high watermark is all that will ever precede our writes
        self.written_end = -1
        if not self._catch_up(max(timeout, 30.0)):
            log.warning("leader: could not read to the end of %s; retrying", self.settings.topic)
            return
        with self.lock:
            if not self.assigned:
                return
            self.producer = producer
            self._leader_url = self.advertised_url
            self._leader_known = True
            self.lock.notify_all()
        self.settled.set()
        log.info("this instance (%s) is the leader", self.advertised_url)

    def _lookup_leader(self) -> None:
        admin = self.admin
        if admin is None:
            return
        group = self.settings.election_group
        try:
            description = admin.describe_consumer_groups([group], request_timeout=2)[group].result(
                timeout=3
            )
        except (KafkaException, TimeoutError, Exception) as exc:
            log.debug("looking up the leader failed: %s", exc)
            return
        url: str | None = None
        for member in description.members:
            assignment = getattr(member.assignment, "topic_partitions", None) or []
            if any(
                tp.topic == self.settings.election_topic and tp.partition == 0 for tp in assignment
            ):
                url = member.client_id
        if url is None and description.state != ConsumerGroupState.STABLE:
            # mid-rebalance (an instance joining or leaving) the group shows no assignment; the
            # cooperative-sticky leader keeps its partition through it, so the leader we knew
            # stays the one to forward to (forgetting it made writes here 50004 on scale-out)
            return
        with self.lock:
            if url != self._leader_url:
                log.info("leader is now %s", url)
            self._leader_url = url if url and url.startswith("http") else None
            self._leader_known = url is not None
            self.lock.notify_all()
        if url is not None:
            self.settled.set()

    def release(self) -> Producer | None:
        """Forget the producer and the election partition (the store is closing)."""
        with self.lock:
            producer, self.producer = self.producer, None
            self.assigned = False
        return producer

    # ---- the producer ----------------------------------------------------------------------

    def leader_producer(self, deadline: float) -> Producer:
        """Our producer once we lead; 50004 when another instance leads or none is known."""
        with self.lock:
            while self.producer is None:
                if self._leader_url is not None and not self.assigned and self._leader_known:
                    raise errors.unknown_leader(
                        f"This instance is not the leader; the leader is {self._leader_url}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    raise errors.unknown_leader("Leader not known.")
                self.lock.wait(min(remaining, 0.2))
            return self.producer

    def wait_leader(self, timeout: float) -> bool:
        """Block until this instance leads."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.producer is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.lock.wait(min(remaining, 0.2))
            return True

    def _drop_producer(self, producer: Producer) -> None:
        self.written_end = -1
        with self.lock:
            if self.producer is producer:
                self.producer = None  # the election thread makes (and fences with) a new one
        with suppress(KafkaException, RuntimeError):
            producer.purge()

    def produce(
        self,
        producer: Producer,
        staged: Sequence[tuple[bytes, bytes | None]],
        deadline: float,
        topic_of: Callable[[bytes], str],
        keys: TopicReader | None,
    ) -> list[Record]:
        """Write ``staged`` in one transaction (``acks=all``: durable once committed); the
        records with the offsets the delivery reports give, keys-topic records first."""
        delivered: list[Any] = []
        failures: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, msg: Any) -> None:
            if err is not None:
                failures.append(err)
            else:
                delivered.append(msg)

        try:
            producer.begin_transaction()
            for key, value in staged:
                producer.produce(
                    topic_of(key), key=key, value=value, partition=0, on_delivery=on_delivery
                )
            producer.commit_transaction(max(0.1, deadline - time.monotonic()))
        except (KafkaException, BufferError) as exc:
            self._drop_producer(producer)
            raise write_error("writing to the topic", exc) from exc
        if failures or len(delivered) != len(staged):
            self._drop_producer(producer)
            if failures:
                raise write_error("writing to the topic", KafkaException(failures[0]))
            raise errors.store_error("Error while writing to the store: records not acknowledged")
        topic = self.settings.topic
        records = [
            Record(m.key() or b"", m.value(), m.offset(), m.timestamp()[1])
            for m in delivered
            if m.topic() == topic
        ]
        records.sort(key=lambda r: r.offset)
        # No read-back: the registry applies these records (offsets from the delivery reports)
        # itself, and the reader delivers them later (the state skips offsets it has applied).
        # One partition, one writer: the commit marker follows the last record.
        if records:
            self.written_end = records[-1].offset + 2
        key_records = sorted(
            (
                Record(m.key() or b"", m.value(), m.offset(), m.timestamp()[1], KEYS_LOG)
                for m in delivered
                if m.topic() != topic
            ),
            key=lambda r: r.offset,
        )
        if (
            key_records
            and keys is not None
            and not keys.wait_position(key_records[-1].offset + 1, deadline)
        ):
            raise errors.operation_timeout(
                f"Timed out waiting for offset {key_records[-1].offset} of {keys.topic} to be "
                "read back"
            )
        return key_records + records


def write_error(action: str, exc: Exception) -> errors.RegistryError:
    """The registry error for a failed Kafka call: 50002 timeouts, 42209 a record too large,
    50001 the rest."""
    err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
    code = err.code() if err is not None else None
    if code in _TIMEOUT_CODES:
        return errors.operation_timeout(f"Timed out {action}: {err}")
    if code in _TOO_LARGE_CODES:
        return errors.schema_too_large(f"Schema too large for the Kafka topic: {err}")
    if isinstance(exc, BufferError):
        return errors.store_error(f"Error while {action}: producer queue is full")
    return errors.store_error(f"Error while {action}: {err or exc}")
