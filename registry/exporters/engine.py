"""The threads that run exporters, on the leader only.

Who runs them: on a store that elects a leader (``is_leader``: the Kafka store) the instance
that leads, handed over with the leadership; on a SQL store the instance holding the
EXPORTER_LEASE record, taken and renewed through ``Registry.write`` (decided under the store's
write lock, so two instances never both hold it) and lost when not renewed within
``exporter_lease_seconds``.

One worker thread per exporter follows the log from the exporter's stored offset (a cursor:
the SQL store itself, or a read-only reader of the Kafka topic) and sends each record's
requests (``registry.exporters.actions``) to the destination, many in flight at once on the
worker's event loop (``Worker._send_batch``: a destination subject's records in log order,
references and global changes as barriers). After each batch of up to ``BATCH`` records it
writes the offset of the last record before the first one not yet acknowledged
(``service.record_progress``, refused when a pause, reset or update came first). A restart or
a failover resumes from that offset: a record is exported again at most when the instance died
between the destination's answer and the progress write (or when a later record of another
subject was answered before an earlier one failed), and every request is idempotent (a
version is registered with its id and version), so nothing is lost and nothing is duplicated.

A destination that cannot be reached or refuses a request puts the exporter in ERROR (the
reason in ``trace``) and the worker retries the same record with exponential back-off (1 s up
to 60 s); a success puts it back in RUNNING.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from registry import records
from registry.exporters import actions, secrets, service
from registry.exporters.destination import Destination, DestinationError
from registry.exporters.index import Lease, Progress
from registry.exporters.model import ERROR, PAUSED, RUNNING, STARTING

if TYPE_CHECKING:
    from registry.core import Draft, Registry
    from registry.records import Record

log = logging.getLogger(__name__)

BATCH = 2000
IDLE_WAIT = 0.05
CONTROL_INTERVAL = 0.5
MAX_BACKOFF = 60.0


@dataclass
class Stats:
    """What the metrics and the UI show of a running exporter (this instance's view)."""

    exported: int = 0
    errors: int = 0
    lag_records: int = 0
    lag_seconds: float = 0.0


class LogCursor:
    """Reads the record log after an offset: the store itself when its reads are stateless
    (SQL), a read-only reader of its topic otherwise (Kafka: the registry's own reader hands
    each record to the state once)."""

    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self._own: Any = None
        self._position = -1

    def read_after(self, offset: int, limit: int) -> list[Record]:
        store = self._registry.store
        if not hasattr(store, "is_leader"):
            return store.read_after(offset, limit)
        if self._own is not None and offset < self._position:
            self.close()  # a reset: read the topic again from its start
        if self._own is None:
            from registry.store.kafka import KafkaLogStore

            self._own = KafkaLogStore(self._registry.settings.store, elect=False)
            self._own.open()
        found = [r for r in self._own.read_after(offset, limit) if not r.log]
        self._position = offset
        return found

    def close(self) -> None:
        if self._own is not None:
            own, self._own = self._own, None
            own.close()


class Worker:
    """Runs one exporter until stopped or deleted."""

    def __init__(self, registry: Registry, name: str) -> None:
        self.registry = registry
        self.name = name
        self.stats = Stats()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"exporter-{name}", daemon=True)
        self._cursor = LogCursor(registry)
        self._destination: Destination | None = None
        self._imported: set[str] = set()
        self._generation: int | None = None
        self._position = -1
        self._exported = 0
        self._backoff = 0.0
        #: the worker thread's own event loop, where the destination's requests run
        self._loop = asyncio.new_event_loop()

    def start(self) -> None:
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        self._stop.set()
        if wait and self._thread is not threading.current_thread():
            self._thread.join(timeout=15)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if not self._step():
                    break
        except Exception:
            log.exception("exporter %s stopped", self.name)
        finally:
            self._cursor.close()
            if self._destination is not None:
                self._destination.close()
            self._loop.run_until_complete(asyncio.sleep(0))  # let the transports close
            self._loop.close()

    def _step(self) -> bool:
        """One round; False when the exporter is gone."""
        index = self.registry.state.exporters
        exporter = index.definitions.get(self.name)
        progress = index.progress.get(self.name)
        if exporter is None or progress is None:
            return False
        if progress.generation != self._generation:
            self._restart(progress)
            if progress.state != PAUSED:
                try:
                    config = secrets.opened(exporter.config, self.registry.settings.exporter_secret)
                    self._destination = Destination(config)
                except (ValueError, OSError) as exc:  # another secret; unreadable TLS files
                    self._failed(f"cannot set up the destination client: {exc}", 0)
                    return True
        if progress.state == PAUSED or self._destination is None:
            self._stop.wait(0.2)
            return True
        batch = self._cursor.read_after(self._position, BATCH)
        self._measure(batch)
        if not batch:
            if progress.state == STARTING:
                self._record(RUNNING, "")
            self._stop.wait(IDLE_WAIT)
            return True
        cluster = self.registry.store.cluster_id()
        planned = [(r, actions.for_record(exporter, r, cluster)) for r in batch]
        sent, failure = self._export_batch(planned)
        if failure is not None:
            self._failed(failure, sent)
            return True
        self._exported += sent
        self.stats.exported += sent
        self._backoff = 0.0
        if sent or progress.state != RUNNING or progress.trace:
            self._record(RUNNING, "")
        return True

    def _restart(self, progress: Progress) -> None:
        self._generation = progress.generation
        self._position = progress.offset
        self._exported = progress.exported
        self._imported = set()
        self._backoff = 0.0
        if self._destination is not None:
            self._destination.close()
            self._destination = None

    def _export_batch(
        self, planned: list[tuple[Record, list[actions.Request]]]
    ) -> tuple[int, str | None]:
        """Send a batch's requests (``_send_batch``); move ``_position`` to the last record
        before the first one not fully sent; return how many records were sent and the first
        failure in log order."""
        done, failure = self._loop.run_until_complete(self._send_batch(planned))
        for i, (record, _requests) in enumerate(planned):
            if i not in done:
                break
            self._position = record.offset
        return sum(1 for i in done if planned[i][1]), failure

    async def _send_batch(
        self, planned: list[tuple[Record, list[actions.Request]]]
    ) -> tuple[set[int], str | None]:
        """Many requests in flight, in the order that matters: one lane per destination
        subject, whose records (versions, deletes, its config and mode) are sent one after
        the other in log order; different lanes at once (up to the destination client's
        connections). A record with references, or one that is no subject's (a global or
        context config or mode), is a barrier: sent once everything before it is answered,
        and before anything after it. After a failure nothing later in the log is sent."""
        done: set[int] = set()
        failures: list[tuple[int, str]] = []
        lanes: dict[str, asyncio.Task[bool]] = {}
        pending: list[asyncio.Task[bool]] = []

        async def one(i: int, before: asyncio.Task[bool] | None) -> bool:
            if before is not None and not await before:
                return False
            if any(f < i for f, _ in failures):
                return False
            try:
                await self._export(planned[i][1])
            except DestinationError as exc:
                failures.append((i, str(exc)))
                return False
            done.add(i)
            return True

        for i, (_record, requests) in enumerate(planned):
            if failures:
                break
            if not requests:
                done.add(i)
                continue
            lane = _lane(requests)
            if lane is None:
                await asyncio.gather(*pending)
                pending, lanes = [], {}
                if not failures:
                    await one(i, None)
                continue
            task = asyncio.ensure_future(one(i, lanes.get(lane)))
            lanes[lane] = task
            pending.append(task)
        await asyncio.gather(*pending)
        return done, (min(failures)[1] if failures else None)

    async def _export(self, requests: list[actions.Request]) -> None:
        assert self._destination is not None
        for request in requests:
            subject = request.import_subject
            if subject is not None and subject not in self._imported:
                await self._destination.send(
                    actions.Request(
                        "PUT", f"/mode/{actions._path(subject)}?force=true", {"mode": "IMPORT"}
                    )
                )
                self._imported.add(subject)
            if request.path.startswith("/mode/"):
                self._imported.discard(_subject_of_mode_path(request.path))
            await self._destination.send(request)

    def _failed(self, trace: str, sent: int) -> None:
        self._exported += sent
        # the destination may have changed under us (a subject deleted there takes its IMPORT
        # mode along): the retry puts every subject in IMPORT mode again
        self._imported = set()
        self.stats.errors += 1
        log.warning("exporter %s: %s", self.name, trace)
        self._record(ERROR, trace)
        self._backoff = min(MAX_BACKOFF, max(1.0, self._backoff * 2))
        generation = self._generation
        deadline = time.monotonic() + self._backoff
        while not self._stop.is_set() and time.monotonic() < deadline:
            current = self.registry.state.exporters.progress.get(self.name)
            if current is None or current.generation != generation:
                return  # paused, resumed, reset, deleted: act on it now
            self._stop.wait(0.1)

    def _record(self, state: str, trace: str) -> None:
        assert self._generation is not None
        progress = Progress(state, self._position, trace, self._generation, self._exported)
        service.record_progress(self.registry, self.name, self._generation, progress)

    def _measure(self, batch: list[Record]) -> None:
        self.stats.lag_records = max(0, self.registry.state.offset - self._position)
        if batch and self.stats.lag_records:
            self.stats.lag_seconds = max(0.0, time.time() - batch[0].timestamp / 1000)
        else:
            self.stats.lag_seconds = 0.0


def _lane(requests: list[actions.Request]) -> str | None:
    """The destination subject whose order ``requests`` must keep (their first request's
    path: ``/subjects/S/...``, ``/config/S``, ``/mode/S``); None for a barrier: a version with
    references, or a request that is no subject's."""
    for r in requests:
        if r.barrier or (isinstance(r.body, dict) and r.body.get("references")):
            return None
    parts = requests[0].path.split("?", 1)[0].split("/")
    return parts[2] if len(parts) > 2 and parts[2] else None


def _subject_of_mode_path(path: str) -> str:
    from urllib.parse import unquote

    return unquote(path.removeprefix("/mode/").split("?", 1)[0])


class Engine:
    """Starts a worker per exporter where the exporters run, stops them elsewhere."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.instance = uuid.uuid4().hex
        self.workers: dict[str, Worker] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="exporters", daemon=True)

    def start(self) -> None:
        if self.registry.settings.exporters:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=15)
        self._stop_workers(set(self.workers))
        self._release_lease()

    def stats(self) -> dict[str, Stats]:
        return {name: worker.stats for name, worker in self.workers.items()}

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._reconcile()
            except Exception:
                log.exception("exporter control loop failed")
            self._stop.wait(CONTROL_INTERVAL)

    def _reconcile(self) -> None:
        names = set(self.registry.state.exporters.definitions)
        here = bool(names) and self._runs_here()
        wanted = names if here else set()
        self._stop_workers({n for n, w in self.workers.items() if n not in wanted or not w.alive})
        for name in sorted(wanted - set(self.workers)):
            worker = Worker(self.registry, name)
            self.workers[name] = worker
            worker.start()

    def _stop_workers(self, names: set[str]) -> None:
        for name in names:
            worker = self.workers.pop(name, None)
            if worker is not None:
                worker.stop()

    # ---- who runs the exporters -----------------------------------------------------------

    def _runs_here(self) -> bool:
        store = self.registry.store
        if hasattr(store, "is_leader"):
            return bool(store.is_leader)
        return self._hold_lease()

    def _hold_lease(self) -> bool:
        ttl_ms = int(self.registry.settings.exporter_lease_seconds * 1000)
        lease = self.registry.state.exporters.lease
        now = _now_ms()
        if (
            lease is not None
            and lease.owner == self.instance
            and lease.expires - now > ttl_ms * 2 // 3
        ):
            return True
        if lease is not None and lease.owner != self.instance and lease.expires > now:
            return False
        me = self.instance

        def decide() -> tuple[list[Draft], bool]:
            current = self.registry.state.exporters.lease
            at = _now_ms()
            if current is not None and current.owner != me and current.expires > at:
                return [], False
            value = {"owner": me, "expires": at + ttl_ms}
            return [(records.exporter_key(records.EXPORTER_LEASE, ""), value)], True

        return self.registry.write(decide)

    def _release_lease(self) -> None:
        lease = self.registry.state.exporters.lease
        if (
            lease is None
            or lease.owner != self.instance
            or hasattr(self.registry.store, "is_leader")
        ):
            return
        me = self.instance

        def decide() -> tuple[list[Draft], None]:
            current = self.registry.state.exporters.lease
            if current is None or current.owner != me:
                return [], None
            return [(records.exporter_key(records.EXPORTER_LEASE, ""), None)], None

        try:
            self.registry.write(decide)
        except Exception:  # the store may be going away: the lease then expires
            log.debug("releasing the exporter lease failed", exc_info=True)


def _now_ms() -> int:
    return int(time.time() * 1000)


__all__ = ["Engine", "Lease", "Stats", "Worker"]
