"""A registry holding many schema records: fill a store directly (``--subjects`` subjects x
``--versions`` versions of a realistic Avro record, one new field per version), then measure in a
fresh process: time until ready after a restart (replay), RSS, in-process GET-by-id and lookup
rates, and the cost of a registration against a fresh registry's, the two registering in turns in
the same process (so that machine and broker noise hit both alike).

    .venv/bin/python bench/million_bench.py --store sqlite --subjects 100000     # 1,000,000
    .venv/bin/python bench/million_bench.py --store kafka --bootstrap 127.0.0.1:19092

The fill writes records straight into the store (one SQL transaction / one Kafka producer per
chunk), not through the registry. Rates are in-process function calls (no HTTP), so they show
what the state's size costs, not the server's HTTP throughput.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def schema_text(subject: int, version: int) -> str:
    fields: list[dict[str, Any]] = [
        {"name": "id", "type": "long", "doc": "primary key"},
        {"name": "created_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "name", "type": "string"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["A", "B", "C"]}},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12,
                                    "scale": 2}},
    ]  # fmt: skip
    fields += [{"name": f"extra_{v}", "type": "string", "default": ""} for v in range(1, version)]
    return json.dumps(
        {
            "type": "record",
            "name": f"Entity{subject}",
            "namespace": "com.example.bench",
            "fields": fields,
        },
        separators=(",", ":"),
    )


def records_for(subject: int, versions: int, first_id: int) -> list[tuple[bytes, bytes]]:
    from registry import records

    out = []
    for v in range(1, versions + 1):
        name = f"bench-{subject:06d}-value"
        value = {
            "subject": name,
            "version": v,
            "id": first_id + v - 1,
            "schemaType": "AVRO",
            "schema": schema_text(subject, v),
            "deleted": False,
        }
        out.append((records.schema_key(name, v).to_bytes(), records.encode_value(value)))
    return out


def fill(store_url: str, subjects: int, versions: int, bootstrap: str | None) -> float:
    begun = time.monotonic()
    chunk = 2_000
    if store_url.startswith("sqlite"):
        from registry.store.sql import SqlLogStore

        store = SqlLogStore(store_url)
        store.open()
        for start in range(0, subjects, chunk):
            batch = []
            for s in range(start, min(subjects, start + chunk)):
                batch += records_for(s, versions, s * versions + 1)
            with store.exclusive() as txn:
                txn.append(batch)
        store.close()
    else:
        from confluent_kafka import Producer

        from bench._kafka_fill import produce_all
        from registry.store.kafka import KafkaLogStore

        # create the topic as the store does, then produce without transactions
        KafkaLogStore(store_url, elect=False).open()
        topic = store_url.split("topic=")[1].split("&")[0]
        producer = Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 50, "compression.type": "lz4"}
        )
        produce_all(
            producer,
            topic,
            (pair for s in range(subjects) for pair in records_for(s, versions, s * versions + 1)),
        )
        producer.flush(120)
    return time.monotonic() - begun


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def open_registry(store_url: str) -> Any:
    """A started registry on ``store_url``, ready (caught up and, on Kafka, leading)."""
    from registry.core import Registry
    from registry.settings import Settings
    from registry.store.factory import open_store

    store = open_store(store_url)
    reg = Registry(store, Settings(poll_interval=0))
    listen = getattr(store, "set_listener", None)
    if listen is not None:  # kafka: the state follows the topic as the server's does
        listen(reg.refresh)
    reg.start()
    wait = getattr(store, "wait_caught_up", None)
    if wait is not None:  # kafka: replay runs in the background; ready once caught up
        wait(600)
        reg.refresh()
        leader = getattr(store, "wait_leader", None)
        if leader is not None:
            leader(60)
    return reg


def measure(store_url: str, fresh_url: str, subjects: int, versions: int) -> dict[str, Any]:
    """Run in a fresh process: replay, RSS, read rates, then registration cost against a
    fresh registry (``fresh_url``), the two registering in turns."""
    from registry.core import SchemaRequest
    from registry.lookups import lookup_in_subject
    from registry.reads import schema_by_id
    from registry.registration import register

    out: dict[str, Any] = {}
    rss0 = rss_mib()
    begun = time.monotonic()
    reg = open_registry(store_url)
    out["ready_s"] = round(time.monotonic() - begun, 1)
    out["records_applied"] = reg.state.offset + 1
    out["rss_mib"] = round(rss_mib(), 0)
    out["rss_mib_before_start"] = round(rss0, 0)
    rng = random.Random(1)
    total = subjects * versions
    if total:
        ids = [rng.randint(1, total) for _ in range(20_000)]
        t = time.perf_counter()
        for i in ids:
            schema_by_id(reg, i)
        out["get_by_id_per_s"] = round(len(ids) / (time.perf_counter() - t))
        picks = [rng.randrange(subjects) for _ in range(2_000)]
        reqs = [
            (f"bench-{s:06d}-value", SchemaRequest(schema=schema_text(s, versions))) for s in picks
        ]
        t = time.perf_counter()
        for subject, req in reqs:
            assert lookup_in_subject(reg, subject, req, normalize=False, latest_only=False)
        out["lookup_per_s"] = round(len(reqs) / (time.perf_counter() - t))
    out["maxrss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0)
    fresh = open_registry(fresh_url)
    times: dict[str, list[float]] = {"big": [], "fresh": []}
    tag = uuid.uuid4().hex[:6]
    for n in range(220):
        for label, target in (
            (("big", reg), ("fresh", fresh)) if n % 2 else (("fresh", fresh), ("big", reg))
        ):
            text = schema_text(10_000_000 + n, 3).replace("Entity", f"E{tag}{label}")
            t = time.perf_counter()
            register(target, f"new-{tag}-{label}-{n}", SchemaRequest(schema=text), normalize=False)
            times[label].append((time.perf_counter() - t) * 1000)
    fresh.stop()
    for label, measured in times.items():  # the first 20 of each warm up
        out[f"register_ms_median_{label}"] = round(statistics.median(measured[20:]), 3)
    pairs = [b / f for b, f in zip(times["big"][20:], times["fresh"][20:], strict=True)]
    out["register_ratio_median_of_pairs"] = round(statistics.median(pairs), 3)
    reg.stop()
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", choices=("sqlite", "kafka"), default="sqlite")
    p.add_argument("--bootstrap", help="Kafka bootstrap (for --store kafka)")
    p.add_argument("--subjects", type=int, default=100_000)
    p.add_argument("--versions", type=int, default=10)
    p.add_argument("--measure", help=argparse.SUPPRESS)
    p.add_argument("--fresh", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.fresh, args.subjects, args.versions)))
        return 0
    tmp = tempfile.mkdtemp(prefix="million-")
    if args.store == "sqlite":
        big, fresh = f"sqlite:///{tmp}/big.db", f"sqlite:///{tmp}/fresh.db"
    else:
        if not args.bootstrap:
            p.error("--store kafka needs --bootstrap")
        tag = uuid.uuid4().hex[:8]
        big = f"kafka://{args.bootstrap}/?topic=million_{tag}"
        fresh = f"kafka://{args.bootstrap}/?topic=million_fresh_{tag}"
    filled = fill(big, args.subjects, args.versions, args.bootstrap)
    print(f"filled {args.subjects * args.versions:,} records in {filled:.1f}s", flush=True)
    proc = subprocess.run(
        [sys.executable, __file__, "--measure", big, "--fresh", fresh, "--subjects",
         str(args.subjects), "--versions", str(args.versions)],
        capture_output=True, text=True, check=True, cwd=REPO,
    )  # fmt: skip
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(result, flush=True)
    ratio = result["register_ms_median_big"] / result["register_ms_median_fresh"]
    print(
        f"registration cost big/fresh: {ratio:.2f} (medians); "
        f"median of the pairs' ratios {result['register_ratio_median_of_pairs']:.2f}"
    )
    print(f"environment: pid {os.getpid()}, {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
