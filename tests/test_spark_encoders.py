"""to_confluent_avro / to_confluent_protobuf / to_confluent_json against the project's serdes.

Round trips: serdes bytes -> decoded Spark columns -> encoded again must give the same bytes
(both Avro engines), decoded back by from_confluent_avro and confluent-kafka's deserializers;
the documented differences are pinned; one Spark Kafka sink write is read back by a
confluent-kafka consumer. Every error path says what is wrong, and where.
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
import subprocess
import sys
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass
from pyspark.sql import functions as F

from serdes import Schema, SchemaRegistryClient
from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.json_schema import JSONSerializer
from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer
from spark_serdes import (
    from_confluent_avro,
    from_confluent_json,
    from_confluent_protobuf,
    to_confluent_avro,
    to_confluent_json,
    to_confluent_protobuf,
)
from tests.test_spark_avro_types import SCHEMA as ALL_TYPES_TEXT
from tests.test_spark_avro_types import record

ALL_TYPES = json.loads(ALL_TYPES_TEXT)
PROTOS = Path(__file__).parent / "data" / "serdes"
ROWS = 30


def _ctx(subject: str) -> SerializationContext:
    assert subject.endswith("-value")
    return SerializationContext(subject[: -len("-value")], MessageField.VALUE)


def _client(server: Any) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": server.url})


def _key(data: bytes | None) -> bytes:
    return data or b""


def _subject(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}-value"


# -- Avro -----------------------------------------------------------------------------------------

# [int, long] is left out here: Spark (and so both engines) writes its long branch, fastavro the
# first branch the value fits (pinned in test_avro_documented_differences_from_fastavro).
SCHEMA = copy.deepcopy(ALL_TYPES)
SCHEMA["fields"] = [f for f in SCHEMA["fields"] if f["name"] != "int_or_long"]


def _avro_record(n: int) -> dict[str, Any]:
    out = record(n)
    del out["int_or_long"]
    return out


@pytest.fixture(scope="module")
def avro_case(spark, spark_registry):  # type: ignore[no-untyped-def]
    """serdes' bytes of ROWS records (and a tombstone), and the same records decoded."""
    subject = _subject("enc-all")
    serializer = AvroSerializer(_client(spark_registry), json.dumps(SCHEMA))
    ctx = _ctx(subject)
    payloads = [serializer(_avro_record(n), ctx) for n in range(ROWS)]
    rows = [(n, p) for n, p in enumerate(payloads)] + [(ROWS, None)]
    framed = spark.createDataFrame(rows, "n int, value binary")
    decoded = framed.select(
        "n",
        "value",
        from_confluent_avro("value", spark_registry.url, subject=subject).alias("v"),
    ).cache()
    assert decoded.count() == ROWS + 1
    return subject, decoded


@pytest.mark.parametrize("engine", ["native", "python"])
def test_avro_bytes_equal_serdes_and_read_back(avro_case, spark_registry, engine) -> None:  # type: ignore[no-untyped-def]
    subject, decoded = avro_case
    encoded = decoded.select(
        "n",
        "value",
        "v",
        to_confluent_avro(
            "v",
            spark_registry.url,
            subject=subject,
            schema=SCHEMA,
            options={"engine": engine},
            dataframe=decoded,
        ).alias("out"),
    )
    again = encoded.select(
        "n", "v", from_confluent_avro("out", spark_registry.url, subject=subject).alias("back")
    )
    rows = sorted(encoded.collect())
    assert len(rows) == ROWS + 1
    for row in rows:
        assert row.out == row.value, row.n  # serdes' bytes exactly; the tombstone stays None
    assert all(r.v == r.back for r in again.collect())
    theirs = CAvroDeserializer(CClient({"url": spark_registry.url}))
    ours = AvroDeserializer(_client(spark_registry))
    ctx = _ctx(subject)
    for row in rows[:5]:
        expected = _avro_record(row.n)
        assert theirs(row.out, ctx) == ours(row.out, ctx)
        assert ours(row.out, ctx)["price"] == expected["price"]
        assert ours(row.out, ctx)["ts_us"] == expected["ts_us"]


def test_avro_documented_differences_from_fastavro(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    """[int, long] unions and -2**(8k-1) decimals: both engines write what spark-avro does."""
    schema = {
        "type": "record", "name": "Diff", "namespace": "enc",
        "fields": [
            {"name": "n", "type": ["int", "long"]},
            {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5,
                                   "scale": 2}},
        ],
    }  # fmt: skip
    subject = _subject("enc-diff")
    df = spark.createDataFrame(
        [(7, Decimal("-1.28")), (8, Decimal("1.28"))], "n long, d decimal(5,2)"
    )
    col = F.struct("n", "d")
    outs = {
        engine: [
            r.b
            for r in df.select(
                to_confluent_avro(
                    col, spark_registry.url, subject=subject, schema=schema,
                    options={"engine": engine}, dataframe=df,
                ).alias("b")
            ).collect()
        ]
        for engine in ("native", "python")
    }  # fmt: skip
    assert outs["native"] == outs["python"]
    serdes = AvroSerializer(_client(spark_registry), json.dumps(schema))
    ctx = _ctx(subject)
    fast = [
        serdes({"n": 7, "d": Decimal("-1.28")}, ctx),
        serdes({"n": 8, "d": Decimal("1.28")}, ctx),
    ]
    ours = outs["native"]
    assert ours[0][5:] == b"\x02\x0e" + b"\x02\x80"  # long branch; decimal -128 in one byte
    assert fast[0][5:] == b"\x00\x0e" + b"\x04\xff\x80"  # int branch; two bytes
    assert ours[1][5:] == b"\x02\x10" + b"\x04\x00\x80" and fast[1][5:] == b"\x00\x10\x04\x00\x80"
    reader = AvroDeserializer(_client(spark_registry))
    assert [reader(b, ctx) for b in ours] == [reader(b, ctx) for b in fast]


def test_avro_conveniences_and_primitive_schema(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    """int -> long promotion, a missing field's default, a one-branch value in a union,
    fields in any order; a primitive schema on a primitive column; nulls become tombstones."""
    schema = {
        "type": "record", "name": "Conv", "namespace": "enc",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "choice", "type": ["int", "string"]},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "level", "type": "int", "default": 3},
        ],
    }  # fmt: skip
    subject = _subject("enc-conv")
    df = spark.createDataFrame([("x", 1), ("y", 2)], "choice string, id int")
    out = df.select(
        to_confluent_avro(
            F.struct("choice", "id"), spark_registry.url, subject=subject, schema=schema,
            dataframe=df,
        ).alias("b")
    )  # fmt: skip
    reader = AvroDeserializer(_client(spark_registry))
    got = [reader(r.b, None) for r in out.collect()]
    assert sorted(got, key=str) == [
        {"id": 1, "choice": "x", "note": None, "level": 3},
        {"id": 2, "choice": "y", "note": None, "level": 3},
    ]
    values = spark.createDataFrame([("a", b"\x00a"), (None, None)], "s string, raw binary")
    for schema_text, column, value in (('"string"', "s", "a"), ('"bytes"', "raw", b"\x00a")):
        prim = _subject("enc-prim")
        # plain "bytes": the value without an Avro length, as Confluent's serializers write it
        expected = AvroSerializer(_client(spark_registry), schema_text)(value, _ctx(prim))
        for engine in ("native", "python"):
            rows = values.select(
                to_confluent_avro(
                    column, spark_registry.url, subject=prim, schema=schema_text,
                    options={"engine": engine}, dataframe=values,
                ).alias("b")
            ).collect()  # fmt: skip
            assert sorted((r.b for r in rows), key=_key) == [None, expected]


def test_avro_schema_choice_auto_register_and_versions(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    v1 = {"type": "record", "name": "V", "fields": [{"name": "a", "type": "int"}]}
    v2 = {**v1, "fields": [*v1["fields"], {"name": "b", "type": "string", "default": ""}]}
    subject = _subject("enc-ver")
    df = spark.createDataFrame([(1, "x")], "a int, b string")
    url = spark_registry.url

    def frame_id(col: Any) -> int:
        return int.from_bytes(df.select(col.alias("b")).first().b[1:5], "big")

    no_register = {"auto.register.schemas": "false"}
    with pytest.raises(ValueError, match=r"not registered under subject.*auto\.register\.schemas"):
        to_confluent_avro(
            F.struct("a"), url, subject=subject, schema=v1, options=no_register, dataframe=df
        )
    with pytest.raises(ValueError, match="has no version latest and no schema was given"):
        to_confluent_avro(F.struct("a"), url, subject=subject, dataframe=df)
    id1 = frame_id(to_confluent_avro(F.struct("a"), url, subject=subject, schema=v1, dataframe=df))
    client = _client(spark_registry)
    assert client.get_latest_version(subject).schema_id == id1  # auto-registered
    id2 = int(client.register_schema(subject, Schema(json.dumps(v2), "AVRO")))
    assert id2 != id1
    both = F.struct("a", "b")
    assert frame_id(to_confluent_avro(both, url, subject=subject, dataframe=df)) == id2
    assert frame_id(to_confluent_avro(F.struct("a"), url, subject=subject, version=1,
                                      dataframe=df)) == id1  # fmt: skip
    looked_up = to_confluent_avro(
        F.struct("a"), url, subject=subject, schema=v1, options=no_register, dataframe=df
    )
    assert frame_id(looked_up) == id1
    assert len(client.get_versions(subject)) == 2


def test_avro_call_time_errors_name_the_field(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    schema = {
        "type": "record", "name": "Err", "namespace": "enc",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "tags", "type": {"type": "map", "values": "string"}},
            {"name": "u", "type": ["int", "string", "boolean"], "default": 0},
            {"name": "p", "type": ["null", {"type": "bytes", "logicalType": "decimal",
                                            "precision": 9, "scale": 2}], "default": None},
            {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}],
             "default": None},
            {"name": "xs", "type": {"type": "array", "items": "int"}, "default": []},
        ],
    }  # fmt: skip
    subject = _subject("enc-err")
    url = spark_registry.url
    df = spark.createDataFrame(
        [(1, 2, {"a": "b"}, {1: "x"}, 1.5, Decimal("1.5"), [1])],
        "id int, extra int, tags map<string,string>, bad_tags map<int,string>, d double, "
        "wide decimal(12,4), xs array<int>",
    )

    def call(col: Any, **kwargs: Any) -> Any:
        return to_confluent_avro(col, url, subject=subject, schema=schema, dataframe=df, **kwargs)

    cases = [
        (F.struct("tags"), r"field id of the Avro schema is missing from the struct"),
        (F.struct("id", "tags", "extra"), r"field\(s\) \['extra'\] that Avro record enc.Err"),
        (F.struct(F.col("d").alias("id"), "tags"), r"field id: Spark type double cannot be"),
        (F.struct("id", F.col("bad_tags").alias("tags")), r"Avro map keys are strings"),
        (F.struct("id", "tags", F.col("d").alias("u")), r"field u: .*matches none of the union"),
        (F.col("id"), r"Spark type int cannot be written as Avro .*record"),
        (F.struct("id", "tags", F.lit(1).alias("u"), F.col("wide").alias("p")),
         r"field p: Spark decimal\(12,4\) does not fit Avro decimal\(9,2\) without loss"),
        (F.struct("id", "tags", F.lit(1).alias("u"), F.col("tags").alias("day")),
         r"field day: Spark type map<string,string> cannot be written as Avro"),
        (F.struct("id", "tags", F.lit(1).alias("u")),
         r"field xs is missing from the struct; its default \[\] is not a primitive"),
        (F.struct("id", "tags"),
         r"field u is missing from the struct; its default 0 .* is not filled in automatically"),
        (F.struct("id", "tags", F.lit(1).alias("u"), F.col("tags").alias("xs")),
         r"field xs: Spark type map<string,string> cannot be written as Avro"),
    ]  # fmt: skip
    for col, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            call(col)
        assert f"subject '{subject}'" in str(info.value) and "schema id" in str(info.value)
    with pytest.raises(ValueError, match=r"registering the schema under subject .* failed"):
        incompatible = {**schema, "fields": [{"name": "id", "type": "string"}]}
        to_confluent_avro(F.struct("id"), url, subject=subject, schema=incompatible, dataframe=df)
    with pytest.raises(ValueError, match="needs a subject"):
        to_confluent_avro(F.struct("id"), url, subject="", schema=schema, dataframe=df)
    with pytest.raises(TypeError, match=r"schema must be a string, a dict or a serdes\.Schema"):
        bad: Any = 42
        to_confluent_avro(F.struct("id"), url, subject=subject, schema=bad, dataframe=df)
    # without dataframe= the type is checked when the query runs (the Python engine's workers)
    later = to_confluent_avro(F.struct("id"), url, subject=subject, options={"engine": "python"})
    with pytest.raises(Exception, match="field tags of the Avro schema is missing"):
        df.select(later).collect()
    with pytest.raises(ValueError, match=r"unknown options \['mode'\]"):
        call(F.struct("id", "tags"), options={"mode": "PERMISSIVE"})
    with pytest.raises(ValueError, match="engine must be one of"):
        call(F.struct("id", "tags"), options={"engine": "jvm"})
    with pytest.raises(ValueError, match=r"auto\.register\.schemas must be true or false"):
        call(F.struct("id", "tags"), options={"auto.register.schemas": "maybe"})
    json_subject = _subject("enc-json-not-avro")
    _client(spark_registry).register_schema(json_subject, Schema('{"type":"object"}', "JSON"))
    with pytest.raises(ValueError, match="is JSON, not AVRO"):
        to_confluent_avro(F.struct("id"), url, subject=json_subject, dataframe=df)


@pytest.mark.parametrize("engine", ["native", "python"])
def test_avro_run_time_errors_name_subject_id_and_field(spark, spark_registry, engine) -> None:  # type: ignore[no-untyped-def]
    schema = {
        "type": "record", "name": "Run", "namespace": "enc",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED"]}},
            {"name": "hash", "type": {"type": "fixed", "name": "H", "size": 2}},
            {"name": "xs", "type": {"type": "array", "items": "long"}},
        ],
    }  # fmt: skip
    subject = _subject("enc-run")
    url = spark_registry.url
    good = (1, "RED", b"ab", [1])
    cases = [
        ((None, "RED", b"ab", [1]), 'field id is null, but its Avro type "int" has no null'),
        ((1, "BLUE", b"ab", [1]), "field color: BLUE is not a symbol of enum enc.Color"),
        ((1, "RED", b"abc", [1]), "field hash: 3 bytes, but fixed enc.H has size 2"),
        ((1, "RED", b"ab", [1, None]), r"field xs\[\] is null"),
    ]
    for bad, message in cases:
        df = spark.createDataFrame([good, bad], "id int, color string, hash binary, xs array<long>")
        out = df.select(
            to_confluent_avro(
                F.struct("*"), url, subject=subject, schema=schema, options={"engine": engine},
                dataframe=df,
            )
        )  # fmt: skip
        with pytest.raises(Exception, match=message) as info:
            out.collect()
        assert f"to_confluent_avro (subject '{subject}', schema id " in str(info.value)
    fine = spark.createDataFrame([good], "id int, color string, hash binary, xs array<long>")
    out = fine.select(to_confluent_avro(F.struct("*"), url, subject=subject, dataframe=fine))
    assert AvroDeserializer(_client(spark_registry))(out.first()[0], None) == {
        "id": 1, "color": "RED", "hash": b"ab", "xs": [1],
    }  # fmt: skip


def test_avro_through_spark_kafka_sink_to_a_confluent_consumer(
    spark, spark_registry, kafka_bootstrap: str
) -> None:  # type: ignore[no-untyped-def]
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"enc-sink-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    schema = {
        "type": "record", "name": "Payment", "namespace": "enc",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "note", "type": ["null", "string"]},
        ],
    }  # fmt: skip
    at = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    df = spark.createDataFrame(
        [(n, at.replace(tzinfo=None), None if n % 2 else f"n{n}") for n in range(20)],
        "id long, at timestamp, note string",
    )
    (
        df.select(
            F.col("id").cast("string").alias("key"),
            to_confluent_avro(
                F.struct("*"), spark_registry.url, subject=f"{topic}-value", schema=schema,
                dataframe=df,
            ).alias("value"),
        )
        .write.format("kafka")
        .option("kafka.bootstrap.servers", kafka_bootstrap)
        .option("topic", topic)
        .save()
    )  # fmt: skip
    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": topic, "enable.auto.commit": False}
    )
    deserializer = CAvroDeserializer(CClient({"url": spark_registry.url}))
    got = {}
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while len(got) < 20:
            msg = consumer.poll(30)
            assert msg is not None and msg.error() is None, f"{len(got)} of 20 records arrived"
            value = deserializer(msg.value(), SerializationContext(topic, MessageField.VALUE))
            got[int(msg.key())] = value
    finally:
        consumer.close()
    assert got == {n: {"id": n, "at": at, "note": None if n % 2 else f"n{n}"} for n in range(20)}


# -- JSON -----------------------------------------------------------------------------------------

PERSON = {
    "title": "Person", "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "score": {"type": ["number", "null"]},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
        "address": {"type": ["object", "null"], "properties": {"city": {"type": "string"}}},
        "born": {"type": "string"},
        "raw": {"type": "string"},
    },
    "required": ["name", "age"],
}  # fmt: skip
PERSON_DDL = (
    "name string, age int, score double, ok boolean, tags array<string>, attrs map<string,int>, "
    "address struct<city: string>, born date, raw binary"
)


def _people(n: int) -> list[tuple]:
    return [
        (
            f'pérson "{i}"/\u0007',
            i,
            None if i % 3 == 0 else i + 0.5,
            i % 2 == 0,
            [f"t{k}" for k in range(i % 3)],
            {"x": i, "y": -i},
            None if i % 2 else {"city": f"c{i}"},
            dt.date(2000, 1, 1) + dt.timedelta(days=i),
            bytes([i, 255]),
        )
        for i in range(n)
    ]


def _as_serdes_value(row: tuple) -> dict[str, Any]:
    keys = ["name", "age", "score", "ok", "tags", "attrs", "address", "born", "raw"]
    value = dict(zip(keys, row, strict=True))
    value["born"] = value["born"].isoformat()
    value["raw"] = base64.standard_b64encode(value["raw"]).decode()
    return value


def test_json_engines_equal_serdes_bytes_and_validate(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    subject = _subject("enc-json")
    url = spark_registry.url
    rows = _people(12)
    raw = spark.createDataFrame([*rows, (None,) * 9], PERSON_DDL)
    person = F.struct(*[F.col(c) for c in raw.columns])
    df = raw.select(F.when(F.col("name").isNotNull(), person).alias("p"))  # and a tombstone
    outs = {}
    for engine, validate in (("python", "true"), ("native", "false"), ("python", "false")):
        col = to_confluent_json(
            "p", url, subject=subject, schema=json.dumps(PERSON), dataframe=df,
            options={"engine": engine, "validate": validate},
        )  # fmt: skip
        outs[(engine, validate)] = [r[0] for r in df.select(col).collect()]
    serializer = JSONSerializer(json.dumps(PERSON), _client(spark_registry))
    expected = [serializer(_as_serdes_value(r), _ctx(subject)) for r in rows]
    for out in outs.values():
        assert sorted(out, key=_key) == sorted([*expected, None], key=_key)
    decoded = from_confluent_json(col, url, subject=subject, options={"validate": "false"})
    back = df.select("p", decoded.alias("b")).where(F.col("p").isNotNull())
    for row in back.collect():  # and back through from_confluent_json (integers become long)
        assert (row.b.name, row.b.age, row.b.tags) == (row.p.name, row.p.age, row.p.tags)
    first = expected[1][5:]
    assert first.startswith(b'{"name":"p\xc3\xa9rson \\"1\\"/\\u0007","age":1,"score":1.5,')


def test_json_documented_differences_of_native_to_json(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    subject = _subject("enc-json-diff")
    schema = {"type": "object", "properties": {"at": {"type": "string"}, "big": {}}}
    df = spark.createDataFrame(
        [(dt.datetime(2024, 1, 1, 12, 30, 15, 123000), 1e7)], "at timestamp, big double"
    )
    docs = {
        engine: df.select(
            to_confluent_json(
                F.struct("at", "big"), spark_registry.url, subject=subject, schema=schema,
                options={"engine": engine, "validate": "false"}, dataframe=df,
            )
        ).first()[0][5:]
        for engine in ("native", "python")
    }  # fmt: skip
    assert docs["native"] == b'{"at":"2024-01-01T12:30:15.123Z","big":1.0E7}'
    assert docs["python"] == b'{"at":"2024-01-01T12:30:15.123000+00:00","big":10000000.0}'
    at = dt.datetime(2024, 1, 1, 12, 30, 15, 123000, tzinfo=dt.UTC)
    serdes = JSONSerializer(json.dumps(schema), _client(spark_registry), conf={"validate": False})
    assert serdes({"at": at, "big": 1e7}, _ctx(subject))[5:] == docs["python"]
    assert orjson.loads(docs["native"])["big"] == orjson.loads(docs["python"])["big"]


def test_json_errors(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    subject = _subject("enc-json-err")
    url = spark_registry.url
    strict = {**PERSON, "additionalProperties": False}
    df = spark.createDataFrame(_people(2), PERSON_DDL)

    def call(col: Any, schema: Any = PERSON, **options: str) -> Any:
        name = subject if schema is PERSON else subject.replace("-value", "-strict-value")
        return to_confluent_json(
            col, url, subject=name, schema=json.dumps(schema), options=options, dataframe=df
        )

    with pytest.raises(ValueError, match=r"required property\(ies\) \['age'\] missing"):
        call(F.struct("name"))
    with pytest.raises(
        ValueError, match="field age: Spark type string cannot be JSON type integer"
    ):
        call(F.struct("name", F.col("name").alias("age")))
    with pytest.raises(ValueError, match=r"field\(s\) \['extra'\] are not properties"):
        call(F.struct("name", "age", F.lit(1).alias("extra")), strict)
    with pytest.raises(ValueError, match="validate needs the Python engine"):
        call(F.struct("name", "age"), engine="native")
    negative = df.select(call(F.struct("name", (F.col("age") - 5).alias("age"))))
    with pytest.raises(Exception, match=r"subject '.*', schema id \d+: record does not match the "
                       r"JSON schema at \$\.age"):  # fmt: skip
        negative.collect()
    # a primitive schema and column (no schema given: the latest): the Python engine
    prim = _subject("enc-json-prim")
    schema_id = _client(spark_registry).register_schema(prim, Schema('{"type":"string"}', "JSON"))
    names = spark.createDataFrame([("a",), (None,)], "s string")
    with pytest.raises(ValueError, match=r"native engine .* takes structs"):
        to_confluent_json(
            "s", url, subject=prim, options={"engine": "native", "validate": "false"},
            dataframe=names,
        )  # fmt: skip
    col = to_confluent_json("s", url, subject=prim, dataframe=names)
    got = sorted((r[0] for r in names.select(col).collect()), key=_key)
    assert got == [None, b"\x00" + int(schema_id).to_bytes(4, "big") + b'"a"']


# -- Protobuf -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def order_classes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("enc-protos") / "set.pb"
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTOS}", "--include_imports",
         f"--descriptor_set_out={out}", "shop/order.proto"],
        check=True, capture_output=True,
    )  # fmt: skip
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(file)
    return {
        name: GetMessageClass(pool.FindMessageTypeByName(f"shop.{name}"))
        for name in ("Order", "Order.Line")
    }


ORDER_DDL = (
    "id long, customer string, tags array<string>, attrs map<string,long>, "
    "ship_to struct<street: string, zip: int>, created timestamp, status string, price double, "
    "paid boolean, blob binary, card string, cash int, "
    "lines array<struct<sku: string, qty: int>>, delta int"
)


def _order_row(i: int) -> tuple:
    created = dt.datetime(2026, 1, 1) + dt.timedelta(seconds=i, microseconds=7 * i)
    return (
        2**40 + i, f"cüstomer {i}", ["a", "b"][: i % 3], {"x": -i, "a": i} if i % 2 else {"x": -i},
        {"street": f"{i} Main",
        "zip": 1000 + i}, created, ["NEW", "PAID"][i % 2], i * 1.5, i % 2 == 0, b"\x00\xff" * i,
        "4242" if i % 2 else None, None if i % 2 else i, [{"sku": "sku-1", "qty": i}], -i,
    )  # fmt: skip


def _order_message(classes: dict[str, Any], i: int) -> Any:
    row = _order_row(i)
    order = classes["Order"](
        id=row[0], customer=row[1], tags=row[2], attrs=row[3], ship_to=row[4],
        status=row[6], price=row[7], paid=row[8], blob=row[9], delta=row[13],
        lines=row[12],
    )  # fmt: skip
    order.created.FromDatetime(row[5])
    if row[10] is not None:
        order.card = row[10]
    else:
        order.cash = row[11]
    return order


def test_protobuf_bytes_equal_serdes_with_index_paths(spark, spark_registry, order_classes) -> None:  # type: ignore[no-untyped-def]
    subject = _subject("enc-orders")
    ctx = _ctx(subject)
    client = _client(spark_registry)
    serializer = ProtobufSerializer(order_classes["Order"], client)
    orders = [_order_message(order_classes, i) for i in range(8)]
    expected = [serializer(o, ctx) for o in orders]  # registers the schema and its import
    raw = spark.createDataFrame([_order_row(i) for i in range(9)], ORDER_DDL)
    order = F.struct(*[F.col(c) for c in raw.columns])
    df = raw.select(  # the ninth row: a null struct, a tombstone
        F.col("id").alias("k"), F.when(F.col("id") < 2**40 + 8, order).alias("o")
    )
    out = df.select(
        "k", to_confluent_protobuf("o", spark_registry.url, subject=subject, dataframe=df)
    ).collect()
    got = [r[1] for r in sorted(out, key=lambda r: r.k)]
    assert got[8] is None  # the tombstone
    # deterministic serialization (map entries by key); serdes does not sort map entries, so
    # its bytes are the same when a map has at most one entry (the even rows)
    assert got[:8] == [
        e[:6] + o.SerializeToString(deterministic=True)
        for e, o in zip(expected, orders, strict=True)
    ]
    assert got[:8:2] == expected[::2]
    reader = ProtobufDeserializer(order_classes["Order"], schema_registry_client=client)
    assert [reader(b, ctx) for b in got[:8]] == orders
    lines = spark.createDataFrame([("s", 2)], "sku string, qty int")
    line = lines.select(
        to_confluent_protobuf(F.struct("*"), spark_registry.url, subject=subject,
                              message="Order.Line", dataframe=lines)
    ).first()[0]  # fmt: skip
    assert line[5:8] == b"\x04\x00\x00"  # index path [0, 0]: count 2, then 0 and 0 (zig-zag)
    line_serdes = ProtobufSerializer(order_classes["Order.Line"], client)
    assert line == line_serdes(order_classes["Order.Line"](sku="s", qty=2), ctx)


def test_protobuf_schema_text_and_errors(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    proto = """syntax = "proto3";
package enc;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
message Ping {
  enum Kind { A = 0; B = 1; }
  string id = 1;
  Kind kind = 2;
  google.protobuf.Timestamp at = 3;
  repeated int64 xs = 4;
  google.protobuf.Int32Value w = 5;
  google.protobuf.Duration d = 6;
  map<string, Sub> subs = 7;
  oneof pick { string a = 8; int32 b = 9; }
}
message Sub { int32 n = 1; }
"""
    subject = _subject("enc-ping")
    url = spark_registry.url
    at = dt.datetime(1969, 12, 31, 23, 59, 59, 500000)
    df = spark.createDataFrame([("p", "B", at, [1, 2])], "id string, kind string, at timestamp, "
                               "xs array<long>")  # fmt: skip
    data = df.select(
        to_confluent_protobuf(F.struct("*"), url, subject=subject, schema=proto, dataframe=df)
    ).first()[0]
    value = ProtobufDeserializer(None, schema_registry_client=_client(spark_registry))(data, None)
    assert value["id"] == "p" and value["kind"] == "B" and value["xs"] == [1, 2]
    assert value["at"] == {"seconds": -1, "nanos": 500_000_000}
    frames = spark.createDataFrame([(data,)], "value binary")
    back = frames.select(from_confluent_protobuf("value", url, subject=subject).alias("v"))
    decoded = back.first().v.asDict()  # and back through from_confluent_protobuf
    assert {k: decoded[k] for k in df.columns} == df.first().asDict()
    more = spark.createDataFrame(
        [("q", 7, dt.timedelta(seconds=-90, microseconds=5), {"k": (3,)})],
        "id string, w int, d interval day to second, subs map<string, struct<n: int>>",
    )
    data = more.select(
        to_confluent_protobuf(F.struct("*"), url, subject=subject, dataframe=more)
    ).first()[0]
    value = ProtobufDeserializer(None, schema_registry_client=_client(spark_registry))(data, None)
    assert value["w"] == {"value": 7} and value["subs"] == {"k": {"n": 3}}
    assert value["d"] == {"seconds": -89, "nanos": -999_995_000}  # one sign, as Duration wants
    both = more.select(
        to_confluent_protobuf(
            F.struct("id", F.lit("x").alias("a"), F.lit(1).alias("b")), url, subject=subject,
            dataframe=more,
        )
    )  # fmt: skip
    with pytest.raises(Exception, match=r"oneof pick of enc\.Ping has several fields set"):
        both.collect()

    def call(col: Any, **kwargs: Any) -> Any:
        return to_confluent_protobuf(col, url, subject=subject, dataframe=df, **kwargs)

    with pytest.raises(ValueError, match=r"struct field\(s\) \['nope'\] are not fields of message"):
        call(F.struct("id", F.lit(1).alias("nope")))
    with pytest.raises(
        ValueError, match="field xs: Spark type string cannot be written as repeated"
    ):
        call(F.struct(F.col("id").alias("xs")))
    with pytest.raises(ValueError, match="field id: Spark type bigint cannot be written as"):
        call(F.struct(F.lit(1).cast("long").alias("id")))
    with pytest.raises(ValueError, match="has no message 'Pong'"):
        call(F.struct("id"), message="Pong")
    with pytest.raises(ValueError, match="has no native engine"):
        call(F.struct("id"), options={"engine": "native"})
    bad = df.select(call(F.struct("id", F.lit("C").alias("kind"))))
    with pytest.raises(Exception, match=r"schema id \d+: record does not encode as enc.Ping: "
                       r"ValueError: unknown enum label \"C\""):  # fmt: skip
        bad.collect()
    by_number = df.select(F.struct("id", F.lit(1).alias("kind")).alias("s"))
    encoded = to_confluent_protobuf("s", url, subject=subject, dataframe=by_number)
    assert by_number.select(encoded).first()[0][6:] == b"\n\x01p\x10\x01"  # id "p", kind B


def test_arrow_rows_built_column_by_column_equal_to_pylist() -> None:
    """The Python engines' batch -> rows conversion: nulls at every level, maps, slices."""
    import pyarrow as pa

    from spark_serdes.arrow_values import arrow_to_pylist

    kind = pa.struct([
        ("a", pa.list_(pa.struct([
            ("x", pa.int32()), ("m", pa.map_(pa.string(), pa.list_(pa.int64()))),
        ]))),
        ("b", pa.string()),
        ("e", pa.struct([])),
    ])  # fmt: skip
    values: list[Any] = []
    for n in range(300):
        items = [
            None if k % 3 == 2 else {
                "x": None if k % 2 else k,
                "m": None if k % 4 == 3 else
                [(f"k{j}", None if j % 2 else [j, None]) for j in range(k % 3)],
            }
            for k in range(n % 6)
        ]  # fmt: skip
        row = {"a": None if n % 5 == 0 else items, "b": None if n % 2 else str(n), "e": {}}
        values.append(None if n % 7 == 0 else row)
    array = pa.array(values, kind)
    for part in (array, array.slice(13, 200), array.slice(299, 1), array.slice(0, 0)):
        assert arrow_to_pylist(part) == part.to_pylist()
    assert arrow_to_pylist(array) == values


def test_avro_python_engine_without_fastavro_internals_writes_the_same() -> None:
    """The public schemaless_writer path (used when fastavro's write_data probe fails)."""
    import pyarrow as pa

    from spark_serdes.avro_encoder import AvroBatchEncoder

    schema = {
        "type": "record", "name": "W", "namespace": "enc",
        "fields": [
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "m", "type": {"type": "map", "values": ["null", "long"]}},
        ],
    }  # fmt: skip
    kind = pa.struct(
        [("at", pa.timestamp("us", tz="UTC")), ("m", pa.map_(pa.string(), pa.int64()))]
    )
    at = dt.datetime(1969, 12, 31, 23, 59, 59, 999500, tzinfo=dt.UTC)  # floor: -1 ms
    batch = pa.array([{"at": at, "m": [("a", 1), ("b", None)]}, None], kind)
    fast = AvroBatchEncoder(json.dumps(schema), 7, "test")
    public = AvroBatchEncoder(json.dumps(schema), 7, "test")
    public.write_data = None
    expected = b"\x00\x00\x00\x00\x07" + b"\x01" + b"\x04\x02a\x02\x02\x02b\x00\x00"
    assert fast.encode(batch).to_pylist() == public.encode(batch).to_pylist() == [expected, None]


# -- without dataframe=: the type is known only when the query runs --------------------------------


@pytest.mark.parametrize("engine", ["auto", "native", "python"])
def test_avro_plain_call_without_dataframe_writes_the_same_bytes(
    avro_case, spark_registry, engine
) -> None:  # type: ignore[no-untyped-def]
    subject, decoded = avro_case
    col = to_confluent_avro(
        "v", spark_registry.url, subject=subject, schema=SCHEMA, options={"engine": engine}
    )
    rows = decoded.select("value", col.alias("out")).collect()
    assert len(rows) == ROWS + 1
    assert [r.out for r in rows] == [r.value for r in rows]  # the tombstone stays None


def test_avro_without_dataframe_fits_and_fails_on_the_workers(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    schema = {
        "type": "record",
        "name": "Plain",
        "namespace": "enc",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "score", "type": ["null", "long"]},
            {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A"]}},
            {"name": "n", "type": "int", "default": 7},
        ],
    }
    subject = _subject("enc-plain")
    url = spark_registry.url
    ddl = "id int, score int, kind string"
    df = spark.createDataFrame([(1, 5, "A"), (2, None, "A")], ddl)
    source = df
    given = source.select(
        to_confluent_avro(
            F.struct("*"),
            url,
            subject=subject,
            schema=schema,
            options={"engine": "python"},
            dataframe=source,
        )
    )
    plain = source.select(
        to_confluent_avro(
            F.struct("*"), url, subject=subject, schema=schema, options={"engine": "python"}
        )
    )
    expected = [r[0] for r in given.collect()]
    assert [r[0] for r in plain.collect()] == expected  # int -> long (also in a union), default
    reader = AvroDeserializer(_client(spark_registry))
    assert reader(expected[0], None) == {"id": 1, "score": 5, "kind": "A", "n": 7}
    nulls = spark.createDataFrame([(None,), (1,)], "id int").select(
        F.when(
            F.col("id").isNotNull(),
            F.struct("id", F.lit(None).cast("int").alias("score"), F.lit("A").alias("kind")),
        ).alias("s")
    )
    got = nulls.select(to_confluent_avro("s", url, subject=subject)).collect()
    assert sorted(r[0] is None for r in got) == [False, True]  # a null row stays null
    label = f"to_confluent_avro \\(subject '{subject}', schema id \\d+\\): "
    bad = {
        'field id is null, but its Avro type "long" has no null': spark.createDataFrame(
            [(None, 1, "A")], ddl
        ),
        "field kind: B is not a symbol of enum enc.Kind": spark.createDataFrame([(1, 1, "B")], ddl),
        r"the struct has field\(s\) \['extra'\] that Avro record enc.Plain": spark.createDataFrame(
            [(1, 1, "A", 0)], f"{ddl}, extra int"
        ),
        "field kind: Spark type int cannot be written as Avro": spark.createDataFrame(
            [(1, 1, 0)], "id int, score int, kind int"
        ),
    }
    for message, frame in bad.items():
        out = frame.select(
            to_confluent_avro(F.struct("*"), url, subject=subject, options={"engine": "python"})
        )
        with pytest.raises(Exception, match=label + message):
            out.collect()
    # native without the type: Spark's own to_avro with the writer schema (no int -> long)
    native = df.select(
        to_confluent_avro(F.struct("*"), url, subject=subject, options={"engine": "native"})
    )
    with pytest.raises(Exception, match="IncompatibleSchemaException: Cannot convert SQL type"):
        native.collect()
    exact = df.select(
        F.struct(
            F.col("id").cast("long").alias("id"),
            F.col("score").cast("long").alias("score"),
            "kind",
            F.lit(7).alias("n"),
        ).alias("s")
    )
    col = to_confluent_avro("s", url, subject=subject, options={"engine": "native"})
    assert [r[0] for r in exact.select(col).collect()] == expected


def test_protobuf_and_json_plain_call_without_dataframe(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    url = spark_registry.url
    proto = 'syntax = "proto3";\npackage encplain;\nmessage P { string name = 1; int64 qty = 2; }\n'
    subject = _subject("enc-plain-pb")
    df = spark.createDataFrame([("a", 1), ("b", 2), (None, None)], "name string, qty int")
    rows = df.select(F.when(F.col("name").isNotNull(), F.struct("*")).alias("p"))
    outs = [
        [
            r[0]
            for r in rows.select(
                to_confluent_protobuf("p", url, subject=subject, schema=proto, **extra)
            ).collect()
        ]
        for extra in ({"dataframe": rows}, {})
    ]
    assert outs[0] == outs[1] and outs[0][2] is None and outs[0][0] is not None
    wrong = df.select(
        to_confluent_protobuf(
            F.struct("name", F.col("name").alias("qty")), url, subject=subject, schema=proto
        )
    )
    with pytest.raises(
        Exception,
        match=f"to_confluent_protobuf \\(subject '{subject}', schema "
        r"id \d+\): field qty: Spark type string cannot be written as Protobuf "
        "int64",
    ):
        wrong.collect()
    jsubject = _subject("enc-plain-json")
    schema = json.dumps(PERSON)
    raw = spark.createDataFrame([*_people(4), (None,) * 9], PERSON_DDL)
    person = F.struct(*[F.col(c) for c in raw.columns])
    people = raw.select(F.when(F.col("name").isNotNull(), person).alias("p"))
    for engine, validate in (("python", "true"), ("native", "false"), ("auto", "false")):
        opts = {"engine": engine, "validate": validate}
        got = [
            [
                r[0]
                for r in people.select(
                    to_confluent_json(
                        "p", url, subject=jsubject, schema=schema, options=opts, **extra
                    )
                ).collect()
            ]
            for extra in ({"dataframe": people}, {})
        ]
        assert got[0] == got[1] and got[0][-1] is None and got[0][0] is not None, engine
    missing = people.select(
        to_confluent_json(F.struct("p.name"), url, subject=jsubject, schema=schema)
    )
    with pytest.raises(
        Exception,
        match=f"to_confluent_json \\(subject '{jsubject}', schema id "
        r"\d+\): the column: required property\(ies\) \['age'\] missing",
    ):
        missing.collect()


NESTED_AVRO = {
    "type": "record",
    "name": "Order",
    "namespace": "enc.nested",
    "fields": [
        {"name": "id", "type": "long"},
        {
            "name": "address",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [
                    {"name": "street", "type": "string"},
                    {"name": "zip", "type": "int"},
                ],
            },
        },
    ],
}
NESTED_PROTO = (
    'syntax = "proto3";\npackage encnested;\n'
    "message Order { int64 id = 1; Address address = 2; }\n"
    "message Address { string street = 1; int32 zip = 2; }\n"
)
NESTED_JSON = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
        },
    },
}


def test_aliased_nested_struct_without_dataframe_encodes(spark, spark_registry) -> None:  # type: ignore[no-untyped-def]
    """A struct built in the call with aliased fields in a nested struct, and no ``dataframe=``:
    Spark fails an Arrow UDF given such an argument directly (INTERNAL_ERROR "Cannot evaluate
    expression: street"); the Python engines write what they write for the same data in a
    column."""
    url = spark_registry.url
    n = F.col("id")
    built = F.struct(
        n.alias("id"),
        F.struct(F.lit("Main St").alias("street"), (n % 7).cast("int").alias("zip")).alias(
            "address"
        ),
    )
    source = spark.range(3)
    stored = source.select(built.alias("o"))
    calls = [
        (to_confluent_avro, {"schema": NESTED_AVRO}, "enc-nested"),
        (to_confluent_protobuf, {"schema": NESTED_PROTO}, "enc-nested-pb"),
        (to_confluent_json, {"schema": json.dumps(NESTED_JSON)}, "enc-nested-json"),
    ]
    written = {}
    for function, kwargs, prefix in calls:
        subject = _subject(prefix)
        opts = {"engine": "python"}
        inline = function(built, url, subject=subject, options=opts, **kwargs)
        from_column = function("o", url, subject=subject, options=opts, **kwargs)
        got = [r[0] for r in source.select(inline).collect()]
        assert got == [r[0] for r in stored.select(from_column).collect()], function.__name__
        written[function.__name__] = got
    read = AvroDeserializer(_client(spark_registry))
    assert [read(v, None) for v in written["to_confluent_avro"]] == [
        {"id": i, "address": {"street": "Main St", "zip": i % 7}} for i in range(3)
    ]
