"""The Kafka-store comparison tools of bench/: registry_bench.py's Kafka start-up, client counts
and memory readings, and bench/peers/topic_batches.py's records-per-transaction count (real
broker, real server process; no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO = Path(__file__).resolve().parent.parent


def _load(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(Path(path).stem, REPO / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = _load("bench/registry_bench.py")
batches = _load("bench/peers/topic_batches.py")


def test_scenario_keys_name_the_client_count() -> None:
    assert bench.scenario_key("register_subject", 16) == "register_subject@16"
    assert bench.scenario_key("lookup", None) == "lookup"
    assert bench.scenario_title("register_subject@1").endswith("(new subject), 1 client")
    assert bench.scenario_title("register_version@16").endswith("(new version), 16 clients")
    assert bench.scenario_title("get_by_id") == "GET /schemas/ids/{id}"


def test_memory_of_a_process_comes_from_proc() -> None:
    rss, peak = bench.memory_mib(os.getpid())
    assert 1 < rss <= peak
    assert bench.memory_mib(None) is None


def test_kafka_store_needs_a_bootstrap() -> None:
    with pytest.raises(SystemExit):
        bench.parse_args(["--start-ours", "--store", "kafka"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--start-ours", "--clients", "0"])
    args = bench.parse_args(["--start-ours", "--store", "kafka", "--bootstrap", "h:1"])
    assert bench._our_store(args, "/tmp").startswith("kafka://h:1/?topic=bench_ours_")


def test_markdown_reports_memory_and_ratios_per_round() -> None:
    def result(target: str, rps: float) -> object:
        return bench.Result(target, "register_subject@16", 1.0, 10, 0, rps, 1, 2, 3, 4)

    rounds = [result("ours", 100), result("k", 50), result("ours", 90), result("k", 10)]
    prefills = [
        bench.Prefill("ours", 4000, 0, 4000, 1.0, 0, rss_mib=100.0, peak_rss_mib=110.0),
        bench.Prefill("k", 4000, 0, 4000, 1.0, 0, rss_mib=150.0, peak_rss_mib=150.0),
    ]
    text = bench.markdown(
        bench.merge_rounds(rounds), prefills, "ours", None, ["ours", "k"], rounds=rounds
    )
    assert "(new subject), 16 clients" in text
    assert "| 2.00, 9.00 |" in text  # ours/k req/s of each round
    assert "| k | 150.0 | 150.0 |  | 1.50 |" in text


def test_offsets_group_into_transactions() -> None:
    # a commit marker takes an offset the read_committed consumer never sees
    records = [(0, 1.0), (1, 1.0), (2, 1.1), (4, 2.0), (6, 3.0), (7, 3.1)]
    txns = batches.group(records)
    assert txns == [(1.0, 3), (2.0, 1), (3.0, 2)]
    assert dict(batches.in_windows(txns, [("a", 0.5, 2.5), ("b", 2.9, 9)])) == {
        "a": [3, 1],
        "b": [2],
    }


def test_topic_batches_reads_transactions_off_a_real_topic(kafka_bootstrap: str) -> None:
    topic = f"bench_batches_{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"tx-{topic}"})
    producer.init_transactions(30)
    for size in (3, 1, 2):
        producer.begin_transaction()
        for n in range(size):
            producer.produce(topic, key=b"k", value=str(n).encode())
        producer.commit_transaction(30)
    assert [n for _, n in batches.group(batches.read_records(kafka_bootstrap, topic))] == [3, 1, 2]


def test_bench_starts_ours_on_kafka_with_client_counts(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = f"bench_ours_{uuid.uuid4().hex[:8]}"
    out = tmp_path / "r.json"
    run = subprocess.run(
        [
            sys.executable, str(REPO / "bench/registry_bench.py"), "--start-ours",
            "--store", "kafka", "--bootstrap", kafka_bootstrap, "--topic", topic,
            "--subjects", "5", "--clients", "1", "3", "--seconds", "0.5", "--warmup", "0",
            "--scenarios", "get_by_id", "register_subject", "--no-ceiling", "--json", str(out),
        ],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    payload = json.loads(out.read_text())
    got = {(r["scenario"], r["clients"]) for r in payload["results"]}
    assert got == {("get_by_id", 8), ("register_subject@1", 1), ("register_subject@3", 3)}
    assert all(r["requests"] > 0 and r["errors"] == 0 for r in payload["results"])
    assert payload["prefill"][0]["rss_mib"] > 10
    # --report prints the tables of that file again
    again = subprocess.run(
        [sys.executable, str(REPO / "bench/registry_bench.py"), "--report", str(out)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "(new subject), 3 clients | ours |" in again.stdout
    # ours wrote to the topic it was given: its records were committed in transactions
    counted = batches.group(batches.read_records(kafka_bootstrap, topic))
    assert sum(n for _, n in counted) >= 5 + sum(
        r["requests"] for r in payload["results"] if r["scenario"].startswith("register")
    )
