"""A real pipeline: Kafka topic -> Spark's Kafka source -> from_confluent_avro -> Parquet.

Records are produced by our AvroSerializer (auto-registering two schema versions under
``<topic>-value``) through a real broker; Spark reads them with spark-sql-kafka-0-10, once as a
batch and once as one Structured Streaming micro-batch.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import SchemaRegistryClient
from serdes.avro import AvroSerializer
from spark_serdes import from_confluent_avro

V1 = {
    "type": "record", "name": "Payment", "namespace": "pipeline",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10,
                                    "scale": 2}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}  # fmt: skip
V2 = {
    **V1,
    "fields": [
        *V1["fields"],
        {"name": "currency", "type": {"type": "enum", "name": "Currency",
                                      "symbols": ["EUR", "USD"]}, "default": "EUR"},
    ],
}  # fmt: skip
COUNT = 40


@pytest.fixture(scope="module")
def payments_topic(kafka_bootstrap: str, spark_registry) -> str:  # type: ignore[no-untyped-def]
    import datetime as dt
    from decimal import Decimal

    topic = f"payments-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(timeout=30)
    client = SchemaRegistryClient({"url": spark_registry.url})
    conf = {"subject.name.strategy.type": "TOPIC"}
    old = AvroSerializer(client, json.dumps(V1), conf=conf)
    new = AvroSerializer(client, json.dumps(V2), conf=conf)
    ctx = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "acks": "all"})
    at = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    for n in range(COUNT):
        record = {"id": n, "amount": Decimal(f"{n}.25"), "at": at}
        value = new({**record, "currency": "USD"}, ctx) if n % 2 else old(record, ctx)
        producer.produce(topic, key=str(n).encode(), value=value)
    assert producer.flush(30) == 0
    return topic


def _expected() -> list[tuple]:
    import datetime as dt
    from decimal import Decimal

    at = dt.datetime(2026, 1, 2, 3, 4, 5, 678000)  # the session time zone is UTC
    return sorted((n, Decimal(f"{n}.25"), at, "USD" if n % 2 else "EUR") for n in range(COUNT))


def test_batch_read_decodes_both_versions_to_parquet(
    spark, spark_registry, kafka_bootstrap: str, payments_topic: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    source = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", payments_topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    decoded = source.select(
        from_confluent_avro("value", spark_registry.url, subject=f"{payments_topic}-value").alias(
            "p"
        )
    ).select("p.*")
    out = str(tmp_path / "batch")
    decoded.write.parquet(out)
    back = spark.read.parquet(out)
    assert back.columns == ["id", "amount", "at", "currency"]
    assert sorted(tuple(r) for r in back.collect()) == _expected()


def test_one_streaming_micro_batch_to_parquet(
    spark, spark_registry, kafka_bootstrap: str, payments_topic: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    stream = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("subscribe", payments_topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    decoded = stream.select(
        "offset",
        from_confluent_avro(
            "value",
            spark_registry.url,
            subject=f"{payments_topic}-value",
            options={"engine": "python"},
        ).alias("p"),
    ).select("offset", "p.*")
    out = str(tmp_path / "stream")
    query = (
        decoded.writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert len(batches) == 1 and batches[0]["numInputRows"] == COUNT
    back = spark.read.parquet(out)
    assert len(back.collect()) == COUNT
    rows = sorted(
        tuple(r)[1:] for r in back.select("offset", "id", "amount", "at", "currency").collect()
    )
    assert rows == _expected()
