"""Schema GUIDs (magic byte 1) and schema ids in Kafka headers, in every decoder and encoder.

confluent-kafka's serializers with ``header.schema.id.serializer`` write the bare data in the
value and magic byte 1, the schema GUID (and Protobuf's message indexes) in a
``__value_schema_id`` header; the decoders read it from the ``headers`` column of Spark's Kafka
source (``schemaIdSource: headers``), next to records framed the usual way, and GUID frames in
the value. The encoders' ``schema.id.serializer: header`` writes what confluent-kafka writes.

The registry returns each schema's ``guid`` to Confluent clients (they send
``Confluent-Client-Version``, as serdes does), which confluent-kafka needs to write a GUID and
the decoders use to rewrite GUID frames to id frames in the plan. The decoders are also run
against the same registry as a Confluent 7.x client sees it (``v7_registry``: a proxy that
drops those headers, so the answers carry no ``guid``), where they resolve each GUID through
``/schemas/guids/{guid}`` in the Python engine.
"""

from __future__ import annotations

import json
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
from confluent_kafka.schema_registry import header_schema_id_serializer
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.sql import functions as F

from spark_serdes import (
    from_confluent_avro,
    from_confluent_json,
    from_confluent_protobuf,
    native_avro_available,
    to_confluent_avro,
    to_confluent_json,
    to_confluent_protobuf,
)
from spark_serdes._framing import Framing, framed_column
from tests.fixtures.spark import CountingProxy
from tests.test_spark_any_session import AVRO, JSON_SCHEMA, ROWS, _item_class

V8_HEADERS = ("Confluent-Client-Version", "Confluent-Accept-Unknown-Properties")
KAFKA = "value binary, headers array<struct<key: string, value: binary>>"
HEADER = {"schema.id.serializer": header_schema_id_serializer}


@pytest.fixture(scope="module")
def guid_registry(spark_registry: Any) -> str:
    """The registry as Confluent 8.x clients see it: its answers name each schema's ``guid``."""
    return str(spark_registry.url)


@pytest.fixture(scope="module")
def v7_registry(spark_registry: Any) -> Iterator[str]:
    """The same registry as a Confluent 7.x client sees it: answers without ``guid``."""
    proxy = CountingProxy(spark_registry.url, drop_headers=V8_HEADERS)
    try:
        yield proxy.url
    finally:
        proxy.close()


def _ctx(subject: str, headers: list | None = None) -> SerializationContext:
    return SerializationContext(subject[: -len("-value")], MessageField.VALUE, headers)


def _subject(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}-value"


def _written(serializer: Any, values: list[Any], subject: str) -> list[tuple[bytes, list]]:
    """confluent-kafka's (value, headers) for each value."""
    out = []
    for value in values:
        headers: list = []
        out.append((serializer(value, _ctx(subject, headers)), headers))
    return out


def _kafka_rows(with_headers: list[tuple[bytes, list]], prefixed: list[bytes]) -> list[tuple]:
    """Kafka source rows: header-framed records, then id-framed ones and their GUID-framed twins
    (magic byte 1 in the value), and a tombstone."""
    guid = with_headers[0][1][0][1][1:17]
    rows: list[tuple] = [(v, [(k, h) for k, h in hs]) for v, hs in with_headers]
    rows += [(frame, []) for frame in prefixed]
    rows += [(b"\x01" + guid + frame[5:], None) for frame in prefixed]
    rows.append((None, None))
    return rows


def _decode_all(spark: Any, rows: list[tuple], decode: Any) -> list[Any]:
    df = spark.createDataFrame([(n, *r) for n, r in enumerate(rows)], f"n int, {KAFKA}")
    return [r.v for r in df.select("n", decode.alias("v")).orderBy("n").collect()]


def _engines(spark: Any) -> list[dict[str, str]]:
    out = [{"engine": "python"}]
    if native_avro_available(spark):
        out.append({"engine": "native"})
    return out


def test_confluent_kafka_gets_the_registrys_own_guid(
    spark_registry: Any, guid_registry: str, v7_registry: str
) -> None:
    client = CClient({"url": guid_registry})
    subject = _subject("guid")
    from confluent_kafka.schema_registry import Schema

    registered = client.register_schema_full_response(subject, Schema(json.dumps(AVRO), "AVRO"))
    assert registered.guid is not None
    url = f"{spark_registry.url}/schemas/guids/{registered.guid}/ids"
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert [e["id"] for e in json.loads(resp.read())] == [registered.schema_id]
    with urllib.request.urlopen(f"{v7_registry}/subjects/{subject}/versions/1", timeout=30) as r:
        assert "guid" not in json.loads(r.read())


def test_avro_guid_and_header_frames_decode_and_encode_like_confluent_kafka(
    spark: Any, guid_registry: str, v7_registry: str
) -> None:
    subject = _subject("hdr-avro")
    records = [{"id": i, "name": n, "color": c} for i, n, c in ROWS]
    client = CClient({"url": guid_registry})
    theirs = _written(CAvroSerializer(client, json.dumps(AVRO), conf=HEADER), records, subject)
    plain = CAvroSerializer(client, json.dumps(AVRO))
    prefixed = [plain(r, _ctx(subject)) for r in records[:4]]
    rows = _kafka_rows(theirs, prefixed)
    expected = [*records, *records[:4], *records[:4], None]
    # GUIDs known to the plan (rewritten to ids on the JVM), or not (the registry's answers
    # have none: the Python engine resolves them, the default there)
    runs = [(guid_registry, o) for o in _engines(spark)] + [(v7_registry, {})]
    for url, options in runs:
        decode = from_confluent_avro(
            "value", url, subject=subject, options={"schemaIdSource": "headers", **options}
        )
        got = _decode_all(spark, rows, decode)
        assert [None if v is None else v.asDict() for v in got] == expected, (url, options)
    df = spark.createDataFrame(
        [(i, n, c) for i, n, c in ROWS], "id long, name string, color string"
    )
    for engine in ("python", "native") if native_avro_available(spark) else ("python",):
        out = to_confluent_avro(
            F.struct("*"), guid_registry, subject=subject, dataframe=df,
            options={"schema.id.serializer": "header", "engine": engine},
        )  # fmt: skip
        ours = [
            (r.o.value, [tuple(h) for h in r.o.headers])
            for r in df.select(out.alias("o")).collect()
        ]
        assert ours == theirs, engine


def test_json_guid_and_header_frames_decode_and_encode_like_confluent_kafka(
    spark: Any, guid_registry: str, v7_registry: str
) -> None:
    subject = _subject("hdr-json")
    values = [{"id": i, "name": n} for i, n, _ in ROWS]
    client = CClient({"url": guid_registry})
    serializer = CJSONSerializer(json.dumps(JSON_SCHEMA), client, conf=HEADER)
    theirs = _written(serializer, values, subject)
    plain = CJSONSerializer(json.dumps(JSON_SCHEMA), client)
    prefixed = [plain(v, _ctx(subject)) for v in values[:4]]
    rows = _kafka_rows(theirs, prefixed)
    expected = [*values, *values[:4], *values[:4], None]
    runs = [(guid_registry, "native"), (guid_registry, "python"), (v7_registry, "auto")]
    for url, engine in runs:
        decode = from_confluent_json(
            "value", url, subject=subject, options={"schemaIdSource": "headers", "engine": engine}
        )
        got = _decode_all(spark, rows, decode)
        assert [None if v is None else v.asDict() for v in got] == expected, (url, engine)
    df = spark.createDataFrame([(i, n) for i, n, _ in ROWS], "id long, name string")
    out = to_confluent_json(
        F.struct("*"), guid_registry, subject=subject, dataframe=df,
        options={"schema.id.serializer": "header"},
    )  # fmt: skip
    ours = [
        (r.o.value, [tuple(h) for h in r.o.headers]) for r in df.select(out.alias("o")).collect()
    ]
    assert ours == theirs


def test_protobuf_guid_and_header_frames_decode_and_encode_like_confluent_kafka(
    spark: Any, guid_registry: str, v7_registry: str
) -> None:
    item = _item_class()
    subject = _subject("hdr-proto")
    messages = [item(id=i + 1, name=n or "") for i, n, _ in ROWS]
    client = CClient({"url": guid_registry})
    conf = {"use.deprecated.format": False}
    serializer = CProtobufSerializer(item, client, conf={**conf, **HEADER})
    theirs = _written(serializer, messages, subject)
    prefixed = [
        CProtobufSerializer(item, client, conf=conf)(m, _ctx(subject)) for m in messages[:4]
    ]
    # the header holds the message indexes ([0]: one byte 0), the value the bare message
    assert theirs[0][1][0][1][17:] == b"\x00"
    guid = theirs[0][1][0][1][1:17]
    rows: list[tuple] = [(v, [tuple(h) for h in hs]) for v, hs in theirs]
    rows += [(frame, []) for frame in prefixed]
    rows += [(b"\x01" + guid + frame[5:], None) for frame in prefixed]
    rows.append((None, None))
    expected = [(i + 1, n) for i, n, _ in ROWS] + [(i + 1, n) for i, n, _ in ROWS[:4]] * 2
    for url in (guid_registry, v7_registry):
        decode = from_confluent_protobuf(
            "value", url, subject=subject, options={"schemaIdSource": "headers"}
        )
        got = _decode_all(spark, rows, decode)
        assert [(v.id, v.name) for v in got[:-1]] == expected, url
        assert got[-1] is None
    df = spark.createDataFrame([(i + 1, n) for i, n, _ in ROWS], "id long, name string")
    out = to_confluent_protobuf(
        F.struct("*"), guid_registry, subject=subject, dataframe=df,
        options={"schema.id.serializer": "header"},
    )  # fmt: skip
    ours = [
        (r.o.value, [tuple(h) for h in r.o.headers]) for r in df.select(out.alias("o")).collect()
    ]
    assert ours == theirs


def test_an_unknown_guid_fails_naming_it_or_gives_the_reason(
    spark: Any, guid_registry: str
) -> None:
    subject = _subject("hdr-unknown")
    client = CClient({"url": guid_registry})
    frame = CAvroSerializer(client, json.dumps(AVRO))(
        {"id": 1, "name": None, "color": "RED"}, _ctx(subject)
    )
    stranger = uuid.uuid4()
    rows = [(b"\x01" + stranger.bytes + frame[5:], None)]
    for options in _engines(spark):
        permissive = from_confluent_avro(
            "value", guid_registry, subject=subject,
            options={"mode": "PERMISSIVE", "errorField": "error", **options},
        )  # fmt: skip
        (got,) = _decode_all(spark, rows, permissive)
        assert got.value is None and f"GUID {stranger}".replace("-", "") in got.error.replace(
            "-", ""
        )
        failfast = from_confluent_avro("value", guid_registry, subject=subject, options=options)
        with pytest.raises(Exception, match="GUID"):
            _decode_all(spark, rows, failfast)


def test_framed_column_rewrites_known_guids_to_ids_on_the_jvm(spark: Any) -> None:
    guid = str(uuid.uuid4())
    framing = Framing("headers", "headers", "__value_schema_id")
    header = b"\x01" + uuid.UUID(guid).bytes
    rows = [
        (b"data", [("other", b"x"), ("__value_schema_id", header)]),  # header: its frame + value
        (b"\x00\x00\x00\x00\x07data", []),  # an id frame: unchanged
        (header + b"data", None),  # a GUID frame in the value: its id frame
        (b"\x01" + uuid.uuid4().bytes + b"data", None),  # a GUID the plan does not know
        (None, [("__value_schema_id", header)]),  # a tombstone stays null
    ]
    df = spark.createDataFrame(rows, KAFKA)
    out = [r[0] for r in df.select(framed_column(F.col("value"), framing, {guid: 42})).collect()]
    forty_two = b"\x00\x00\x00\x00\x2adata"
    assert out[:3] == [forty_two, b"\x00\x00\x00\x00\x07data", forty_two]
    assert out[3] == rows[3][0] and out[4] is None


def test_framing_options_are_checked(spark_registry: Any) -> None:
    with pytest.raises(ValueError, match="schemaIdSource must be one of"):
        from_confluent_json(
            "value", spark_registry.url, schema=JSON_SCHEMA, options={"schemaIdSource": "header"}
        )
    with pytest.raises(ValueError, match=r"schema\.id\.serializer must be one of"):
        to_confluent_json(
            F.struct(F.lit(1).alias("id")), spark_registry.url, subject=_subject("opt"),
            schema=json.dumps(JSON_SCHEMA), options={"schema.id.serializer": "guid"},
        )  # fmt: skip
