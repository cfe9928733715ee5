"""from_confluent_json: JSON Schema -> Spark types, both engines equal, evolution, failures."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.sql import Row
from pyspark.sql import functions as F
from pyspark.sql import types as T

from serdes import Schema, SchemaReference, SchemaRegistryClient
from serdes.json_schema import JSONSerializer
from spark_serdes import from_confluent_json
from spark_serdes.json_decoder import jackson_text
from spark_serdes.json_types import json_schema_to_spark
from tests.fixtures.spark import CountingProxy, register

UTC = dt.UTC
S, L, D, B = T.StringType(), T.LongType(), T.DoubleType(), T.BooleanType()


def field(name: str, data_type: T.DataType, nullable: bool = True) -> T.StructField:
    return T.StructField(name, data_type, nullable)


# -- JSON Schema -> Spark type, one case per rule -----------------------------------------------

MAPPING = [
    ("string", {"type": "string"}, S),
    ("date", {"type": "string", "format": "date"}, T.DateType()),
    ("date-time", {"type": "string", "format": "date-time"}, T.TimestampType()),
    ("other format", {"type": "string", "format": "email"}, S),
    ("integer", {"type": "integer"}, L),
    ("number", {"type": "number"}, D),
    ("integer or number", {"type": ["integer", "number"]}, D),
    ("boolean", {"type": "boolean"}, B),
    ("array", {"type": "array", "items": {"type": "integer"}}, T.ArrayType(L, False)),
    ("array of nullable", {"type": "array", "items": {"type": ["null", "string"]}}, T.ArrayType(S)),
    ("array without items", {"type": "array"}, T.ArrayType(S, True)),
    ("tuple", {"type": "array", "items": [{"type": "string"}]}, S),
    ("map", {"type": "object", "additionalProperties": {"type": "number"}}, T.MapType(S, D, False)),
    (
        "struct in properties order, required and not null",
        {
            "type": "object",
            "properties": {
                "z": {"type": "integer"},
                "a": {"type": ["string", "null"]},
                "m": {"type": "boolean"},
            },
            "required": ["z", "a"],
        },
        T.StructType([field("z", L, False), field("a", S), field("m", B)]),
    ),
    (
        "properties without type",
        {"properties": {"x": {"type": "number"}}, "additionalProperties": {"type": "string"}},
        T.StructType([field("x", D)]),
    ),
    ("[null, T]", {"type": ["null", "integer"]}, L),
    ("oneOf null, T", {"oneOf": [{"type": "null"}, {"type": "boolean"}]}, B),
    (
        "anyOf T, null",
        {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]},
        T.DateType(),
    ),
    ("allOf one", {"allOf": [{"type": "integer"}]}, L),
    ("enum of strings", {"enum": ["A", "B", None]}, S),
    ("enum of integers", {"enum": [1, 2]}, L),
    ("const string", {"const": "x"}, S),
    ("free union", {"type": ["string", "integer"]}, S),
    ("free oneOf", {"oneOf": [{"type": "string"}, {"type": "integer"}]}, S),
    ("mixed enum", {"enum": ["a", 1]}, S),
    ("empty schema", {}, S),
    ("true", True, S),
    ("object without properties", {"type": "object"}, S),
    ("null only", {"type": "null"}, S),
    (
        "local $ref to definitions and $defs",
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/definitions/A"}, "b": {"$ref": "#/$defs/B"}},
            "definitions": {"A": {"type": "integer"}},
            "$defs": {"B": {"type": "array", "items": {"$ref": "#/definitions/A"}}},
        },
        T.StructType([field("a", L), field("b", T.ArrayType(L, False))]),
    ),
]


@pytest.mark.parametrize(("rule", "schema", "expected"), MAPPING, ids=[m[0] for m in MAPPING])
def test_mapping_rule(rule: str, schema: Any, expected: T.DataType) -> None:
    assert json_schema_to_spark(schema) == expected


def test_mapping_follows_references_to_other_schemas() -> None:
    address = {
        "type": "object",
        "properties": {"zip": {"type": "integer"}, "geo": {"$ref": "#/definitions/Geo"}},
        "definitions": {"Geo": {"type": "array", "items": {"type": "number"}}},
    }
    person = {
        "type": "object",
        "properties": {
            "home": {"$ref": "address.json"},
            "where": {"$ref": "address.json#/definitions/Geo"},
        },
    }
    geo = T.ArrayType(D, False)
    home = T.StructType([field("zip", L), field("geo", geo)])
    expected = T.StructType([field("home", home), field("where", geo)])
    assert json_schema_to_spark(person, {"address.json": address}) == expected


@pytest.mark.parametrize(
    ("schema", "references", "message"),
    [
        (
            {"type": "object", "properties": {"next": {"$ref": "#"}}},
            {},
            "recursive \\$ref '#'",
        ),
        (
            {
                "$ref": "#/definitions/N",
                "definitions": {"N": {"type": "array", "items": {"$ref": "#/definitions/N"}}},
            },
            {},
            "recursive",
        ),
        ({"$ref": "other.json"}, {"other.json": {"$ref": "#"}}, "recursive"),
        ({"$ref": "missing.json"}, {}, "names no schema reference"),
        ({"$ref": "#/definitions/X"}, {}, "'definitions' not found"),
        ({"type": "tuple"}, {}, "unknown JSON Schema type 'tuple'"),
        (False, {}, "allows no value"),
    ],
)
def test_mapping_refuses_with_a_clear_error(schema: Any, references: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        json_schema_to_spark(schema, references)


def test_raw_json_text_is_spark_jackson_text() -> None:
    value = {"x": 1, "y": [1, 2.5, 1e10, 1.5e-7, 0.001, 1234567.0, -0.0], "s": 'é\n\x01 / "'}
    assert jackson_text(value) == (
        '{"x":1,"y":[1,2.5,1.0E10,1.5E-7,0.001,1234567.0,-0.0],"s":"é\\n\\u0001 / \\""}'
    )


# -- decoding on Spark --------------------------------------------------------------------------

ADDRESS = {
    "type": "object",
    "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
    "required": ["street"],
}
ALL = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "All",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "price": {"type": "number"},
        "paid": {"type": "boolean"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
        "note": {"type": ["null", "string"]},
        "score": {"oneOf": [{"type": "null"}, {"type": "number"}]},
        "status": {"enum": ["NEW", "PAID"]},
        "kind": {"const": "order"},
        "anything": {},
        "either": {"type": ["string", "integer", "object"]},
        "home": {"$ref": "address.json"},
        "lines": {"type": "array", "items": {"$ref": "#/definitions/Line"}},
    },
    "required": ["id", "name"],
    "additionalProperties": False,
    "definitions": {
        "Line": {
            "type": "object",
            "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
        }
    },
}


def all_record(n: int) -> dict[str, Any]:
    return {
        "id": 2**40 + n,
        "name": f"näme {n}",
        "price": n * 1.25,
        "paid": n % 2 == 0,
        "day": f"2024-02-{1 + n % 28:02d}",
        "at": f"2024-01-01T12:{n % 60:02d}:15.{n:06d}Z"
        if n % 2
        else f"2024-06-01 08:00:{n % 60:02d}+02:00",
        "tags": [f"t{k}" for k in range(n % 3)],
        "attrs": {f"a{k}": k * n for k in range(n % 3)},
        "note": None if n % 3 == 0 else f"note {n}",
        "score": None if n % 4 == 0 else n / 8,
        "status": ["NEW", "PAID"][n % 2],
        "kind": "order",
        "anything": [None, 1, "text", {"deep": [1, 2.5]}][n % 4],
        "either": [f"s{n}", n, {"k": n}][n % 3],
        "home": {"street": f"{n} Main St", "zip": 10000 + n},
        "lines": [{"sku": f"sku{k}", "qty": k} for k in range(n % 3)],
    }


def ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


@pytest.fixture(scope="module")
def all_types(spark, spark_registry):  # type: ignore[no-untyped-def]
    url = spark_registry.url
    client = SchemaRegistryClient({"url": url})
    client.register_schema("jaddress", Schema(json.dumps(ADDRESS), "JSON"))
    schema = Schema(json.dumps(ALL), "JSON", [SchemaReference("address.json", "jaddress", 1)])
    serializer = JSONSerializer(schema, client)
    records = [all_record(n) for n in range(40)]
    payloads = [serializer(r, ctx("jall")) for r in records]
    rows = [(n, p) for n, p in enumerate(payloads)] + [(40, None)]
    df = spark.createDataFrame(rows, "n int, value binary").repartition(2)
    return df.cache(), records, payloads


def test_payloads_match_confluent_kafka_bytes(all_types, spark_registry) -> None:  # type: ignore[no-untyped-def]
    from confluent_kafka.schema_registry import Schema as CSchema
    from confluent_kafka.schema_registry import SchemaReference as CReference

    _, records, payloads = all_types
    theirs = CClient({"url": spark_registry.url})
    schema = CSchema(json.dumps(ALL), "JSON", [CReference("address.json", "jaddress", 1)])
    serializer = CJSONSerializer(schema, theirs)
    assert [serializer(r, ctx("jall")) for r in records[:5]] == payloads[:5]


EXPECTED_0 = {
    "id": 2**40,
    "name": "näme 0",
    "price": 0.0,
    "paid": True,
    "day": dt.date(2024, 2, 1),
    "at": dt.datetime(2024, 6, 1, 6, 0, 0),  # Spark gives naive datetimes in the session zone
    "tags": [],
    "attrs": {},
    "note": None,
    "score": None,
    "status": "NEW",
    "kind": "order",
    "anything": None,
    "either": "s0",
    "home": Row(street="0 Main St", zip=10000),
    "lines": [],
}


@pytest.mark.parametrize("engine", ["native", "python"])
def test_every_rule_decodes_to_exact_rows(all_types, spark_registry, engine) -> None:  # type: ignore[no-untyped-def]
    df, _, _ = all_types
    out = df.select(
        "n",
        from_confluent_json(
            "value", spark_registry.url, subject="jall-value", options={"engine": engine}
        ).alias("v"),
    )
    value_type = out.schema["v"].dataType
    assert [f.name for f in value_type.fields] == list(ALL["properties"])
    assert value_type["at"].dataType == T.TimestampType()
    assert value_type["attrs"].dataType == T.MapType(S, L, True)
    assert value_type["home"].dataType == T.StructType([field("street", S), field("zip", L)])
    rows = {r.n: r.v for r in out.collect()}
    assert rows[40] is None
    assert rows[0].asDict() == EXPECTED_0
    r1, r2, r3 = rows[1], rows[2], rows[3]
    assert r1.at == dt.datetime(2024, 1, 1, 12, 1, 15, 1)
    assert (r1.anything, r2.anything, r3.anything) == ("1", "text", '{"deep":[1,2.5]}')
    assert (r1.either, r2.either) == ("1", '{"k":2}')
    assert r1.score == 0.125 and r1.note == "note 1" and r1.attrs == {"a0": 0}
    assert r2.lines == [Row(sku="sku0", qty=0), Row(sku="sku1", qty=1)]
    assert r2.tags == ["t0", "t1"] and r2.day == dt.date(2024, 2, 3)


def test_both_engines_and_validation_give_the_same_rows(all_types, spark_registry) -> None:  # type: ignore[no-untyped-def]
    df, _, _ = all_types
    outs = [
        df.select(
            "n",
            from_confluent_json(
                "value", spark_registry.url, subject="jall-value", options=options
            ).alias("v"),
        )
        for options in (
            {"engine": "native"},
            {"engine": "python"},
            {"validate": "true"},
        )
    ]
    assert outs[0].schema == outs[1].schema == outs[2].schema
    native, python, validated = (sorted(o.collect()) for o in outs)
    assert len(native) == 41
    assert native == python == validated


# Odd but valid inputs for the reading rules: both engines must agree on every one.
ODD = [
    ("day", "2024"), ("day", "2024-2-9"), ("day", "2024-02-29T10:00"), ("day", " 2024-01-01 "),
    ("day", "+2024-01-01"), ("day", "2024-13-01"), ("day", "x"), ("day", 5),
    ("at", "2024-01-01T12:30"), ("at", "2024-01-01T12:30Z"), ("at", "2024-01-01T1:2:3"),
    ("at", "2024-01-01T12:30:15 +02:00"), ("at", "2024-01-01T12:30:15Europe/Paris"),
    ("at", "2024-01-01T12:30:15-0530"), ("at", "2024-01-01T12:30:15+2"), ("at", "2024-01-01"),
    ("at", "2024-01-01T12:30:15.123456789"), ("at", "2024-01-01T12:30:15GMT+01:00"),
    ("at", "2024-01-01T24:00:00"), ("at", "2024-02-30T00:00:00"), ("at", 1700000000),
    ("at", "2024-03-31T02:30:00Europe/Paris"), ("at", "2024-01-01T12:30:15EST"), ("at", 1.5),
    ("id", 1.0), ("id", "1"), ("id", 2**63), ("id", True), ("price", 3), ("price", "1.5"),
    ("paid", 1), ("name", 1.5e-7), ("name", [1, {"a": None}]), ("name", False),
    ("tags", "t"), ("attrs", {"a": 1.5}), ("lines", [{"qty": "x"}]), ("home", []),
]  # fmt: skip


@pytest.fixture(scope="module")
def odd_rows(spark, all_types):  # type: ignore[no-untyped-def]
    _, _, payloads = all_types
    prefix = payloads[0][:5]
    rows = [
        (n, prefix + json.dumps({"id": 1, "name": "x", key: value}).encode())
        for n, (key, value) in enumerate(ODD)
    ]
    return spark.createDataFrame(rows, "n int, value binary")


def test_engines_read_odd_values_alike(odd_rows, spark_registry) -> None:  # type: ignore[no-untyped-def]
    got = []
    for engine in ("native", "python"):
        out = odd_rows.select(
            "n",
            from_confluent_json(
                "value",
                spark_registry.url,
                subject="jall-value",
                options={"engine": engine, "mode": "PERMISSIVE", "errorField": "error"},
            ).alias("d"),
        )
        got.append({r.n: (r.d.value, r.d.error is None) for r in out.collect()})
    native, python = got
    for n, (key, value) in enumerate(ODD):
        assert native[n] == python[n], (key, value, native[n], python[n])

    def decoded(key: str, value: Any) -> tuple[Any, bool]:
        row, ok = native[ODD.index((key, value))]
        return (row[key] if row is not None else None), ok

    assert decoded("day", "2024") == (dt.date(2024, 1, 1), True)
    assert decoded("day", 5) == (None, False)
    assert decoded("at", "2024-01-01T12:30:15-0530") == (dt.datetime(2024, 1, 1, 18, 0, 15), True)
    assert decoded("at", "2024-03-31T02:30:00Europe/Paris") == (
        dt.datetime(2024, 3, 31, 1, 30),
        True,
    )
    assert decoded("at", 1700000000) == (dt.datetime(2023, 11, 14, 22, 13, 20), True)
    assert decoded("name", [1, {"a": None}]) == ('[1,{"a":null}]', True)
    assert decoded("name", 1.5e-7) == ("1.5E-7", True)
    assert decoded("price", 3) == (3.0, True)
    assert decoded("id", 1.0) == (None, False)
    assert decoded("at", "2024-01-01T12:30Z") == (None, False)


# -- evolution, unknown ids, failures -------------------------------------------------------------

V1 = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
    "additionalProperties": False,
}
V2 = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string"},
        "email": {"type": ["null", "string"]},
    },
    "additionalProperties": False,
}
V_OTHER = {
    "type": "object",
    "properties": {"id": {"type": "integer"}, "note": {"type": "string"}},
    "required": ["id"],
}


def register_json(url: str, subject: str, schema: dict) -> int:
    with SchemaRegistryClient({"url": url}) as client:
        return int(client.register_schema(subject, Schema(json.dumps(schema), "JSON")))


def frame(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


@pytest.fixture(scope="module")
def evolved(spark, spark_registry):  # type: ignore[no-untyped-def]
    url = spark_registry.url
    id1 = register_json(url, "jevo-value", V1)
    id2 = register_json(url, "jevo-value", V2)
    rows = []
    for n in range(300):
        if n % 2 == 0:
            rows.append((n, frame(id1, json.dumps({"id": n, "name": f"u{n}"}).encode())))
        else:
            body = {"id": n, "name": f"u{n}", "email": f"{n}@x"}
            rows.append((n, frame(id2, json.dumps(body).encode())))
    return spark.createDataFrame(rows, "n int, value binary").repartition(3, "n"), (id1, id2)


@pytest.mark.parametrize("engine", ["native", "python"])
def test_writer_versions_and_an_id_registered_after_planning(
    evolved, spark, spark_registry, engine
) -> None:  # type: ignore[no-untyped-def]
    """The native engine with ``unknownIds: "python"`` (FAILFAST's default is "error")."""
    options = {"engine": engine, "unknownIds": "python"}
    df, (id1, id2) = evolved
    proxy = CountingProxy(spark_registry.url)
    try:
        decoded = df.select(
            "n",
            from_confluent_json("value", proxy.url, subject="jevo-value", options=options).alias(
                "v"
            ),
        )
        # registered under another subject after the plan was made: only workers can fetch it
        other = register_json(spark_registry.url, f"jother-{engine}-value", V_OTHER)
        extra = [
            (1000 + k, frame(other, json.dumps({"id": k, "note": "x"}).encode())) for k in range(50)
        ]
        extra_df = spark.createDataFrame(extra, "n int, value binary")
        decoded = decoded.unionByName(
            extra_df.select(
                "n",
                from_confluent_json(
                    "value", proxy.url, subject="jevo-value", options=options
                ).alias("v"),
            )
        )
        rows = {r.n: r.v for r in decoded.collect()}
    finally:
        proxy.close()
    assert len(rows) == 350
    assert rows[0].asDict() == {"id": 0, "name": "u0", "email": None}
    assert rows[1].asDict() == {"id": 1, "name": "u1", "email": "1@x"}
    assert rows[1003].asDict() == {"id": 3, "name": None, "email": None}
    by_id = {
        int(m.group(1)): count
        for path, count in proxy.counts.items()
        if (m := re.fullmatch(r"GET /schemas/ids/(\d+)", path))
    }
    assert id1 not in by_id and id2 not in by_id, proxy.counts
    assert 1 <= by_id.get(other, 0) <= 2, proxy.counts  # once per worker process (local[2])


def test_native_failfast_default_is_jvm_only_and_fails_on_an_id_it_does_not_cover(
    evolved, spark, spark_registry
) -> None:  # type: ignore[no-untyped-def]
    df, (id1, id2) = evolved

    def decode(frame_df):  # type: ignore[no-untyped-def]
        return frame_df.select(
            "n",
            from_confluent_json(
                "value", spark_registry.url, subject="jevo-value", options={"engine": "native"}
            ).alias("v"),
        )

    decoded = decode(df)
    plan = decoded._jdf.queryExecution().executedPlan().toString()
    assert "ArrowEvalPython" not in plan and "from_json" in plan
    rows = {r.n: r.v for r in decoded.collect()}
    assert len(rows) == 300 and rows[1].asDict() == {"id": 1, "name": "u1", "email": "1@x"}
    other = register_json(spark_registry.url, "jother-failfast-value", V_OTHER)
    extra = spark.createDataFrame([(9, frame(other, b'{"id": 9}'))], "n int, value binary")
    with pytest.raises(Exception) as failure:
        decode(extra).collect()
    assert (
        f"schema id {other} is not one of the JSON schema ids subject 'jevo-value' had when "
        f"the query was planned ({min(id1, id2)}, {max(id1, id2)})"
    ) in str(failure.value)


def bad_rows(spark, good_id: int, avro_id: int):  # type: ignore[no-untyped-def]
    rows = [
        (0, frame(good_id, b'{"id": 1, "name": "ok"}')),
        (1, b"\x07\x00\x00\x00\x01{}"),  # unknown magic byte
        (2, b"\x00\x00"),  # truncated frame
        (3, frame(987654, b"{}")),  # unknown schema id
        (4, frame(good_id, b'{"id": 1, "name": ')),  # invalid JSON
        (5, frame(good_id, b'{"id": "one"}')),  # does not fit the type (and fails validation)
        (6, frame(good_id, b'{"id": 1} , {"id": 2}')),  # two documents
        (7, frame(avro_id, b"{}")),  # an Avro schema's id
        (8, frame(good_id, b"[1, 2]")),  # an array where an object is expected
        (9, None),
    ]
    return spark.createDataFrame(rows, "n int, value binary")


@pytest.fixture(scope="module")
def failures(spark, spark_registry, evolved):  # type: ignore[no-untyped-def]
    _, (_, id2) = evolved
    avro_id = register(
        spark_registry.url, "javro-value", {"type": "record", "name": "R", "fields": []}
    )
    return bad_rows(spark, id2, avro_id), id2, avro_id


@pytest.mark.parametrize(
    "options",
    [
        {"engine": "native"},
        {"engine": "native", "unknownIds": "error"},
        {"engine": "python"},
        {"validate": "true"},
    ],
)
def test_permissive_gives_null_and_the_reason(failures, spark_registry, options) -> None:  # type: ignore[no-untyped-def]
    df, good_id, avro_id = failures
    out = df.select(
        "n",
        from_confluent_json(
            "value",
            spark_registry.url,
            subject="jevo-value",
            options={**options, "mode": "PERMISSIVE", "errorField": "error"},
        ).alias("d"),
    )
    rows = {r.n: r.d for r in out.collect()}
    assert rows[0].value.asDict() == {"id": 1, "name": "ok", "email": None}
    assert rows[0].error is None and rows[9].error is None
    assert all(rows[n].value is None for n in range(1, 10))
    assert "magic byte 7" in rows[1].error
    assert "truncated" in rows[2].error
    if options.get("unknownIds") == "error":  # no lookup: the plan's ids are all it knows
        for n in (3, 7):
            assert "is not one of the JSON schema ids subject 'jevo-value' had" in rows[n].error
        assert rows[7].error.startswith(f"schema id {avro_id} ")
    else:
        assert "schema id 987654" in rows[3].error and "not found" in rows[3].error
        assert f"schema id {avro_id}: is a AVRO schema, not JSON" in rows[7].error
    if options.get("engine") == "native":  # a general reason for the subject's own ids
        for n in (4, 5, 6, 8):
            assert rows[n].error.startswith(
                f"schema id {good_id}: payload is not JSON of the reader type struct<id:bigint,"
            ), rows[n].error
        return
    assert f"schema id {good_id}: payload is not valid JSON" in rows[4].error
    if options.get("validate"):
        assert (
            f"schema id {good_id}: payload does not match the JSON schema at $.id" in rows[5].error
        )
    else:
        assert f"schema id {good_id}: the value at $.id is not an integer" in rows[5].error
    assert "not valid JSON" in rows[6].error
    if options.get("validate"):
        assert f"schema id {good_id}: payload does not match the JSON schema at $:" in rows[8].error
    else:
        assert "the value at $ is not an object (got an array)" in rows[8].error


NOT_READ = "schema id \\d+: payload is not JSON of the reader type"


@pytest.mark.parametrize(
    ("engine", "n", "message"),
    [
        ("native", 1, "Unknown magic byte 7 at offset 0"),
        ("python", 1, "magic byte 7"),
        ("native", 2, "truncated frame: 2 bytes"),
        ("native", 3, "schema id 987654 is not one of the JSON schema ids"),
        ("python", 3, "schema id 987654"),
        ("native", 4, NOT_READ),
        ("python", 4, "schema id \\d+: payload is not valid JSON"),
        ("native", 5, NOT_READ),
        ("python", 5, "schema id \\d+: the value at \\$.id is not an integer"),
    ],
)
def test_failfast_names_the_schema_id_and_reason(
    failures, spark_registry, engine, n, message
) -> None:  # type: ignore[no-untyped-def]
    df, _, _ = failures
    decoded = df.where(F.col("n").isin(0, n)).select(
        from_confluent_json(
            "value", spark_registry.url, subject="jevo-value", options={"engine": engine}
        )
    )
    with pytest.raises(Exception, match=message):
        decoded.collect()


def test_explicit_schema_reads_every_id(failures, spark_registry) -> None:  # type: ignore[no-untyped-def]
    df, _, _ = failures
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    out = df.where(F.col("n") == 0).select(
        from_confluent_json("value", spark_registry.url, schema=json.dumps(schema)).alias("v")
    )
    assert out.schema["v"].dataType == T.StructType([field("name", S)])
    assert out.collect() == [Row(v=Row(name="ok"))]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"subject": "jevo-value", "options": {"validate": "maybe"}},
            ValueError,
            "validate must be",
        ),
        (
            {"subject": "jevo-value", "options": {"validate": "true", "engine": "native"}},
            ValueError,
            "needs the python engine",
        ),
        (
            {"subject": "jevo-value", "options": {"rows": "1"}},
            ValueError,
            "unknown options \\['rows'\\]",
        ),
        ({"subject": "jevo-value", "options": {"mode": "DROP"}}, ValueError, "mode must be one of"),
        (
            {"subject": "jevo-value", "options": {"errorField": "e"}},
            ValueError,
            "needs mode PERMISSIVE",
        ),
        ({}, ValueError, "needs a subject or a schema"),
        ({"subject": "jevo-value", "version": 99}, ValueError, "has no version 99"),
        ({"subject": "jevo-value", "version": "2"}, ValueError, "version must be an integer"),
        ({"subject": "javro-value"}, ValueError, "is AVRO, not JSON"),
        ({"schema": "{not json"}, ValueError, "the JSON schema is not JSON"),
        ({"schema": 5}, TypeError, "schema must be a JSON Schema text"),
        ({"schema": {"properties": {"n": {"$ref": "#"}}}}, ValueError, "recursive"),
    ],
)
def test_bad_arguments_are_refused(failures, spark_registry, kwargs, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        from_confluent_json("value", spark_registry.url, **kwargs)


def test_bad_registry_is_refused(spark) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="registry must be a Schema Registry URL"):
        from_confluent_json("value", 8081, schema={"type": "string"})  # type: ignore[arg-type]


def test_session_time_zone_reads_local_times_alike(spark, all_types, spark_registry) -> None:  # type: ignore[no-untyped-def]
    _, _, payloads = all_types
    prefix = payloads[0][:5]
    times = ["2024-01-01T12:00:00", "2024-07-01 12:00", "2024-03-10T02:30:00", "2024-01-01"]
    rows = [(n, prefix + json.dumps({"id": n, "at": t}).encode()) for n, t in enumerate(times)]
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        df = spark.createDataFrame(rows, "n int, value binary")
        got = [
            sorted(
                (r.n, r.v.at)
                for r in df.select(
                    "n",
                    from_confluent_json(
                        "value",
                        spark_registry.url,
                        subject="jall-value",
                        options={"engine": engine},
                    ).alias("v"),
                )
                .select("n", F.unix_micros(F.col("v.at")).alias("v"))
                .select("n", F.struct(F.col("v").alias("at")).alias("v"))
                .collect()
            )
            for engine in ("native", "python")
        ]
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert got[0] == got[1]
    epoch = dt.datetime(1970, 1, 1, tzinfo=UTC)
    as_utc = [epoch + dt.timedelta(microseconds=micros) for _, micros in got[0]]
    assert as_utc[0] == dt.datetime(2024, 1, 1, 17, 0, tzinfo=UTC)  # EST
    assert as_utc[1] == dt.datetime(2024, 7, 1, 16, 0, tzinfo=UTC)  # EDT
    assert as_utc[2] == dt.datetime(2024, 3, 10, 7, 30, tzinfo=UTC)  # in the gap: moved forward
