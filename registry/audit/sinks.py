"""Where audit events go: small plug-ins registered by name, as formats are.

A sink factory takes the settings and returns a sink, or ``None`` when the settings do not turn
it on; every sink turned on receives every event. Built in: ``file`` (JSON lines, rotated by
size), ``stdout`` and ``kafka`` (:mod:`registry.audit.kafka_sink`). Another package adds one with
:func:`register_sink`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Protocol

from registry.settings import Settings

log = logging.getLogger(__name__)


class SinkError(Exception):
    """An event could not be written (the sink is unavailable)."""


class Sink(Protocol):
    name: str

    def write(self, line: bytes, event: dict[str, object]) -> None:
        """Write one event (``line``: its JSON form, without the newline); raise
        :class:`SinkError` when it cannot be written now. Called on the event loop: never
        blocks for long (a sink that waits for a network answers later, see ``confirm``)."""

    async def confirm(self) -> None:
        """Wait until the events written so far are durable where the sink keeps them, raising
        :class:`SinkError` if they cannot be (fail-closed mode waits for this before an answer
        is sent)."""

    def healthy(self) -> bool:
        """Whether the sink can take events now (fail-closed mode refuses writes otherwise)."""

    def close(self) -> None: ...


SinkFactory = Callable[[Settings], "Sink | None"]
_FACTORIES: dict[str, SinkFactory] = {}


def register_sink(name: str, factory: SinkFactory) -> None:
    """Make ``factory`` one of the sinks :func:`open_sinks` considers."""
    _FACTORIES[name] = factory


def sink_names() -> list[str]:
    _builtins()
    return list(_FACTORIES)


def open_sinks(settings: Settings) -> list[Sink]:
    """The sinks the settings turn on."""
    _builtins()
    out = []
    for factory in _FACTORIES.values():
        sink = factory(settings)
        if sink is not None:
            out.append(sink)
    return out


def _builtins() -> None:
    if "file" in _FACTORIES:
        return
    register_sink("file", FileSink.from_settings)
    register_sink("stdout", StdoutSink.from_settings)
    from registry.audit.kafka_sink import KafkaSink

    register_sink("kafka", KafkaSink.from_settings)


class FileSink:
    """JSON lines appended to ``path``; past ``max_bytes`` the file becomes ``path.1`` (the
    previous ``path.1`` becomes ``path.2``, ...) and ``backups`` old files are kept. Each line
    is flushed to the operating system before :meth:`write` returns."""

    name = "file"

    def __init__(self, path: str, max_bytes: int, backups: int, fsync: bool = False) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self.fsync = fsync
        self._file: IO[bytes] | None = None
        self._size = 0
        self._failed = False
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> FileSink | None:
        if not settings.audit_file:
            return None
        return cls(
            settings.audit_file,
            settings.audit_file_max_bytes,
            settings.audit_file_backups,
            settings.audit_file_fsync,
        )

    def _open(self) -> IO[bytes]:
        if self._file is None:
            directory = os.path.dirname(self.path)
            if directory:
                os.makedirs(directory, exist_ok=True)
            self._file = open(self.path, "ab")  # noqa: SIM115 (kept open between events)
            self._size = self._file.tell()
        return self._file

    def write(self, line: bytes, event: dict[str, object]) -> None:
        data = line + b"\n"
        with self._lock:
            try:
                handle = self._open()
                if self.max_bytes > 0 and self._size and self._size + len(data) > self.max_bytes:
                    handle = self._rotate()
                handle.write(data)
                handle.flush()
                if self.fsync:
                    os.fsync(handle.fileno())
                self._size += len(data)
            except OSError as exc:
                self._failed = True
                self._drop_handle()
                raise SinkError(f"audit file {self.path}: {exc}") from exc
            self._failed = False

    def _rotate(self) -> IO[bytes]:
        self._drop_handle()
        if self.backups > 0:
            for n in range(self.backups - 1, 0, -1):
                older = f"{self.path}.{n}"
                if os.path.exists(older):
                    os.replace(older, f"{self.path}.{n + 1}")
            os.replace(self.path, f"{self.path}.1")
        else:
            os.truncate(self.path, 0)
        return self._open()

    def _drop_handle(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    async def confirm(self) -> None:
        return None  # written and flushed by write()

    def healthy(self) -> bool:
        if not self._failed:
            return True
        with self._lock:  # try again: the disk may have room, the directory may exist again
            try:
                self._open()
            except OSError:
                return False
            self._failed = False
            return True

    def close(self) -> None:
        with self._lock:
            self._drop_handle()


class StdoutSink:
    """One JSON line per event on standard output (containers)."""

    name = "stdout"

    def __init__(self, stream: IO[bytes] | None = None) -> None:
        self.stream = stream

    @classmethod
    def from_settings(cls, settings: Settings) -> StdoutSink | None:
        return cls() if settings.audit_stdout else None

    def write(self, line: bytes, event: dict[str, object]) -> None:
        stream = self.stream or sys.stdout.buffer
        try:
            stream.write(line + b"\n")
            stream.flush()
        except (OSError, ValueError) as exc:
            raise SinkError(f"audit stdout: {exc}") from exc

    async def confirm(self) -> None:
        return None

    def healthy(self) -> bool:
        return True

    def close(self) -> None:
        return None
