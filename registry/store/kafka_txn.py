"""The leader's transactions: a write is answered once its records are acknowledged and land
where the frontier says, and consecutive writes share one transaction, committed later.

A write produces its records (``acks=all``) into the transaction that is open, beginning one if
none is, and takes the delivery reports (the offsets). When its records land where
:func:`registry.store.kafka_frontier.check_landing` accepts them, the write is answered: the
leader applies its records from the delivery reports, and the transaction stays open for the
next write (whose records must then land directly after them: no marker in between). The
transaction is committed by whichever comes first:

* ``txn.linger.ms`` without a new write (the committer thread);
* ``txn.max.open.ms`` after its first write (at the end of the write that reaches it, or the
  committer thread);
* anything that needs the topic read to its end (a write after a failed one), and the leader
  stopping (before its ``resign`` record).

``txn.linger.ms=0`` commits every write before it is answered (one transaction per write).

**Why answering before the commit loses nothing.** An acknowledged record is in the log on
every in-sync replica. The transaction holding it ends in one of two ways: our commit, or an
abort by the next ``init_transactions`` with our ``transactional.id`` (a new leader, or this
instance claiming again after a failed commit). That claim re-commits, verbatim and before
anything else, every data record after the last committed one
(:meth:`registry.store.kafka.KafkaLogStore._aborted_tail`): our answered records among them, at
later offsets but with the same keys and values, so the same ids and versions. A fenced leader
cannot add records after the new leader's ``init_transactions`` (its epoch is refused), so
nothing lands between the abort and the re-commit that was not decided on the new leader's
state. ``read_committed`` and ``read_uncommitted`` readers agree for the same reason as
before: every aborted record is followed by an identical committed one with nothing
committed in between.

**A write that lands apart from the open transaction** (records of another writer between
ours: a writer outside the protocol) cannot wait for the reader to read up to its records, as
a first write does: the reader's last stable offset stops at our own open transaction's first
record. So the leader aborts, produces the records it already answered again in a new
transaction, commits them, and the write is decided again (:class:`WriteConflict`).

Every transactional call is made under the store's write lock (one caller per producer).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from registry import errors
from registry.records import KEYS_LOG, Record
from registry.store.kafka_frontier import MARKER_WAIT, Frontier, await_markers
from registry.store.kafka_leader import Leadership, write_error
from registry.store.kafka_reader import TopicReader
from registry.store.kafka_settings import KafkaSettings

log = logging.getLogger(__name__)

#: (topic, key, value) of a record produced into the open transaction
Produced = tuple[str, bytes, bytes | None]


@dataclass
class OpenTransaction:
    """A transaction of ``producer`` holding answered writes, not committed yet."""

    producer: Any
    began: float  # monotonic time of its first write
    last: float  # monotonic time of its last write
    #: what it holds, in log order (produced again if it must be aborted)
    records: list[Produced] = field(default_factory=list)
    topics: set[str] = field(default_factory=set)


class LeaderWrites:
    """The leader's frontier and open transaction (see the module docstring). Every method but
    :meth:`run` is called under ``write_lock``."""

    def __init__(
        self,
        settings: KafkaSettings,
        leadership: Leadership,
        write_lock: threading.Lock,
        reader_of: Callable[[str], TopicReader],
        stop: threading.Event,
    ) -> None:
        self.settings = settings
        self._leadership = leadership
        self._write_lock = write_lock
        self._reader_of = reader_of
        self._stop = stop
        #: where the state ends in each topic, valid while this producer leads
        #: (``registry.store.kafka_frontier``)
        self._frontier: tuple[Any, dict[str, Frontier]] | None = None
        self.open: OpenTransaction | None = None
        self._committed_at = 0.0  # monotonic time of the last commit (``await_markers``)
        self._due = threading.Condition()  # the committer waits here
        self._urgent = False  # commit the open transaction now (:meth:`commit_soon`)

    # ---- the frontier ----------------------------------------------------------------------

    def take_frontier(self, producer: Any) -> dict[str, Frontier] | None:
        """The frontier, if it is valid for ``producer``; it is valid again only once the
        write ends well (:meth:`keep`, :meth:`write`)."""
        known, self._frontier = self._frontier, None
        return dict(known[1]) if known is not None and known[0] is producer else None

    def known_end(self, topic: str, applied: int) -> int:
        """Offset below which a state that applied ``topic`` up to ``applied`` holds every
        committed record and knows every other entry is a marker (-1: not known now)."""
        known = self._frontier
        frontier = known[1].get(topic) if known is not None else None
        if frontier is None or applied < frontier.end - 1:
            return -1
        return frontier.end + 1 if frontier.marker else frontier.end

    def keep(self, producer: Any, frontiers: dict[str, Frontier]) -> None:
        self._frontier = (producer, frontiers)

    # ---- writing ---------------------------------------------------------------------------

    def write(
        self,
        producer: Producer,
        staged: Sequence[tuple[bytes, bytes | None]],
        frontiers: dict[str, Frontier],
        deadline: float,
        topic_of: Callable[[bytes], str],
        verify: Callable[[dict[str, list[int]], set[str]], None],
    ) -> list[Record]:
        """Produce ``staged`` into the open transaction (beginning one if none is open); return
        the records with the offsets the delivery reports give, keys-topic records first.
        ``verify(landed, open_topics)`` sees their offsets by topic before they are answered
        (``open_topics``: the topics where they follow answered records of the open
        transaction); when it raises, the transaction is aborted (the answered records are
        committed again) and the error passed on. Committed before returning when
        ``txn.linger.ms`` is 0 or the transaction reached ``txn.max.open.ms``."""
        self._discard_stale(producer)
        txn = self.open
        open_topics = set(txn.topics) if txn is not None else set()
        produced = [(topic_of(key), key, value) for key, value in staged]
        if txn is None:
            topics = {topic for topic, _, _ in produced}
            if time.monotonic() - self._committed_at < MARKER_WAIT:
                await_markers(
                    frontiers,
                    topics,
                    self._reader_of,
                    min(deadline, time.monotonic() + MARKER_WAIT),
                )
        records, landed = self._produce(producer, produced, deadline, begin=txn is None)
        now = time.monotonic()
        if txn is None:
            txn = self.open = OpenTransaction(producer, now, now)
        try:
            verify(landed, open_topics)
        except BaseException:
            self._abort_keeping_answered(producer, deadline)
            raise
        txn.records.extend(produced)
        txn.last = now
        for topic, offsets in landed.items():
            frontiers[topic] = Frontier(offsets[-1] + 1)  # our next records follow directly
            txn.topics.add(topic)
        self._frontier = (producer, frontiers)
        s = self.settings
        if s.txn_linger_ms == 0 or now - txn.began >= s.txn_max_open_ms / 1000:
            self.commit(deadline)
        else:
            with self._due:
                self._due.notify_all()
        return records

    def _produce(
        self, producer: Producer, produced: list[Produced], deadline: float, *, begin: bool
    ) -> tuple[list[Record], dict[str, list[int]]]:
        """Produce and flush; the records with the offsets the delivery reports give
        (keys-topic records first) and those offsets by topic. A producer that fails is
        dropped (the next claim re-commits what the open transaction held)."""
        delivered: list[Any] = []
        failures: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, msg: Any) -> None:
            if err is not None:
                failures.append(err)
            else:
                delivered.append(msg)

        try:
            if begin:
                producer.begin_transaction()
            for topic, key, value in produced:
                producer.produce(topic, key=key, value=value, partition=0, on_delivery=on_delivery)
            unsent = producer.flush(max(0.1, deadline - time.monotonic()))
        except (KafkaException, BufferError, SystemError) as exc:
            # a fatal error (a fenced producer) raised while flush() runs a delivery callback
            # reaches Python as a SystemError whose context is the KafkaException
            self._lost(producer)
            raise write_error("writing to the topic", _kafka_cause(exc)) from exc
        if unsent or failures or len(delivered) != len(produced):
            self._lost(producer)
            if failures:
                raise write_error("writing to the topic", KafkaException(failures[0]))
            if unsent:
                raise errors.operation_timeout("Timed out writing to the topic")
            raise errors.store_error("Error while writing to the store: records not acknowledged")
        delivered.sort(key=lambda m: m.offset())
        landed: dict[str, list[int]] = {}
        for m in delivered:
            landed.setdefault(m.topic(), []).append(m.offset())
        topic = self.settings.topic
        records = [
            Record(m.key() or b"", m.value(), m.offset(), m.timestamp()[1], log_name)
            for log_name, keys in ((KEYS_LOG, True), ("", False))
            for m in delivered
            if (m.topic() != topic) == keys
        ]
        return records, landed

    # ---- committing ------------------------------------------------------------------------

    def commit(self, deadline: float | None = None) -> None:
        """Commit the open transaction, if any. A failed commit drops the producer (the next
        claim re-commits the records if the broker aborted them) and raises."""
        txn, self.open = self.open, None
        self._urgent = False
        if txn is None or not self._current(txn.producer):
            return
        if deadline is None:
            deadline = time.monotonic() + self.settings.write_timeout
        known = self._frontier
        if known is not None and known[0] is txn.producer:
            # our marker goes right after our records (set first: :meth:`known_end` is read
            # without the lock while the commit runs; a failed commit drops the frontier)
            for topic in txn.topics:
                known[1][topic] = known[1][topic].committed()
        try:
            txn.producer.commit_transaction(max(0.1, deadline - time.monotonic()))
        except KafkaException as exc:
            self._lost(txn.producer)
            raise write_error("committing to the topic", exc) from exc
        self._committed_at = time.monotonic()

    def settle(self) -> None:
        """Commit the open transaction, if any, logging a failure (the store is stopping, or
        the leader resigns: under ``write_lock``)."""
        try:
            self.commit()
        except errors.RegistryError as exc:
            log.warning("committing the open transaction failed: %s", exc.message)

    def _abort_keeping_answered(self, producer: Producer, deadline: float) -> None:
        """Abort the open transaction (the write being checked failed) and commit the records
        of the writes it already answered again, in a new one. A producer that cannot is
        dropped: the next claim re-commits them."""
        txn, self.open = self.open, None
        self._frontier = None
        try:
            producer.abort_transaction(max(1.0, deadline - time.monotonic()))
        except KafkaException as exc:
            log.warning("aborting a transaction failed: %s", exc)
            self._lost(producer)
            return
        if txn is None or not txn.records:
            return
        log.warning("write landed apart: committing %d answered records again", len(txn.records))
        try:
            self._produce(producer, txn.records, deadline, begin=True)
            producer.commit_transaction(max(0.1, deadline - time.monotonic()))
        except (KafkaException, errors.RegistryError) as exc:
            log.warning("committing answered records again failed: %s", exc)
            self._lost(producer)
            return
        self._committed_at = time.monotonic()

    def _current(self, producer: Any) -> bool:
        return producer is not None and producer is self._leadership.producer

    def _discard_stale(self, producer: Any) -> None:
        """Forget an open transaction of an earlier producer (dropped: whoever claims next
        aborts it and commits its records again)."""
        if self.open is not None and self.open.producer is not producer:
            self.open = None

    def _lost(self, producer: Producer) -> None:
        self.open = None
        self._frontier = None
        self._leadership.drop_producer(producer)

    # ---- the committer ---------------------------------------------------------------------

    def due_at(self) -> float | None:
        """When the open transaction must be committed (None: none is open)."""
        txn = self.open
        if txn is None:
            return None
        if self._urgent:
            return txn.began
        s = self.settings
        return min(txn.last + s.txn_linger_ms / 1000, txn.began + s.txn_max_open_ms / 1000)

    def commit_soon(self) -> None:
        """Have the committer commit the open transaction now, without waiting for the write
        lock here (any thread: a follower waits to read the write it forwarded)."""
        with self._due:
            self._urgent = True
            self._due.notify_all()

    def run(self) -> None:
        """The committer thread: commits the open transaction when it is due."""
        while not self._stop.is_set():
            with self._due:
                due = self.due_at()
                now = time.monotonic()
                if due is None or due > now:
                    self._due.wait(0.2 if due is None else min(0.2, due - now))
                    continue
            if not self._write_lock.acquire(timeout=0.2):
                continue
            try:
                due = self.due_at()
                if due is not None and due <= time.monotonic():
                    self.commit()
            except errors.RegistryError as exc:
                log.warning("committing the open transaction failed: %s", exc.message)
            finally:
                self._write_lock.release()

    def wake(self) -> None:
        with self._due:
            self._due.notify_all()


def _kafka_cause(exc: BaseException) -> Exception:
    """``exc``, or the KafkaException a SystemError from a callback wraps."""
    seen = exc
    while isinstance(seen, SystemError) and seen.__context__ is not None:
        seen = seen.__context__
    if isinstance(seen, KafkaException):
        return seen
    return exc if isinstance(exc, Exception) else RuntimeError(str(exc))
