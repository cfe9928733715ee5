"""An undo journal for the in-memory state (the write path's tentative batch, ``Registry.write``).

While a journal is open, every change to the state is recorded with the value it replaced, so
:meth:`Journal.rollback` can put everything back, newest first. Two kinds of change exist:

- attribute assignments on the state's containers (:class:`Journaled` subclasses: ``State``,
  ``ContextState``, ``KeyIndex``) are recorded by :meth:`Journaled.__setattr__` itself, whatever
  code makes them (``self.associations = {...}``, ``self.skipped += 1``);
- item changes of their dicts go through :meth:`Journal.put` / :meth:`Journal.drop`, and
  attribute changes of other objects (a ``SchemaVersion``'s ``deleted``) through
  :meth:`Journal.set`.

A record handler that changed a dict in place without :meth:`Journal.put` would escape the
journal: tests/test_group_commit.py applies every record kind tentatively and compares a full
snapshot of the state before and after the rollback.
"""

from __future__ import annotations

from typing import Any

_MISSING: Any = object()


class Journal:
    """The changes made since :meth:`begin` (``entries`` is None while no batch is open)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[tuple[Any, Any, Any, bool]] | None = None

    @property
    def active(self) -> bool:
        return self.entries is not None

    def begin(self) -> None:
        self.entries = []

    def end(self) -> None:
        self.entries = None

    def rollback(self) -> None:
        """Undo every recorded change, newest first, and close the journal."""
        entries, self.entries = self.entries, None
        for target, name, old, is_attr in reversed(entries or []):
            if is_attr:
                if old is _MISSING:
                    vars(target).pop(name, None)
                else:
                    object.__setattr__(target, name, old)
            elif old is _MISSING:
                target.pop(name, None)
            else:
                target[name] = old

    def put(self, table: dict[Any, Any], name: Any, value: Any) -> None:
        if self.entries is not None:
            self.entries.append((table, name, table.get(name, _MISSING), False))
        table[name] = value

    def drop(self, table: dict[Any, Any], name: Any) -> None:
        if name not in table:
            return
        if self.entries is not None:
            self.entries.append((table, name, table[name], False))
        del table[name]

    def set(self, target: Any, name: str, value: Any) -> None:
        """Assign an attribute of an object that is not :class:`Journaled` (slotted records)."""
        if self.entries is not None:
            self.entries.append((target, name, getattr(target, name), True))
        setattr(target, name, value)


class Journaled:
    """A state container whose attribute assignments are journaled while its ``journal`` (an
    attribute set last, e.g. a dataclass's last field) is open."""

    journal: Journal | None

    def __setattr__(self, name: str, value: Any) -> None:
        journal = self.__dict__.get("journal")
        if journal is not None and journal.entries is not None:
            journal.entries.append((self, name, self.__dict__.get(name, _MISSING), True))
        object.__setattr__(self, name, value)
