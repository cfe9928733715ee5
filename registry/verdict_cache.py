"""Compatibility verdicts already reached, so a registration's check inside the write lock is a
look-up: the registration checks once before the lock (``registry.registration``) and again,
against the state as it then is, inside it.

A verdict is keyed by the parsed new schema and the parsed previous versions it was compared
with (by identity: a parsed schema is immutable and the parse cache hands out one object per
text, references and strictness), the previous versions' numbers (they are in the messages), the
level, ``validateFields`` and the compatibility policy. The entries hold the parsed schemas only
weakly: an entry whose schemas have left the parse cache (and been collected) is never a hit,
and a new object at a reused address is not mistaken for the old one. Bounded by entries and by
the characters of the messages kept.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Any

from registry.compatibility import PreviousSchema
from registry.formats.base import ParsedSchema

#: entries kept, and characters of messages kept over all entries
MAX_ENTRIES = 4096
MAX_MESSAGE_CHARS = 4_000_000

_Key = tuple[Any, ...]
_Entry = tuple[tuple["weakref.ref[ParsedSchema]", ...], tuple[str, ...], int]


class VerdictCache:
    """Thread-safe LRU of compatibility messages (an empty list: compatible)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_MESSAGE_CHARS) -> None:
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._max_entries = max_entries
        self._max_chars = max_chars
        self._chars = 0
        self.hits = 0
        self.misses = 0

    @staticmethod
    def _key(
        new: ParsedSchema, previous: Sequence[PreviousSchema], settings: Hashable
    ) -> tuple[_Key, list[ParsedSchema]]:
        schemas = [new, *(p.schema for p in previous)]
        key = (
            id(new),
            tuple((id(p.schema), p.version) for p in previous),
            settings,
        )
        return key, schemas

    def get(
        self, new: ParsedSchema, previous: Sequence[PreviousSchema], settings: Hashable
    ) -> list[str] | None:
        key, schemas = self._key(new, previous, settings)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not all(
                ref() is schema for ref, schema in zip(entry[0], schemas, strict=True)
            ):
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return list(entry[1])

    def put(
        self,
        new: ParsedSchema,
        previous: Sequence[PreviousSchema],
        settings: Hashable,
        messages: Sequence[str],
    ) -> None:
        key, schemas = self._key(new, previous, settings)
        chars = sum(len(m) for m in messages)
        if chars > self._max_chars // 4:
            return  # one huge answer would push out everything else
        try:
            refs = tuple(weakref.ref(schema) for schema in schemas)
        except TypeError:  # a parsed form that cannot be weakly referenced: not cached
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._chars -= old[2]
            self._entries[key] = (refs, tuple(messages), chars)
            self._chars += chars
            while self._entries and (
                len(self._entries) > self._max_entries or self._chars > self._max_chars
            ):
                _, (_, _, dropped) = self._entries.popitem(last=False)
                self._chars -= dropped

    def __len__(self) -> int:
        return len(self._entries)
