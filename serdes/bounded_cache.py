"""A least-recently-used cache with an optional time to live (the client's latest caches)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any


class BoundedCache:
    """LRU with an optional time to live; guarded by the caller's lock."""

    def __init__(self, capacity: int, ttl: float | None) -> None:
        self.capacity = max(1, capacity)
        self.ttl = ttl
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    def get(self, key: Any) -> Any:
        item = self._items.get(key)
        if item is None:
            return None
        expires, value = item
        if self.ttl is not None and time.monotonic() >= expires:
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return value

    def put(self, key: Any, value: Any) -> None:
        expires = time.monotonic() + self.ttl if self.ttl is not None else 0.0
        self._items[key] = (expires, value)
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def discard_where(self, pred: Callable[[Any], bool]) -> None:
        for key in [k for k in self._items if pred(k)]:
            del self._items[key]

    def clear(self) -> None:
        self._items.clear()
