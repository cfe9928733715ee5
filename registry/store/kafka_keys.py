"""The DEK registry's own topic next to ``_schemas``: Confluent keeps KEK and DEK records in
``_dek_registry_keys`` (compacted, one partition), and so does the Kafka store.

KEK/DEK records only depend on one another, never on the schema records, so the two topics need
no common order: :class:`KeysTopic` reads the keys topic with its own consumer into its own
buffer, and the registry applies those records to its key index with their own offsets (the
records carry ``log=KEYS_LOG``). Writes go through the ``_schemas`` leader's transactional
producer, in the same transaction as any schema record, so leadership and fencing cover them.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from registry import records
from registry.records import KEYS_LOG, Record

log = logging.getLogger(__name__)

DEFAULT_KEYS_TOPIC = "_dek_registry_keys"


def default_keys_topic(schemas_topic: str) -> str:
    """Confluent's name beside ``_schemas``; ``<topic>_dek_registry_keys`` beside any other
    topic, so registries on different topics of one cluster keep their keys apart."""
    if schemas_topic == "_schemas":
        return DEFAULT_KEYS_TOPIC
    return f"{schemas_topic}{DEFAULT_KEYS_TOPIC}"


def is_key_record(key: bytes) -> bool:
    """Whether a record key is a KEK or DEK key (it goes to the keys topic)."""
    try:
        return records.decode_key(key).keytype in records.ENCRYPTION_KEY_TYPES
    except records.RecordFormatError:
        return False


class KeysTopic:
    """A reader of the keys topic: buffer, position, replay target, read-your-writes waits."""

    def __init__(self, topic: str, conf: dict[str, Any], watermarks: Callable[..., Any]) -> None:
        self.topic = topic
        self.tp = TopicPartition(topic, 0)
        self._conf = conf
        self._watermarks = watermarks
        self._cond = threading.Condition()
        self._records: list[Record] = []
        self._offsets: list[int] = []
        self._trimmed_through = -1
        self._position = 0
        self._start_target = 0
        self._last_offset = -1
        #: offset of the last record below the end the topic had at open (once reached): the
        #: registry is ready when it has applied this far
        self.start_last = -1
        self.caught_up = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reader: Consumer | None = None
        self._probe: Consumer | None = None
        self.on_records: Callable[[], None] | None = None

    def open(self, timeout: float) -> None:
        self._probe = Consumer(self._conf)
        reader = Consumer(
            {
                **self._conf,
                "enable.auto.offset.store": False,
                "isolation.level": "read_committed",
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 10,
            }
        )
        low, high = self._watermarks(self._probe, self.tp, timeout)
        reader.assign([TopicPartition(self.topic, 0, max(low, 0))])
        self._reader = reader
        self._position = max(low, 0)
        self._start_target = high
        if high <= self._position:
            self.caught_up.set()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="kafka-keys-reader", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=15)
            self._thread = None
        for consumer in (self._reader, self._probe):
            if consumer is not None:
                consumer.close()
        self._reader = self._probe = None

    def _loop(self) -> None:
        reader = self._reader
        assert reader is not None
        while not self._stop.is_set():
            try:
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
            position = self._position
            for msg in messages:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        position = max(position, msg.offset() or 0)
                    else:
                        log.warning("reading %s: %s", self.topic, err)
                    continue
                offset = msg.offset()
                batch.append(
                    Record(msg.key() or b"", msg.value(), offset, msg.timestamp()[1], KEYS_LOG)
                )
                position = max(position, offset + 1)
            if not batch and position == self._position:
                continue
            with self._cond:
                self._records.extend(batch)
                self._offsets.extend(r.offset for r in batch)
                if batch:
                    self._last_offset = batch[-1].offset
                self._position = position
                self._cond.notify_all()
            reached = position >= self._start_target and not self.caught_up.is_set()
            if reached:
                self.start_last = self._last_offset
                self.caught_up.set()
            listener = self.on_records
            if (batch or reached) and listener is not None and self.caught_up.is_set():
                try:
                    listener()
                except Exception:
                    log.exception("applying records from %s failed", self.topic)

    def read_after(self, offset: int) -> list[Record]:
        """Records read with an offset above ``offset`` (those at or below are dropped)."""
        with self._cond:
            if offset < self._trimmed_through:
                raise RuntimeError(f"{self.topic}: records after {offset} were already dropped")
            start = bisect.bisect_right(self._offsets, offset)
            if start:
                del self._records[:start]
                del self._offsets[:start]
                self._trimmed_through = offset
            return list(self._records)

    def iter_all(self) -> Iterator[Record]:
        yield from self.read_after(-1)

    def end_offset(self, timeout: float) -> int:
        probe = self._probe
        if probe is None:
            raise RuntimeError(f"{self.topic} is not open")
        return int(self._watermarks(probe, self.tp, timeout)[1])

    def wait_position(self, target: int, deadline: float) -> bool:
        with self._cond:
            while self._position < target:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    return False
                self._cond.wait(min(remaining, 0.5))
            return True
