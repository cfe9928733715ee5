"""Spark: rows/s decoding Confluent-framed JSON into all columns, five ways in one run.

    python bench/spark_json_bench.py            # 200,000 records, local[2], our server on SQLite
    python bench/spark_json_bench.py --rows 50000 --rounds 2

Paths, each reading the same Parquet file of framed records (0x00, 4-byte id, UTF-8 JSON of a
13-field order written by Spark's ``to_json``) and writing every decoded column to ``noop``:

* ``row UDF``: a row-at-a-time (pickled) Python UDF: orjson, then ``date``/``datetime`` objects;
* ``from_json``: Spark's own ``from_json`` on the payload after the 5-byte header with the
  mapped schema (no id check): the JVM ceiling;
* ``ours native``: ``from_confluent_json`` (id check, from_json, malformed rows to Python);
* ``ours python``: ``from_confluent_json(options={"engine": "python"})`` (Arrow UDF, orjson);
* ``ours python+validate``: the same with ``validate: "true"`` (jsonschema-rs per record).

Results (ratios) go in docs/benchmarks.md, section "Spark: JSON Schema".
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.spark_bench import start_server  # noqa: E402

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": "string"},
        "quantity": {"type": "integer"},
        "price": {"type": "number"},
        "paid": {"type": "boolean"},
        "note": {"type": ["null", "string"]},
        "status": {"enum": ["NEW", "PAID", "SENT"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "string"}},
        "created": {"type": "string", "format": "date-time"},
        "day": {"type": "string", "format": "date"},
        "code": {"type": "string"},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
            "required": ["street", "zip"],
        },
    },
    "required": ["id", "customer", "quantity", "price", "paid", "status", "created", "day"],
}


def make_input(spark, path: str, rows: int, schema_id: int) -> None:  # type: ignore[no-untyped-def]
    """``rows`` framed JSON records written by Spark's to_json, 8 Parquet files."""
    from pyspark.sql import functions as F

    n = F.col("id")
    record = F.struct(
        n.alias("id"),
        F.concat(F.lit("customer-"), n.cast("string")).alias("customer"),
        (n % 100).alias("quantity"),
        (n / 7).alias("price"),
        (n % 2 == 0).alias("paid"),
        F.when(n % 3 == 0, F.lit(None)).otherwise(F.lit("leave at door")).alias("note"),
        F.element_at(
            F.array(F.lit("NEW"), F.lit("PAID"), F.lit("SENT")), (n % 3 + 1).cast("int")
        ).alias("status"),
        F.array(F.lit("a"), F.concat(F.lit("t"), (n % 5).cast("string"))).alias("tags"),
        F.create_map(F.lit("channel"), F.lit("web"), F.lit("region"), F.lit("eu")).alias("attrs"),
        F.timestamp_millis(F.lit(1_700_000_000_000) + n).alias("created"),
        F.date_add(F.lit("2024-01-01").cast("date"), (n % 365).cast("int")).alias("day"),
        F.lpad(F.hex(n % 65536), 8, "0").alias("code"),
        F.struct(F.lit("Main St").alias("street"), (n % 99999).alias("zip")).alias("address"),
    )
    prefix = b"\x00" + schema_id.to_bytes(4, "big")
    body = F.to_json(record, {"ignoreNullFields": "false"}).cast("binary")
    df = spark.range(rows).select(F.concat(F.lit(prefix), body).alias("value"))
    df.repartition(8).write.mode("overwrite").parquet(path)


def row_udf_column(col, spark_type):  # type: ignore[no-untyped-def]
    import orjson
    from pyspark.sql import functions as F

    def decode(value: bytes | None) -> dict | None:
        if value is None:
            return None
        record = orjson.loads(value[5:])
        record["created"] = dt.datetime.fromisoformat(record["created"])
        record["day"] = dt.date.fromisoformat(record["day"])
        return record

    return F.udf(decode, spark_type, useArrow=False)(col)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=1, help="runs per path; best is shown")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()

    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from serdes import Schema, SchemaRegistryClient
    from spark_serdes import from_confluent_json
    from spark_serdes.json_types import json_schema_to_spark
    from spark_serdes.types import spark_nullable

    tmp = Path(tempfile.mkdtemp(prefix="spark-json-bench-"))
    proc, url = start_server(tmp)
    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        with SchemaRegistryClient({"url": url}) as client:
            schema_id = client.register_schema("orders-value", Schema(json.dumps(SCHEMA), "JSON"))
        spark_type = spark_nullable(json_schema_to_spark(SCHEMA))
        data = str(tmp / "framed.parquet")
        make_input(spark, data, args.rows, schema_id)
        source = spark.read.parquet(data)

        def ours(options: dict[str, str]):  # type: ignore[no-untyped-def]
            return lambda: from_confluent_json(
                "value", url, subject="orders-value", options=options
            )

        paths = {
            "row UDF (orjson)": lambda: row_udf_column(F.col("value"), spark_type),
            "from_json (no header check)": lambda: F.from_json(
                F.expr("cast(substring(value, 6) as string)"), spark_type
            ),
            "ours, native engine": ours({"engine": "native"}),
            "ours, Python engine": ours({"engine": "python"}),
            "ours, Python engine + validate": ours({"validate": "true"}),
        }
        sample = source.limit(2000)
        reference = None
        for name, make in paths.items():
            rows = sorted(sample.select(make().alias("v")).select("v.*").collect())
            if reference is None:
                reference = rows
            elif rows != reference:
                raise SystemExit(f"{name} decodes differently from the row UDF")
        results: dict[str, float] = {}
        for _ in range(args.rounds):
            for name, make in paths.items():
                query = source.select(make().alias("v")).select("v.*")
                begun = time.perf_counter()
                query.write.format("noop").mode("overwrite").save()
                rate = args.rows / (time.perf_counter() - begun)
                results[name] = max(results.get(name, 0.0), rate)
                print(f"{name:32s} {rate:12,.0f} rows/s", flush=True)
        udf = results["row UDF (orjson)"]
        plain = results["from_json (no header check)"]
        print(
            f"\n{args.rows:,} JSON records, {args.master}, Spark {spark.version}, "
            f"best of {args.rounds}"
        )
        print("| path | rows/s | vs row UDF | vs from_json |")
        print("| --- | ---: | ---: | ---: |")
        for name, rate in results.items():
            print(f"| {name} | {rate:,.0f} | {rate / udf:.2f}x | {rate / plain:.2f}x |")
    finally:
        spark.stop()
        proc.terminate()
        proc.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
