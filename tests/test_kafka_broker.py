"""The test broker that scripts/kafka assembles from Maven Central really is a Kafka broker:
a topic can be created, written and read back with confluent-kafka."""

from __future__ import annotations

import subprocess
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "kafka"


def test_broker_round_trips_a_record(kafka_bootstrap: str, kafka_topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(kafka_topic, 1, 1)])[kafka_topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "acks": "all"})
    producer.produce(kafka_topic, key=b"k", value=b"v", partition=0)
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": "t", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(kafka_topic, 0, 0)])
        msg = consumer.poll(30)
        assert msg is not None and msg.error() is None
        assert (msg.key(), msg.value(), msg.offset()) == (b"k", b"v", 0)
    finally:
        consumer.close()


def test_script_rejects_bad_usage() -> None:
    result = subprocess.run(
        ["bash", str(SCRIPT), "start", "--port", "not-a-port"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "PORT must be a number" in result.stderr


def test_stop_without_a_broker_fails_clearly(tmp_path: Path) -> None:
    result = subprocess.run(
        ["bash", str(SCRIPT), "stop", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "no broker started" in result.stderr
