"""A bound on the work one request spends on schemas (parsing and compatibility checking).

The HTTP layer opens an :class:`Allowance` for a request that carries a schema (the CPU seconds it
may spend, and an event set when the client goes away); the walkers that do work proportional to
a schema (the JSON Schema diff, the Avro and Protobuf checkers, the parsers) call :func:`charge`
as they go. When the allowance is spent, or the client has gone, :func:`charge` raises
:class:`WorkLimitExceeded` (a 422 naming the limit) and the work stops where it is.

The allowance travels in a context variable, so it reaches the worker thread the request's
schema work runs in (anyio copies the context into it); code run without one is not limited.
The allowance is spent by the worker thread's own CPU time (``time.thread_time``) or by the
wall-clock time since the work began (a loaded machine), whichever runs out first. Every few
dozen units of work the walker also gives up the GIL for a moment, so the event loop (``/live``,
other requests) is never kept waiting behind a long check.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from registry.errors import RegistryError

#: the setting that names the limit in messages
SETTING = "SCHEMA_REGISTRY_MAX_SCHEMA_WORK_SECONDS"
#: calls to :func:`charge` between two looks at the clock
_STRIDE = 64


class WorkLimitExceeded(RegistryError):
    """The request's schema work went over its allowance (or its client went away)."""

    def __init__(self, message: str) -> None:
        super().__init__(42201, message)


class Cancelled:
    """Set once the request's client has gone (``threading.Event``'s ``set``/``is_set``, at a
    tenth of its cost: one is made per schema request and nobody waits on it)."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


class Allowance:
    """CPU seconds one request may spend on schema work, per worker thread it runs in."""

    __slots__ = ("_began", "_calls", "_home", "_starts", "cancelled", "seconds")

    def __init__(
        self, seconds: float, cancelled: threading.Event | Cancelled | None = None
    ) -> None:
        self.seconds = seconds
        #: the thread that made it (the event loop's): work there needs no GIL hand-over
        self._home = threading.get_ident()
        self.cancelled = cancelled or Cancelled()
        self._starts: dict[int, float] = {}
        self._began: float | None = None
        self._calls = 0

    def charge(self) -> None:
        self._calls += 1
        if self._calls % _STRIDE:
            return
        if threading.get_ident() != self._home:
            time.sleep(0)  # let the event loop take the GIL
        self.check()

    def exclude(self, seconds: float) -> None:
        """Leave ``seconds`` of waiting (a write queued for the write lock) out of the wall
        clock: the allowance bounds the request's work, not its turn in the queue."""
        if self._began is not None:
            self._began += seconds

    def tick(self) -> None:
        self._calls += 1
        if self._calls % _STRIDE:
            return
        if threading.get_ident() != self._home:
            time.sleep(0)
        if self.cancelled.is_set():
            raise WorkLimitExceeded("The client closed the connection; the request was abandoned")

    def check(self) -> None:
        if self.cancelled.is_set():
            raise WorkLimitExceeded("The client closed the connection; the request was abandoned")
        if self.seconds <= 0:
            return
        now = time.thread_time()
        start = self._starts.setdefault(threading.get_ident(), now)
        wall = time.monotonic()
        if self._began is None:
            self._began = wall
        if now - start > self.seconds or wall - self._began > self.seconds:
            raise WorkLimitExceeded(
                f"Invalid schema: checking it took more than the limit of {self.seconds:g} s "
                f"({SETTING})"
            )


_current: ContextVar[Allowance | None] = ContextVar("schema_work_allowance", default=None)


def charge() -> None:
    """Count one unit of schema work against the current request's allowance (if any)."""
    allowance = _current.get()
    if allowance is not None:
        allowance.charge()


def exclude_wait(seconds: float) -> None:
    """:meth:`Allowance.exclude` on the current request's allowance (if any)."""
    allowance = _current.get()
    if allowance is not None:
        allowance.exclude(seconds)


def tick() -> None:
    """A step of work that is linear in the input (bounded by the size limits, so not counted
    against the allowance): give the GIL back now and then, and stop if the client has gone."""
    allowance = _current.get()
    if allowance is not None:
        allowance.tick()


def current() -> Allowance | None:
    return _current.get()


@contextmanager
def allowed(allowance: Allowance | None) -> Iterator[Allowance | None]:
    """Run the block (and the worker threads it starts through anyio) under ``allowance``."""
    token = _current.set(allowance)
    try:
        yield allowance
    finally:
        _current.reset(token)
