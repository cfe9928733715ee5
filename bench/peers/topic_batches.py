"""Records per Kafka transaction in our store's topic, per benchmark scenario (group commit).

    python bench/peers/topic_batches.py BOOTSTRAP TOPIC results.json

Reads partition 0 of TOPIC (read_committed) from the beginning to the high watermark. Each
transaction's commit marker takes one offset that a read_committed consumer never sees, so a run
of consecutive offsets is one transaction (an aborted transaction's records would show as a gap
too: our store aborts only on failure, and the bench counts failures). Transactions are put in
the scenario whose measured window (``started`` .. ``started + seconds`` of ``ours``' results in
the bench's JSON) holds their first record's timestamp; warm-ups and the pre-fill are outside
every window. Prints a Markdown table.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections import defaultdict
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition


def group(records: list[tuple[int, float]]) -> list[tuple[float, int]]:
    """(first record's timestamp, records) of each run of consecutive offsets in ``records``
    ((offset, timestamp) in offset order, as a read_committed consumer sees them)."""
    out: list[tuple[float, int]] = []
    last = -2
    for offset, ts in records:
        if offset == last + 1 and out:
            first, n = out[-1]
            out[-1] = (first, n + 1)
        else:
            out.append((ts, 1))
        last = offset
    return out


def in_windows(
    txns: list[tuple[float, int]], windows: list[tuple[str, float, float]]
) -> dict[str, list[int]]:
    """{scenario: sizes of the transactions that began in its window}."""
    by: dict[str, list[int]] = defaultdict(list)
    for ts, n in txns:
        for scenario, start, end in windows:
            if start <= ts <= end:
                by[scenario].append(n)
                break
    return by


def read_records(bootstrap: str, topic: str) -> list[tuple[int, float]]:
    """(offset, timestamp in s) of every committed record of partition 0 of ``topic``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"topic-batches-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        tp = TopicPartition(topic, 0, OFFSET_BEGINNING)
        _, high = consumer.get_watermark_offsets(tp, timeout=10)
        consumer.assign([tp])
        out: list[tuple[int, float]] = []
        last = -2
        for _ in range(100_000):
            messages = consumer.consume(10_000, timeout=2)
            if not messages:
                if consumer.position([tp])[0].offset >= high:
                    break
                continue
            for m in messages:
                if m.error():
                    continue
                last = m.offset()
                out.append((last, m.timestamp()[1] / 1000))
            if last >= high - 2:
                # the last commit marker is the last offset before the high watermark
                break
        return out
    finally:
        consumer.close()


def main(argv: list[str]) -> int:
    bootstrap, topic, results_file = argv
    results = json.loads(Path(results_file).read_text())
    windows = [
        (r["scenario"], r["started"], r["started"] + r["seconds"], r["requests"] - r["errors"])
        for r in results["results"]
        if r["target"] == results.get("ours_label", "ours") and r.get("started")
    ]
    txns = group(read_records(bootstrap, topic))
    by = in_windows(txns, [(scenario, start, end) for scenario, start, end, _ in windows])
    requests: dict[str, int] = defaultdict(int)
    for scenario, _, _, ok in windows:
        requests[scenario] += ok
    total = sum(n for _, n in txns)
    print(f"Topic {topic}: {total:,} records in {len(txns):,} transactions.")
    print()
    print(
        "| Scenario (ours) | successful requests | transactions | records per transaction "
        "(mean) | max |"
    )
    print("|---|--:|--:|--:|--:|")
    for scenario in dict.fromkeys(s for s, *_ in windows):
        sizes = by.get(scenario, [])
        if not sizes:
            continue
        print(
            f"| {scenario} | {requests[scenario]:,} | {len(sizes):,} | "
            f"{sum(sizes) / len(sizes):.2f} | {max(sizes)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
