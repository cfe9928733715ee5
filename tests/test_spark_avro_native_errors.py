"""Native engine: records Spark cannot decode fail (FAILFAST) or get a reason (PERMISSIVE)
naming their schema id, readers with or without non-nullable fields, types as from_avro's."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

from spark_serdes import from_confluent_avro
from tests.fixtures.spark import framed, register

STRICT = {
    "type": "record", "name": "Order", "namespace": "native.errors",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "lines", "type": {"type": "array", "items": {
            "type": "record", "name": "Line",
            "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}],
        }}},
        {"name": "prices", "type": {"type": "map", "values": "double"}},
        {"name": "ship", "type": ["null", {
            "type": "record", "name": "Ship", "fields": [{"name": "zip", "type": "int"}],
        }], "default": None},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    ],
}  # fmt: skip
# No non-nullable field: Spark's PERMISSIVE answer to a malformed record (all fields null)
# looks like a legitimate record whose fields are all null.
NULLABLE = {
    "type": "record", "name": "Note", "namespace": "native.errors",
    "fields": [
        {"name": "text", "type": ["null", "string"], "default": None},
        {"name": "stars", "type": ["null", "int"], "default": None},
    ],
}  # fmt: skip


def _strict_record(n: int) -> dict:
    return {
        "id": n,
        "lines": [{"sku": f"s{n}", "qty": k} for k in range(n % 3)],
        "prices": {f"p{k}": k / 2 for k in range(n % 2 + 1)},
        "ship": None if n % 2 else {"zip": n},
        "day": 19000 + n,
    }


@pytest.fixture(scope="module")
def subjects(spark_registry):  # type: ignore[no-untyped-def]
    url = spark_registry.url
    return {
        "strict": (
            "native-errors-strict-value",
            register(url, "native-errors-strict-value", STRICT),
        ),
        "nullable": (
            "native-errors-nullable-value",
            register(url, "native-errors-nullable-value", NULLABLE),
        ),
    }


def _frame(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


def _decode(df, url, subject, **options):  # type: ignore[no-untyped-def]
    return df.select(
        "n",
        from_confluent_avro(
            "value", url, subject=subject, options={"engine": "native", **options}
        ).alias("v"),
    )


def _uses_from_avro(df) -> bool:  # type: ignore[no-untyped-def]
    return "from_avro" in df._jdf.queryExecution().optimizedPlan().toString()


@pytest.mark.parametrize("unknown_ids", ["error", "python"])
@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("strict", b"\xff\xff\xff\xff\xff\xff"),  # the long never ends
        ("nullable", b"\x08"),  # union branch 4 of 2
        ("nullable", b"\x02"),  # branch string, then nothing
    ],
)
def test_native_failfast_names_schema_id_and_avro_reason(
    spark, spark_registry, subjects, kind, body, unknown_ids
) -> None:  # type: ignore[no-untyped-def]
    subject, schema_id = subjects[kind]
    good = framed(schema_id, STRICT if kind == "strict" else NULLABLE, [
        _strict_record(1) if kind == "strict" else {"text": "ok", "stars": 5}
    ])[0]  # fmt: skip
    df = spark.createDataFrame([(0, good), (1, _frame(schema_id, body))], "n int, value binary")
    decoded = _decode(df, spark_registry.url, subject, unknownIds=unknown_ids)
    assert _uses_from_avro(decoded)
    with pytest.raises(
        Exception, match=rf"schema id {schema_id}: payload does not decode as Avro: \w+"
    ) as failure:
        decoded.collect()
    assert "Malformed records are detected" not in str(failure.value)


@pytest.mark.parametrize("unknown_ids", ["error", "python"])
def test_native_permissive_all_nullable_reader_gives_rows_and_reasons(
    spark, spark_registry, subjects, unknown_ids
) -> None:  # type: ignore[no-untyped-def]
    subject, schema_id = subjects["nullable"]
    values = framed(schema_id, NULLABLE, [{"text": "a", "stars": 1}, {"text": None, "stars": None}])
    rows = [
        (0, values[0]),
        (1, values[1]),  # a record whose fields are all null: decodes, no error
        (2, _frame(schema_id, b"\x08")),
        (3, _frame(schema_id, b"\x02")),
        (4, None),
        (5, b"\x00" + (876543).to_bytes(4, "big")),
    ]
    df = spark.createDataFrame(rows, "n int, value binary").repartition(2)
    out = _decode(
        df,
        spark_registry.url,
        subject,
        mode="PERMISSIVE",
        errorField="error",
        unknownIds=unknown_ids,
    )
    assert _uses_from_avro(out)  # no longer handed whole to the Python engine
    got = {r.n: r.v for r in out.collect()}
    assert got[0].value.asDict() == {"text": "a", "stars": 1} and got[0].error is None
    assert got[1].value.asDict() == {"text": None, "stars": None} and got[1].error is None
    for n in (2, 3):
        assert got[n].value is None
        assert got[n].error.startswith(f"schema id {schema_id}: payload does not decode as Avro")
    assert got[4].value is None and got[4].error is None
    assert got[5].value is None and "schema id 876543" in got[5].error
    plain = _decode(df, spark_registry.url, subject, mode="PERMISSIVE", unknownIds=unknown_ids)
    values_only = {r.n: r.v for r in plain.collect()}
    assert values_only[1].asDict() == {"text": None, "stars": None}
    assert values_only[2] is None and values_only[3] is None and values_only[4] is None


def test_native_failfast_type_and_rows_equal_from_avro(spark, spark_registry, subjects) -> None:  # type: ignore[no-untyped-def]
    subject, schema_id = subjects["strict"]
    values = framed(schema_id, STRICT, [_strict_record(n) for n in range(40)])
    df = spark.createDataFrame(
        [(n, v) for n, v in enumerate(values)] + [(40, None)], "n int, value binary"
    )
    ours = _decode(df, spark_registry.url, subject)
    expected = df.select(
        "n", from_avro(F.expr("substring(value, 6)"), json.dumps(STRICT)).alias("v")
    )
    assert ours.schema == expected.schema
    lines = ours.schema["v"].dataType["lines"].dataType
    assert not lines.containsNull and not lines.elementType["qty"].nullable
    assert sorted(ours.collect()) == sorted(expected.collect())


ENUMS = {
    "type": "record", "name": "Ticket", "namespace": "native.errors",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["OPEN", "DONE"]}},
    ],
}  # fmt: skip


@pytest.mark.parametrize("unknown_ids", ["error", "python"])
def test_native_enum_index_out_of_range_names_the_schema_id(
    spark, spark_registry, unknown_ids
) -> None:  # type: ignore[no-untyped-def]
    """Skipping an enum reads only its index, so the probe reads the writer's enums (see
    spark_serdes.avro_probe): an index out of range fails naming the schema id (FAILFAST), or
    is null with that reason (PERMISSIVE), never Spark's message without the id."""
    url = spark_registry.url
    subject = "native-errors-enum-value"
    schema_id = register(url, subject, ENUMS)
    good = framed(schema_id, ENUMS, [{"id": 7, "state": "DONE"}])[0]
    rows = [(0, good), (1, _frame(schema_id, b"\x02\x0a")), (2, _frame(schema_id, b"\xff"))]
    df = spark.createDataFrame(rows, "n int, value binary")
    out = _decode(df, url, subject, mode="PERMISSIVE", errorField="error", unknownIds=unknown_ids)
    plan = out._jdf.queryExecution().executedPlan().toString()
    assert ("ArrowEvalPython" in plan) == (unknown_ids == "python")
    got = {r.n: r.v for r in out.collect()}
    assert got[0].value.asDict() == {"id": 7, "state": "DONE"} and got[0].error is None
    for n in (1, 2):
        assert got[n].value is None
        assert got[n].error.startswith(f"schema id {schema_id}: payload does not decode as Avro")
    failfast = _decode(df.where("n < 2"), url, subject, unknownIds=unknown_ids)
    with pytest.raises(Exception) as failure:
        failfast.collect()
    assert f"schema id {schema_id}: payload does not decode as Avro" in str(failure.value)
    assert "Malformed records are detected" not in str(failure.value)
