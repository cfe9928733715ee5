"""The exporter records applied to the state: definitions, progress, and the SQL stores' lease.

Copy-on-write attribute assignments only, so the state's undo journal records every change
(``registry.journal``) and readers iterate without the write lock."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from registry import records
from registry.exporters.model import STARTING, Exporter
from registry.journal import Journal, Journaled
from registry.records import Record, RecordKey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Progress:
    """An EXPORTER_STATE record: where an exporter is in the log and how it is doing.
    ``generation`` changes on every pause, resume, reset and update, so the engine's progress
    writes for an older generation are refused (compare-and-set)."""

    state: str = STARTING
    offset: int = -1
    trace: str = ""
    generation: int = 0
    #: records the exporter has sent to the destination since its last reset
    exported: int = 0
    #: time of the last record applied (ms)
    ts: int = 0

    def value(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "offset": self.offset,
            "trace": self.trace or None,
            "generation": self.generation,
            "exported": self.exported,
        }


@dataclass(frozen=True)
class Lease:
    """Which instance runs the exporters (SQL stores), until when (ms since the epoch)."""

    owner: str
    expires: int


@dataclass
class ExporterIndex(Journaled):
    definitions: dict[str, Exporter] = field(default_factory=dict)
    progress: dict[str, Progress] = field(default_factory=dict)
    lease: Lease | None = None
    #: the raw keys tombstones must reuse, by (keytype, name)
    keys: dict[tuple[str, str], bytes] = field(default_factory=dict)
    skipped: int = 0
    journal: Journal | None = field(default=None, repr=False, compare=False)

    def apply(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        name = key.subject or ""
        try:
            if key.keytype == records.EXPORTER:
                self._definition(name, value)
            elif key.keytype == records.EXPORTER_STATE:
                self._progress(name, value, record)
            else:
                self.lease = (
                    None if value is None else Lease(str(value["owner"]), int(value["expires"]))
                )
        except (KeyError, TypeError, ValueError) as exc:
            self.skipped += 1
            log.warning(
                "skipping malformed %s record at offset %s: %s", key.keytype, record.offset, exc
            )
            return
        ident = (key.keytype, name)
        if value is None:
            self.keys = {k: v for k, v in self.keys.items() if k != ident}
        else:
            self.keys = {**self.keys, ident: key.to_bytes()}

    def _definition(self, name: str, value: dict[str, Any] | None) -> None:
        if value is None:
            self.definitions = {k: v for k, v in self.definitions.items() if k != name}
            return
        self.definitions = {**self.definitions, name: Exporter.from_value(value)}

    def _progress(self, name: str, value: dict[str, Any] | None, record: Record) -> None:
        if value is None:
            self.progress = {k: v for k, v in self.progress.items() if k != name}
            return
        progress = Progress(
            state=str(value["state"]),
            offset=int(value.get("offset", -1)),
            trace=str(value.get("trace") or ""),
            generation=int(value.get("generation", 0)),
            exported=int(value.get("exported", 0)),
            ts=record.timestamp,
        )
        self.progress = {**self.progress, name: progress}
