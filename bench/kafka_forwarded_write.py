"""Writes through a follower on the Kafka store, one at a time: two instances on a fresh topic,
each write sent to the follower (which forwards it to the leader and answers once it has read
it); prints the median and p90 latency in ms. Store URL options are appended as given.

    .venv/bin/python bench/kafka_forwarded_write.py 127.0.0.1:29411 "" 100
    .venv/bin/python bench/kafka_forwarded_write.py 127.0.0.1:29411 "&txn.linger.ms=0" 100

Instance logs go to /tmp/kafka-forwarded-write-<n>.log.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import ROOT, free_port

BIN = ROOT / ".venv" / "bin" / "schema-registry"
HEADERS = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def _follower(urls: list[str], timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    views: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        views = []
        for url in urls:
            try:
                reply = httpx.get(url + "/ready", timeout=2)
                views.append(reply.json() if reply.status_code == 200 else {})
            except httpx.HTTPError:
                views.append({})
        leaders = [bool(v.get("is_leader")) for v in views]
        if all(v.get("leader") for v in views) and sum(leaders) == 1:
            return next(u for u, lead in zip(urls, leaders, strict=True) if not lead)
        time.sleep(0.2)
    raise SystemExit(f"no leader and follower: {views}")


def main() -> None:
    boot, options, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = f"kafka://{boot}/?topic=fwd_{time.time_ns()}{options}"
    procs, urls = [], []
    for n in range(2):
        port = free_port()
        with open(f"/tmp/kafka-forwarded-write-{n}.log", "w") as log:
            procs.append(
                subprocess.Popen(
                    [str(BIN), "serve", "--port", str(port), "--store", store],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
        urls.append(f"http://127.0.0.1:{port}")
    try:
        follower = _follower(urls)
        took = []
        with httpx.Client(timeout=30) as client:
            for i in range(count):
                fields = [{"name": "a", "type": "int"}]
                schema = json.dumps({"type": "record", "name": f"R{i}", "fields": fields})
                began = time.perf_counter()
                reply = client.post(
                    f"{follower}/subjects/s{i}/versions", json={"schema": schema}, headers=HEADERS
                )
                took.append(time.perf_counter() - began)
                assert reply.status_code == 200, reply.text
        took = sorted(took[5:])
        median, p90 = statistics.median(took), took[int(0.9 * len(took))]
        result = {"median_ms": round(1000 * median, 2), "p90_ms": round(1000 * p90, 2)}
        print(options or "(defaults)", json.dumps(result))
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(30)


if __name__ == "__main__":
    main()
