"""Every decoder and encoder with default options, in whichever session the run has.

This module runs in the main test process (classic, connector jars) and again, through
tests/test_spark_sessions.py, in a plain classic session and against local Spark Connect
servers with and without the jars: ``engine: "auto"`` must pick the native Avro engine exactly
where the spark-avro data source is loaded (on a Connect server: no JVM on the client), and every
function must give serdes' values and bytes there.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass
from pyspark.sql import functions as F

from serdes import SchemaRegistryClient
from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.json_schema import JSONSerializer
from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer
from spark_serdes import (
    from_confluent_avro,
    from_confluent_json,
    from_confluent_protobuf,
    native_avro_available,
    to_confluent_avro,
    to_confluent_json,
    to_confluent_protobuf,
)
from spark_serdes.engines import is_connect

AVRO = {
    "type": "record",
    "name": "Item",
    "namespace": "any.session",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "BLUE"]}},
    ],
}
JSON_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": ["string", "null"]}},
    "required": ["id"],
}
ROWS = [(i, None if i % 3 == 0 else f"näme {i}", ["RED", "BLUE"][i % 2]) for i in range(12)]


def _subject(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}-value"


def _ctx(subject: str) -> Any:
    from confluent_kafka.serialization import MessageField, SerializationContext

    return SerializationContext(subject[: -len("-value")], MessageField.VALUE)


def _plan(column: Any) -> str:
    return str(column)


@pytest.fixture(scope="module")
def has_avro(spark_kind: str) -> bool:
    return spark_kind in ("jars", "connect")


@pytest.fixture(scope="module")
def client(spark_registry: Any) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": spark_registry.url})


def test_probe_says_whether_spark_avro_is_loaded(
    spark: Any, spark_kind: str, has_avro: bool
) -> None:
    assert is_connect(spark) == spark_kind.startswith("connect")
    assert native_avro_available(spark) is has_avro
    assert native_avro_available() is has_avro  # the active session


def test_avro_default_options_decode_and_encode_like_serdes(
    spark: Any, spark_registry: Any, client: SchemaRegistryClient, has_avro: bool
) -> None:
    subject = _subject("any-avro")
    serializer = AvroSerializer(client, json.dumps(AVRO))
    records = [{"id": i, "name": n, "color": c} for i, n, c in ROWS]
    frames = [serializer(r, _ctx(subject)) for r in records]
    df = spark.createDataFrame([(i, f) for i, f in enumerate(frames)], "n int, value binary")
    decoded = from_confluent_avro("value", spark_registry.url, subject=subject)
    assert ("from_avro" in _plan(decoded)) is has_avro  # auto: native exactly with spark-avro
    rows = df.select("n", decoded.alias("v")).orderBy("n").collect()
    assert [r.v.asDict() for r in rows] == records
    encoded = to_confluent_avro(F.col("v"), spark_registry.url, subject=subject)
    back = df.select("n", decoded.alias("v")).select("n", encoded.alias("out"))
    assert [r.out for r in back.orderBy("n").collect()] == frames
    reader = AvroDeserializer(client)
    assert reader(frames[1], _ctx(subject)) == records[1]
    if not has_avro:
        with pytest.raises(RuntimeError, match="spark-avro data source"):
            from_confluent_avro(
                "value", spark_registry.url, subject=subject, options={"engine": "native"}
            )


def test_json_default_options_decode_and_encode_like_serdes(
    spark: Any, spark_registry: Any, client: SchemaRegistryClient
) -> None:
    subject = _subject("any-json")
    serializer = JSONSerializer(json.dumps(JSON_SCHEMA), client)
    values = [{"id": i, "name": n} for i, n, _ in ROWS]
    frames = [serializer(v, _ctx(subject)) for v in values]
    df = spark.createDataFrame([(i, f) for i, f in enumerate(frames)], "n int, value binary")
    decoded = from_confluent_json("value", spark_registry.url, subject=subject)
    assert "from_json" in _plan(decoded)  # Spark's built-in: native in every session
    rows = df.select("n", decoded.alias("v")).orderBy("n").collect()
    assert [(r.v.id, r.v.name) for r in rows] == [(i, n) for i, n, _ in ROWS]
    people = spark.createDataFrame([(i, n) for i, n, _ in ROWS], "id long, name string")
    encoded = to_confluent_json(
        F.struct("id", "name"), spark_registry.url, subject=subject, dataframe=people
    )
    out = [r.out for r in people.select("id", encoded.alias("out")).orderBy("id").collect()]
    assert out == frames


def _item_class() -> Any:
    fdp = descriptor_pb2.FileDescriptorProto(name="any_item.proto", package="anys", syntax="proto3")
    msg = fdp.message_type.add(name="Item")
    opt = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    types = descriptor_pb2.FieldDescriptorProto
    msg.field.add(name="id", number=1, type=types.TYPE_INT64, label=opt, json_name="id")
    msg.field.add(name="name", number=2, type=types.TYPE_STRING, label=opt, json_name="name")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return GetMessageClass(pool.FindMessageTypeByName("anys.Item"))


def test_protobuf_default_options_decode_and_encode_like_serdes(
    spark: Any, spark_registry: Any, client: SchemaRegistryClient
) -> None:
    item = _item_class()
    subject = _subject("any-proto")
    serializer = ProtobufSerializer(item, client, {"use.deprecated.format": False})
    messages = [item(id=i + 1, name=n or "") for i, n, _ in ROWS]
    frames = [serializer(m, _ctx(subject)) for m in messages]
    df = spark.createDataFrame([(i, f) for i, f in enumerate(frames)], "n int, value binary")
    decoded = from_confluent_protobuf("value", spark_registry.url, subject=subject)
    rows = df.select("n", decoded.alias("v")).orderBy("n").collect()
    # proto3 implicit presence: an empty string is null, as Spark's from_protobuf gives it
    assert [(r.v.id, r.v.name) for r in rows] == [(i + 1, n) for i, n, _ in ROWS]
    encoded = to_confluent_protobuf(F.col("v"), spark_registry.url, subject=subject)
    back = df.select("n", decoded.alias("v")).select("n", encoded.alias("out"))
    out = [r.out for r in back.orderBy("n").collect()]
    assert out == frames
    reader = ProtobufDeserializer(item, schema_registry_client=client)
    assert reader(out[1], _ctx(subject)) == messages[1]
