"""Spark: rows/s decoding Confluent-framed Avro into all columns, four ways in one run.

    python bench/spark_bench.py                 # 1,000,000 records, local[2], our server on SQLite
    python bench/spark_bench.py --rows 200000 --rounds 2
    python bench/spark_bench.py --format avro-encode --rows 200000 --rounds 2   # encoders

Paths, each reading the same Parquet file of framed records (0x00, 4-byte id, Avro binary of a
15-field record) and writing every decoded column to Spark's ``noop`` sink:

* ``row UDF``: a row-at-a-time (pickled) Python UDF calling fastavro's ``schemaless_reader``;
* ``from_avro``: Spark's own native ``from_avro`` on the payload after the 5-byte header, with
  the writer schema given by hand (no registry, no id check): the JVM ceiling;
* ``ours native``: ``from_confluent_avro`` with Spark's spark-avro jar (dispatch on the id);
* ``ours python``: ``from_confluent_avro(options={"engine": "python"})`` (Arrow UDF, fastavro).

``--format protobuf`` measures ``from_confluent_protobuf`` (Arrow UDF) against a row-at-a-time
UDF (``FromString`` and the same compiled converter per record) on the same 15 fields as Protobuf.

Results (ratios) go in docs/benchmarks.md, section "Spark". Needs scripts/spark-jars (Maven).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    import urllib3

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "registry.cli", "serve", "--port", str(port),
         "--store", f"sqlite:///{tmp / 'bench.db'}"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if urllib3.request("GET", url + "/", timeout=1, retries=False).status == 200:
                return proc, url
        except urllib3.exceptions.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start: " + (tmp / "server.log").read_text())


def make_input(spark, path: str, rows: int, schema_id: int) -> None:  # type: ignore[no-untyped-def]
    """``rows`` framed records written by Spark's own to_avro, 8 Parquet files."""
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import to_avro

    n = F.col("id")
    record = F.struct(
        n.alias("id"),
        F.concat(F.lit("customer-"), n.cast("string")).alias("customer"),
        (n % 100).cast("int").alias("quantity"),
        (n / 7).alias("price"),
        (n % 10 / 10).cast("float").alias("discount"),
        (n % 2 == 0).alias("paid"),
        F.when(n % 3 == 0, F.lit(None)).otherwise(F.lit("leave at door")).alias("note"),
        F.element_at(
            F.array(F.lit("NEW"), F.lit("PAID"), F.lit("SENT")), (n % 3 + 1).cast("int")
        ).alias("status"),
        F.array(F.lit("a"), F.concat(F.lit("t"), (n % 5).cast("string"))).alias("tags"),
        F.create_map(F.lit("channel"), F.lit("web"), F.lit("region"), F.lit("eu")).alias("attrs"),
        F.timestamp_millis(F.lit(1_700_000_000_000) + n).alias("created"),
        F.date_add(F.lit("2024-01-01").cast("date"), (n % 365).cast("int")).alias("day"),
        F.unhex(F.lpad(F.hex(n % 65536), 8, "0")).alias("code"),
        F.unhex(F.lit("deadbeef")).alias("blob"),
        F.struct(F.lit("Main St").alias("street"), (n % 99999).cast("int").alias("zip")).alias(
            "address"
        ),
    )
    prefix = b"\x00" + schema_id.to_bytes(4, "big")
    df = spark.range(rows).select(F.concat(F.lit(prefix), to_avro(record, json.dumps(SCHEMA))))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1, help="runs per path; best is shown")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--format", choices=("avro", "protobuf", "avro-encode"), default="avro")
    args = parser.parse_args()
    if args.format == "protobuf":
        protobuf_main(args)
        return
    if args.format == "avro-encode":
        encode_main(args)
        return

    os.environ["PYSPARK_PYTHON"] = sys.executable
    jars = subprocess.run(
        ["bash", str(ROOT / "scripts" / "spark-jars"), sys.executable],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    from serdes import Schema, SchemaRegistryClient
    from spark_serdes import from_confluent_avro

    tmp = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    proc, url = start_server(tmp)
    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.jars", jars)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        with SchemaRegistryClient({"url": url}) as client:
            schema_id = client.register_schema("orders-value", Schema(json.dumps(SCHEMA), "AVRO"))
        data = str(tmp / "framed.parquet")
        make_input(spark, data, args.rows, schema_id)
        source = spark.read.parquet(data)
        paths = {
            "row UDF (fastavro)": lambda: row_udf_column(F.col("value")),
            "from_avro (native, no header)": lambda: from_avro(
                F.expr("substring(value, 6)"), json.dumps(SCHEMA)
            ),
            "ours, native engine": lambda: from_confluent_avro(
                "value", url, subject="orders-value", options={"engine": "native"}
            ),
            "ours, Python engine": lambda: from_confluent_avro(
                "value", url, subject="orders-value", options={"engine": "python"}
            ),
        }
        # the same decoded rows on every path (a sample), before timing
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
        udf = results["row UDF (fastavro)"]
        plain = results["from_avro (native, no header)"]
        print(
            f"\n{args.rows:,} records, {args.master}, Spark {spark.version}, best of {args.rounds}"
        )
        print("| path | rows/s | vs row UDF | vs from_avro |")
        print("| --- | ---: | ---: | ---: |")
        for name, rate in results.items():
            print(f"| {name} | {rate:,.0f} | {rate / udf:.2f}x | {rate / plain:.2f}x |")
    finally:
        spark.stop()
        proc.terminate()
        proc.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


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
    os.environ["PYSPARK_PYTHON"] = sys.executable
    jars = subprocess.run(
        ["bash", str(ROOT / "scripts" / "spark-jars"), sys.executable],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro, to_avro

    from spark_serdes import to_confluent_avro

    tmp = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    proc, url = start_server(tmp)
    spark = (
        SparkSession.builder.master(args.master)
        .config("spark.jars", jars)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
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
        results: dict[str, float] = {}
        for _ in range(args.rounds):
            for name, make in paths.items():
                query = source.select(make().alias("value"))
                begun = time.perf_counter()
                query.write.format("noop").mode("overwrite").save()
                rate = args.rows / (time.perf_counter() - begun)
                results[name] = max(results.get(name, 0.0), rate)
                print(f"{name:32s} {rate:12,.0f} rows/s", flush=True)
        udf = results["row UDF (fastavro)"]
        plain = results["to_avro (native, no header)"]
        print(f"\n{args.rows:,} records encoded, {args.master}, best of {args.rounds}")
        print("| path | rows/s | vs row UDF | vs to_avro |")
        print("| --- | ---: | ---: | ---: |")
        for name, rate in results.items():
            print(f"| {name} | {rate:,.0f} | {rate / udf:.2f}x | {rate / plain:.2f}x |")
    finally:
        spark.stop()
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


def protobuf_main(args: argparse.Namespace) -> None:
    """Python engine of from_confluent_protobuf vs a row-at-a-time UDF, same 15 fields."""
    import datetime

    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import descriptor_pool
    from google.protobuf.message_factory import GetMessageClass
    from pyspark.sql import SparkSession
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
    os.environ["PYSPARK_PYTHON"] = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="spark-bench-"))
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
                    row[created] = datetime.datetime.fromtimestamp(row[created] / 1e6, datetime.UTC)
                return tuple(row)

            return F.udf(decode, spark_type, useArrow=False)(F.col("value"))

        paths = {
            "row UDF (FromString + converter)": row_udf,
            "ours, Python engine (Arrow UDF)": lambda: from_confluent_protobuf(
                "value", url, subject="orders-value"
            ),
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
                print(f"{name:36s} {rate:12,.0f} rows/s", flush=True)
        udf = results["row UDF (FromString + converter)"]
        print(
            f"\n{args.rows:,} Protobuf records, {args.master}, Spark {spark.version}, "
            f"best of {args.rounds}"
        )
        print("| path | rows/s | vs row UDF |")
        print("| --- | ---: | ---: |")
        for name, rate in results.items():
            print(f"| {name} | {rate:,.0f} | {rate / udf:.2f}x |")
    finally:
        spark.stop()
        proc.terminate()
        proc.wait(timeout=20)
        shutil.rmtree(tmp, ignore_errors=True)


_ROW_STATE: dict[str, object] = {}


if __name__ == "__main__":
    main()
