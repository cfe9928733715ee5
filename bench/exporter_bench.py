"""Exporter catch-up and live latency (issue #27).

A source registry (SQLite) holding ``--versions`` schema versions (``--per-subject`` versions
per subject, written straight into its store before it starts), a destination registry
(SQLite), both ``schema-registry serve`` processes on this machine. Measures:

1. catch-up: from ``POST /exporters`` until the destination holds the last version, and the
   CPU time each process spent meanwhile per version (what the rate would be on idle cores:
   the development machine is shared, so the wall-clock rate follows its load);
2. live: ``--live`` registrations on the source, one at a time, each timed until a GET on the
   destination finds it (polled every 5 ms): median and p99.

    .venv/bin/python bench/exporter_bench.py --versions 100000
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import ROOT, free_port
from registry import records
from registry.store.factory import open_store

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def fill(store_url: str, versions: int, per_subject: int) -> None:
    """``versions`` SCHEMA records (ids 1..n), appended in batches under the write lock."""
    store = open_store(store_url)
    store.open()
    batch: list[tuple[bytes, bytes | None]] = []
    for n in range(versions):
        subject, version = f"bench-{n // per_subject}", n % per_subject + 1
        fields = [{"name": f"f{i}", "type": "int", "default": 0} for i in range(version)]
        schema = json.dumps(
            {"type": "record", "name": f"R{n // per_subject}", "fields": fields},
            separators=(",", ":"),
        )
        value = {"subject": subject, "version": version, "id": n + 1, "schema": schema}
        batch.append((records.schema_key(subject, version).to_bytes(), records.encode_value(value)))
        if len(batch) == 5000:
            with store.exclusive() as txn:
                txn.append(batch)
            batch = []
    if batch:
        with store.exclusive() as txn:
            txn.append(batch)
    store.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve(tmp: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp / f"{name}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "registry.cli", "serve", "--port", str(port),
         "--store", f"sqlite:///{tmp / name}.db"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ},
    )  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/ready", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError((tmp / f"{name}.log").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=100_000)
    parser.add_argument("--per-subject", type=int, default=10)
    parser.add_argument("--live", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        started = time.monotonic()
        fill(f"sqlite:///{tmp / 'source'}.db", args.versions, args.per_subject)
        print(f"filled {args.versions} versions in {time.monotonic() - started:.1f} s")
        procs = []
        try:
            source_proc, source = serve(tmp, "source")
            procs.append(source_proc)
            dest_proc, dest = serve(tmp, "destination")
            procs.append(dest_proc)
            http = httpx.Client(headers=CT, timeout=30)
            last = args.versions - 1
            last_path = (
                f"/subjects/bench-{last // args.per_subject}/versions/{last % args.per_subject + 1}"
            )
            body = {
                "name": "bench",
                "contextType": "NONE",
                "config": {"schema.registry.url": dest},
            }
            cpu = [cpu_seconds(p.pid) for p in procs]
            load = os.getloadavg()[0]
            started = time.monotonic()
            assert http.post(source + "/exporters", json=body).status_code == 200
            while http.get(dest + last_path).status_code != 200:
                time.sleep(0.5)
            catch_up = time.monotonic() - started
            rate = args.versions / catch_up
            used = [cpu_seconds(p.pid) - c for p, c in zip(procs, cpu, strict=True)]
            print(f"catch-up: {args.versions} versions in {catch_up:.1f} s ({rate:.0f}/s)")
            print(
                f"  CPU per version: source {used[0] / args.versions * 1000:.2f} ms, "
                f"destination {used[1] / args.versions * 1000:.2f} ms; "
                f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
            )
            delays = []
            for i in range(args.live):
                path = f"/subjects/live-{i}/versions"
                schema = json.dumps({"type": "record", "name": f"L{i}", "fields": []})
                assert http.post(source + path, json={"schema": schema}).status_code == 200
                sent = time.monotonic()
                while http.get(dest + path + "/1").status_code != 200:
                    time.sleep(0.005)
                delays.append(time.monotonic() - sent)
            delays.sort()
            p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
            print(
                f"live: {args.live} registrations, source to destination: "
                f"median {statistics.median(delays) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
                f"max {delays[-1] * 1000:.0f} ms"
            )
        finally:
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=60)


if __name__ == "__main__":
    main()
