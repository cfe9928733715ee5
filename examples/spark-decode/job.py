"""A PySpark job: read a Kafka topic of Confluent-framed Avro orders, decode them into typed
columns, keep the large ones, and write them back encoded to another topic.

    spark-submit --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1 job.py \
        --bootstrap 127.0.0.1:9092 --registry http://127.0.0.1:8081 \
        --source orders --target large-orders
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_serdes import from_confluent_avro, to_confluent_avro

LARGE_ORDER = """{
  "type": "record", "name": "LargeOrder", "namespace": "shop",
  "fields": [
    {"name": "id", "type": "long"},
    {"name": "item", "type": "string"},
    {"name": "qty", "type": "int"}
  ]
}"""


def decode(spark: SparkSession, bootstrap: str, registry: str, source: str) -> DataFrame:
    """The topic's records as typed columns (``id``, ``item``, ``qty``), each record decoded
    with its own writer schema and resolved to the subject's latest version."""
    raw = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
    )
    return raw.select(
        from_confluent_avro("value", registry, subject=f"{source}-value").alias("order")
    ).select("order.*")


def run(spark: SparkSession, bootstrap: str, registry: str, source: str, target: str) -> int:
    """Decode ``source``, keep orders of at least 2 items, write them encoded to ``target``
    (registering ``LargeOrder`` under ``<target>-value``); the number of records written."""
    large = decode(spark, bootstrap, registry, source).where(F.col("qty") >= 2)
    encoded = large.select(
        F.col("id").cast("string").alias("key"),
        to_confluent_avro(
            F.struct("id", "item", "qty"), registry, subject=f"{target}-value",
            schema=LARGE_ORDER, dataframe=large,
        ).alias("value"),
    )  # fmt: skip
    encoded.write.format("kafka").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", target
    ).save()
    return encoded.count()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--registry", default="http://127.0.0.1:8081")
    parser.add_argument("--source", default="orders")
    parser.add_argument("--target", default="large-orders")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("decode-orders").getOrCreate()
    try:
        written = run(spark, args.bootstrap, args.registry, args.source, args.target)
        print(f"wrote {written} large orders to {args.target}")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
