"""Resident memory of a registry server holding ``--subjects`` schemas: start ``schema-registry
serve`` (fresh SQLite file, or ``--store URL``), register ``bench/registry_bench.py``'s pre-fill
schemas over HTTP, then read each back by id and look each up (what the REST benchmark's
scenarios touch), and print the server process's RSS after each step.

    .venv/bin/python bench/rss_bench.py --subjects 4000
    .venv/bin/python bench/rss_bench.py --subjects 4000 --store kafka://127.0.0.1:9092/?topic=rss
    .venv/bin/python bench/rss_bench.py --subjects 4000 --url http://127.0.0.1:8082 --pid PID

With ``--url`` and ``--pid`` it measures a server already running (e.g. Karapace).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from registry_bench import base_schema, free_port, subject_name  # noqa: E402

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wait_ready(client: httpx.Client, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if client.get("/subjects").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit("the server did not answer in time")


def run(client: httpx.Client, pid: int, subjects: int) -> dict[str, float]:
    out = {"started_mib": round(rss_mib(pid), 1)}
    ids = []
    bodies = []
    for i in range(subjects):
        body = {"schema": json.dumps(base_schema(i), separators=(",", ":"))}
        answer = client.post(f"/subjects/{subject_name(i)}/versions", json=body)
        answer.raise_for_status()
        ids.append(answer.json()["id"])
        bodies.append(body)
    out["registered_mib"] = round(rss_mib(pid), 1)
    for schema_id in ids:
        client.get(f"/schemas/ids/{schema_id}").raise_for_status()
    for i, body in enumerate(bodies):
        client.post(f"/subjects/{subject_name(i)}", json=body).raise_for_status()
    out["after_reads_mib"] = round(rss_mib(pid), 1)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--subjects", type=int, default=4000)
    p.add_argument("--store", help="store URL for our server (default: a fresh SQLite file)")
    p.add_argument("--url", help="measure a running server at this URL (needs --pid)")
    p.add_argument("--pid", type=int, help="the running server's process id")
    args = p.parse_args()
    headers = {"Content-Type": CONTENT_TYPE}
    if args.url:
        if args.pid is None:
            p.error("--url needs --pid")
        with httpx.Client(base_url=args.url, headers=headers, timeout=30) as client:
            wait_ready(client)
            print(json.dumps(run(client, args.pid, args.subjects)))
        return 0
    tmp = tempfile.mkdtemp(prefix="rss-bench-")
    store = args.store or f"sqlite:///{tmp}/rss.db"
    port = free_port()
    # ``schema-registry serve`` of this checkout (``-c`` puts the working directory first)
    argv = [
        sys.executable, "-c", "import sys; from registry.cli import main; sys.exit(main())",
        "serve", "--port", str(port), "--store", store, "--log-level", "WARNING",
    ]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=REPO)
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30
        ) as client:
            wait_ready(client)
            measured = run(client, proc.pid, args.subjects)
            print(json.dumps({"store": store.split("?")[0], **measured}))
    finally:
        proc.terminate()
        proc.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
