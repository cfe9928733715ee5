"""Spark: rows/s decoding Confluent-framed Avro into all columns, four ways in one run.

    python bench/spark_bench.py                 # 1,000,000 records, local[2], our server on SQLite
    python bench/spark_bench.py --rows 200000 --rounds 2
    python bench/spark_bench.py --format avro-encode --rows 200000 --rounds 2   # encoders
    python bench/spark_bench.py --format protobuf --rows 200000 --rounds 2
    python bench/spark_bench.py --format json --rows 200000 --rounds 2          # 200,000 default

Paths, each reading the same Parquet file of framed records (0x00, 4-byte id, Avro binary of a
15-field record) and writing every decoded column to Spark's ``noop`` sink:

* ``row UDF``: a row-at-a-time (pickled) Python UDF calling fastavro's ``schemaless_reader``;
* ``from_avro``: Spark's own native ``from_avro`` on the payload after the 5-byte header, with
  the writer schema given by hand (no registry, no id check): the JVM ceiling;
* ``ours native``: ``from_confluent_avro`` with Spark's spark-avro jar (dispatch on the id,
  the failure probe; FAILFAST's default plan, all on the JVM);
* ``ours native + Python``: the same with ``unknownIds: "python"`` (ids the plan does not
  cover go to the Python engine, so an Arrow UDF is evaluated on every row);
* ``ours python``: ``from_confluent_avro(options={"engine": "python"})`` (Arrow UDF, fastavro).

``--format protobuf`` measures ``from_confluent_protobuf`` (Arrow UDF) against a row-at-a-time
UDF (``FromString`` and the same compiled converter per record) on the same 15 fields as Protobuf.

``--format json`` decodes Confluent-framed JSON (UTF-8 JSON of a 13-field order written by
Spark's ``to_json``), five ways:

* ``row UDF``: a row-at-a-time (pickled) Python UDF: orjson, then ``date``/``datetime`` objects;
* ``from_json``: Spark's own ``from_json`` on the payload after the 5-byte header with the
  mapped schema (no id check): the JVM ceiling;
* ``ours native``: ``from_confluent_json`` (id check, from_json, malformed rows to Python);
* ``ours python``: ``from_confluent_json(options={"engine": "python"})`` (Arrow UDF, orjson);
* ``ours python+validate``: the same with ``validate: "true"`` (jsonschema-rs per record).

``--session plain`` / ``connect`` / ``connect-plain`` (Avro) run the same in a plain classic
session (no jars: ``row UDF`` against ``from_confluent_avro`` with default options, which is the
Python engine there) and through a local Spark Connect server with and without the jars.

Results (ratios) go in docs/benchmarks.md, sections "Spark" and "Spark: JSON Schema". Avro needs
scripts/spark-jars (Maven).
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._spark_common import (
    bench_run,
    check_same_decoded,
    decoded,
    print_table,
    time_paths,
)

SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "quantity", "type": "int"},
        {"name": "price", "type": "double"},
        {"name": "discount", "type": "float"},
        {"name": "paid", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {
            "name": "status",
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SENT"]},
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "string"}},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 4}},
        {"name": "blob", "type": "bytes"},
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


def order_middle_columns(n):  # type: ignore[no-untyped-def]
    """The order's fields from ``note`` to ``day``, the same in the Avro and JSON inputs."""
    from pyspark.sql import functions as F

    return [
        F.when(n % 3 == 0, F.lit(None)).otherwise(F.lit("leave at door")).alias("note"),
        F.element_at(
            F.array(F.lit("NEW"), F.lit("PAID"), F.lit("SENT")), (n % 3 + 1).cast("int")
        ).alias("status"),
        F.array(F.lit("a"), F.concat(F.lit("t"), (n % 5).cast("string"))).alias("tags"),
        F.create_map(F.lit("channel"), F.lit("web"), F.lit("region"), F.lit("eu")).alias("attrs"),
        F.timestamp_millis(F.lit(1_700_000_000_000) + n).alias("created"),
        F.date_add(F.lit("2024-01-01").cast("date"), (n % 365).cast("int")).alias("day"),
    ]


def make_input(spark, path: str, rows: int, schema_id: int, url: str) -> None:  # type: ignore[no-untyped-def]
    """``rows`` framed records written by Spark's own to_avro (by to_confluent_avro's Python
    engine where spark-avro is not loaded: the same bytes), 8 Parquet files."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    from spark_serdes import native_avro_available, to_confluent_avro

    n = F.col("id")
    record = F.struct(
        n.alias("id"),
        F.concat(F.lit("customer-"), n.cast("string")).alias("customer"),
        (n % 100).cast("int").alias("quantity"),
        (n / 7).alias("price"),
        (n % 10 / 10).cast("float").alias("discount"),
        (n % 2 == 0).alias("paid"),
        *order_middle_columns(n),
        F.unhex(F.lpad(F.hex(n % 65536), 8, "0")).alias("code"),
        F.unhex(F.lit("deadbeef")).alias("blob"),
        F.struct(F.lit("Main St").alias("street"), (n % 99999).cast("int").alias("zip")).alias(
            "address"
        ),
    )
    prefix = b"\x00" + schema_id.to_bytes(4, "big")
    records = spark.range(rows).select(record.alias("r"))
    if native_avro_available(spark):
        framed = F.concat(F.lit(prefix), to_avro(F.col("r"), json.dumps(SCHEMA)))
    else:
        framed = to_confluent_avro(
            "r", url, subject="orders-value", schema=SCHEMA, dataframe=records
        )
    df = records.select(framed)
    df.toDF("value").repartition(8).write.mode("overwrite").parquet(path)


def row_udf_column(col):  # type: ignore[no-untyped-def]
    from fastavro import parse_schema, schemaless_reader
    from pyspark.sql import functions as F

    from spark_serdes.types import avro_to_spark

    parsed = parse_schema(SCHEMA)
    spark_type = avro_to_spark(parsed)

    def decode(value: bytes | None) -> dict | None:
        if value is None:
            return None
        stream = io.BytesIO(value)
        stream.seek(5)
        return schemaless_reader(stream, parsed, None)  # type: ignore[return-value]

    return F.udf(decode, spark_type, useArrow=False)(col)


def avro_main(args: argparse.Namespace) -> None:
    """from_confluent_avro (both engines) vs a row UDF and plain from_avro, same 15 fields."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    from serdes import Schema, SchemaRegistryClient
    from spark_serdes import from_confluent_avro

    jars = args.session in ("jars", "connect")
    with bench_run(args.master, jars=jars, connect=args.session.startswith("connect")) as run:
        spark, url = run.spark, run.url
        with SchemaRegistryClient({"url": url}) as client:
            schema_id = client.register_schema("orders-value", Schema(json.dumps(SCHEMA), "AVRO"))
        data = str(run.tmp / "framed.parquet")
        make_input(spark, data, args.rows, schema_id, url)
        source = spark.read.parquet(data)
        if not jars:  # a new user's session: no spark-avro, so no from_avro to compare with
            paths = {
                "row UDF (fastavro)": lambda: row_udf_column(F.col("value")),
                "ours, default options (auto: Python engine)": lambda: from_confluent_avro(
                    "value", url, subject="orders-value"
                ),
            }
            check_same_decoded(source, paths)
            results = time_paths(paths, lambda make: decoded(source, make), args.rows, args.rounds)
            print_table(
                f"{args.rows:,} records, {args.master}, Spark {spark.version}, session "
                f"{args.session}, best of {args.rounds}",
                results,
                {"vs row UDF": "row UDF (fastavro)"},
            )
            return
        paths = {
            "row UDF (fastavro)": lambda: row_udf_column(F.col("value")),
            "from_avro (native, no header)": lambda: from_avro(
                F.expr("substring(value, 6)"), json.dumps(SCHEMA)
            ),
            "ours, native engine": lambda: from_confluent_avro(
                "value", url, subject="orders-value", options={"engine": "native"}
            ),
            "ours, native + Python for other ids": lambda: from_confluent_avro(
                "value",
                url,
                subject="orders-value",
                options={"engine": "native", "unknownIds": "python"},
            ),
            "ours, Python engine": lambda: from_confluent_avro(
                "value", url, subject="orders-value", options={"engine": "python"}
            ),
        }
        # the same decoded rows on every path (a sample), before timing
        check_same_decoded(source, paths)
        results = time_paths(paths, lambda make: decoded(source, make), args.rows, args.rounds)
        print_table(
            f"{args.rows:,} records, {args.master}, Spark {spark.version}, session "
            f"{args.session}, best of {args.rounds}",
            results,
            {"vs row UDF": "row UDF (fastavro)", "vs from_avro": "from_avro (native, no header)"},
        )


PROTO = """
syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
message Order {
  enum Status { NEW = 0; PAID = 1; SENT = 2; }
  message Address { string street = 1; int32 zip = 2; }
  int64 id = 1; string customer = 2; int32 quantity = 3; double price = 4; float discount = 5;
  bool paid = 6; optional string note = 7; Status status = 8; repeated string tags = 9;
  map<string, string> attrs = 10; google.protobuf.Timestamp created = 11; int32 day = 12;
  bytes code = 13; bytes blob = 14; Address address = 15;
}
"""


def row_encode_udf_column(col, prefix: bytes):  # type: ignore[no-untyped-def]
    """A row-at-a-time (pickled) UDF writing each record with fastavro, frame in front."""
    from fastavro import parse_schema, schemaless_writer
    from pyspark.sql import functions as F

    parsed = parse_schema(SCHEMA)

    def plain(value):  # type: ignore[no-untyped-def]
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return bytes(value) if isinstance(value, bytearray) else value

    def encode(row) -> bytes | None:  # type: ignore[no-untyped-def]
        if row is None:
            return None
        stream = io.BytesIO()
        stream.write(prefix)
        schemaless_writer(stream, parsed, plain(row.asDict(recursive=True)))
        return stream.getvalue()

    return F.udf(encode, "binary", useArrow=False)(col)


def encode_main(args: argparse.Namespace) -> None:
    """to_confluent_avro (both engines) vs a row UDF and plain to_avro, same 15 fields."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro, to_avro

    from spark_serdes import to_confluent_avro

    with bench_run(args.master, jars=True) as run:
        spark, url, tmp = run.spark, run.url, run.tmp
        framed = str(tmp / "framed.parquet")
        make_input(spark, framed, args.rows, 1)
        typed = str(tmp / "typed.parquet")
        spark.read.parquet(framed).select(
            from_avro(F.expr("substring(value, 6)"), json.dumps(SCHEMA)).alias("v")
        ).select("v.*").write.parquet(typed)
        source = spark.read.parquet(typed)
        record = F.struct(*[F.col(c) for c in source.columns])
        # the first call registers the schema; its id is in every frame
        native = to_confluent_avro(
            record, url, subject="orders-value", schema=SCHEMA, options={"engine": "native"},
            dataframe=source,
        )  # fmt: skip
        prefix = source.limit(1).select(native).first()[0][:5]
        paths = {
            "row UDF (fastavro)": lambda: row_encode_udf_column(record, prefix),
            "to_avro (native, no header)": lambda: to_avro(record, json.dumps(SCHEMA)),
            "ours, native engine": lambda: native,
            "ours, Python engine": lambda: to_confluent_avro(
                record, url, subject="orders-value", schema=SCHEMA,
                options={"engine": "python"}, dataframe=source,
            ),
        }  # fmt: skip
        sample = source.limit(2000)
        reference = sorted(r[0] for r in sample.select(paths["row UDF (fastavro)"]()).collect())
        for name, make in paths.items():
            got = sorted(r[0] for r in sample.select(make()).collect())
            if name.startswith("to_avro"):
                got = sorted(prefix + bytes(b) for b in got)
            if got != reference:
                raise SystemExit(f"{name} encodes differently from the row UDF")
        results = time_paths(
            paths, lambda make: source.select(make().alias("value")), args.rows, args.rounds
        )
        print_table(
            f"{args.rows:,} records encoded, {args.master}, best of {args.rounds}",
            results,
            {"vs row UDF": "row UDF (fastavro)", "vs to_avro": "to_avro (native, no header)"},
        )


def protobuf_main(args: argparse.Namespace) -> None:
    """Python engine of from_confluent_protobuf vs a row-at-a-time UDF, same 15 fields."""
    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import descriptor_pool
    from google.protobuf.message_factory import GetMessageClass
    from pyspark.sql import functions as F

    from registry.formats.protobuf.compiler import MAIN_FILE, compile_proto
    from serdes import SchemaRegistryClient
    from serdes.protobuf import ProtobufSerializer
    from spark_serdes import from_confluent_protobuf
    from spark_serdes.protobuf_decoder import compile_converter
    from spark_serdes.protobuf_types import message_to_spark

    pool = descriptor_pool.DescriptorPool()
    for file in compile_proto(PROTO, []).files:
        if file.name == MAIN_FILE:
            file.name = "bench_order.proto"
        pool.Add(file)
    order_cls = GetMessageClass(pool.FindMessageTypeByName("bench.Order"))
    with bench_run(args.master, jars=False) as run:
        spark, url, tmp = run.spark, run.url, run.tmp
        ctx = SerializationContext("orders", MessageField.VALUE)
        with SchemaRegistryClient({"url": url}) as client:
            ser = ProtobufSerializer(order_cls, client)
            values = []
            for n in range(args.rows):
                m = order_cls(
                    id=n, customer=f"customer-{n}", quantity=n % 100, price=n / 7,
                    discount=n % 10 / 10, paid=n % 2 == 0, status=n % 3,
                    tags=["a", f"t{n % 5}"], attrs={"channel": "web", "region": "eu"},
                    day=19723 + n % 365, code=(n % 65536).to_bytes(4, "big"),
                    blob=b"\xde\xad\xbe\xef",
                )  # fmt: skip
                if n % 3:
                    m.note = "leave at door"
                m.created.seconds, m.created.nanos = 1_700_000_000 + n // 1000, n % 1000 * 10**6
                m.address.street, m.address.zip = "Main St", n % 99999
                values.append((ser(m, ctx),))
        data = str(tmp / "framed.parquet")
        spark.createDataFrame(values, "value binary").repartition(8).write.parquet(data)
        del values
        source = spark.read.parquet(data)
        spark_type = message_to_spark(order_cls.DESCRIPTOR)
        created = spark_type.fieldNames().index("created")
        attrs = spark_type.fieldNames().index("attrs")
        file_pb = pool.FindFileByName("bench_order.proto").serialized_pb

        def row_udf():  # type: ignore[no-untyped-def]
            def decode(value: bytes | None) -> tuple | None:
                cls = _ROW_STATE.get("cls")
                if cls is None:
                    row_pool = descriptor_pool.DescriptorPool()
                    from google.protobuf import timestamp_pb2

                    row_pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
                    row_pool.AddSerializedFile(file_pb)
                    desc = row_pool.FindMessageTypeByName("bench.Order")
                    cls = _ROW_STATE["cls"] = GetMessageClass(desc)
                    _ROW_STATE["convert"] = compile_converter(desc)
                if value is None:
                    return None
                row = list(_ROW_STATE["convert"](cls.FromString(value[6:])))
                row[attrs] = dict(row[attrs])  # the converter gives Arrow's (key, value) pairs
                if row[created] is not None:
                    row[created] = dt.datetime.fromtimestamp(row[created] / 1e6, dt.UTC)
                return tuple(row)

            return F.udf(decode, spark_type, useArrow=False)(F.col("value"))

        paths = {
            "row UDF (FromString + converter)": row_udf,
            "ours, Python engine (Arrow UDF)": lambda: from_confluent_protobuf(
                "value", url, subject="orders-value"
            ),
        }
        check_same_decoded(source, paths)
        results = time_paths(
            paths, lambda make: decoded(source, make), args.rows, args.rounds, width=36
        )
        print_table(
            f"{args.rows:,} Protobuf records, {args.master}, Spark {spark.version}, "
            f"best of {args.rounds}",
            results,
            {"vs row UDF": "row UDF (FromString + converter)"},
        )


_ROW_STATE: dict[str, object] = {}


JSON_SCHEMA = {
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


def make_json_input(spark, path: str, rows: int, schema_id: int) -> None:  # type: ignore[no-untyped-def]
    """``rows`` framed JSON records written by Spark's to_json, 8 Parquet files."""
    from pyspark.sql import functions as F

    n = F.col("id")
    record = F.struct(
        n.alias("id"),
        F.concat(F.lit("customer-"), n.cast("string")).alias("customer"),
        (n % 100).alias("quantity"),
        (n / 7).alias("price"),
        (n % 2 == 0).alias("paid"),
        *order_middle_columns(n),
        F.lpad(F.hex(n % 65536), 8, "0").alias("code"),
        F.struct(F.lit("Main St").alias("street"), (n % 99999).alias("zip")).alias("address"),
    )
    prefix = b"\x00" + schema_id.to_bytes(4, "big")
    body = F.to_json(record, {"ignoreNullFields": "false"}).cast("binary")
    df = spark.range(rows).select(F.concat(F.lit(prefix), body).alias("value"))
    df.repartition(8).write.mode("overwrite").parquet(path)


def json_row_udf_column(col, spark_type):  # type: ignore[no-untyped-def]
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


def json_main(args: argparse.Namespace) -> None:
    """from_confluent_json (both engines, and validating) vs a row UDF and plain from_json."""
    from pyspark.sql import functions as F

    from serdes import Schema, SchemaRegistryClient
    from spark_serdes import from_confluent_json
    from spark_serdes.json_types import json_schema_to_spark
    from spark_serdes.types import spark_nullable

    with bench_run(args.master, jars=False) as run:
        spark, url = run.spark, run.url
        with SchemaRegistryClient({"url": url}) as client:
            schema_id = client.register_schema(
                "orders-value", Schema(json.dumps(JSON_SCHEMA), "JSON")
            )
        spark_type = spark_nullable(json_schema_to_spark(JSON_SCHEMA))
        data = str(run.tmp / "framed.parquet")
        make_json_input(spark, data, args.rows, schema_id)
        source = spark.read.parquet(data)

        def ours(options: dict[str, str]):  # type: ignore[no-untyped-def]
            return lambda: from_confluent_json(
                "value", url, subject="orders-value", options=options
            )

        paths = {
            "row UDF (orjson)": lambda: json_row_udf_column(F.col("value"), spark_type),
            "from_json (no header check)": lambda: F.from_json(
                F.expr("cast(substring(value, 6) as string)"), spark_type
            ),
            "ours, native engine": ours({"engine": "native"}),
            "ours, Python engine": ours({"engine": "python"}),
            "ours, Python engine + validate": ours({"validate": "true"}),
        }
        check_same_decoded(source, paths)
        results = time_paths(paths, lambda make: decoded(source, make), args.rows, args.rounds)
        print_table(
            f"{args.rows:,} JSON records, {args.master}, Spark {spark.version}, "
            f"best of {args.rounds}",
            results,
            {"vs row UDF": "row UDF (orjson)", "vs from_json": "from_json (no header check)"},
        )


SCENARIOS = {
    "avro": avro_main,
    "avro-encode": encode_main,
    "protobuf": protobuf_main,
    "json": json_main,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rows", type=int, default=None, help="records (default 200,000 for json, else 1,000,000)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="runs per path; best is shown")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--format", choices=tuple(SCENARIOS), default="avro")
    parser.add_argument(
        "--session",
        choices=("jars", "plain", "connect", "connect-plain"),
        default="jars",
        help="avro: classic with the spark-avro jar (default), a plain classic session, or a "
        "local Spark Connect server with / without the jars",
    )
    args = parser.parse_args()
    if args.rows is None:
        args.rows = 200_000 if args.format == "json" else 1_000_000
    SCENARIOS[args.format](args)


if __name__ == "__main__":
    main()
