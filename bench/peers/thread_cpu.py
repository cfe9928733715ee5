"""CPU time of each thread of a process over an interval, grouped by thread name (Linux /proc).

    python bench/peers/thread_cpu.py PID SECONDS

Shows where a server's CPU goes between its Python threads and the native threads of the
Kafka client (librdkafka names its threads ``rdk:main``, ``rdk:broker<N>`` and so on): run it
beside a benchmark scenario. Prints a Markdown table (CPU seconds and % of one core).
"""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from pathlib import Path


def threads(pid: int) -> dict[int, tuple[str, float]]:
    """{thread id: (name, user + system CPU seconds)} of process ``pid``."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        out[int(task.name)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def main(argv: list[str]) -> int:
    pid, seconds = int(argv[0]), float(argv[1])
    before = threads(pid)
    time.sleep(seconds)
    after = threads(pid)
    used: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    for tid, (name, cpu) in after.items():
        used[name] += cpu - before.get(tid, (name, 0.0))[1]
        count[name] += 1
    total = sum(used.values())
    print(f"| thread (count) | CPU s | % of one core | share |  (total {total:.2f} s)")
    print("|---|--:|--:|--:|")
    for name, cpu in sorted(used.items(), key=lambda kv: -kv[1]):
        if cpu <= 0:
            continue
        share = cpu / total if total else 0.0
        print(f"| {name} ({count[name]}) | {cpu:.2f} | {100 * cpu / seconds:.0f}% | {share:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
