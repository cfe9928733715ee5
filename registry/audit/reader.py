"""Reading the file sink back: its rotated files in order, and filters on the events (by
subject, principal, time range, outcome). Used by ``schema-registry audit`` and by the
subject history endpoint the web UI shows."""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def audit_files(path: str) -> list[str]:
    """``path`` and its rotated files, oldest first."""
    backups = []
    n = 1
    while os.path.exists(f"{path}.{n}"):
        backups.append(f"{path}.{n}")
        n += 1
    files = list(reversed(backups))
    if os.path.exists(path):
        files.append(path)
    return files


def read_lines(paths: Iterable[str]) -> Iterator[dict[str, Any]]:
    for name in paths:
        try:
            handle = open(name, "rb")  # noqa: SIM115
        except FileNotFoundError:  # rotated away meanwhile
            continue
        with handle:
            yield from parse_lines(handle)


def parse_lines(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # a line cut short by a crash
        if isinstance(event, dict):
            yield event


def parse_time(text: str, now: float | None = None) -> str:
    """An ISO 8601 time (``2026-11-29``, ``2026-11-29T10:00:00Z``) or a duration ago (``30m``,
    ``2h``, ``7d``) as the events write their ``time`` (UTC, compared as text)."""
    text = text.strip()
    match = _RELATIVE.match(text)
    if match:
        at = (now if now is not None else time.time()) - float(match[1]) * _UNITS[match[2]]
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"
    if not re.match(r"^\d{4}-\d{2}-\d{2}", text):
        raise ValueError(f"not a time: {text!r} (use 2026-11-29T10:00:00Z, or 30m, 2h, 7d ago)")
    text = text.replace(" ", "T")
    if text.endswith("+00:00"):
        text = text[:-6]
    return text.rstrip("Z")


@dataclass(frozen=True)
class EventFilter:
    #: a subject name or glob (``orders-*``); matches the qualified subject or its name
    subject: str | None = None
    principal: str | None = None
    #: lower and upper bounds of ``time`` as :func:`parse_time` gives them
    since: str | None = None
    until: str | None = None
    #: success, failure or denied
    outcome: str | None = None

    def matches(self, event: dict[str, Any]) -> bool:
        data = event.get("data") or {}
        if self.subject is not None:
            subject = (data.get("request") or {}).get("subject")
            if not subject or not (
                fnmatch.fnmatchcase(subject, self.subject)
                or fnmatch.fnmatchcase(subject.rsplit(":", 1)[-1], self.subject)
            ):
                return False
        if self.principal is not None:
            who = (data.get("authenticationInfo") or {}).get("principal")
            if who != self.principal:
                return False
        stamp = str(event.get("time", ""))
        if self.since is not None and stamp < self.since:
            return False
        if self.until is not None and stamp.rstrip("Z") > self.until:
            return False
        outcome = (data.get("result") or {}).get("outcome")
        return self.outcome is None or outcome == self.outcome


def select(path: str, where: EventFilter, last: int | None = None) -> list[dict[str, Any]]:
    """The events of the file sink at ``path`` matching ``where``, oldest first (the ``last``
    ones when given)."""
    found: deque[dict[str, Any]] = deque(maxlen=last)
    for event in read_lines(audit_files(path)):
        if where.matches(event):
            found.append(event)
    return list(found)


def subject_history(path: str, subject: str, limit: int = 200) -> list[dict[str, Any]]:
    """A subject's events, newest first, without what a subject's reader need not see (the
    caller's address and user agent)."""
    found: deque[dict[str, Any]] = deque(maxlen=limit)
    for event in read_lines(audit_files(path)):
        if ((event.get("data") or {}).get("request") or {}).get("subject") == subject:
            found.append(event)
    out = []
    for event in reversed(found):
        data = event.get("data") or {}
        request = data.get("request") or {}
        out.append(
            {
                "time": event.get("time"),
                "id": event.get("id"),
                "operation": data.get("methodName"),
                "principal": (data.get("authenticationInfo") or {}).get("principal"),
                "method": request.get("method"),
                "path": request.get("path"),
                "version": request.get("version"),
                "schemaId": request.get("schemaId"),
                "schemaType": request.get("schemaType"),
                "outcome": (data.get("result") or {}).get("outcome"),
                "status": (data.get("result") or {}).get("status"),
                "errorCode": (data.get("result") or {}).get("errorCode"),
                "message": (data.get("result") or {}).get("message"),
                "changed": (data.get("state") or {}).get("changed"),
            }
        )
    return out
