"""Throttling of failed HTTP Basic attempts.

Every failed Basic attempt costs the server a scrypt verification (tens of milliseconds and
16 MiB by design), so an unthrottled client can both burn the server's CPU and guess passwords
as fast as the server hashes. :class:`Throttle` counts failures per (user name, client
address): after ``max_failures`` failures within ``window`` seconds the pair is locked out for
``lockout`` seconds, doubling with each further lock-out while the pair keeps failing, up to
``max_lockout``. While locked out, attempts are refused before any hashing, the correct password
included (otherwise a cached success would answer guesses for free). A success resets the pair.

Counters live in memory, at most ``max_entries`` of them (least recently used dropped first);
an entry is forgotten once ``window`` seconds have passed since its last failure and the end of
its lock-out. Each process counts on its own. The methods are called from the event loop only.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from registry.settings import Settings


@dataclass
class _Entry:
    #: failures since the window started (or since the last lock-out)
    failures: int
    window_start: float
    #: when the current (or last) lock-out ends; 0 if never locked
    locked_until: float
    #: lock-outs so far: the next one lasts lockout * 2**lockouts
    lockouts: int
    #: time of the last failure
    last: float


class Throttle:
    """Failure counters per (user, address); a ``clock`` returning seconds can be injected."""

    def __init__(
        self,
        *,
        max_failures: int,
        window: float,
        lockout: float,
        max_lockout: float,
        max_entries: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_failures < 0:
            raise ValueError(
                f"auth_max_failures must be >= 0 (0: no throttling), not {max_failures}"
            )
        if not window > 0:
            raise ValueError(f"auth_failure_window must be > 0 seconds, not {window}")
        if not lockout > 0:
            raise ValueError(f"auth_lockout must be > 0 seconds, not {lockout}")
        if not max_lockout >= lockout:
            raise ValueError(
                f"auth_lockout_max ({max_lockout}) must be >= auth_lockout ({lockout})"
            )
        if max_entries < 1:
            raise ValueError(f"auth_throttle_entries must be >= 1, not {max_entries}")
        self.max_failures = max_failures
        self.window = window
        self.lockout = lockout
        self.max_lockout = max_lockout
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[tuple[bytes, str], _Entry] = OrderedDict()

    @classmethod
    def from_settings(cls, settings: Settings) -> Throttle:
        return cls(
            max_failures=settings.auth_max_failures,
            window=settings.auth_failure_window,
            lockout=settings.auth_lockout,
            max_lockout=settings.auth_lockout_max,
            max_entries=settings.auth_throttle_entries,
        )

    @property
    def enabled(self) -> bool:
        return self.max_failures > 0

    def __len__(self) -> int:
        return len(self._entries)

    def retry_after(self, user: str, address: str) -> int:
        """Whole seconds until ``user`` may try again from ``address`` (0: now)."""
        if not self._entries:
            return 0
        key = _key(user, address)
        entry = self._entries.get(key)
        if entry is None:
            return 0
        now = self.clock()
        if self._stale(entry, now):
            del self._entries[key]
            return 0
        left = entry.locked_until - now
        return max(1, math.ceil(left)) if left > 0 else 0

    def failed(self, user: str, address: str) -> float:
        """Count a failed attempt; the lock-out in seconds it starts (0: none)."""
        if not self.enabled:
            return 0.0
        key = _key(user, address)
        now = self.clock()
        entry = self._entries.get(key)
        if entry is None or self._stale(entry, now):
            entry = _Entry(failures=0, window_start=now, locked_until=0.0, lockouts=0, last=now)
            self._entries[key] = entry
        self._entries.move_to_end(key)
        self._bound()
        if now - entry.window_start >= self.window:
            entry.failures, entry.window_start = 0, now
        entry.failures += 1
        entry.last = now
        if entry.failures < self.max_failures:
            return 0.0
        duration = min(self.lockout * 2.0 ** min(entry.lockouts, 64), self.max_lockout)
        entry.lockouts += 1
        entry.locked_until = now + duration
        entry.failures, entry.window_start = 0, entry.locked_until
        return duration

    def succeeded(self, user: str, address: str) -> None:
        """Forget the failures of ``user`` from ``address``."""
        if self._entries:
            self._entries.pop(_key(user, address), None)

    def _stale(self, entry: _Entry, now: float) -> bool:
        return now - max(entry.last, entry.locked_until) >= self.window

    def _bound(self) -> None:
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


def _key(user: str, address: str) -> tuple[bytes, str]:
    # a digest, so a client sending huge user names cannot make the counters large
    return hashlib.blake2b(user.encode("utf-8", "replace"), digest_size=16).digest(), address


def hash_gate(settings: Settings) -> asyncio.Semaphore:
    """The bound on password hashes computed at once: a flood of attempts waits here (in the
    event loop, holding no thread) instead of taking every worker thread."""
    if settings.auth_hash_concurrency < 1:
        raise ValueError(
            f"auth_hash_concurrency must be >= 1, not {settings.auth_hash_concurrency}"
        )
    return asyncio.Semaphore(settings.auth_hash_concurrency)
