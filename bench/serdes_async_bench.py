"""Async serdes benchmark: records/s through ``await ser(value, ctx)`` / ``await de(data, ctx)``
for serdes' async serdes, its sync serdes and confluent-kafka's async serdes, per format, in one
run against one live registry (the records and schemas of ``serdes_bench.py``).

    python bench/serdes_async_bench.py                 # starts our server on a fresh SQLite file
    python bench/serdes_async_bench.py --url http://127.0.0.1:8081 --records 20000

Every path is checked to give the same bytes and values first. Best of ``--rounds`` rounds, the
paths interleaved within a round. One event loop, one task: the steady state, no registry call.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from bench import serdes_bench as sb  # noqa: E402
from bench._server import registry_url  # noqa: E402


async def rate(fn: Callable[[Any, Any], Any], items: list[Any], ctx: Any, aw: bool) -> float:
    start = time.perf_counter()
    if aw:
        for item in items:
            await fn(item, ctx)
    else:
        for item in items:
            fn(item, ctx)
    return len(items) / (time.perf_counter() - start)


async def best(paths: dict[str, tuple[Any, bool]], items: list[Any], rounds: int, ctx: Any):
    out = dict.fromkeys(paths, 0.0)
    for _ in range(rounds):
        for name, (fn, aw) in paths.items():
            out[name] = max(out[name], await rate(fn, items, ctx, aw))
    return out


async def bench(fmt: str, url: str, n: int, rounds: int) -> list[str]:
    from confluent_kafka.schema_registry import AsyncSchemaRegistryClient as CAsyncClient
    from confluent_kafka.schema_registry._async import avro as cavro
    from confluent_kafka.schema_registry._async import json_schema as cjson
    from confluent_kafka.schema_registry._async import protobuf as cproto

    from serdes import AsyncSchemaRegistryClient, SchemaRegistryClient, avro, json_schema, protobuf

    ctx = SerializationContext(f"bench-async-{fmt}", MessageField.VALUE)
    ours_async = AsyncSchemaRegistryClient({"url": url})
    ours_sync = SchemaRegistryClient({"url": url})
    theirs = CAsyncClient({"url": url})
    if fmt == "avro":
        s = json.dumps(sb.AVRO_SCHEMA)
        records = [sb.avro_record(i) for i in range(n)]
        sync_ser, sync_de = avro.AvroSerializer(ours_sync, s), avro.AvroDeserializer(ours_sync)
        a_ser = await avro.AsyncAvroSerializer(ours_async, s)
        a_de = await avro.AsyncAvroDeserializer(ours_async)
        c_ser = await cavro.AsyncAvroSerializer(theirs, s)
        c_de = await cavro.AsyncAvroDeserializer(theirs)
    elif fmt == "protobuf":
        cls = sb._order_class()
        records = [sb.proto_record(cls, i) for i in range(n)]
        conf = {"use.deprecated.format": False}
        sync_ser = protobuf.ProtobufSerializer(cls, ours_sync, conf)
        sync_de = protobuf.ProtobufDeserializer(cls, conf, ours_sync)
        a_ser = await protobuf.AsyncProtobufSerializer(cls, ours_async, conf)
        a_de = await protobuf.AsyncProtobufDeserializer(cls, conf, ours_async)
        c_ser = await cproto.AsyncProtobufSerializer(cls, theirs, conf)
        c_de = await cproto.AsyncProtobufDeserializer(cls, conf, theirs)
    else:
        s = json.dumps(sb.JSON_SCHEMA)
        records = [sb.json_record(i) for i in range(n)]
        sync_ser = json_schema.JSONSerializer(s, ours_sync)
        sync_de = json_schema.JSONDeserializer(None, schema_registry_client=ours_sync)
        a_ser = await json_schema.AsyncJSONSerializer(s, ours_async)
        a_de = await json_schema.AsyncJSONDeserializer(None, schema_registry_client=ours_async)
        c_ser = await cjson.AsyncJSONSerializer(s, theirs)
        c_de = await cjson.AsyncJSONDeserializer(None, schema_registry_client=theirs)
    frames = [sync_ser(r, ctx) for r in records]
    for r, f in zip(records[:200], frames[:200], strict=True):
        assert await a_ser(r, ctx) == f == await c_ser(r, ctx), "different bytes"
        assert await a_de(f, ctx) == sync_de(f, ctx) == await c_de(f, ctx), "different values"
    ser = await best(
        {"serdes async": (a_ser, True), "serdes sync": (sync_ser, False),
         "confluent async": (c_ser, True)}, records, rounds, ctx)  # fmt: skip
    de = await best(
        {"serdes async": (a_de, True), "serdes sync": (sync_de, False),
         "confluent async": (c_de, True)}, frames, rounds, ctx)  # fmt: skip
    await ours_async.aclose()
    await theirs.aclose()
    rows = []
    for name in ser:
        rows.append(
            f"| {fmt} | {name} | {ser[name]:,.0f} | {de[name]:,.0f} | "
            f"{ser['serdes async'] / ser[name]:.2f}x | {de['serdes async'] / de[name]:.2f}x |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an existing registry (default: start ours)")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--formats", default="avro,protobuf,json")
    args = parser.parse_args()
    with registry_url(args.url) as url:
        rows: list[str] = []
        for fmt in args.formats.split(","):
            rows.extend(asyncio.run(bench(fmt, url, args.records, args.rounds)))
    print(
        f"{args.records:,} records, best of {args.rounds} rounds, one task; "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{dt.date.today().isoformat()}\n"
    )
    print("| format | path | serialize rec/s | deserialize rec/s | async ser vs | async de vs |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
