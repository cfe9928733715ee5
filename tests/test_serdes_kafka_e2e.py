"""End to end through a real Kafka broker and our registry: our serializers in a
SerializingProducer and in a plain Producer, our deserializers in a DeserializingConsumer, and
confluent-kafka's deserializers reading the same records (Avro, Protobuf, JSON Schema)."""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka import (
    Consumer,
    DeserializingConsumer,
    Producer,
    SerializingProducer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJSONDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.json_schema import JSONDeserializer, JSONSerializer
from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer
from tests.serdes_helpers import ours, registry_server, theirs  # noqa: F401
from tests.test_serdes_protobuf import classes, make_order  # noqa: F401

USER = json.dumps({
    "type": "record", "name": "User", "namespace": "e2e",
    "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
})  # fmt: skip
EVENT = json.dumps({
    "title": "Event", "type": "object",
    "properties": {"kind": {"type": "string"}, "n": {"type": "integer"}}, "required": ["kind"],
})  # fmt: skip


def _topic(bootstrap: str, name: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(timeout=30)
    return name


def _read_all(bootstrap: str, topic: str, count: int) -> list[Any]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        messages = []
        while len(messages) < count:
            msg = consumer.poll(30)
            assert msg is not None, f"only {len(messages)} of {count} records arrived"
            assert msg.error() is None
            messages.append(msg)
        return messages
    finally:
        consumer.close()


def test_avro_through_kafka(kafka_bootstrap: str, kafka_topic: str, ours, theirs) -> None:
    topic = _topic(kafka_bootstrap, kafka_topic + "_avro")
    producer = SerializingProducer({
        "bootstrap.servers": kafka_bootstrap,
        "key.serializer": AvroSerializer(ours, '"string"'),
        "value.serializer": AvroSerializer(ours, USER),
    })  # fmt: skip
    users = [{"name": f"user {i}", "age": i} for i in range(20)]
    for user in users:
        producer.produce(topic, key=user["name"], value=user)
    assert producer.flush(30) == 0

    consumer = DeserializingConsumer({
        "bootstrap.servers": kafka_bootstrap, "group.id": topic + "-ours",
        "auto.offset.reset": "earliest",
        "key.deserializer": AvroDeserializer(ours), "value.deserializer": AvroDeserializer(ours),
    })  # fmt: skip
    try:
        consumer.subscribe([topic])
        got = []
        while len(got) < len(users):
            msg = consumer.poll(30)
            assert msg is not None and msg.error() is None
            got.append((msg.key(), msg.value()))
    finally:
        consumer.close()
    assert got == [(u["name"], u) for u in users]

    their_key, their_value = CAvroDeserializer(theirs), CAvroDeserializer(theirs)
    for msg, user in zip(_read_all(kafka_bootstrap, topic, len(users)), users, strict=True):
        assert their_key(msg.key(), SerializationContext(topic, MessageField.KEY)) == user["name"]
        assert their_value(msg.value(), SerializationContext(topic, MessageField.VALUE)) == user


@pytest.mark.parametrize("fmt", ["protobuf", "json"])
def test_plain_producer_with_our_serializers(
    kafka_bootstrap: str, kafka_topic: str, ours, theirs, classes, fmt: str
) -> None:
    topic = _topic(kafka_bootstrap, f"{kafka_topic}_{fmt}")
    ctx = SerializationContext(topic, MessageField.VALUE)
    if fmt == "protobuf":
        order = classes["Order"]
        values: list[Any] = [make_order(classes, i) for i in range(10)]
        ser: Any = ProtobufSerializer(order, ours)
        mine: Any = ProtobufDeserializer(order, schema_registry_client=ours)
        as_dict: Any = ProtobufDeserializer(None, schema_registry_client=ours)
        confluents: Any = CProtoDeserializer(order, {"use.deprecated.format": False}, theirs)
        expected_dicts = [{"id": v.id, "delta": v.delta} for v in values]
    else:
        values = [{"kind": "click", "n": i} for i in range(10)]
        ser = JSONSerializer(EVENT, ours)
        mine = JSONDeserializer(None, schema_registry_client=ours)
        as_dict = JSONDeserializer(EVENT)
        confluents = CJSONDeserializer(None, schema_registry_client=theirs)
        expected_dicts = values
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    for value in values:
        producer.produce(topic, value=ser(value, ctx))
    assert producer.flush(30) == 0
    messages = _read_all(kafka_bootstrap, topic, len(values))
    assert [mine(m.value(), ctx) for m in messages] == values
    assert [confluents(m.value(), ctx) for m in messages] == values
    dicts = [as_dict(m.value(), ctx) for m in messages]
    assert [{k: d[k] for k in expected_dicts[0]} for d in dicts] == expected_dicts
