"""What the three producer/consumer examples share: their command line, a fresh topic, and a
consumer that reads back what was produced."""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Sequence

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic


def arguments(description: str, argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--bootstrap", default="127.0.0.1:9092", help="Kafka bootstrap servers")
    parser.add_argument("--registry", default="http://127.0.0.1:8081", help="registry URL")
    parser.add_argument("--topic", default=None, help="topic (default: a new one)")
    return parser.parse_args(argv)


def fresh_topic(bootstrap: str, prefix: str) -> str:
    """A new one-partition topic named ``prefix-<random>``."""
    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    return topic


def produce(bootstrap: str, topic: str, values: Sequence[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value=value)
    if producer.flush(30):
        raise RuntimeError("not every record was delivered")


def consume(bootstrap: str, topic: str, count: int, timeout: float = 30.0) -> list[bytes]:
    """The first ``count`` values of ``topic``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"example-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    try:
        for message in consumer.consume(num_messages=count, timeout=timeout):
            if message.error():
                raise RuntimeError(str(message.error()))
            values.append(message.value())
        while len(values) < count:
            message = consumer.poll(timeout)
            if message is None:
                raise TimeoutError(f"read {len(values)} of {count} records from {topic}")
            values.append(message.value())
    finally:
        consumer.close()
    return values
