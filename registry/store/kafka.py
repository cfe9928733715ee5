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
``election.topic``             ``<topic>-election``              heartbeats, claims, resignations
``election.group``             ``pyschemaregistry-<topic>``      prefix of the readers' group ids
                                                                 (no consumer group is joined)
``election.lease.ms``          ``1500``                          how long the leader's heartbeats
                                                                 may be missing before a
                                                                 follower claims (old name:
                                                                 ``election.session.timeout.ms``)
``election.heartbeat.ms``      lease / 6, at most ``250``        heartbeat period
``leader.wait.ms``             ``5000``                          how long a write that finds no
                                                                 leader waits for one
``transactional.id``           ``pyschemaregistry-<topic>``      shared by every leader: a new
                                                                 leader fences the old one
``write.timeout.ms``           ``10000``                         bound of one write (50002 after)
``init.timeout.ms``            ``60000``                         topic creation and checks
``txn.linger.ms``              ``10``                            an open transaction with
                                                                 answered writes waiting for
                                                                 more is committed after this
                                                                 long without one (0: commit
                                                                 every write before answering)
``txn.max.open.ms``            ``50``                            ... and at most this long
                                                                 after its first write
``keys.topic``                 ``_dek_registry_keys`` beside     the DEK registry's KEKs and
                               ``_schemas``, else                DEKs (``registry.store.
                               ``<topic>_dek_registry_keys``     kafka_keys``); empty: in
                                                                 ``topic``
=============================  ================================  ===============================

How it works:

* **Reading.** A reader (``registry.store.kafka_reader``) assigned partition 0 of the topic
  reads it from the beginning (``isolation.level=read_committed``, no group offsets) into a
  buffer; :meth:`read_after` hands the buffer out and drops what was handed out before. While
  the registry takes records (a replay, or the listener after it) at most
  :data:`MAX_BUFFERED_BYTES` of them wait in the buffer: the state is the only full copy.
  :meth:`open` returns at once: the replay goes on in the background, logs its progress, and
  :meth:`readiness` says when the position the topic had at start-up is reached. A listener
  (``Registry.refresh``, installed by :func:`registry.api.forwarding.install`) is called as
  records arrive, so the state follows the topic without polling.
* **Election** (``registry.store.kafka_election``, ``registry.store.kafka_leader``, where the
  protocol is written down). Every instance reads the one-partition ``election.topic`` and
  heartbeats into it; the latest ``claim`` record names the leader and its URL, to which
  followers forward writes. A follower claims when the leader's heartbeats have been missing
  for ``election.lease.ms`` while its own kept arriving; a stopping leader commits a ``resign``
  record. No consumer group and no AdminClient after start-up (an admin request in flight when
  a broker connection dropped aborted librdkafka). See ``docs/kafka-ha.md``.
* **Writing** (leader only, ``registry.store.kafka_leader``). A transactional, idempotent
  producer (``acks=all``) with the fixed ``transactional.id``: a new leader's
  ``init_transactions`` aborts whatever the old leader left open and fences it, so a paused old
  leader can never commit again; its first transaction re-commits the records of aborted
  transactions (so ``read_uncommitted`` readers agree) and its claim. Its first write reads
  both topics to their high watermarks before deciding; later writes do not: each decides,
  produces into the open transaction and checks where the delivery reports put its records
  against what the state holds (``registry.store.kafka_frontier``: right after it, nothing can
  have been missed; else it reads up to them and aborts if the decision missed a committed
  record, and the registry decides again). Acknowledged (``acks=all``: durable) and checked,
  the records are applied at the offsets the delivery reports give and the write is answered;
  consecutive writes share the transaction, committed later (``registry.store.kafka_txn``: a
  new leader re-commits what an uncommitted transaction held, so an answered write stays).
  Timeouts are 50002, other Kafka failures 50001, a record the broker finds too large 42209.

Records are Confluent's (``registry.records``) so a topic written by Confluent Schema Registry is
served unchanged. Confluent's own instances read with ``read_uncommitted``; they conclude what
this store commits (aborted records are always re-committed identically), but should not share a
topic with it as writers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from registry import errors
from registry.records import KEYS_LOG, Record
from registry.store.base import LogStore, StoreTransaction, iter_batches, release_free_memory
from registry.store.kafka_admin import ensure_topics
from registry.store.kafka_frontier import Frontier, check_landing
from registry.store.kafka_keys import is_key_record
from registry.store.kafka_leader import Leadership, write_error
from registry.store.kafka_reader import TopicReader, uncommitted_after
from registry.store.kafka_settings import KafkaSettings, KafkaStoreError, parse_kafka_url
from registry.store.kafka_settle import SETTLED, settle_failed_write
from registry.store.kafka_txn import LeaderWrites

log = logging.getLogger(__name__)

__all__ = ["KafkaLogStore", "KafkaSettings", "KafkaStoreError", "parse_kafka_url"]

#: records read and not yet taken by the registry, at most (while it takes them)
MAX_BUFFERED_BYTES = 32 * 1024 * 1024
_write_error = write_error  # the name tests and older callers use


class _KafkaTransaction(StoreTransaction):
    def __init__(self, store: KafkaLogStore) -> None:
        self._store = store
        self.staged: list[tuple[bytes, bytes | None]] = []
        self.appended = []
        self._open = True
        #: offset of the last record of each topic handed to the deciding state (absent: not
        #: asked; then the decision did not rest on the state, e.g. the copy command's)
        self.applied_through: dict[str, int] = {}

    def read_after(self, offset: int) -> list[Record]:
        records = self._store.read_after(offset)
        # what the decision's state has applied (the registry applies all it is handed)
        self._handed(self._store.settings.topic, offset, records)
        return records

    def read_keys_after(self, offset: int) -> list[Record]:
        records = self._store.read_keys_after(offset)
        if self._store.keys is not None:
            self._handed(self._store.keys.topic, offset, records)
        return records

    def _handed(self, topic: str, offset: int, records: list[Record]) -> None:
        self.applied_through[topic] = max(offset, records[-1].offset if records else offset)

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
        self._stop = threading.Event()
        self._write_lock = threading.Lock()
        self._leadership = Leadership(
            self.settings,
            self._client,
            self._stop,
            self.catch_up,
            write_lock=self._write_lock,
            aborted=self._aborted_tail,
        )
        #: this instance's URL as other instances reach it (set before :meth:`open`)
        self.advertised_url = advertised_url
        self._reader: TopicReader | None = None
        #: the DEK registry's topic, read by its own reader (None: keys live in ``topic``)
        self.keys: TopicReader | None = None
        self._replayed = threading.Event()  # iter_all done: the listener may apply records
        self._iterating = False  # iter_all is taking records
        self._listener: Callable[[], None] | None = None
        self._wake = threading.Condition()  # the notifier waits here for new records
        self._arrivals = 0  # batches read by either reader (wakes the notifier)
        self._threads: list[threading.Thread] = []
        self._cluster_id = "unknown"
        #: asks the keys topic's end while the writer asks the schemas topic's (``exclusive``)
        self._probes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafka-keys-end")
        self._open_lock = threading.Lock()
        #: the frontier and the open transaction (``registry.store.kafka_txn``)
        self._writes = LeaderWrites(
            self.settings, self._leadership, self._write_lock, self._reader_of, self._stop
        )
        self._leadership.before_resign = self._writes.settle
        #: the deadline of a write decided again after its transaction failed
        self._carried_deadline: float | None = None
        #: the write whose records are being produced (``exclusive`` settles its failure)
        self._producing: _KafkaTransaction | None = None

    @property
    def advertised_url(self) -> str | None:
        return self._leadership.advertised_url

    @advertised_url.setter
    def advertised_url(self, url: str | None) -> None:
        self._leadership.advertised_url = url

    # ---- configuration helpers -------------------------------------------------------------

    def _client(self, **extra: Any) -> dict[str, Any]:
        conf: dict[str, Any] = {"bootstrap.servers": self.settings.bootstrap}
        conf.update(self.settings.client)
        conf.update(extra)
        return conf

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """Call ``listener`` (from a store thread) whenever new records can be read."""
        self._listener = listener

    def _draining(self) -> bool:
        """Whether somebody takes (or is about to take) the records read: then the reader's
        buffer is bounded. A store with a listener is a registry's: its replay (``iter_all``)
        takes the records from the start, even if the reader started before it did (it read
        the whole topic ahead of a slow start in a full test run)."""
        return self._iterating or self._listener is not None

    # ---- lifecycle -------------------------------------------------------------------------

    def open(self) -> None:
        with self._open_lock:
            if self._reader is not None:
                return
            self._stop.clear()
            group = self.settings.election_group
            reader = TopicReader(
                self.settings.topic,
                self._client(**{"group.id": f"{group}-reader", "enable.auto.commit": False}),
                reader_conf={
                    "max.partition.fetch.bytes": 4 * 1024 * 1024,
                    "fetch.max.bytes": 8 * 1024 * 1024,
                    # librdkafka's fetch buffers stay in the process once freed: larger ones
                    # made the replay no faster here and cost 150 MiB more
                    "queued.max.messages.kbytes": 16384,
                },
                max_buffered_bytes=MAX_BUFFERED_BYTES,
            )
            keys: TopicReader | None = None
            if self.settings.keys_topic:
                keys = TopicReader(
                    self.settings.keys_topic,
                    self._client(
                        **{"group.id": f"{group}-keys-reader", "enable.auto.commit": False}
                    ),
                    log_name=KEYS_LOG,
                )
            try:
                # the only AdminClient, dropped once the topics are checked: an admin request
                # waiting for a coordinator when a broker connection drops can abort
                # librdkafka (see registry.store.kafka_leader)
                admin = AdminClient(self._client())
                self._cluster_id = ensure_topics(admin, self.settings)
            except KafkaException as exc:
                raise KafkaStoreError(f"cannot open {self.description}: {exc}") from exc
            finally:
                admin = None
            try:
                low, high = reader.open(self.settings.init_timeout)
            except KafkaException as exc:
                raise KafkaStoreError(
                    f"cannot read the end of {self.settings.topic}: {exc}"
                ) from exc
            if keys is not None:
                try:
                    keys.open(self.settings.init_timeout)
                except KafkaException as exc:
                    reader.close()
                    raise KafkaStoreError(f"cannot read {self.settings.keys_topic}: {exc}") from exc
            for each in (reader, keys):
                if each is not None:
                    each.draining = self._draining
                    each.on_records = self._arrived
            self._reader, self.keys = reader, keys
            log.info(
                "opened %s: replaying offsets %d..%d in the background", self.description, low, high
            )
            loops = [("kafka-notifier", self._notify_loop)]
            if self.elect:
                loops.append(("kafka-election", self._leadership.run))
                if self.settings.txn_linger_ms:
                    loops.append(("kafka-committer", self._writes.run))
            else:
                self._leadership.settled.set()
            for name, target in loops:
                thread = threading.Thread(target=target, name=name, daemon=True)
                thread.start()
                self._threads.append(thread)

    def close(self) -> None:
        with self._open_lock:
            if self._reader is not None and self.elect:
                self._leadership.resign()  # a follower claims at once, no lease to wait for
            self._stop.set()
            self._writes.wake()
            with self._wake:
                self._wake.notify_all()
            for thread in self._threads:
                thread.join(timeout=15)
            self._threads = []
            for reader in (self.keys, self._reader):
                if reader is not None:
                    reader.close()
            self.keys = self._reader = None
            self._probes.shutdown(wait=False)

    def cluster_id(self) -> str:
        return self._cluster_id

    def _schemas(self) -> TopicReader:
        reader = self._reader
        if reader is None:
            raise RuntimeError(f"log store {self.description} is not open")
        return reader

    # ---- reading ---------------------------------------------------------------------------

    def _arrived(self) -> None:
        with self._wake:
            self._arrivals += 1
            self._wake.notify_all()

    def _notify_loop(self) -> None:
        notified = 0
        replay_applied = False
        while not self._stop.is_set():
            with self._wake:
                while not self._stop.is_set() and not (
                    self._replayed.is_set() and self._arrivals > notified
                ):
                    self._wake.wait(0.5)
                latest = self._arrivals
            if self._stop.is_set():
                return
            listener = self._listener
            if listener is None:
                notified = latest
                continue
            try:
                listener()
                notified = latest
                if not replay_applied and self._replay_applied():
                    replay_applied = True
                    self._schemas().drop_handed()  # the listener has applied them
                    release_free_memory()
            except Exception:
                log.exception("applying records from %s failed", self.settings.topic)
                self._stop.wait(0.5)

    def _replay_applied(self) -> bool:
        """Whether the listener has taken every record up to the end the topic had at open."""
        reader = self._reader
        return (
            reader is not None
            and reader.caught_up.is_set()
            and reader.handed_through() >= reader.start_last
        )

    def read_keys_after(self, offset: int) -> list[Record]:
        """Records of the keys topic read so far with an offset above ``offset``."""
        return self.keys.read_after(offset) if self.keys is not None else []

    def keys_replayed_through(self) -> int:
        """Offset of the keys topic the registry must have applied to be ready (-1: none)."""
        return self.keys.start_last if self.keys is not None else -1

    def iter_keys(self) -> Iterator[Record]:
        """The keys topic as read so far (see :meth:`iter_all`)."""
        if self.keys is not None:
            yield from iter_batches(self.keys.read_after, 10_000)

    def read_after(self, offset: int, limit: int | None = None) -> list[Record]:
        """Records read so far with an offset above ``offset``. The store has one reader (the
        registry applying them): records at or below ``offset`` are dropped from the buffer."""
        return self._schemas().read_after(offset, limit)

    def iter_all(self, batch: int = 10_000) -> Iterator[Record]:
        """The records read so far (the replay continues in the background; see
        :meth:`readiness`); afterwards the listener applies the rest."""
        reader = self._schemas()
        self._iterating = True
        try:
            yield from iter_batches(reader.read_after, batch)
        finally:
            self._iterating = False
        self._replayed.set()
        self._arrived()

    def wait_caught_up(self, timeout: float) -> bool:
        """Block until the position the topic had at :meth:`open` is read."""
        deadline = time.monotonic() + timeout
        if not self._schemas().caught_up.wait(timeout):
            return False
        keys = self.keys
        return keys is None or keys.caught_up.wait(max(0.0, deadline - time.monotonic()))

    def readiness(self) -> tuple[bool, int, str]:
        """(replay finished and a leader elected, offset of the last record the state must
        have applied, detail)."""
        reader = self._reader
        if reader is None:
            return False, -1, f"{self.settings.topic} is not open yet"
        with reader.cond:
            position, target, last = reader.position, reader.start_target, reader.start_last
        if not reader.caught_up.is_set():
            return False, -1, f"replaying {self.settings.topic}: offset {position} of {target}"
        if self.keys is not None and not self.keys.caught_up.is_set():
            return False, -1, f"replaying {self.keys.topic}"
        if not self._leadership.settled.is_set():
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
        reader = self._schemas()
        end = reader.end_offset(1.0)
        with reader.cond:
            # the leader has applied its answered records the reader has not read (its own
            # open transaction holds the reader back), and knows where its last commit marker is
            known = self._writes.known_end(reader.topic, applied_offset)
            done = max(reader.position, applied_offset + 1, known)
            unread = max(0, end - done)
            unapplied = max(0, reader.last_offset - applied_offset)
        return min(cap, unread + unapplied)

    def catch_up(self, timeout: float, at_least: int = 0) -> bool:
        """Read up to the current end of the topic, and at least to ``at_least`` (a position
        the leader reported: its records may be committed before the end we can ask for shows
        them); False when ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        reader = self._schemas()
        try:
            end = reader.end_offset(timeout)
        except KafkaException:
            return False
        return reader.wait_position(max(end, at_least), deadline)

    # ---- election --------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        """This instance holds the election partition and its producer is ready."""
        return self._leadership.producer is not None

    def leader_url(self) -> str | None:
        """The advertised URL of the leader: ours when we lead (or are becoming the leader),
        None when unknown."""
        return self._leadership.leader_url()

    def leader_named(self) -> bool:
        """Whether the election names another instance as the leader (with a URL or not:
        the copy command's leader serves no HTTP)."""
        return self._leadership.leader_named()

    def wait_leader(self, timeout: float) -> bool:
        """Block until this instance leads (used by the copy command)."""
        return self._leadership.wait_leader(timeout)

    # ---- writing ---------------------------------------------------------------------------

    @contextmanager
    def exclusive(self) -> Iterator[StoreTransaction]:
        deadline = time.monotonic() + self.settings.write_timeout
        carried, self._carried_deadline = self._carried_deadline, None
        if carried is not None:
            # the registry decides again a write whose transaction failed: within the
            # deadline of its first attempt, never a fresh one
            deadline = min(deadline, max(carried, time.monotonic() + 1.0))
        if not self.elect:
            raise errors.unknown_leader(f"{self.description} was opened for reading only")
        leadership = self._leadership
        while True:
            # wait for the leadership without the write lock: a claim takes it
            leadership.leader_producer(deadline)
            if not self._write_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise errors.operation_timeout("Timed out waiting for the store's write lock")
            producer = leadership.producer
            if producer is not None:
                break
            self._write_lock.release()
        self._producing = None
        claim = leadership.claim_offset
        try:
            yield from self._exclusive(leadership, producer, deadline)
        except errors.RegistryError as exc:
            txn, self._producing = self._producing, None
            if txn is None or leadership.producer is producer or exc.error_code not in SETTLED:
                raise  # not the transaction, the producer still leads, or not transient
            txn.appended = settle_failed_write(self, producer, claim, txn, deadline, exc)
        finally:
            self._write_lock.release()

    def _exclusive(
        self, leadership: Leadership, producer: Any, deadline: float
    ) -> Iterator[StoreTransaction]:
        reader = self._schemas()
        writes = self._writes
        # Where the state ends in each topic (registry.store.kafka_frontier). Known after this
        # producer's last write (the state holds everything up to its records): then no
        # ListOffsets round trip and no wait for the reader before deciding; where the records
        # land proves, before they are answered, that the decision missed nothing. Otherwise (a
        # new producer, a failed write) commit what is open and read both topics to their high
        # watermarks first.
        frontiers = writes.take_frontier(producer)
        if frontiers is None:
            writes.commit(deadline)
            frontiers = self._read_to_end(reader, deadline)
        txn = _KafkaTransaction(self)
        try:
            yield txn
        finally:
            txn._open = False
        if not txn.staged:
            writes.keep(producer, frontiers)
            return
        self._producing = txn  # a failure from here on is settled by ``exclusive``
        # the registry applies ``appended`` right after this (under its write lock)
        txn.appended = writes.write(
            producer,
            txn.staged,
            frontiers,
            deadline,
            self._topic_of,
            lambda landed, open_topics: check_landing(
                frontiers,
                landed,
                txn.applied_through,
                self._reader_of,
                deadline,
                open_topics=open_topics,
            ),
        )

    def commit_soon(self) -> None:
        """Commit the leader's open transaction now: a follower waits to read a write it
        forwarded (``registry.api.forwarding``)."""
        self._writes.commit_soon()

    def carry_deadline(self, deadline: float) -> None:
        """The next :meth:`exclusive` (the registry deciding a failed write again) ends by
        ``deadline`` (the first attempt's), not a full write timeout later."""
        self._carried_deadline = deadline

    def topics(self) -> list[str]:
        """The data topics: the schemas topic and the keys topic if there is one."""
        return [self.settings.topic] + ([self.keys.topic] if self.keys is not None else [])

    def _reader_of(self, topic: str) -> TopicReader:
        if self.keys is not None and topic == self.keys.topic:
            return self.keys
        return self._schemas()

    def _aborted_tail(self, timeout: float) -> list[tuple[str, bytes, bytes | None]]:
        """(topic, key, value) of every data record after the last committed one of the
        schemas and keys topics: records of aborted transactions (called by a new leader,
        after ``init_transactions``: no transaction is open any more), to be re-committed
        verbatim so that ``read_uncommitted`` readers conclude what ``read_committed`` ones
        do (see :mod:`registry.store.kafka_leader`)."""
        deadline = time.monotonic() + timeout
        out: list[tuple[str, bytes, bytes | None]] = []
        for reader in (self.keys, self._reader):
            if reader is None:
                continue
            end = reader.end_offset(max(0.1, deadline - time.monotonic()))
            if not reader.wait_position(end, deadline, unbounded=True):
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"reading {reader.topic}"))
            out.extend(
                (reader.topic, key, value)
                for key, value in uncommitted_after(
                    self._client(**{"group.id": f"{self.settings.election_group}-aborted"}),
                    reader.topic,
                    reader.last_offset,
                    end,
                    max(0.1, deadline - time.monotonic()),
                )
            )
        return out

    def _read_to_end(self, reader: TopicReader, deadline: float) -> dict[str, Frontier]:
        """Read the schemas and keys topics to their high watermarks (the first write of a
        producer, or after a failed one); the frontiers this gives."""
        # the keys topic's end asked at the same time (one broker round trip of waiting,
        # not two)
        keys_end = None
        if self.keys is not None:
            keys_end = self._probes.submit(
                self.keys.end_offset, max(0.1, deadline - time.monotonic())
            )
        try:
            end = reader.end_offset(max(0.1, deadline - time.monotonic()))
        except KafkaException as exc:
            raise write_error("reading the end of the topic", exc) from exc
        # (the registry's write lock is held: its listener cannot take records meanwhile)
        if not reader.wait_position(end, deadline, unbounded=True):
            raise errors.operation_timeout(
                f"Timed out reading {self.settings.topic} to offset {end} before writing"
            )
        frontiers = {reader.topic: Frontier(end)}
        if self.keys is not None and keys_end is not None:
            frontiers[self.keys.topic] = Frontier(self._wait_keys(self.keys, keys_end, deadline))
        return frontiers

    def _topic_of(self, key: bytes) -> str:
        """The keys topic for a KEK or DEK record (when the store has one), else ``topic``."""
        if self.keys is not None and is_key_record(key):
            return self.keys.topic
        return self.settings.topic

    def _wait_keys(self, keys: TopicReader, asked: Future[int], deadline: float) -> int:
        try:
            end = asked.result()
        except KafkaException as exc:
            raise write_error(f"reading the end of {keys.topic}", exc) from exc
        if not keys.wait_position(end, deadline):
            raise errors.operation_timeout(
                f"Timed out reading {keys.topic} to offset {end} before writing"
            )
        return end
