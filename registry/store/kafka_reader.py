"""One reader of one single-partition topic (``_schemas`` and the DEK registry's keys topic).

A consumer assigned partition 0 reads the topic from its low watermark (``read_committed``, no
group offsets) into a buffer in a thread of its own; :meth:`TopicReader.read_after` hands the
buffer out to the one consumer of the records (the registry applying them) and drops what it
has been handed before. The reader remembers the end the topic had when it was opened and says
when it has read that far (:attr:`TopicReader.caught_up`), and waits for a position
(:meth:`TopicReader.wait_position`, read-your-writes).

Memory: the state is the only full copy of the records. With ``max_buffered_bytes`` the reader
stops fetching while that many bytes of records are read and not yet handed out, as long as
``draining()`` says somebody is taking them (otherwise, e.g. a store opened only to wait for
the end of the topic, it reads on). A writer waiting for a position may lift the bound. Records
handed out stay until the next :meth:`TopicReader.read_after` (the registry asks again from
its last applied offset if applying failed), so the buffer holds at most about twice the bound.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from registry.records import Record

log = logging.getLogger(__name__)

_TRANSIENT_CODES = frozenset(
    {
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError._TRANSPORT,
        KafkaError._TIMED_OUT,
        KafkaError.REQUEST_TIMED_OUT,
        # while a broker restarts (a three-broker rolling restart): the partition's leader
        # handle is replaced, or the partition is briefly unknown to the client's metadata
        KafkaError._DESTROY_BROKER,
        KafkaError._UNKNOWN_PARTITION,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError.BROKER_NOT_AVAILABLE,
        # a partition's new leader answers these until it knows the epoch and the high
        # watermark (KIP-207, KIP-320)
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
    }
)
#: longest single watermark request (then the partition's leader is looked up again and the
#: request asked again, of the leader known by then)
_ATTEMPT = 1.0


def watermarks(consumer: Consumer, tp: TopicPartition, timeout: float) -> tuple[int, int]:
    """(low, high) watermarks, retrying while a new topic's partition gets its leader, or while
    the partition's leader moves (a broker died or stops: the request to it times out or
    fails). librdkafka sends a watermark request to the leader in its metadata cache and does
    not refresh that cache for a topic the handle does not consume, so between attempts the
    topic's metadata is asked again (``list_topics``): the next attempt goes to the new leader
    once the cluster elected one (a killed broker is fenced after broker.session.timeout.ms)."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            low, high = consumer.get_watermark_offsets(
                tp, timeout=max(min(remaining, _ATTEMPT), 0.1), cached=False
            )
            return int(low), int(high)
        except KafkaException as exc:
            if not _transient(exc) or deadline - time.monotonic() <= 0.2:
                raise
        refresh_metadata(consumer, tp.topic, min(_ATTEMPT, deadline - time.monotonic() - 0.1))
        time.sleep(0.05)


def refresh_metadata(client: Any, topic: str, timeout: float) -> None:
    """Ask the cluster for ``topic``'s metadata (librdkafka updates its cache with the answer:
    partition leaders); errors are ignored (the caller's next request tells)."""
    if timeout <= 0:
        return
    try:
        client.list_topics(topic, timeout=timeout)
    except (KafkaException, RuntimeError) as exc:
        log.debug("refreshing the metadata of %s: %s", topic, exc)


def _transient(exc: KafkaException) -> bool:
    err = exc.args[0] if exc.args else None
    return isinstance(err, KafkaError) and (err.code() in _TRANSIENT_CODES or err.retriable())


def uncommitted_after(
    conf: dict[str, Any], topic: str, after: int, end: int, timeout: float
) -> list[tuple[bytes, bytes | None]]:
    """(key, value) of the data records of partition 0 between ``after`` (exclusive) and
    ``end`` as a ``read_uncommitted`` reader sees them (records of aborted transactions
    included; a ``read_committed`` reader that read to ``end`` and whose last record is at
    ``after`` saw none of them)."""
    if end <= after + 1:
        return []
    consumer = Consumer(
        {
            **conf,
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
            "enable.partition.eof": True,
            # the end is known: the fetch that reaches it need not wait for more records
            # (librdkafka's default 500 ms was most of a claim's time, so of a failover)
            "fetch.wait.max.ms": 10,
        }
    )
    out: list[tuple[bytes, bytes | None]] = []
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(topic, 0, after + 1)])
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF and (msg.offset() or 0) >= end:
                    return out
                continue
            if msg.offset() >= end:
                return out
            out.append((msg.key() or b"", msg.value()))
    finally:
        consumer.close()
    raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"reading {topic} uncommitted"))


def _never() -> bool:
    return False


def _size(records: list[Record]) -> int:
    return sum(len(r.key) + (len(r.value) if r.value is not None else 0) for r in records)


class TopicReader:
    """Reads partition 0 of ``topic`` into a buffer; see the module docstring. ``conf`` is the
    client configuration (bootstrap, group id, security); ``reader_conf`` adds fetch settings
    for the reading consumer; records get ``log=log_name``."""

    def __init__(
        self,
        topic: str,
        conf: dict[str, Any],
        *,
        reader_conf: dict[str, Any] | None = None,
        log_name: str = "",
        max_buffered_bytes: int | None = None,
    ) -> None:
        self.topic = topic
        self.tp = TopicPartition(topic, 0)
        self._conf = conf
        self._reader_conf = reader_conf or {}
        self._log_name = log_name
        self.max_buffered_bytes = max_buffered_bytes
        #: whether the records are being taken (only then does ``max_buffered_bytes`` hold)
        self.draining: Callable[[], bool] = _never
        #: called from the reader thread after each batch and when the start end is reached
        self.on_records: Callable[[], None] | None = None
        self.cond = threading.Condition()
        self._records: list[Record] = []
        self._offsets: list[int] = []
        self._buffered = 0  # bytes of keys and values in ``_records``
        #: how many of ``_records`` (from the first) were handed out, and their bytes: they stay
        #: until the next read_after drops them, but no longer hold the reader back
        self._handed = 0
        self._handed_bytes = 0
        self._trimmed_through = -1
        self.position = 0  # next offset the reader will deliver
        self.last_offset = -1  # offset of the last record read
        self.start_target = 0  # the high watermark at open
        #: offset of the last record below the end the topic had at open (once reached): the
        #: registry is ready when it has applied this far
        self.start_last = -1
        self.caught_up = threading.Event()
        self._waiters = 0  # threads in wait_position: the buffer bound is lifted for them
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reader: Consumer | None = None
        self._probe: Consumer | None = None
        #: asks the last stable offset (read_committed), made on first use (the leader's)
        self._stable_probe: Consumer | None = None

    # ---- lifecycle -------------------------------------------------------------------------

    def open(self, timeout: float) -> tuple[int, int]:
        """Make the consumers, find the watermarks and start reading; returns (low, high)."""
        # watermark queries on a handle of their own: on the reader they would wait behind its
        # consume() calls. read_uncommitted: the end asked is the high watermark, not the last
        # stable offset (librdkafka's default, read_committed, answers that): a transaction
        # still open or not yet marked committed can commit records below the LSO-end later, so
        # "read to the end" must wait for it to be decided rather than stop in front of it
        probe = Consumer({**self._conf, "isolation.level": "read_uncommitted"})
        reader = Consumer(
            {
                **self._conf,
                "enable.auto.offset.store": False,
                "isolation.level": "read_committed",
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
                # read-your-writes waits for this consumer, and with read_committed the broker
                # holds a fetch for the whole wait even once a commit marker makes records
                # readable (a write took 513 ms at 500, 35 ms at 10): poll often, at the price
                # of ~100 idle fetches/s
                "fetch.wait.max.ms": 10,
                **self._reader_conf,
            }
        )
        try:
            low, high = watermarks(probe, self.tp, timeout)
        except KafkaException:
            reader.close()
            probe.close()
            raise
        start = max(low, 0)
        reader.assign([TopicPartition(self.topic, 0, start)])
        self._reader, self._probe = reader, probe
        self.position = start
        self.start_target = high
        if high <= start:
            self._mark_caught_up()
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._loop, name=f"kafka-reader-{self.topic}", daemon=True
        )
        self._thread.start()
        return low, high

    def close(self) -> None:
        self._stop.set()
        with self.cond:
            self.cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=15)
            self._thread = None
        for consumer in (self._reader, self._probe, self._stable_probe):
            if consumer is not None:
                consumer.close()
        self._reader = self._probe = self._stable_probe = None

    # ---- the reading thread ----------------------------------------------------------------

    def _hold(self) -> None:
        """Wait while the buffer is full and somebody is taking records out of it."""
        bound = self.max_buffered_bytes
        if bound is None:
            return
        with self.cond:
            while (
                self._buffered - self._handed_bytes >= bound
                and not self._waiters
                and not self._stop.is_set()
                and self.draining()
            ):
                self.cond.wait(0.5)

    def _loop(self) -> None:
        reader = self._reader
        assert reader is not None
        started = time.monotonic()
        last_log = started
        while not self._stop.is_set():
            self._hold()
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
                log.warning("reading %s failed: %s", self.topic, exc)
                time.sleep(0.5)
                continue
            batch: list[Record] = []
            size = 0
            position = self.position
            for msg in messages:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        position = max(position, msg.offset() or 0)
                    else:
                        log.warning("reading %s: %s", self.topic, err)
                    continue
                offset = msg.offset()
                key, value = msg.key() or b"", msg.value()
                size += len(key) + (len(value) if value is not None else 0)
                batch.append(Record(key, value, offset, msg.timestamp()[1], self._log_name))
                position = max(position, offset + 1)
            if not batch and position == self.position:
                continue
            with self.cond:
                if batch:
                    self._records.extend(batch)
                    self._offsets.extend(r.offset for r in batch)
                    self._buffered += size
                    self.last_offset = batch[-1].offset
                self.position = position
                self.cond.notify_all()
            reached = False
            if not self.caught_up.is_set():
                now = time.monotonic()
                if position >= self.start_target:
                    reached = True
                    self._mark_caught_up()
                    log.info(
                        "replayed %s up to offset %d in %.1fs", self.topic, position, now - started
                    )
                elif now - last_log >= 2:
                    last_log = now
                    log.info(
                        "replaying %s: offset %d of %d (%.0f records/s)",
                        self.topic,
                        position,
                        self.start_target,
                        position / max(now - started, 1e-3),
                    )
            listener = self.on_records
            if (batch or reached) and listener is not None:
                try:
                    listener()
                except Exception:
                    log.exception("applying records from %s failed", self.topic)

    def _mark_caught_up(self) -> None:
        with self.cond:
            self.start_last = self.last_offset
        self.caught_up.set()

    # ---- handing records out ---------------------------------------------------------------

    def read_after(self, offset: int, limit: int | None = None) -> list[Record]:
        """Records read so far with an offset above ``offset`` (at most ``limit``). There is
        one reader of the records (the registry applying them): those at or below ``offset``
        are dropped from the buffer, and asking for them again is an error."""
        if limit is not None and limit <= 0:
            return []
        with self.cond:
            if offset < self._trimmed_through:
                raise RuntimeError(
                    f"{self.topic}: records after offset {offset} were already handed out and "
                    f"dropped (through {self._trimmed_through}); open a new store to read them "
                    "again"
                )
            start = bisect.bisect_right(self._offsets, offset)
            if start:
                dropped = _size(self._records[:start])
                self._buffered -= dropped
                if self._handed > start:  # handed out again (the consumer fell back)
                    self._handed -= start
                    self._handed_bytes -= dropped
                else:
                    self._handed = self._handed_bytes = 0
                del self._records[:start]
                del self._offsets[:start]
                self._trimmed_through = offset
                self.cond.notify_all()  # room in the buffer again
            end = len(self._records) if limit is None else min(limit, len(self._records))
            if end > self._handed:
                self._handed_bytes += _size(self._records[self._handed : end])
                self._handed = end
                self.cond.notify_all()
            return self._records[:end]

    def offsets_between(self, low: int, high: int) -> list[int]:
        """Offsets of the records read and not yet dropped in ``[low, high)`` (handed out or
        not; nothing is handed out)."""
        with self.cond:
            start = bisect.bisect_left(self._offsets, low)
            stop = bisect.bisect_left(self._offsets, high)
            return self._offsets[start:stop]

    def drop_handed(self) -> None:
        """Drop the records handed out (their consumer has applied them)."""
        self.read_after(self.handed_through())

    def handed_through(self) -> int:
        """Offset of the last record handed out (-1: none)."""
        with self.cond:
            if self._handed:
                return self._offsets[self._handed - 1]
            return self._trimmed_through

    def buffered_bytes(self) -> int:
        """Bytes of keys and values read and not yet dropped."""
        with self.cond:
            return self._buffered

    # ---- positions -------------------------------------------------------------------------

    def end_offset(self, timeout: float) -> int:
        """The topic's high watermark now."""
        probe = self._probe
        if probe is None:
            raise RuntimeError(f"{self.topic} is not open")
        return watermarks(probe, self.tp, timeout)[1]

    def stable_end(self, timeout: float) -> int:
        """The topic's last stable offset now (every transaction below it is decided). One
        caller at a time (the leader's write path)."""
        if self._stable_probe is None:
            self._stable_probe = Consumer({**self._conf, "isolation.level": "read_committed"})
        return watermarks(self._stable_probe, self.tp, timeout)[1]

    def wait_position(self, target: int, deadline: float, *, unbounded: bool = False) -> bool:
        """Block until the reader has read up to ``target`` (False when ``deadline`` passes).
        ``unbounded``: read on past the buffer's bound meanwhile (for a writer that holds the
        lock the records' consumer needs to take them)."""
        with self.cond:
            if unbounded:
                self._waiters += 1
                self.cond.notify_all()
            try:
                while self.position < target:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._stop.is_set():
                        return False
                    self.cond.wait(min(remaining, 0.5))
                return True
            finally:
                if unbounded:
                    self._waiters -= 1
