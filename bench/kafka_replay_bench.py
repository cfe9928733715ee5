"""Start-up replay of a ``_schemas`` topic: how long until a registry instance is ready.

    python bench/kafka_replay_bench.py                      # starts a broker (scripts/kafka)
    python bench/kafka_replay_bench.py --bootstrap 127.0.0.1:9092 --records 100000

A topic is filled with ``--records`` SCHEMA records in Confluent's format (as Confluent writes
them: plain producer, no ``schemaType``; ``--subjects`` subjects, distinct Avro records). Then,
in the same run:

* ``librdkafka read``: a bare confluent-kafka consumer reading the topic (the floor);
* ``KafkaLogStore caught up``: the store's reader at the end of the topic;
* ``registry ready (Kafka)``: a ``Registry`` on the topic until ``/ready`` would say 200 (every
  record applied to the in-memory state);
* ``registry ready (SQLite)``: the peer, the same records in the SQL store (``Registry.start``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402

from bench._kafka_fill import produce_all  # noqa: E402
from bench._server import free_port  # noqa: E402
from registry.api.forwarding import readiness  # noqa: E402
from registry.core import Registry  # noqa: E402
from registry.settings import Settings  # noqa: E402
from registry.store.kafka import KafkaLogStore  # noqa: E402
from registry.store.sql import SqlLogStore  # noqa: E402


@contextmanager
def broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    script = REPO / "scripts" / "kafka"
    with tempfile.TemporaryDirectory(prefix="bench-kafka-") as directory:
        port, controller = free_port(), free_port()
        out = subprocess.run(
            ["bash", str(script), "start", "--dir", directory, "--port", str(port),
             "--controller-port", str(controller)],
            capture_output=True, text=True, check=True, timeout=600,
        )  # fmt: skip
        try:
            yield out.stdout.strip().splitlines()[-1]
        finally:
            subprocess.run(["bash", str(script), "stop", "--dir", directory], check=False)


def records(count: int, subjects: int) -> Iterator[tuple[bytes, bytes]]:
    for i in range(count):
        subject = f"bench-{i % subjects:05d}-value"
        version = i // subjects + 1
        schema = json.dumps(
            {
                "type": "record",
                "name": f"R{i}",
                "namespace": "bench",
                "fields": [{"name": "id", "type": "long"}, {"name": f"f{i}", "type": "string"}],
            },
            separators=(",", ":"),
        )
        key = f'{{"keytype":"SCHEMA","subject":"{subject}","version":{version},"magic":1}}'
        value = {"subject": subject, "version": version, "id": i + 1, "schema": schema}
        yield key.encode(), json.dumps({**value, "deleted": False}).encode()


def fill(bootstrap: str, topic: str, count: int, subjects: int) -> float:
    store = KafkaLogStore(f"kafka://{bootstrap}/?topic={topic}")
    store.open()  # creates the topic as the registry does
    store.close()
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 50, "compression.type": "lz4"}
    )
    begun = time.monotonic()
    produce_all(producer, topic, records(count, subjects))
    assert producer.flush(120) == 0
    return time.monotonic() - begun


def bare_read(bootstrap: str, topic: str) -> tuple[int, float]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench", "enable.partition.eof": True}
    )
    begun = time.monotonic()
    consumer.assign([TopicPartition(topic, 0, 0)])
    count = 0
    try:
        while True:
            for msg in consumer.consume(10_000, timeout=1):
                if msg.error() is None:
                    count += 1
                elif msg.error().code() == KafkaError._PARTITION_EOF:
                    return count, time.monotonic() - begun
    finally:
        consumer.close()


def kafka_registry(bootstrap: str, topic: str) -> tuple[float, float, int]:
    store = KafkaLogStore(f"kafka://{bootstrap}/?topic={topic}")
    registry = Registry(store, Settings(poll_interval=0))
    store.set_listener(registry.refresh)
    begun = time.monotonic()
    registry.start()
    assert store.wait_caught_up(600)
    caught_up = time.monotonic() - begun
    while not readiness(registry)[0]:
        time.sleep(0.01)
    ready = time.monotonic() - begun
    subjects = len(registry.state.contexts["."].subjects)
    registry.stop()
    return caught_up, ready, subjects


def sqlite_registry(bootstrap: str, topic: str, directory: Path) -> float:
    url = f"sqlite:///{directory / 'bench.db'}"
    source = KafkaLogStore(f"kafka://{bootstrap}/?topic={topic}")
    source.open()
    source.wait_caught_up(600)
    target = SqlLogStore(url)
    target.open()
    pending = [(r.key, r.value) for r in source.iter_all()]
    source.close()
    for start in range(0, len(pending), 10_000):
        with target.exclusive() as txn:
            txn.append(pending[start : start + 10_000])
    target.close()
    registry = Registry(SqlLogStore(url), Settings(poll_interval=0))
    begun = time.monotonic()
    registry.start()
    elapsed = time.monotonic() - begun
    registry.stop()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", help="an existing broker (default: start one)")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    args = parser.parse_args()
    topic = f"_schemas_bench_{uuid.uuid4().hex[:8]}"
    n = args.records
    with broker(args.bootstrap) as bootstrap, tempfile.TemporaryDirectory() as tmp:
        fill_s = fill(bootstrap, topic, n, args.subjects)
        print(f"filled {topic} with {n} records in {fill_s:.1f}s", file=sys.stderr)
        count, bare_s = bare_read(bootstrap, topic)
        assert count == n, (count, n)
        caught_s, ready_s, subjects = kafka_registry(bootstrap, topic)
        assert subjects == min(n, args.subjects), subjects
        sqlite_s = sqlite_registry(bootstrap, topic, Path(tmp))
    print(f"\n{n} SCHEMA records, {min(n, args.subjects)} subjects\n")
    print("| step | seconds | records/s |")
    print("|---|---:|---:|")
    for name, secs in (
        ("librdkafka read (floor)", bare_s),
        ("KafkaLogStore caught up", caught_s),
        ("registry ready (Kafka)", ready_s),
        ("registry ready (SQLite, peer)", sqlite_s),
    ):
        print(f"| {name} | {secs:.2f} | {n / secs:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
