"""One write at a time on the Kafka store, in-process (no HTTP): the store's own share of a lone
registration (catch up, stage one record, transaction, apply), and how two checkouts compare.

    .venv/bin/python bench/kafka_lone_write.py --bootstrap 127.0.0.1:29111 \\
        --checkout /work/main --checkout . --writes 150 --rounds 3

Each round runs every checkout once, one after the other (interleaved: the machine's load
varies), each in a subprocess with that checkout first on ``PYTHONPATH``, on a fresh topic of
the given broker; a write is timed from ``exclusive()`` to the commit's records in hand, with
1 ms between writes (a client's turn-around). Prints each run's median and p90 and, per round,
the ratio of the first checkout's median to each other's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

_CHILD = r"""
import json, statistics, sys, time
from registry.store.kafka import KafkaLogStore
boot, n = sys.argv[1], int(sys.argv[2])
store = KafkaLogStore(f"kafka://{boot}/?topic=lone_write_{time.time_ns()}")
store.open()
assert store.wait_leader(120) and store.wait_caught_up(120)
offset, lat = -1, []
for i in range(n):
    t0 = time.perf_counter()
    with store.exclusive() as txn:
        records = txn.read_after(offset)
        if records:
            offset = records[-1].offset
        key = {"keytype": "SCHEMA", "subject": f"s{i}", "version": 1, "magic": 1}
        txn.append([(json.dumps(key).encode(), b'{"x":1}')])
    offset = max([offset] + [r.offset for r in txn.appended if not r.log])
    lat.append(time.perf_counter() - t0)
    time.sleep(0.001)
store.close()
lat = sorted(lat[10:])
p90 = lat[int(0.9 * len(lat))]
print(json.dumps({"median_ms": 1000 * statistics.median(lat), "p90_ms": 1000 * p90}))
"""


def run(checkout: str, bootstrap: str, writes: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(checkout)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, bootstrap, str(writes)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bootstrap", required=True)
    p.add_argument("--checkout", action="append", required=True, help="a source tree (repeat)")
    p.add_argument("--writes", type=int, default=150)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    for round_ in range(1, args.rounds + 1):
        medians = []
        for checkout in args.checkout:
            got = run(checkout, args.bootstrap, args.writes)
            medians.append(got["median_ms"])
            print(
                f"round {round_} {checkout}: median {got['median_ms']:.2f} ms "
                f"p90 {got['p90_ms']:.2f} ms",
                flush=True,
            )
        ratios = ", ".join(f"{medians[0] / m:.2f}x" for m in medians[1:])
        print(f"round {round_}: first / others median {ratios}  ({time.strftime('%H:%M:%S')})")


if __name__ == "__main__":
    main()
