"""Registration CPU cost with the audit trail's file sink on against off, in one process and
one run: two registries (fresh SQLite files) served by their ASGI apps through httpx's ASGI
transport (no sockets, so the HTTP server's share is left out and the difference is easier to
see), registrations alternating in blocks between the two, each block's process CPU time
measured (``time.process_time``: what other processes on a loaded machine do counts much less
than in wall-clock throughput).

    .venv/bin/python bench/audit_ab_cpu.py                 # 20 blocks of 200 per target
    .venv/bin/python bench/audit_ab_cpu.py --blocks 40 --block 100 --scenario version
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store

CT = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def schema(n: int, fields: int = 1) -> str:
    return json.dumps(
        {
            "type": "record",
            "name": f"R{n}",
            "fields": [{"name": f"f{i}", "type": "int", "default": 0} for i in range(fields)],
        }
    )


async def block(client: httpx.AsyncClient, start: int, size: int, scenario: str) -> float:
    """CPU seconds per registration of one block."""
    began = time.process_time()
    for n in range(start, start + size):
        if scenario == "subject":
            body, subject = {"schema": schema(n)}, f"s-{n}"
        else:  # a new version of the block's subject, one field more each time
            body, subject = {"schema": schema(0, n - start + 1)}, f"versions-{start}"
        answer = await client.post(f"/subjects/{subject}/versions", json=body, headers=CT)
        assert answer.status_code == 200, answer.text
    return (time.process_time() - began) / size


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--blocks", type=int, default=20, help="blocks per target (20)")
    p.add_argument("--block", type=int, default=200, help="registrations per block (200)")
    p.add_argument("--scenario", choices=("subject", "version"), default="subject")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="audit-ab-"))
    targets = {}
    for name, extra in (("off", {}), ("audit-file", {"audit_file": str(tmp / "audit.jsonl")})):
        settings = Settings(poll_interval=0, **extra)  # type: ignore[arg-type]
        reg = Registry(open_store(f"sqlite:///{tmp / name}.db"), settings)
        reg.start()
        app = create_app(reg, manage_lifecycle=False)
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")
        targets[name] = (reg, client)
    cpu: dict[str, list[float]] = {name: [] for name in targets}
    try:
        for _, client in targets.values():  # warm-up: new subjects (other names than measured)
            await block(client, 10**6, 50, "subject")
        for b in range(args.blocks):
            order = list(targets) if b % 2 == 0 else list(reversed(targets))
            for name in order:
                start = b * args.block
                cpu[name].append(await block(targets[name][1], start, args.block, args.scenario))
    finally:
        for reg, client in targets.values():
            await client.aclose()
            reg.stop()
    off, on = statistics.median(cpu["off"]), statistics.median(cpu["audit-file"])
    with open(tmp / "audit.jsonl", "rb") as audit_file:
        events = sum(1 for _ in audit_file)
    print(
        f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}  scenario={args.scenario}  "
        f"blocks={args.blocks}x{args.block}  load average={os.getloadavg()[0]:.1f}"
    )
    print("| Target | CPU ms per registration (median of blocks) | min | max |")
    print("|---|--:|--:|--:|")
    for name, values in cpu.items():
        print(
            f"| {name} | {statistics.median(values) * 1000:.3f} | {min(values) * 1000:.3f} | "
            f"{max(values) * 1000:.3f} |"
        )
    print(f"audit-file / off: {on / off:.3f}  (audit events written: {events})")


if __name__ == "__main__":
    asyncio.run(main())
