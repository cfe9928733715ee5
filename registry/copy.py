"""``schema-registry copy --from STORE --to STORE``: copy every record between two stores.

Backup (``kafka://... -> sqlite:///backup.db``), restore (the reverse, into a new topic) and
migration off a ``_schemas`` topic that Confluent Schema Registry wrote. The records are copied
verbatim and in order (key bytes, values, tombstones; a Kafka store's DEK registry topic with
them), so ids, versions, soft deletes, configs, modes, contexts, KEKs and DEKs come out exactly
as they went in and the registry's answers are the same.

The target must be empty (a copy never merges two logs). A Kafka source is read without joining
the leader election; a Kafka target is written as its elected leader, so a copy into a topic
that running registry instances serve is refused (their leader holds the election).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import time
from dataclasses import dataclass
from typing import Any

from registry.records import Record
from registry.store.base import LogStore
from registry.store.factory import open_store

log = logging.getLogger(__name__)

BATCH = 1000


class CopyError(Exception):
    """The copy cannot be done (non-empty target, unreachable store, no leadership)."""


@dataclass(frozen=True)
class CopyReport:
    records: int
    seconds: float


def _open(url: str, *, write: bool) -> LogStore:
    try:
        if url.lower().startswith("kafka:"):
            from registry.store.kafka import KafkaLogStore

            store: LogStore = KafkaLogStore(url, elect=write)
        else:
            store = open_store(url)
    except ValueError as exc:
        raise CopyError(str(exc)) from exc
    store.open()
    return store


def _wait_kafka(store: LogStore, timeout: float, *, write: bool) -> None:
    wait_caught_up = getattr(store, "wait_caught_up", None)
    if wait_caught_up is not None and not wait_caught_up(timeout):
        raise CopyError(f"could not read {store.description} to its end in {timeout:.0f}s")
    if write and hasattr(store, "wait_leader") and not store.wait_leader(timeout):  # type: ignore[attr-defined]
        leader = store.leader_url()  # type: ignore[attr-defined]
        raise CopyError(
            f"{store.description} has another writer (leader {leader or 'unknown'}): stop the "
            "registry instances serving it, or copy into a new topic"
        )


def copy_store(source_url: str, target_url: str, *, timeout: float = 60.0) -> CopyReport:
    """Copy every record of ``source_url`` into the empty store ``target_url``."""
    begun = time.monotonic()
    source = _open(source_url, write=False)
    try:
        target = _open(target_url, write=True)
        try:
            _wait_kafka(source, timeout, write=False)
            _wait_kafka(target, timeout, write=True)
            if target.read_after(-1, 1):
                raise CopyError(f"the target {target.description} is not empty")
            copied = 0
            batch: list[tuple[bytes, bytes | None]] = []
            # a Kafka store's keys topic (KEKs and DEKs), then the record log
            keys = getattr(source, "iter_keys", list)()
            for record in itertools.chain(keys, source.iter_all()):
                batch.append((record.key, record.value))
                if len(batch) >= BATCH:
                    copied += _append(target, batch)
                    batch = []
            if batch:
                copied += _append(target, batch)
        finally:
            target.close()
    finally:
        source.close()
    report = CopyReport(copied, time.monotonic() - begun)
    log.info(
        "copied %d records from %s to %s in %.1fs",
        report.records,
        source.description,
        target.description,
        report.seconds,
    )
    return report


def _append(target: LogStore, batch: list[tuple[bytes, bytes | None]]) -> int:
    with target.exclusive() as txn:
        txn.append(batch)
    appended: list[Record] = txn.appended
    return len(appended)


# ---- the command ----------------------------------------------------------------------------


def add_command(commands: Any) -> None:
    """Add ``copy`` to the ``schema-registry`` subcommands."""
    parser = commands.add_parser(
        "copy",
        help="copy every record between two stores (backup, restore, migration)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument("--from", dest="source", required=True, help="source store URL")
    parser.add_argument("--to", dest="target", required=True, help="target store URL (empty)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds to wait for a Kafka topic to be read or led (default 60)",
    )


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        report = copy_store(args.source, args.target, timeout=args.timeout)
    except CopyError as exc:
        log.error("copy failed: %s", exc)
        return 1
    except Exception as exc:  # a store that cannot be reached, with its own message
        log.error("copy failed: %s: %s", type(exc).__name__, exc)
        return 1
    print(f"copied {report.records} records in {report.seconds:.1f}s")
    return 0
