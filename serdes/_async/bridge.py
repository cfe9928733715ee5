"""Run the sync serdes code as a coroutine: its I/O is awaited on the event loop.

The one implementation of every codec, cache and rule is the sync one. An async call runs it
in a greenlet; where that code reaches I/O (an HTTP request, a back-off sleep, an async
subject-name strategy), ``await_only`` hands the awaitable to the coroutine driving the
greenlet, which awaits it on the event loop and resumes the sync code with the result (or
raises its exception there). Between two I/O points the sync code runs exactly as it does
synchronously, so the async faces write and read the same bytes by construction.

Creating a greenlet costs tens of microseconds, switching to one about one: workers are kept
(per thread) and reused, so a call costs one switch pair when it needs no I/O. A worker runs in
the caller's ``contextvars`` context, so context variables behave as in the sync call.

The technique is SQLAlchemy's asyncio extension's; this module is written for serdes.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import greenlet

__all__ = ["LoopLock", "MissingGreenletError", "await_only", "run_sync"]

T = TypeVar("T")

_AWAIT, _DONE, _RAISED = 0, 1, 2
_IDLE_WORKERS = 32  # kept per thread; more concurrent calls create (and drop) extra ones


class MissingGreenletError(RuntimeError):
    """An async-backed object was used synchronously, outside an ``await``ed serdes call."""


class _Worker(greenlet.greenlet):
    """A greenlet that runs sync calls for ``run_sync``, one after another."""


def _serve(job: tuple[Callable[..., Any], tuple[Any, ...]]) -> None:
    switch = greenlet.getcurrent().parent.switch
    while True:
        fn, args = job
        try:
            outcome: tuple[int, Any] = (_DONE, fn(*args))
        except greenlet.GreenletExit:
            raise
        except BaseException as exc:
            outcome = (_RAISED, exc)
        job = fn = args = None  # type: ignore[assignment]  # hold no references while idle
        job = switch(outcome)
        switch = greenlet.getcurrent().parent.switch  # the next caller may be another greenlet


class _Idle(threading.local):
    def __init__(self) -> None:
        self.workers: list[_Worker] = []


_idle = _Idle()


def await_only(awaitable: Awaitable[T]) -> T:
    """From sync code driven by ``run_sync``: await ``awaitable`` on the loop, return its result."""
    current = greenlet.getcurrent()
    if not isinstance(current, _Worker):
        close = getattr(awaitable, "close", None)
        if close is not None:
            close()  # no "coroutine was never awaited" warning on top of the error
        raise MissingGreenletError(
            "this serdes object is async: call it with 'await' (its I/O runs on the event loop)"
        )
    return current.parent.switch((_AWAIT, awaitable))  # type: ignore[no-any-return]


async def run_sync(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)``, awaiting every awaitable it passes to ``await_only``."""
    if kwargs:
        fn = functools.partial(fn, **kwargs)
    idle = _idle.workers
    here = greenlet.getcurrent()
    worker = idle.pop() if idle else _Worker(_serve, here)
    if worker.parent is not here:
        worker.parent = here
    worker.gr_context = here.gr_context
    kind, payload = worker.switch((fn, args))
    while kind == _AWAIT:
        try:
            value = await payload
        except BaseException as exc:  # CancelledError included: the sync code unwinds
            kind, payload = worker.throw(exc)
        else:
            kind, payload = worker.switch(value)
    if len(idle) < _IDLE_WORKERS:
        idle.append(worker)
    if kind == _RAISED:
        raise payload
    return payload  # type: ignore[no-any-return]


class LoopLock:
    """Stands in for a ``threading.Lock`` in sync code that ``run_sync`` drives.

    The calls run interleaved on one thread: a thread lock held across a registry request
    would block the event loop when another call wants it. This one makes the waiting call
    await its turn on the loop instead (first come, first served), and costs nothing when free.
    """

    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def __enter__(self) -> LoopLock:
        if not self._held:
            self._held = True
            return self
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await_only(waiter)  # resolved by __exit__, which hands the lock over
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.__exit__()  # handed over just as this call was cancelled: pass it on
            else:
                waiter.cancel()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._held = False
