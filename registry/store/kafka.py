"""The Kafka log store: Confluent's compacted ``_schemas`` topic, several instances, one writer.

URL::

    kafka://host:9092[,host2:9092]/?topic=_schemas[&option=value...]

Options of this store (everything else in the query string is a librdkafka client property passed
to every Kafka client it makes, e.g. ``security.protocol=SASL_SSL&sasl.mechanism=PLAIN&
sasl.username=u&sasl.password=p&ssl.ca.location=/etc/ca.pem``):

=============================  ================================  ===============================
option                         default                           meaning
=============================  ================================  ===============================
``topic``                      ``_schemas``                      the record log (1 partition,
                                                                 ``cleanup.policy=compact``)
``replication.factor``         min(live brokers, 3)              used when creating the topics
``election.topic``             ``<topic>-election``              topic the election group uses
``election.group``             ``pyschemaregistry-<topic>``      consumer group of the election
``election.session.timeout.ms``  ``6000``                        how soon a dead leader is noticed
``transactional.id``           ``pyschemaregistry-<topic>``      shared by every leader: a new
                                                                 leader fences the old one
``write.timeout.ms``           ``10000``                         bound of one write (50002 after)
``init.timeout.ms``            ``60000``                         topic creation and checks
``keys.topic``                 ``_dek_registry_keys`` beside     the DEK registry's KEKs and
                               ``_schemas``, else                DEKs (``registry.store.
                               ``<topic>_dek_registry_keys``     kafka_keys``); empty: in
                                                                 ``topic``
=============================  ================================  ===============================

How it works:

* **Reading.** A consumer assigned partition 0 of the topic reads it from the beginning
  (``isolation.level=read_committed``, no group offsets) into a buffer; :meth:`read_after` hands
  the buffer out. :meth:`open` returns at once: the replay goes on in the background, logs its
  progress, and :meth:`readiness` says when the position the topic had at start-up is reached.
  A listener (``Registry.refresh``, installed by :func:`registry.api.forwarding.install`) is
  called as records arrive, so the state follows the topic without polling.
* **Election.** Every instance joins the consumer group ``election.group`` subscribed to the
  one-partition ``election.topic`` (``cooperative-sticky``, so a joining instance does not move
  leadership). The member assigned partition 0 is the leader; its ``client.id`` is its advertised
  URL, which the others read with ``describe_consumer_groups`` to forward writes to it. A killed
  leader leaves the group after ``election.session.timeout.ms`` and another member is assigned.
* **Writing (leader only).** A transactional, idempotent producer (``acks=all``) with the fixed
  ``transactional.id``: a new leader's ``init_transactions`` aborts whatever the old leader left
  open and fences it, so a paused old leader can never commit again. Then the leader reads up to
  the end of the topic before it decides anything; each write reads to the high watermark,
  decides, produces in one transaction and commits (``acks=all``: durable); the registry applies
  the committed records at the offsets the delivery reports give (read-your-writes) and the
  reader skips them later. While the topic still ends where this leader's last commit left it,
  the next write needs no wait for the reader. Timeouts are 50002, other Kafka failures 50001,
  a record the broker finds too large 42209.

Records are Confluent's (``registry.records``) so a topic written by Confluent Schema Registry is
served unchanged. Confluent's own instances read with ``read_uncommitted``; they read what this
store commits, but should not share a topic with it as writers.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from registry import errors
from registry.records import KEYS_LOG, Record
from registry.store.base import LogStore, StoreTransaction
from registry.store.kafka_keys import KeysTopic, default_keys_topic, is_key_record

log = logging.getLogger(__name__)

__all__ = ["KafkaLogStore", "KafkaSettings", "KafkaStoreError", "parse_kafka_url"]

DEFAULT_TOPIC = "_schemas"
_SECRET_WORDS = ("password", "secret", "key", "token", "jaas")
_TIMEOUT_CODES = frozenset(
    {KafkaError._TIMED_OUT, KafkaError._MSG_TIMED_OUT, KafkaError.REQUEST_TIMED_OUT}
)
_TOO_LARGE_CODES = frozenset({KafkaError.MSG_SIZE_TOO_LARGE})


class KafkaStoreError(Exception):
    """The topic cannot be used (wrong layout, unreachable cluster); start-up fails with it."""


@dataclass(frozen=True)
class KafkaSettings:
    """A parsed ``kafka://`` URL."""

    bootstrap: str
    topic: str = DEFAULT_TOPIC
    replication_factor: int | None = None
    election_topic: str = ""
    election_group: str = ""
    election_session_timeout_ms: int = 6000
    transactional_id: str = ""
    write_timeout: float = 10.0
    init_timeout: float = 60.0
    #: the DEK registry's topic ("" keeps KEKs and DEKs in ``topic``)
    keys_topic: str = ""
    #: librdkafka properties for every client (SASL, TLS, ...)
    client: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        shown = {
            k: ("***" if any(w in k.lower() for w in _SECRET_WORDS) else v)
            for k, v in self.client.items()
        }
        extra = "".join(f"&{k}={v}" for k, v in sorted(shown.items()))
        return f"kafka://{self.bootstrap}/?topic={self.topic}{extra}"


def parse_kafka_url(url: str) -> KafkaSettings:
    """Parse ``kafka://host:port[,host:port]/?topic=...``; raises :class:`ValueError`."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "kafka":
        raise ValueError(f"not a kafka:// URL: {url!r}")
    bootstrap = parts.netloc
    if not bootstrap or "@" in bootstrap:
        raise ValueError(
            f"kafka store URL {url!r} needs brokers, e.g. kafka://localhost:9092/?topic=_schemas "
            "(credentials go in the query: sasl.username=...&sasl.password=...)"
        )
    if parts.path not in ("", "/"):
        raise ValueError(
            f"kafka store URL {url!r} has a path {parts.path!r}; the topic is a query parameter: "
            "kafka://host:9092/?topic=NAME"
        )
    options = dict(parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False))
    topic = options.pop("topic", DEFAULT_TOPIC)
    if not topic:
        raise ValueError(f"empty topic in {url!r}")

    def number(name: str, default: int | None) -> int | None:
        raw = options.pop(name, None)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"{name}={raw!r} in {url!r} is not an integer") from None
        if value <= 0:
            raise ValueError(f"{name}={raw!r} in {url!r} must be positive")
        return value

    replication = number("replication.factor", None)
    session = number("election.session.timeout.ms", 6000)
    write_ms = number("write.timeout.ms", 10_000)
    init_ms = number("init.timeout.ms", 60_000)
    assert session is not None and write_ms is not None and init_ms is not None
    return KafkaSettings(
        bootstrap=bootstrap,
        topic=topic,
        replication_factor=replication,
        election_topic=options.pop("election.topic", f"{topic}-election"),
        election_group=options.pop("election.group", f"pyschemaregistry-{topic}"),
        election_session_timeout_ms=session,
        transactional_id=options.pop("transactional.id", f"pyschemaregistry-{topic}"),
        write_timeout=write_ms / 1000,
        init_timeout=init_ms / 1000,
        keys_topic=options.pop("keys.topic", default_keys_topic(topic)),
        client=options,
    )


class _KafkaTransaction(StoreTransaction):
    def __init__(self, store: KafkaLogStore) -> None:
        self._store = store
        self.staged: list[tuple[bytes, bytes | None]] = []
        self.appended = []
        self._open = True

    def read_after(self, offset: int) -> list[Record]:
        return self._store.read_after(offset)

    def read_keys_after(self, offset: int) -> list[Record]:
        return self._store.read_keys_after(offset)

    def append(self, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        if not self._open:
            raise RuntimeError("transaction is closed")
        self.staged.extend(records)


class KafkaLogStore(LogStore):
    """The record log in a Kafka topic; see the module docstring. Thread-safe once open."""

    def __init__(self, url: str, *, advertised_url: str | None = None, elect: bool = True) -> None:
        """``elect=False`` opens the topic for reading only (no election, no writes)."""
        self.settings = parse_kafka_url(url)
        self.elect = elect
        self.description = self.settings.describe()
        #: this instance's URL as other instances reach it (set before :meth:`open`)
        self.advertised_url = advertised_url
        self._tp = TopicPartition(self.settings.topic, 0)
        self._cond = threading.Condition()
        self._records: list[Record] = []
        self._offsets: list[int] = []
        self._trimmed_through = -1
        self._position = 0  # next offset the reader will deliver
        self._last_offset = -1  # offset of the last record read
        self._start_target = 0  # the high watermark at open
        self._start_last = -1  # offset of the last record below it (set when reached)
        self._caught_up = threading.Event()
        self._replayed = threading.Event()  # iter_all done: the listener may apply records
        self._listener: Callable[[], None] | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._reader: Consumer | None = None
        self._probe: Consumer | None = None
        self._admin: AdminClient | None = None
        self._cluster_id = "unknown"
        self._write_lock = threading.Lock()
        self._open_lock = threading.Lock()
        #: the end of the topic right after our last commit (its commit marker included), or
        #: -1: while the topic still ends there nobody else has written since (see exclusive)
        self._written_end = -1
        # election
        self._leader_lock = threading.Condition()
        self._assigned = False
        self._producer: Producer | None = None
        self._leader_url: str | None = None  # another member's URL, when it leads
        self._leader_known = False
        self._elector_error: str | None = None
        self._settled = threading.Event()  # a leader was known at least once
        #: the DEK registry's topic, read by its own consumer (None: keys live in ``topic``)
        self.keys: KeysTopic | None = None
        self._keys_seen = 0  # batches the keys reader has read (wakes the notifier)

    # ---- configuration helpers -------------------------------------------------------------

    def _client(self, **extra: Any) -> dict[str, Any]:
        conf: dict[str, Any] = {"bootstrap.servers": self.settings.bootstrap}
        conf.update(self.settings.client)
        conf.update(extra)
        return conf

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` (from a store thread) whenever new records can be read."""
        self._listener = listener

    # ---- lifecycle -------------------------------------------------------------------------

    def open(self) -> None:
        with self._open_lock:
            if self._reader is not None:
                return
            self._stop.clear()
            try:
                self._admin = AdminClient(self._client())
                self._ensure_topics()
                # watermark queries on a handle of their own: on the reader they would wait
                # behind its consume() calls
                probe = Consumer(
                    self._client(
                        **{
                            "group.id": f"{self.settings.election_group}-reader",
                            "enable.auto.commit": False,
                        }
                    )
                )
                reader = Consumer(
                    self._client(
                        **{
                            "group.id": f"{self.settings.election_group}-reader",
                            "enable.auto.commit": False,
                            "enable.auto.offset.store": False,
                            "isolation.level": "read_committed",
                            "enable.partition.eof": True,
                            "auto.offset.reset": "earliest",
                            "max.partition.fetch.bytes": 16 * 1024 * 1024,
                            "fetch.max.bytes": 64 * 1024 * 1024,
                            # read-your-writes waits for this consumer, and with read_committed
                            # the broker holds a fetch for the whole wait even once a commit
                            # marker makes records readable (a write took 513 ms at 500, 35 ms
                            # at 10): poll often, at the price of ~100 idle fetches/s
                            "fetch.wait.max.ms": 10,
                        }
                    )
                )
            except KafkaException as exc:
                raise KafkaStoreError(f"cannot open {self.description}: {exc}") from exc
            try:
                low, high = _watermarks(probe, self._tp, self.settings.init_timeout)
            except KafkaException as exc:
                reader.close()
                probe.close()
                raise KafkaStoreError(
                    f"cannot read the end of {self.settings.topic}: {exc}"
                ) from exc
            if self.settings.keys_topic:
                keys = KeysTopic(
                    self.settings.keys_topic,
                    self._client(
                        **{
                            "group.id": f"{self.settings.election_group}-keys-reader",
                            "enable.auto.commit": False,
                        }
                    ),
                    _watermarks,
                )
                try:
                    keys.open(self.settings.init_timeout)
                except KafkaException as exc:
                    reader.close()
                    probe.close()
                    raise KafkaStoreError(f"cannot read {self.settings.keys_topic}: {exc}") from exc
                keys.on_records = self._keys_arrived
                self.keys = keys
            reader.assign([TopicPartition(self.settings.topic, 0, max(low, 0))])
            self._reader = reader
            self._probe = probe
            self._start_target = high
            self._position = max(low, 0)
            if high <= self._position:
                self._mark_caught_up()
            log.info(
                "opened %s: replaying offsets %d..%d in the background",
                self.description,
                low,
                high,
            )
            loops = [("kafka-reader", self._read_loop), ("kafka-notifier", self._notify_loop)]
            if self.elect:
                loops.append(("kafka-election", self._elect_loop))
            else:
                self._settled.set()
            for name, target in loops:
                thread = threading.Thread(target=target, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)

    def close(self) -> None:
        with self._open_lock:
            self._stop.set()
            with self._cond:
                self._cond.notify_all()
            for thread in self._threads:
                thread.join(timeout=15)
            self._threads = []
            keys, self.keys = self.keys, None
            if keys is not None:
                keys.close()
            reader, self._reader = self._reader, None
            if reader is not None:
                reader.close()
            probe, self._probe = self._probe, None
            if probe is not None:
                probe.close()
            with self._leader_lock:
                producer, self._producer = self._producer, None
                self._assigned = False
            if producer is not None:
                producer.flush(1)
            self._admin = None

    def cluster_id(self) -> str:
        return self._cluster_id

    # ---- topics ----------------------------------------------------------------------------

    def _ensure_topics(self) -> None:
        admin = self._admin
        assert admin is not None
        timeout = self.settings.init_timeout
        metadata = admin.list_topics(timeout=timeout)
        self._cluster_id = metadata.cluster_id or "unknown"
        brokers = max(1, len(metadata.brokers))
        replication = self.settings.replication_factor or min(brokers, 3)
        if self.settings.replication_factor is None and replication < 3:
            log.warning(
                "creating topics with replication factor %d (%d live brokers); use at least 3 "
                "in production",
                replication,
                brokers,
            )
        wanted = [
            NewTopic(self.settings.topic, 1, replication, config={"cleanup.policy": "compact"}),
            NewTopic(self.settings.election_topic, 1, replication),
        ]
        if self.settings.keys_topic:
            wanted.append(
                NewTopic(
                    self.settings.keys_topic, 1, replication, config={"cleanup.policy": "compact"}
                )
            )
        missing = [t for t in wanted if t.topic not in metadata.topics]
        if missing:
            for name, future in admin.create_topics(missing, request_timeout=timeout).items():
                try:
                    future.result(timeout=timeout)
                    log.info("created topic %s", name)
                except KafkaException as exc:
                    if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                        raise KafkaStoreError(f"cannot create topic {name}: {exc}") from exc
            metadata = self._wait_for_topics(admin, [t.topic for t in wanted], timeout)
        self._check_topic(metadata)

    @staticmethod
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

    def _check_topic(self, metadata: Any) -> None:
        topic = self.settings.topic
        info = metadata.topics.get(topic)
        if info is None or info.error is not None:
            raise KafkaStoreError(f"topic {topic} is not available: {info and info.error}")
        if len(info.partitions) != 1:
            raise KafkaStoreError(
                f"the schemas topic {topic} must have exactly 1 partition to keep the records "
                f"in one total order, but it has {len(info.partitions)}"
            )
        admin = self._admin
        assert admin is not None
        resource = ConfigResource("topic", topic)
        configs = admin.describe_configs([resource])[resource].result(
            timeout=self.settings.init_timeout
        )
        policy = configs.get("cleanup.policy")
        value = policy.value if policy is not None else None
        if value != "compact":
            raise KafkaStoreError(
                f"the schemas topic {topic} must have cleanup.policy=compact (retention would "
                f"delete schemas; compaction keeps the latest record of every key), but it is "
                f"{value!r}"
            )
        replicas = len(info.partitions[0].replicas)
        wanted = self.settings.replication_factor
        if wanted is not None and replicas < wanted:
            log.warning(
                "topic %s has replication factor %d, less than the %d asked for",
                topic,
                replicas,
                wanted,
            )

    # ---- reading ---------------------------------------------------------------------------

    def _read_loop(self) -> None:
        reader = self._reader
        assert reader is not None
        started = time.monotonic()
        last_log = started
        while not self._stop.is_set():
            try:
                # poll blocks until a message (or event) is there; consume drains what is
                # ready without waiting (with a timeout it would wait for a full batch)
                first = reader.poll(0.2)
                messages = [] if first is None else [first]
                if first is not None:
                    messages.extend(reader.consume(num_messages=10_000, timeout=0))
            except (KafkaException, RuntimeError) as exc:
                if self._stop.is_set():
                    return
                log.warning("reading %s failed: %s", self.settings.topic, exc)
                time.sleep(0.5)
                continue
            batch: list[Record] = []
            position = self._position
            for msg in messages:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        position = max(position, msg.offset() or 0)
                    else:
                        log.warning("reading %s: %s", self.settings.topic, err)
                    continue
                offset = msg.offset()
                batch.append(Record(msg.key() or b"", msg.value(), offset, msg.timestamp()[1]))
                position = max(position, offset + 1)
            if not batch and position == self._position:
                continue
            with self._cond:
                if batch:
                    self._records.extend(batch)
                    self._offsets.extend(r.offset for r in batch)
                    self._last_offset = batch[-1].offset
                self._position = position
                self._cond.notify_all()
            if not self._caught_up.is_set():
                now = time.monotonic()
                if position >= self._start_target:
                    self._mark_caught_up()
                    log.info(
                        "replayed %s up to offset %d in %.1fs",
                        self.settings.topic,
                        position,
                        now - started,
                    )
                elif now - last_log >= 2:
                    last_log = now
                    log.info(
                        "replaying %s: offset %d of %d (%.0f records/s)",
                        self.settings.topic,
                        position,
                        self._start_target,
                        position / max(now - started, 1e-3),
                    )

    def _mark_caught_up(self) -> None:
        with self._cond:
            self._start_last = self._last_offset
        self._caught_up.set()

    def _notify_loop(self) -> None:
        notified, keys_notified = -1, 0
        while not self._stop.is_set():
            with self._cond:
                while not self._stop.is_set() and not (
                    self._replayed.is_set()
                    and (self._last_offset > notified or self._keys_seen > keys_notified)
                ):
                    self._cond.wait(0.5)
                latest, keys_notified = self._last_offset, self._keys_seen
            if self._stop.is_set():
                return
            listener = self._listener
            if listener is None:
                notified = latest
                continue
            try:
                listener()
                notified = latest
            except Exception:
                log.exception("applying records from %s failed", self.settings.topic)
                self._stop.wait(0.5)

    def _keys_arrived(self) -> None:
        with self._cond:
            self._keys_seen += 1
            self._cond.notify_all()

    def read_keys_after(self, offset: int) -> list[Record]:
        """Records of the keys topic read so far with an offset above ``offset``."""
        return self.keys.read_after(offset) if self.keys is not None else []

    def keys_replayed_through(self) -> int:
        """Offset of the keys topic the registry must have applied to be ready (-1: none)."""
        return self.keys.start_last if self.keys is not None else -1

    def iter_keys(self) -> Iterator[Record]:
        """The keys topic as read so far (see :meth:`iter_all`)."""
        if self.keys is not None:
            yield from self.keys.iter_all()

    def read_after(self, offset: int, limit: int | None = None) -> list[Record]:
        """Records read so far with an offset above ``offset``. The store has one reader (the
        registry applying them): records at or below ``offset`` are dropped from the buffer."""
        if limit is not None and limit <= 0:
            return []
        with self._cond:
            if offset < self._trimmed_through:
                raise RuntimeError(
                    f"records after offset {offset} were already handed out and dropped "
                    f"(through {self._trimmed_through}); open a new store to read them again"
                )
            start = bisect.bisect_right(self._offsets, offset)
            if start:
                del self._records[:start]
                del self._offsets[:start]
                self._trimmed_through = offset
            end = len(self._records) if limit is None else min(limit, len(self._records))
            return self._records[:end]

    def iter_all(self, batch: int = 10_000) -> Iterator[Record]:
        """The records read so far (the replay continues in the background; see
        :meth:`readiness`); afterwards the listener applies the rest."""
        offset = -1
        while True:
            records = self.read_after(offset, batch)
            if not records:
                break
            yield from records
            offset = records[-1].offset
        self._replayed.set()
        with self._cond:
            self._cond.notify_all()

    def wait_caught_up(self, timeout: float) -> bool:
        """Block until the position the topic had at :meth:`open` is read."""
        deadline = time.monotonic() + timeout
        if not self._caught_up.wait(timeout):
            return False
        keys = self.keys
        return keys is None or keys.caught_up.wait(max(0.0, deadline - time.monotonic()))

    def readiness(self) -> tuple[bool, int, str]:
        """(replay finished and a leader elected, offset of the last record the state must
        have applied, detail)."""
        with self._cond:
            position, target, last = self._position, self._start_target, self._start_last
        if not self._caught_up.is_set():
            return False, -1, f"replaying {self.settings.topic}: offset {position} of {target}"
        if self.keys is not None and not self.keys.caught_up.is_set():
            return False, -1, f"replaying {self.keys.topic}"
        if not self._settled.is_set():
            return (
                False,
                -1,
                f"waiting for the first leader election in {self.settings.election_group}",
            )
        return True, last, f"replayed {self.settings.topic} up to offset {target}"

    def lag(self, applied_offset: int, cap: int = 10_000) -> int:
        """Entries between what the registry applied and the end of the topic: those the reader
        has not fetched yet (transaction markers included) plus those it fetched but the
        registry has not applied."""
        end = self._end_offset(1.0)
        with self._cond:
            unread = max(0, end - self._position)
            unapplied = max(0, self._last_offset - applied_offset)
        return min(cap, unread + unapplied)

    def _end_offset(self, timeout: float) -> int:
        probe = self._probe
        if probe is None:
            raise RuntimeError(f"log store {self.description} is not open")
        return _watermarks(probe, self._tp, timeout)[1]

    def _wait_position(self, target: int, deadline: float) -> bool:
        with self._cond:
            while self._position < target:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(min(remaining, 0.5))
            return True

    def catch_up(self, timeout: float) -> bool:
        """Read up to the current end of the topic; False when ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        try:
            end = self._end_offset(timeout)
        except KafkaException:
            return False
        return self._wait_position(end, deadline)

    # ---- election --------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """This instance holds the election partition and its producer is ready."""
        return self._producer is not None

    def leader_url(self) -> str | None:
        """The advertised URL of the leader: ours when we lead (or are becoming the leader),
        None when unknown."""
        if self._assigned:
            return self.advertised_url
        return self._leader_url

    def _elect_loop(self) -> None:
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
            self._elector_error = str(exc)
            log.error("cannot join the leader election: %s", exc)
            return
        next_lookup = 0.0
        try:
            while not self._stop.is_set():
                try:
                    consumer.poll(0.1)
                except KafkaException as exc:
                    log.warning("leader election: %s", exc)
                with self._leader_lock:
                    assigned, producer = self._assigned, self._producer
                if assigned and producer is None:
                    self._become_leader()
                elif not assigned and time.monotonic() >= next_lookup:
                    next_lookup = time.monotonic() + 0.5
                    self._lookup_leader()
        finally:
            with self._leader_lock:
                self._assigned = False
                self._producer = None
                self._leader_lock.notify_all()
            try:
                consumer.close()  # leave the group: another instance takes over at once
            except (KafkaException, RuntimeError) as exc:
                log.warning("leaving the leader election: %s", exc)

    def _on_assign(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        if any(p.partition == 0 for p in partitions):
            log.info("assigned the election partition: becoming the leader")
            with self._leader_lock:
                self._assigned = True
                self._leader_lock.notify_all()

    def _on_revoke(self, consumer: Any, partitions: list[TopicPartition]) -> None:
        if any(p.partition == 0 for p in partitions):
            with self._leader_lock:
                was = self._producer is not None
                self._assigned = False
                self._producer = None
                self._leader_lock.notify_all()
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
        self._written_end = -1
        if not self.catch_up(max(timeout, 30.0)):
            log.warning("leader: could not read to the end of %s; retrying", self.settings.topic)
            return
        with self._leader_lock:
            if not self._assigned:
                return
            self._producer = producer
            self._leader_url = self.advertised_url
            self._leader_known = True
            self._leader_lock.notify_all()
        self._settled.set()
        log.info("this instance (%s) is the leader", self.advertised_url)

    def _lookup_leader(self) -> None:
        admin = self._admin
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
        with self._leader_lock:
            if url != self._leader_url:
                log.info("leader is now %s", url)
            self._leader_url = url if url and url.startswith("http") else None
            self._leader_known = url is not None
            self._leader_lock.notify_all()
        if url is not None:
            self._settled.set()

    def _leader_producer(self, deadline: float) -> Producer:
        if not self.elect:
            raise errors.unknown_leader(f"{self.description} was opened for reading only")
        with self._leader_lock:
            while self._producer is None:
                if self._leader_url is not None and not self._assigned and self._leader_known:
                    raise errors.unknown_leader(
                        f"This instance is not the leader; the leader is {self._leader_url}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    raise errors.unknown_leader("Leader not known.")
                self._leader_lock.wait(min(remaining, 0.2))
            return self._producer

    def wait_leader(self, timeout: float) -> bool:
        """Block until this instance leads (used by the copy command)."""
        deadline = time.monotonic() + timeout
        with self._leader_lock:
            while self._producer is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._leader_lock.wait(min(remaining, 0.2))
            return True

    def _drop_producer(self, producer: Producer) -> None:
        self._written_end = -1
        with self._leader_lock:
            if self._producer is producer:
                self._producer = None  # the election thread makes (and fences with) a new one
        with suppress(KafkaException, RuntimeError):
            producer.purge()

    # ---- writing ---------------------------------------------------------------------------

    @contextmanager
    def exclusive(self) -> Iterator[StoreTransaction]:
        with self._write_lock:
            deadline = time.monotonic() + self.settings.write_timeout
            producer = self._leader_producer(deadline)
            try:
                end = self._end_offset(max(0.1, deadline - time.monotonic()))
            except KafkaException as exc:
                raise _write_error("reading the end of the topic", exc) from exc
            # when the topic ends where our last commit left it, nothing was written since: the
            # state already holds our records (applied from the delivery reports) and every
            # record before them, so there is nothing to wait for the reader to fetch
            if end != self._written_end and not self._wait_position(end, deadline):
                raise errors.operation_timeout(
                    f"Timed out reading {self.settings.topic} to offset {end} before writing"
                )
            if self.keys is not None:
                self._wait_keys(self.keys, deadline)
            txn = _KafkaTransaction(self)
            try:
                yield txn
            finally:
                txn._open = False
            if txn.staged:
                txn.appended = self._produce(producer, txn.staged, deadline)

    def _produce(
        self, producer: Producer, staged: list[tuple[bytes, bytes | None]], deadline: float
    ) -> list[Record]:
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
                    self._topic_of(key), key=key, value=value, partition=0, on_delivery=on_delivery
                )
            producer.commit_transaction(max(0.1, deadline - time.monotonic()))
        except (KafkaException, BufferError) as exc:
            self._drop_producer(producer)
            raise _write_error("writing to the topic", exc) from exc
        if failures or len(delivered) != len(staged):
            self._drop_producer(producer)
            if failures:
                raise _write_error("writing to the topic", KafkaException(failures[0]))
            raise errors.store_error("Error while writing to the store: records not acknowledged")
        records = [
            Record(m.key() or b"", m.value(), m.offset(), m.timestamp()[1])
            for m in delivered
            if m.topic() == self.settings.topic
        ]
        records.sort(key=lambda r: r.offset)
        # committed with acks=all: durable. No read-back: the registry applies these records
        # (offsets from the delivery reports) itself, and the reader delivers them later
        # (the state skips offsets it has applied). One partition, one writer: the commit
        # marker follows the last record.
        if records:
            self._written_end = records[-1].offset + 2
        keys = sorted(
            (
                Record(m.key() or b"", m.value(), m.offset(), m.timestamp()[1], KEYS_LOG)
                for m in delivered
                if m.topic() != self.settings.topic
            ),
            key=lambda r: r.offset,
        )
        if (
            keys
            and self.keys is not None
            and not self.keys.wait_position(keys[-1].offset + 1, deadline)
        ):
            raise errors.operation_timeout(
                f"Timed out waiting for offset {keys[-1].offset} of {self.keys.topic} to be "
                "read back"
            )
        return keys + records

    def _topic_of(self, key: bytes) -> str:
        """The keys topic for a KEK or DEK record (when the store has one), else ``topic``."""
        if self.keys is not None and is_key_record(key):
            return self.keys.topic
        return self.settings.topic

    def _wait_keys(self, keys: KeysTopic, deadline: float) -> None:
        try:
            end = keys.end_offset(max(0.1, deadline - time.monotonic()))
        except KafkaException as exc:
            raise _write_error(f"reading the end of {keys.topic}", exc) from exc
        if not keys.wait_position(end, deadline):
            raise errors.operation_timeout(
                f"Timed out reading {keys.topic} to offset {end} before writing"
            )


_TRANSIENT_CODES = frozenset(
    {
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError._TRANSPORT,
    }
)


def _watermarks(consumer: Consumer, tp: TopicPartition, timeout: float) -> tuple[int, int]:
    """(low, high) watermarks, retrying while a new topic's partition gets its leader."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            low, high = consumer.get_watermark_offsets(
                tp, timeout=max(remaining, 0.1), cached=False
            )
            return int(low), int(high)
        except KafkaException as exc:
            err = exc.args[0] if exc.args else None
            transient = isinstance(err, KafkaError) and (
                err.code() in _TRANSIENT_CODES or err.retriable()
            )
            if not transient or remaining <= 0.2:
                raise
            time.sleep(0.1)


def _write_error(action: str, exc: Exception) -> errors.RegistryError:
    err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
    code = err.code() if err is not None else None
    if code in _TIMEOUT_CODES:
        return errors.operation_timeout(f"Timed out {action}: {err}")
    if code in _TOO_LARGE_CODES:
        return errors.schema_too_large(f"Schema too large for the Kafka topic: {err}")
    if isinstance(exc, BufferError):
        return errors.store_error(f"Error while {action}: producer queue is full")
    return errors.store_error(f"Error while {action}: {err or exc}")
