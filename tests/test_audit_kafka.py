"""The Kafka audit sink against the real broker: CloudEvents 1.0 in structured mode on the
topic (created on start-up), keyed by the event's subject, counted as written once the broker
acknowledged them; in fail-closed mode the answer waits for that acknowledgement."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import CONTENT_TYPE

AVRO = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


def read_all(bootstrap: str, topic: str, timeout: float = 30) -> list[Any]:
    """Every message of partition 0 of ``topic``, in order."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "audit-test", "enable.partition.eof": True}
    )
    out: list[Any] = []
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF and msg.offset() >= high:
                    return out
                continue
            out.append(msg)
        raise AssertionError(f"could not read {topic} to {high}")
    finally:
        consumer.close()


def metric(client: TestClient, name: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(name)


def test_kafka_sink_writes_cloudevents_acknowledged_before_the_answer(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    topic = f"audit-{uuid.uuid4().hex[:10]}"
    settings = Settings(
        poll_interval=0,
        audit_kafka=f"kafka://{kafka_bootstrap}/?topic={topic}&client.id=audit-test",
        audit_fail_closed=True,
    )
    registry = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), settings)
    registry.start()
    try:
        app = create_app(registry, manage_lifecycle=False)
        with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as client:
            written = 'schema_registry_audit_events_written_total{sink="kafka"}'
            assert client.post("/subjects/orders/versions", json={"schema": AVRO}).json()["id"] == 1
            # fail closed: acknowledged by the broker before the answer was sent
            assert metric(client, written) == 1
            assert client.put("/config/orders", json={"compatibility": "BAD"}).status_code == 422
            assert client.delete("/subjects/orders").status_code == 200
            assert metric(client, written) == 3
            assert metric(client, 'schema_registry_audit_events_dropped_total{sink="kafka"}') == 0
    finally:
        registry.stop()
    messages = read_all(kafka_bootstrap, topic)
    assert [m.key() for m in messages] == [b"subject=orders"] * 3
    for message in messages:
        assert dict(message.headers())["content-type"] == (
            b"application/cloudevents+json; charset=UTF-8"
        )
    events = [json.loads(m.value()) for m in messages]
    for event in events:
        assert event["specversion"] == "1.0"
        assert event["type"] == "io.confluent.sg.server/request"
        assert event["datacontenttype"] == "application/json"
        assert {"id", "source", "subject", "time", "data"} <= set(event)
    assert [e["data"]["methodName"] for e in events] == [
        "schema-registry.subjects.register",
        "schema-registry.config.put_subject",
        "schema-registry.subjects.delete_subject",
    ]
    assert [e["data"]["result"]["outcome"] for e in events] == ["success", "failure", "success"]
    assert events[0]["data"]["request"]["schemaId"] == 1
    assert events[1]["data"]["result"]["errorCode"] == 42203


def test_unreachable_brokers_fail_closed_refuse_changes_fail_open_count_drops(
    tmp_path: Path,
) -> None:
    from tests.conftest import free_port

    nowhere = f"127.0.0.1:{free_port()}"  # nothing listens there
    query = "topic=audit&confirm.timeout.ms=1000&message.timeout.ms=1000"
    for fail_closed in (True, False):
        settings = Settings(
            poll_interval=0,
            audit_kafka=f"kafka://{nowhere}/?{query}",
            audit_fail_closed=fail_closed,
        )
        registry = Registry(open_store(f"sqlite:///{tmp_path / f'{fail_closed}.db'}"), settings)
        registry.start()
        try:
            app = create_app(registry, manage_lifecycle=False)
            with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as client:
                answer = client.post("/subjects/s/versions", json={"schema": AVRO})
                if fail_closed:
                    assert (answer.status_code, answer.json()["error_code"]) == (503, 50301)
                    assert client.get("/subjects").json() == []  # nothing stored, reads served
                    continue
                assert answer.status_code == 200
                dropped = 'schema_registry_audit_events_dropped_total{sink="kafka"}'
                deadline = time.monotonic() + 30
                while metric(client, dropped) < 1 and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert metric(client, dropped) == 1
        finally:
            registry.stop()
