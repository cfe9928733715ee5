"""Group commit: the queue of writes waiting for the store, and who commits them.

Writes that arrive while a commit is in flight queue up; whoever leads next takes the queue and
commits it as one batch (the registry's ``_commit_batch``: decided one after another, one store
transaction), so the answers are exactly those of running the writes one after another, at the
cost of one store transaction per batch.

Two kinds of writer share the queue:

* :meth:`GroupCommit.write`, from a thread: the writer waits for its answer; the first one to
  find nobody leading leads (commits batches until its own write is done), the others wait
  for the batch holding theirs, not for the write lock;
* :meth:`GroupCommit.write_async`, from the event loop: the write is queued and an asyncio
  future returned; a committer thread (started on first use) leads whenever the queue holds
  writes and nobody else leads, and answers all the event loop's writes of a batch with one
  wake-up of the loop. A registration thus costs no worker thread and no thread switch of its
  own.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any, TypeVar

from registry import errors

log = logging.getLogger(__name__)

T = TypeVar("T")
#: the most writes one batch (one store transaction) takes
MAX_BATCH = 1000


class Pending:
    """A write waiting in the queue: ``decide`` gives its records and its answer."""

    __slots__ = ("context", "decide", "done", "error", "future", "queued_at", "result", "staged")

    def __init__(self, decide: Callable[[], tuple[Sequence[Any], Any]]) -> None:
        self.decide = decide
        #: the writer's context (its work allowance, ``registry.budget``), in which it is decided
        self.context = contextvars.copy_context()
        self.queued_at = time.monotonic()
        self.done = False
        self.error: BaseException | None = None
        self.result: Any = None
        #: how many records its decision drafted
        self.staged = 0
        #: the event loop and future answering a :meth:`GroupCommit.write_async`
        self.future: tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]] | None = None


class GroupCommit:
    """The queue and its leaders; ``commit_batch`` decides and commits a batch, setting each
    write's ``result`` or ``error`` (it runs under ``write_lock``)."""

    def __init__(
        self, commit_batch: Callable[[list[Pending]], None], write_lock: threading.RLock
    ) -> None:
        self._commit_batch = commit_batch
        self._write_lock = write_lock
        self._lock = threading.Lock()
        #: signalled when a batch is done or the leader steps down (threads waiting for writes)
        self._changed = threading.Condition(self._lock)
        #: signalled when the committer thread may have to lead
        self._work = threading.Condition(self._lock)
        #: whether somebody is committing batches
        self._leading = False
        self.queue: list[Pending] = []
        self._committer: threading.Thread | None = None
        self._closed = False

    def write(self, decide: Callable[[], tuple[Sequence[Any], T]]) -> T:
        """Queue ``decide`` and return its result once its batch is committed (or raise its
        error)."""
        pending = Pending(decide)
        with self._changed:
            self.queue.append(pending)
            while self._leading and not pending.done:
                self._changed.wait()
            lead = not pending.done
            if lead:
                self._leading = True
        if lead:
            try:
                self._lead(lambda: pending.done)
            finally:
                self._step_down()
        assert pending.done
        if pending.error is not None:
            raise pending.error
        return pending.result  # type: ignore[no-any-return]

    def write_async(self, decide: Callable[[], tuple[Sequence[Any], T]]) -> asyncio.Future[T]:
        """Queue ``decide`` from the running event loop; the future answers its result or
        error once its batch is committed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        pending = Pending(decide)
        pending.future = (loop, future)
        with self._lock:
            if self._closed:
                raise errors.store_error("Error while writing to the store: the registry stopped")
            if self._committer is None:
                self._committer = threading.Thread(
                    target=self._run_committer, name="group-commit", daemon=True
                )
                self._committer.start()
            self.queue.append(pending)
            if not self._leading:
                self._work.notify()
        return future

    def close(self) -> None:
        """Stop the committer thread (after the batch it may be committing); writes still
        queued for it fail."""
        with self._lock:
            self._closed = True
            self._work.notify_all()
            committer = self._committer
        if committer is not None:
            committer.join(timeout=10)
        with self._lock:
            left = [p for p in self.queue if p.future is not None]
            self.queue[:] = [p for p in self.queue if p.future is None]
        for pending in left:
            pending.error = errors.store_error("Error while writing to the store")
            pending.done = True
        _answer(left)

    # ---- leading --------------------------------------------------------------------------

    def _run_committer(self) -> None:
        while True:
            with self._lock:
                while not self._closed and (self._leading or not self.queue):
                    self._work.wait()
                if self._closed:
                    return
                self._leading = True
            try:
                self._lead(lambda: False)
            except Exception:  # the batch's writes are answered; keep committing the next
                log.exception("committing a batch failed")
            finally:
                self._step_down()

    def _lead(self, done: Callable[[], bool]) -> None:
        """Commit batches until ``done()`` or the queue is empty."""
        with self._write_lock:
            while not done():
                with self._lock:
                    batch = self.queue[:MAX_BATCH]
                    del self.queue[:MAX_BATCH]
                if not batch:
                    return
                try:
                    self._commit_batch(batch)
                finally:
                    for queued in batch:  # whatever went wrong, nobody waits for ever
                        if not queued.done:
                            queued.error = queued.error or errors.store_error(
                                "Error while writing to the store"
                            )
                            queued.done = True
                    with self._changed:  # its threads answer now
                        self._changed.notify_all()
                    _answer(batch)

    def _step_down(self) -> None:
        with self._lock:
            self._leading = False
            self._changed.notify_all()  # a waiting thread leads next
            if any(p.future is not None for p in self.queue):
                self._work.notify()  # writes nobody's thread waits for: the committer's


def _answer(batch: list[Pending]) -> None:
    """Answer the event loops' writes of ``batch``: one wake-up of each loop."""
    by_loop: dict[asyncio.AbstractEventLoop, list[Pending]] = {}
    for pending in batch:
        if pending.future is not None:
            by_loop.setdefault(pending.future[0], []).append(pending)
    for loop, answered in by_loop.items():
        with suppress(RuntimeError):  # a closed loop: nobody waits for these answers
            loop.call_soon_threadsafe(_set_futures, answered)


def _set_futures(answered: list[Pending]) -> None:
    for pending in answered:
        assert pending.future is not None
        future = pending.future[1]
        if future.done():  # cancelled: the client went away
            continue
        if pending.error is not None:
            future.set_exception(pending.error)
        else:
            future.set_result(pending.result)
