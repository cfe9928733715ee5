"""A file whose parsed content is reloaded when the file changes (checked on every use:
one ``stat`` call, about a microsecond)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class WatchedFile(Generic[T]):
    """``get()`` returns ``load(text)`` of the file's current content. A change that does not
    parse keeps the previous content (and logs why); a file that is unreadable at start fails."""

    def __init__(self, path: str, load: Callable[[str], T]) -> None:
        self.path = path
        self._load = load
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self.generation = 0
        self._value: T = self._read()

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _read(self) -> T:
        stamp = self._signature()
        with open(self.path, encoding="utf-8") as handle:
            value = self._load(handle.read())
        self._stamp = stamp
        self.generation += 1
        return value

    def get(self) -> T:
        stamp = self._signature()
        if stamp is not None and stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    try:
                        self._value = self._read()
                        log.info("reloaded %s", self.path)
                    except (OSError, ValueError) as exc:
                        self._stamp = stamp  # do not retry until it changes again
                        log.error("keeping the previous %s: %s", self.path, exc)
        return self._value
