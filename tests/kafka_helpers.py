"""Helpers shared by the Kafka tests: in-process registries on a topic, and reading a topic raw."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def wait_ready(client: TestClient, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.get("/ready").status_code == 200:
            return
        time.sleep(0.05)
    raise AssertionError(f"not ready after {timeout}s: {client.get('/ready').json()}")


@contextmanager
def kafka_client(url: str) -> Iterator[TestClient]:
    """A registry on ``url`` (started by the app's lifespan) behind a test client, ready; with
    Confluent Cloud's response shapes, as the ``registry`` fixture (see tests/conftest.py)."""
    registry = Registry(open_store(url), Settings(poll_interval=0, v8_fields_by_header=True))
    app = create_app(registry)
    with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as client:
        wait_ready(client)
        yield client


def read_topic(bootstrap: str, topic: str, timeout: float = 30) -> list[tuple[bytes, bytes | None]]:
    """Every committed (key, value) of partition 0, in order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "test-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
        }
    )
    out: list[tuple[bytes, bytes | None]] = []
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF and msg.offset() >= high:
                    return out
                continue
            out.append((msg.key(), msg.value()))
        raise AssertionError(f"could not read {topic} to offset {high} in {timeout}s")
    finally:
        consumer.close()


def produce_raw(bootstrap: str, topic: str, records: list[tuple[bytes, bytes | None]]) -> None:
    """Write records as Confluent Schema Registry does: plain idempotent producer, partition 0."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    for key, value in records:
        producer.produce(topic, key=key, value=value, partition=0)
    assert producer.flush(30) == 0
