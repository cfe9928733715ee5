"""The Kafka store's leadership: the leader election and the leader's transactional producer
(the writes made with it, in transactions that consecutive writes share:
``registry.store.kafka_txn``).

The protocol (the election topic's records and the rule to claim are in
:mod:`registry.store.kafka_election`):

* **Who writes.** Only the holder of the newest epoch of the shared ``transactional.id``. To
  lead, an instance makes a transactional producer, calls ``init_transactions`` (the broker
  aborts what the previous leader left open and fences every older producer: their commits fail
  from now on), re-commits verbatim the data records of transactions that were aborted after
  the last committed one (:func:`aborted_tail`), and commits a ``claim`` record to the election
  topic in the same transaction; then it reads ``_schemas`` to its high watermark before it
  decides anything. A leader that reads a newer claim than its own steps down.
* **A zombie** (a paused or partitioned old leader) cannot commit: its producer is fenced. What
  it produced stays uncommitted and is aborted by the next ``init_transactions``.
* **Every reader concludes the same.** Records of aborted transactions stay in the topic, and a
  reader that does not filter them (``read_uncommitted``: Confluent's registry, the console
  consumer, backup tools) applies them. Because a new leader re-commits those records, identical,
  before anything else, every aborted record is followed by the same committed record, and the
  records are keyed state (applying one twice changes nothing): both kinds of reader build the
  same state.
* **Liveness.** Members heartbeat into the election topic; a follower claims when the leader's
  heartbeats stopped for ``election.lease.ms`` while its own kept arriving (no election during a
  broker outage), after a delay by rank. A leader that stops (``close``) commits a ``resign``
  record so a follower claims at once. A leader whose transaction failed makes a new producer
  and claims again (which re-commits the failed transaction's records if it was aborted).

Threads: the election thread owns the election consumer and the heartbeat producer; the
transactional producer is only used under ``write_lock`` (claims on the election thread, writes
on the registry's write path, commits also on the committer thread), and a producer is dropped
only after its outstanding requests are flushed. No AdminClient is used after start-up (a
coordinator look-up in flight while a broker connection drops aborts librdkafka 2.x:
``rd_kafka_enq_once_del_source_return``).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from registry import errors
from registry.store.kafka_election import (
    CLAIM_KEY,
    HEARTBEAT_PREFIX,
    RESIGN_KEY,
    Claim,
    ElectionView,
    apply,
    encode,
    heartbeat_stalled,
    should_claim,
    successor,
)
from registry.store.kafka_reader import refresh_metadata, watermarks
from registry.store.kafka_settings import KafkaSettings

log = logging.getLogger(__name__)

_TIMEOUT_CODES = frozenset(
    {KafkaError._TIMED_OUT, KafkaError._MSG_TIMED_OUT, KafkaError.REQUEST_TIMED_OUT}
)
_TOO_LARGE_CODES = frozenset({KafkaError.MSG_SIZE_TOO_LARGE})
#: the producer was fenced by a newer leader's init_transactions: this write committed
#: nothing (the new leader re-commits its records if they reached the topic)
_FENCED_CODES = frozenset(
    {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}
)
#: election records read at start-up, at most (heartbeats name the leader: a few suffice)
_HISTORY = 1000


class Leadership:
    """This instance's part in the election and, while it leads, its producer."""

    def __init__(
        self,
        settings: KafkaSettings,
        client: Callable[..., dict[str, Any]],
        stop: threading.Event,
        catch_up: Callable[[float], bool],
        write_lock: threading.Lock | None = None,
        aborted: Callable[[float], list[tuple[str, bytes, bytes | None]]] | None = None,
    ) -> None:
        self.settings = settings
        self._client = client
        self._stop = stop
        self._catch_up = catch_up
        self._aborted = aborted
        #: serialises every call on the transactional producer (claims and writes)
        self.write_lock = write_lock or threading.Lock()
        #: this instance's URL as other instances reach it
        self.advertised_url: str | None = None
        self.member = uuid.uuid4().hex[:16]
        self.lock = threading.Condition()
        self.producer: Producer | None = None
        self._claim_offset = -1
        self._view = ElectionView(self.member, time.monotonic())
        self.error: str | None = None
        self.settled = threading.Event()  # a leader was known at least once
        self._heartbeats: Producer | None = None
        self._resigning = False
        self._dropped_at = 0.0
        self._claiming = False  # announced in our heartbeats while a claim is under way
        self._beat_now = threading.Event()  # wakes the heartbeat thread
        #: commits the open transaction before the resign record (``registry.store.kafka_txn``)
        self.before_resign: Callable[[], None] | None = None

    # ---- who leads -------------------------------------------------------------------------

    def leader_url(self) -> str | None:
        """The advertised URL of the leader: ours when we lead, None when unknown."""
        with self.lock:
            if self.producer is not None:
                return self.advertised_url
            leader = self._view.leader()
            if leader is None or leader == self.member:
                return None
            url = self._view.leader_url()
            return url if url and url.startswith("http") else None

    def leader_named(self) -> bool:
        """Whether the topic names a leader other than us (one that serves HTTP or not)."""
        with self.lock:
            leader = self._view.leader()
            return leader is not None and leader != self.member

    def run(self) -> None:
        """The election thread: read the election topic, heartbeat, claim when the rule says
        so, until the store stops."""
        s = self.settings
        beat = s.election_heartbeat_ms / 1000
        lease = s.election_lease_ms / 1000
        consumer, history_end = self._join()
        if consumer is None:
            return
        try:
            self._heartbeats = Producer(
                self._client(
                    **{
                        # the partition leader answers at once: a heartbeat is read only
                        # once replicated anyway (the high watermark is the same for every
                        # reader), while acks=all made each member's connection wait for the
                        # replicas in turn, so one member's heartbeats could stall (a replica
                        # restarting) while the others' went through
                        "acks": 1,
                        "linger.ms": 0,
                        "enable.idempotence": False,
                        "message.timeout.ms": max(1000, s.election_lease_ms),
                        # a request stalled on a stopping broker fails (and is retried on the
                        # partition's new leader) well within the lease, not at its end
                        "request.timeout.ms": max(500, s.election_lease_ms // 3),
                        "client.id": f"{self.advertised_url or 'no-http'}-heartbeat",
                    }
                )
            )
        except KafkaException as exc:
            self.error = str(exc)
            log.error("cannot join the leader election: %s", exc)
            return
        beater = threading.Thread(
            target=self._beat_loop, args=(beat, lease), name="kafka-heartbeat", daemon=True
        )
        beater.start()
        try:
            while not self._stop.is_set():
                self._read(consumer, history_end, gap=3 * beat)
                self._decide(lease, beat)
        finally:
            beater.join(timeout=5)
            self._close_election(consumer)

    def _join(self) -> tuple[Consumer | None, int]:
        """The election reader, once the election topic's end is known: asked again until the
        store stops (a just-created topic or a broker restarting must not leave an instance
        out of the election for good)."""
        while not self._stop.is_set():
            try:
                joined = self._open_election()
                self.error = None
                return joined
            except KafkaException as exc:
                self.error = str(exc)
                log.warning("cannot join the leader election yet, will retry: %s", exc)
                self._stop.wait(1.0)
        return None, -1

    def _beat_loop(self, beat: float, lease: float) -> None:
        """The heartbeat thread: the only user of the heartbeat producer."""
        heartbeats = self._heartbeats
        assert heartbeats is not None
        failed = threading.Event()
        delivered = [time.monotonic()]  # arrival of the last delivery report without error
        refreshed = 0.0

        def on_delivery(err: KafkaError | None, _msg: Any) -> None:
            if err is not None:
                failed.set()
            else:
                delivered[0] = time.monotonic()

        while not self._stop.is_set() and not self._resigning:
            self._beat_now.clear()
            now = time.monotonic()
            if failed.is_set() or heartbeat_stalled(now, delivered[0], refreshed, beat):
                # heartbeats not delivered: their partition's leader may have moved (a broker
                # stopping, paused or killed) and librdkafka's cache still names the old one,
                # where requests wait unanswered. Ask the cluster again now, not when the
                # message times out at the end of the lease: while our heartbeats stall and
                # the others' flow, the followers elect another leader (a false election)
                failed.clear()
                # logged once a stall (a broker outage would log it every few heartbeats)
                (log.info if refreshed < delivered[0] else log.debug)(
                    "heartbeats stalled for %.2fs: refreshing the election topic's metadata",
                    now - delivered[0],
                )
                refreshed = now
                refresh_metadata(heartbeats, self.settings.election_topic, max(beat, lease / 3))
            key, value = encode(
                HEARTBEAT_PREFIX,
                self.member,
                self.advertised_url,
                self._claim_offset if self.producer is not None else -1,
                claiming=self._claiming,
            )
            try:
                heartbeats.produce(
                    self.settings.election_topic,
                    key=key,
                    value=value,
                    partition=0,
                    on_delivery=on_delivery,
                )
            except (KafkaException, BufferError) as exc:
                log.debug("heartbeat not sent: %s", exc)
            heartbeats.poll(0)
            self._beat_now.wait(beat)

    def _open_election(self) -> tuple[Consumer, int]:
        consumer = Consumer(
            self._client(
                **{
                    "group.id": f"{self.settings.election_group}-election-reader",
                    "enable.auto.commit": False,
                    "enable.auto.offset.store": False,
                    "isolation.level": "read_uncommitted",
                    "auto.offset.reset": "latest",
                    "fetch.wait.max.ms": 20,
                }
            )
        )
        tp = TopicPartition(self.settings.election_topic, 0)
        try:
            low, high = watermarks(consumer, tp, self.settings.init_timeout)
        except KafkaException:
            consumer.close()
            raise
        consumer.assign([TopicPartition(tp.topic, 0, max(low, high - _HISTORY))])
        self._view = ElectionView(self.member, time.monotonic())
        return consumer, high

    def _close_election(self, consumer: Consumer) -> None:
        heartbeats, self._heartbeats = self._heartbeats, None
        if heartbeats is not None:
            heartbeats.flush(2)
        try:
            consumer.close()
        except (KafkaException, RuntimeError) as exc:
            log.warning("closing the election reader: %s", exc)

    def _read(self, consumer: Consumer, history_end: int, gap: float) -> None:
        try:
            messages = consumer.consume(num_messages=500, timeout=0.05)
        except (KafkaException, RuntimeError) as exc:
            log.warning("reading the election topic: %s", exc)
            self._stop.wait(0.2)
            return
        now = time.monotonic()
        with self.lock:
            before = self._view.leader(), self._view.leader_url()
            for msg in messages:
                if msg.error() is not None:
                    continue
                apply(
                    self._view,
                    msg.key() or b"",
                    msg.value(),
                    msg.offset(),
                    now,
                    history=msg.offset() < history_end,
                    gap=gap,
                )
            after = self._view.leader(), self._view.leader_url()
            if after != before:
                log.info("leader is now %s (%s)", after[1], after[0])
                self.lock.notify_all()
            if after[0] is not None and after[0] != self.member:
                self.settled.set()

    def _decide(self, lease: float, beat: float) -> None:
        with self.lock:
            view = self._view
            leader = view.leader()
            mine = self.producer is not None
            newer = view.claim is not None and view.claim.offset > self._claim_offset
            superseded = mine and leader != self.member and newer
            # a failed transaction dropped our producer: claim again, once a newer claim (if
            # the failure was a fencing) had the time to be read
            lost_producer = (
                self.producer is None
                and leader == self.member
                and not self._resigning
                and time.monotonic() - self._dropped_at > 2 * beat
            )
            claim = not mine and should_claim(
                view,
                time.monotonic(),
                lease=lease,
                heartbeat=beat,
                rank_step=2 * beat,
                patience=max(lease, self.settings.write_timeout),
            )
        if superseded:
            log.warning("a newer claim (%s) supersedes ours: no longer the leader", leader)
            with self.write_lock:
                self._drop(self.producer)
        elif (claim or lost_producer) and not self._resigning:
            if claim:
                with self.lock:
                    seen = self._view.members.get(leader) if leader is not None else None
                log.info(
                    "claiming the leadership: leader %s last heard %s",
                    leader,
                    "never" if seen is None else f"{time.monotonic() - seen[0]:.2f}s ago",
                )
            self._claim()

    # ---- claiming and resigning ------------------------------------------------------------

    def _new_producer(self) -> Producer:
        timeout = self.settings.write_timeout
        return Producer(
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

    def _claim(self) -> None:
        self._claiming = True
        self._beat_now.set()  # tell the others at once: they hold back meanwhile
        began = time.monotonic()
        try:
            self._claim_once()
        finally:
            self._claiming = False
            self._beat_now.set()
        if self.producer is not None:
            log.info("claimed the leadership in %.2fs", time.monotonic() - began)

    def _claim_once(self) -> None:
        timeout = self.settings.write_timeout
        with self.write_lock:
            if self._stop.is_set():
                return
            self._drop(self.producer)
            producer = self._new_producer()
            phases = _Phases()
            try:
                producer.init_transactions(timeout)
                phases.mark("init_transactions")
                # every transaction of an earlier leader is now committed or aborted and that
                # leader is fenced: what is below the high watermark is all that will ever
                # precede our writes
                if not self._catch_up(max(timeout, 10.0)):
                    raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "catching up"))
                phases.mark("catch-up")
                redo = self._aborted(timeout) if self._aborted is not None else []
                phases.mark("aborted tail")
                offsets: list[int] = []

                def on_delivery(err: KafkaError | None, msg: Any) -> None:
                    if err is None and msg.topic() == self.settings.election_topic:
                        offsets.append(msg.offset())

                producer.begin_transaction()
                for topic, key, value in redo:
                    producer.produce(topic, key=key, value=value, partition=0)
                key, value = encode(CLAIM_KEY, self.member, self.advertised_url)
                producer.produce(
                    self.settings.election_topic,
                    key=key,
                    value=value,
                    partition=0,
                    on_delivery=on_delivery,
                )
                producer.commit_transaction(timeout)
                phases.mark("commit")
                if redo:
                    log.warning("re-committed %d records of aborted transactions", len(redo))
                    if not self._catch_up(max(timeout, 10.0)):
                        raise KafkaException(KafkaError(KafkaError._TIMED_OUT, "catching up"))
                    phases.mark("catch-up")
            except KafkaException as exc:
                log.warning("claiming the leadership failed, will retry: %s", exc)
                self._dispose(producer)
                self._stop.wait(0.5)
                return
            with self.lock:
                self.producer = producer
                self._claim_offset = offsets[0] if offsets else self._claim_offset
                if offsets and (self._view.claim is None or self._view.claim.offset < offsets[0]):
                    self._view.claim = Claim(offsets[0], self.member, self.advertised_url)
                    self._view.resigned = False
                self.lock.notify_all()
        self.settled.set()
        log.info("this instance (%s) is the leader (%s)", self.advertised_url, phases)

    def resign(self) -> None:
        """Stop leading and say so in the election topic (a follower claims at once)."""
        self._resigning = True
        self._beat_now.set()
        with self.write_lock:
            producer = self.producer
            if producer is None:
                return
            if self.before_resign is not None:
                self.before_resign()
                if self.producer is not producer:  # the commit failed: no longer leading
                    return
            try:
                producer.begin_transaction()
                key, value = encode(RESIGN_KEY, self.member, self.advertised_url)
                producer.produce(self.settings.election_topic, key=key, value=value, partition=0)
                producer.commit_transaction(min(5.0, self.settings.write_timeout))
            except KafkaException as exc:
                log.warning("could not record the resignation: %s", exc)
            self._drop(producer)

    def _drop(self, producer: Producer | None) -> None:
        """Forget ``producer`` (under ``write_lock``)."""
        if producer is None:
            return
        with self.lock:
            if self.producer is producer:
                self.producer = None
                self._dropped_at = time.monotonic()
            self.lock.notify_all()
        self._dispose(producer)

    @staticmethod
    def _dispose(producer: Producer) -> None:
        """Let ``producer``'s requests end before the handle goes (never destroyed with
        requests in flight)."""
        try:
            producer.purge(in_queue=True, in_flight=False)
            producer.flush(2)
        except (KafkaException, RuntimeError) as exc:
            log.debug("disposing of a producer: %s", exc)

    def release(self) -> Producer | None:
        """Resign (the store is closing)."""
        self.resign()
        return None

    # ---- the producer ----------------------------------------------------------------------

    def leader_producer(self, deadline: float) -> Producer:
        """Our producer once we lead (waiting while we are becoming the leader or no leader
        is named); 50004 when another instance leads or the deadline passes."""
        with self.lock:
            while self.producer is None:
                leader = self._view.leader()
                if leader is not None and leader != self.member:
                    url = self._view.leader_url()
                    raise errors.unknown_leader(
                        f"This instance is not the leader; the leader is {url}"
                        if url
                        else "Leader not known."
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    raise errors.unknown_leader("Leader not known.")
                self.lock.wait(min(remaining, 0.2))
            return self.producer

    @property
    def claim_offset(self) -> int:
        """Offset of the claim this instance leads (or last led) by (-1: none)."""
        return self._claim_offset

    def await_successor(self, failed: Producer, failed_claim: int, deadline: float) -> bool | None:
        """After a transaction of ``failed`` (leading by the claim at ``failed_claim``) failed
        and the producer was dropped: wait for the claim that follows, ours (True: a new
        producer leads) or another member's, committed (False); None when ``deadline``
        passes first. Either claim re-committed whatever the failed transaction left in the
        log, so what is committed then is final for it."""
        with self.lock:
            while True:
                if self.producer is not None and self.producer is not failed:
                    return True
                other = successor(self._view, failed_claim)
                if other is not None and other != self.member:
                    return False
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stop.is_set():
                    return None
                self.lock.wait(min(remaining, 0.05))

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

    def drop_producer(self, producer: Producer) -> None:
        """After a failed transaction (under ``write_lock``): the election thread makes a new
        producer and claims again."""
        self._drop(producer)


class _Phases:
    """Seconds spent in each phase of a claim, for the log (where a failover's time goes)."""

    def __init__(self) -> None:
        self._last = time.monotonic()
        self._spent: list[tuple[str, float]] = []

    def mark(self, phase: str) -> None:
        now = time.monotonic()
        self._spent.append((phase, now - self._last))
        self._last = now

    def __str__(self) -> str:
        return ", ".join(f"{phase} {spent:.3f}s" for phase, spent in self._spent)


def write_error(action: str, exc: Exception) -> errors.RegistryError:
    """The registry error for a failed Kafka call: 50002 timeouts, 50004 a fenced leader,
    42209 a record too large, 50001 the rest."""
    err = exc.args[0] if exc.args and isinstance(exc.args[0], KafkaError) else None
    code = err.code() if err is not None else None
    if code in _TIMEOUT_CODES:
        return errors.operation_timeout(f"Timed out {action}: {err}")
    if code in _FENCED_CODES:
        # Confluent's answer of an instance that is not the leader: a follower that forwarded
        # the write sends it to the new leader instead of failing it
        return errors.unknown_leader(f"This instance is no longer the leader: {err}")
    if code in _TOO_LARGE_CODES:
        return errors.schema_too_large(f"Schema too large for the Kafka topic: {err}")
    if isinstance(exc, BufferError):
        return errors.store_error(f"Error while {action}: producer queue is full")
    return errors.store_error(f"Error while {action}: {err or exc}")
