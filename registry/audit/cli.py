"""``schema-registry audit``: the file sink's events, filtered, as a table or JSON lines;
``--follow`` keeps printing new ones (across rotations)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import orjson

from registry.audit.reader import EventFilter, audit_files, parse_lines, parse_time, select
from registry.settings import Settings

OUTCOMES = ("success", "failure", "denied")


def add_command(commands: Any) -> None:
    audit = commands.add_parser(
        "audit",
        help="show the audit trail (the file sink)",
        description="Print the audit events of the file sink (and its rotated files), oldest "
        "first, filtered.",
    )
    audit.add_argument("--file", help="audit file (default: env SCHEMA_REGISTRY_AUDIT_FILE)")
    audit.add_argument("--subject", help="a subject, or a glob such as 'orders-*'")
    audit.add_argument("--principal", help="the user or token subject")
    audit.add_argument("--since", help="from this time: 2026-11-29T10:00:00Z, or 30m, 2h, 7d ago")
    audit.add_argument("--until", help="up to this time (same forms)")
    audit.add_argument("--outcome", choices=OUTCOMES)
    audit.add_argument("-n", "--last", type=int, help="only the last N matching events")
    audit.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    audit.add_argument("--json", action="store_true", help="one JSON event a line")


def run(args: argparse.Namespace) -> int:
    path = args.file or Settings.from_env().audit_file
    if not path:
        print(
            "schema-registry audit: no audit file (--file or SCHEMA_REGISTRY_AUDIT_FILE)",
            file=sys.stderr,
        )
        return 2
    try:
        where = EventFilter(
            subject=args.subject,
            principal=args.principal,
            since=parse_time(args.since) if args.since else None,
            until=parse_time(args.until) if args.until else None,
            outcome=args.outcome,
        )
    except ValueError as exc:
        print(f"schema-registry audit: {exc}", file=sys.stderr)
        return 2
    if not audit_files(path) and not args.follow:
        print(f"schema-registry audit: {path} does not exist", file=sys.stderr)
        return 1
    show = _json_line if args.json else _table_line
    for event in select(path, where, args.last):
        show(event)
    sys.stdout.flush()
    if args.follow:
        try:
            _follow(path, where, show)
        except KeyboardInterrupt:
            return 0
    return 0


def _follow(path: str, where: EventFilter, show: Any, interval: float = 0.5) -> None:
    """Print events appended to ``path`` from now on, reopening it when it is rotated."""
    handle = None
    inode = None
    at_end = True  # what the file holds now was printed already
    while True:
        if handle is None:
            try:
                handle = open(path, "rb")  # noqa: SIM115
            except FileNotFoundError:
                at_end = False  # a file created later is new from its first line
                time.sleep(interval)
                continue
            inode = os.fstat(handle.fileno()).st_ino
            if at_end:
                handle.seek(0, os.SEEK_END)
                at_end = False
        lines = handle.readlines()
        for event in parse_lines(lines):
            if where.matches(event):
                show(event)
        sys.stdout.flush()
        if lines:
            continue
        try:
            rotated = os.stat(path).st_ino != inode
        except FileNotFoundError:
            rotated = True
        if rotated:
            handle.close()
            handle = None
            continue
        time.sleep(interval)


def _json_line(event: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(event).decode() + "\n")


def _table_line(event: dict[str, Any]) -> None:
    data = event.get("data") or {}
    request = data.get("request") or {}
    result = data.get("result") or {}
    who = (data.get("authenticationInfo") or {}).get("principal", "?")
    what = str(data.get("methodName", "")).removeprefix("schema-registry.")
    target = request.get("subject") or ""
    if request.get("version") is not None:
        target += f" v{request['version']}"
    if request.get("schemaId") is not None:
        target += f" id={request['schemaId']}"
    outcome = f"{result.get('outcome', '?')} {result.get('status', '')}"
    if result.get("errorCode") is not None:
        outcome += f" ({result['errorCode']}: {result.get('message') or ''})"
    line = (
        f"{event.get('time', '')}  {who:<16} {request.get('method', ''):<6} "
        f"{what:<28} {target:<32} {outcome}"
    )
    sys.stdout.write(line.rstrip() + "\n")
