"""Registrations of new subjects from a plain client, as an independent tester would write one:
blocking ``httpx.Client`` per thread, each request timed with ``perf_counter``. A check on
``bench/registry_bench.py``'s light asyncio client (see docs/benchmarks.md, "Kafka store writes
against Karapace, session 10"): the client's own CPU is part of what this measures.

    .venv/bin/python bench/plain_client_writes.py URL [URL ...] --threads 1 --requests 400
    .venv/bin/python bench/plain_client_writes.py URL [URL ...] --threads 16 --requests 60
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import uuid

import httpx

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def run(url: str, threads: int, per_thread: int) -> tuple[float, list[float]]:
    """req/s and per-request ms of ``threads`` clients registering ``per_thread`` new subjects."""
    tag = uuid.uuid4().hex[:8]
    times: list[float] = []
    lock = threading.Lock()

    def work(t: int) -> None:
        mine = []
        with httpx.Client(base_url=url, headers=CT, timeout=60) as client:
            for i in range(per_thread):
                schema = json.dumps(
                    {
                        "type": "record",
                        "name": f"R{t}_{i}",
                        "fields": [{"name": "a", "type": "string"}],
                    }
                )
                start = time.perf_counter()
                answer = client.post(
                    f"/subjects/{tag}-{t}-{i}-value/versions", json={"schema": schema}
                )
                mine.append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    raise SystemExit(f"{url}: {answer.status_code} {answer.text}")
        with lock:
            times.extend(mine[min(20, per_thread // 10) :])

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return threads * per_thread / (time.perf_counter() - start), times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("urls", nargs="+")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--requests", type=int, default=400, help="per thread")
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    for r in range(a.rounds):
        for url in a.urls:
            rate, times = run(url, a.threads, a.requests)
            print(
                f"round {r + 1} {url}: {a.threads} thread(s) {rate:.0f} req/s, "
                f"median {statistics.median(times):.2f} ms, mean {statistics.mean(times):.2f} ms"
            )


if __name__ == "__main__":
    main()
