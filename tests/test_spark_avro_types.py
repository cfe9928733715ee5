"""Avro -> Spark: both engines give exactly what Spark's own from_avro gives for the same data."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from pyspark.sql import functions as F
from pyspark.sql.avro.functions import from_avro

from spark_serdes import from_confluent_avro
from spark_serdes.types import avro_to_spark
from tests.fixtures.spark import framed, register

SCHEMA = (Path(__file__).parent / "data" / "spark" / "all_types.avsc").read_text()
UTC = dt.UTC


def record(n: int) -> dict:
    return {
        "b": n % 2 == 0,
        "i": -n,
        "l": n * 10_000_000_000,
        "f": n / 4,
        "d": n / 3,
        "s": f"text {n} é",
        "raw": bytes([n % 256, 0, 255]),
        "opt": None if n % 3 == 0 else f"opt{n}",
        "opt_last": None if n % 2 else n,
        "int_or_long": n,
        "float_or_double": 1.5 * n,
        "choice": [n, f"s{n}", {"x": n, "y": -n}][n % 3],
        "opt_choice": [None, True, 2.5][n % 3],
        "two_records": ({"x": 1, "y": 2}, {"text": "label"})[n % 2]
        if n % 2 == 0
        else ("test.spark.Label", {"text": f"label {n}"}),
        "color": ["RED", "GREEN", "BLUE"][n % 3],
        "hash": b"\x01\x02\x03" + bytes([n % 256]),
        "price": Decimal(f"{n}.{n % 100:02d}"),
        "big": Decimal(f"-1234567890123456.{n % 10000:04d}"),
        "day": dt.date(2024, 2, 29) + dt.timedelta(days=n),
        "ts_ms": dt.datetime(2024, 1, 1, 12, 30, 15, 123000, tzinfo=UTC) + dt.timedelta(hours=n),
        "ts_us": dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC) + dt.timedelta(days=n),
        "local_ms": dt.datetime(2024, 6, 1, 8, 0, 0, 5000) + dt.timedelta(minutes=n),
        "local_us": dt.datetime(2000, 1, 1, 0, 0, 0, 1) + dt.timedelta(seconds=n),
        "time_ms": dt.time(1, 2, 3, 4000),
        "id": str(uuid.UUID(int=n)),
        "tags": [f"t{k}" for k in range(n % 4)],
        "maybe_tags": [None if k % 2 else k for k in range(n % 5)],
        "points": {f"p{k}": {"x": k, "y": n} for k in range(n % 3)},
        "opt_map": None if n % 4 == 0 else {"a": 1.0, "b": None},
        "where": {"x": n, "y": n + 1},
        "nested": {"color": "BLUE", "inner": None if n % 2 else {"n": n}},
    }


@pytest.fixture(scope="module")
def framed_df(spark, spark_registry):  # type: ignore[no-untyped-def]
    subject = "all-types-value"
    schema_id = register(spark_registry.url, subject, SCHEMA)
    rows = [(v,) for v in framed(schema_id, SCHEMA, [record(n) for n in range(60)])]
    rows.append((None,))  # a tombstone
    return spark.createDataFrame(rows, "value binary").repartition(2), subject


def test_type_mapping_equals_spark_schema_of_avro(spark) -> None:  # type: ignore[no-untyped-def]
    from fastavro import parse_schema

    expected = spark.range(1).select(from_avro(F.lit(b""), SCHEMA).alias("v")).schema["v"].dataType
    assert avro_to_spark(parse_schema(json.loads(SCHEMA))) == expected


@pytest.mark.parametrize("engine", ["python", "native"])
def test_decoded_rows_equal_native_from_avro(framed_df, spark_registry, engine) -> None:  # type: ignore[no-untyped-def]
    df, subject = framed_df
    expected = df.select(from_avro(F.expr("substring(value, 6)"), SCHEMA).alias("v"))
    ours = df.select(
        from_confluent_avro(
            "value", spark_registry.url, subject=subject, options={"engine": engine}
        ).alias("v")
    )
    assert ours.schema == expected.schema
    got = sorted(ours.collect(), key=repr)
    want = sorted(expected.collect(), key=repr)
    assert len(got) == 61
    assert got == want
    assert sum(1 for row in got if row.v is None) == 1
