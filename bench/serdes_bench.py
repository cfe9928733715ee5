"""Serdes benchmark: records/s to serialize and deserialize, per format, for our ``serdes``,
confluent-kafka's serdes and the raw library, in one run against one live registry.

    python bench/serdes_bench.py                       # starts our server on a fresh SQLite file
    python bench/serdes_bench.py --url http://127.0.0.1:8081 --records 100000

Raw baselines (no framing, no registry):
* Avro     fastavro ``schemaless_writer``/``schemaless_reader`` on a parsed schema, BytesIO
* Protobuf ``SerializeToString``/``ParseFromString`` of the generated message class
* JSON     ``json.dumps`` + python-jsonschema validation / ``json.loads`` + validation

Every path is checked to produce the same bytes / the same decoded values before timing
(speed never changes a value). Each measurement is the best of ``--rounds`` rounds, the
libraries interleaved within a round so machine noise hits all of them. Single thread.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

from bench._raw_avro import raw_avro  # noqa: E402
from bench._server import registry_url  # noqa: E402
from bench.encryption_rows import bench_encryption  # noqa: E402

# -- the registry ------------------------------------------------------------------------------


# -- timing ------------------------------------------------------------------------------------


def rate(fn: Callable[[Any, Any], Any], items: list[Any], ctx: Any) -> float:
    """Records/s of ``fn(item, ctx)``: every path is one call from the loop, as a producer
    calls a serializer (the raw paths take and ignore ``ctx``)."""
    start = time.perf_counter()
    for item in items:
        fn(item, ctx)
    return len(items) / (time.perf_counter() - start)


def best(
    paths: dict[str, Callable[[Any, Any], Any]],
    inputs: dict[str, list[Any]],
    rounds: int,
    ctx: Any,
) -> dict[str, float]:
    """Best records/s of each path over chunks of the inputs, paths interleaved per chunk.

    On a shared machine the best chunk is the measurement least disturbed by other load; the
    interleaving gives every path the same chances.
    """
    results = dict.fromkeys(paths, 0.0)
    longest = max(len(items) for items in inputs.values())
    size = max(1, min(5000, min(len(items) for items in inputs.values())))
    for _ in range(rounds):
        for start in range(0, longest, size):
            for name, fn in paths.items():
                items = inputs[name]
                at = start % len(items)  # shorter inputs (slow paths) are cycled
                results[name] = max(results[name], rate(fn, items[at : at + size], ctx))
    return results


# -- Avro --------------------------------------------------------------------------------------

AVRO_SCHEMA = {
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
            "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]},
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 8}},
        {"name": "blob", "type": "bytes"},
        {
            "name": "address",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [{"name": "street", "type": "string"}, {"name": "zip", "type": "int"}],
            },
        },
    ],
}


def avro_record(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"customer-{i % 977}",
        "quantity": i % 50,
        "price": i * 0.25,
        "discount": 0.5,
        "paid": i % 2 == 0,
        "note": None if i % 3 else f"note {i}",
        "status": ["NEW", "PAID", "SHIPPED"][i % 3],
        "tags": ["a", "bb", "ccc"][: i % 4],
        "attrs": {"x": i, "y": -i},
        "created": dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=i),
        "day": dt.date(2026, 1, 1) + dt.timedelta(days=i % 300),
        "digest": (i % 256).to_bytes(1, "big") * 8,
        "blob": b"\x00\x01" * (i % 5),
        "address": {"street": f"{i} Main St", "zip": 10000 + i % 9000},
    }


def bench_avro(url: str, n: int, rounds: int) -> list[tuple[str, str, float, float, float]]:
    import fastavro
    from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer as CDe
    from confluent_kafka.schema_registry.avro import AvroSerializer as CSer

    from serdes import SchemaRegistryClient
    from serdes.avro import AvroDeserializer, AvroSerializer

    schema_str = json.dumps(AVRO_SCHEMA)
    parsed = fastavro.parse_schema(json.loads(schema_str))
    records = [avro_record(i) for i in range(n)]
    ctx = SerializationContext("bench-avro", MessageField.VALUE)
    theirs_client, ours_client = CClient({"url": url}), SchemaRegistryClient({"url": url})
    c_ser, o_ser = CSer(theirs_client, schema_str), AvroSerializer(ours_client, schema_str)
    c_de, o_de = CDe(theirs_client), AvroDeserializer(ours_client)
    raw_ser, raw_de = raw_avro(parsed)

    framed = [o_ser(r, ctx) for r in records]
    for rec, ours in zip(records[:2000], framed[:2000], strict=True):
        assert ours == c_ser(rec, ctx), "Avro bytes differ from confluent-kafka's"
        assert ours[5:] == raw_ser(rec)
        assert o_de(ours, ctx) == c_de(ours, ctx) == raw_de(ours[5:])
    bodies = [f[5:] for f in framed]
    ser = best(
        {"raw": raw_ser, "confluent": c_ser, "serdes": o_ser},
        {"raw": records, "confluent": records, "serdes": records},
        rounds,
        ctx,
    )
    de = best(
        {"raw": raw_de, "confluent": c_de, "serdes": o_de},
        {"raw": bodies, "confluent": framed, "serdes": framed},
        rounds,
        ctx,
    )
    return [
        ("Avro", "serialize", ser["raw"], ser["confluent"], ser["serdes"]),
        ("Avro", "deserialize", de["raw"], de["confluent"], de["serdes"]),
    ]


# -- Protobuf ----------------------------------------------------------------------------------


def _order_class() -> Any:
    from google.protobuf import descriptor_pb2, descriptor_pool
    from google.protobuf.message_factory import GetMessageClass

    protos = ROOT / "tests" / "data" / "serdes"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"-I{protos}",
                "--include_imports",
                f"--descriptor_set_out={out}",
                "shop/order.proto",
            ],
            check=True,
            capture_output=True,
        )
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return GetMessageClass(pool.FindMessageTypeByName("shop.Order"))


def proto_record(cls: Any, i: int) -> Any:
    msg = cls(
        id=i,
        customer=f"customer-{i % 977}",
        tags=["a", "bb", "ccc"][: i % 4],
        price=i * 0.25,
        paid=i % 2 == 0,
        blob=b"\x00\x01" * (i % 5),
        status=i % 2,
        delta=-i,
    )
    msg.attrs["x"] = i
    msg.ship_to.street = f"{i} Main St"
    msg.ship_to.zip = 10000 + i % 9000
    msg.created.seconds = 1_700_000_000 + i
    if i % 2:
        msg.card = "4242"
    line = msg.lines.add()
    line.sku, line.qty = "sku", i % 7
    return msg


def bench_protobuf(url: str, n: int, rounds: int) -> list[tuple[str, str, float, float, float]]:
    from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CDe
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CSer

    from serdes import SchemaRegistryClient
    from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer

    cls = _order_class()
    records = [proto_record(cls, i) for i in range(n)]
    ctx = SerializationContext("bench-protobuf", MessageField.VALUE)
    theirs_client, ours_client = CClient({"url": url}), SchemaRegistryClient({"url": url})
    conf = {"use.deprecated.format": False}
    c_ser, o_ser = CSer(cls, theirs_client, conf), ProtobufSerializer(cls, ours_client)
    c_de = CDe(cls, conf, theirs_client)
    o_de = ProtobufDeserializer(cls, schema_registry_client=ours_client)

    def raw_ser(msg: Any, _ctx: Any = None) -> bytes:
        return msg.SerializeToString()

    def raw_de(body: bytes, _ctx: Any = None) -> Any:
        msg = cls()
        msg.ParseFromString(body)
        return msg

    framed = [o_ser(r, ctx) for r in records]
    for rec, ours in zip(records[:2000], framed[:2000], strict=True):
        assert ours == c_ser(rec, ctx), "Protobuf bytes differ from confluent-kafka's"
        assert ours[6:] == raw_ser(rec)
        assert o_de(ours, ctx) == c_de(ours, ctx) == raw_de(ours[6:]) == rec
    bodies = [f[6:] for f in framed]
    ser = best(
        {"raw": raw_ser, "confluent": c_ser, "serdes": o_ser},
        {"raw": records, "confluent": records, "serdes": records},
        rounds,
        ctx,
    )
    de = best(
        {"raw": raw_de, "confluent": c_de, "serdes": o_de},
        {"raw": bodies, "confluent": framed, "serdes": framed},
        rounds,
        ctx,
    )
    return [
        ("Protobuf", "serialize", ser["raw"], ser["confluent"], ser["serdes"]),
        ("Protobuf", "deserialize", de["raw"], de["confluent"], de["serdes"]),
    ]


# -- JSON Schema -------------------------------------------------------------------------------

JSON_SCHEMA = {
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": "string", "minLength": 1},
        "quantity": {"type": "integer", "minimum": 0},
        "price": {"type": "number", "minimum": 0},
        "paid": {"type": "boolean"},
        "note": {"type": ["string", "null"]},
        "status": {"enum": ["NEW", "PAID", "SHIPPED"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
            "required": ["street", "zip"],
        },
    },
    "required": ["id", "customer", "quantity", "price", "paid", "status"],
}


def json_record(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "customer": f"customer-{i % 977}",
        "quantity": i % 50,
        "price": i * 0.25,
        "paid": i % 2 == 0,
        "note": None if i % 3 else f"note {i}",
        "status": ["NEW", "PAID", "SHIPPED"][i % 3],
        "tags": ["a", "bb", "ccc"][: i % 4],
        "attrs": {"x": i, "y": -i},
        "address": {"street": f"{i} Main St", "zip": 10000 + i},
    }


def bench_json(url: str, n: int, rounds: int) -> list[tuple[str, str, float, float, float]]:
    import jsonschema
    from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CDe
    from confluent_kafka.schema_registry.json_schema import JSONSerializer as CSer

    from serdes import SchemaRegistryClient
    from serdes.json_schema import JSONDeserializer, JSONSerializer

    schema_str = json.dumps(JSON_SCHEMA)
    validator = jsonschema.validators.validator_for(JSON_SCHEMA)(JSON_SCHEMA)
    records = [json_record(i) for i in range(n)]
    ctx = SerializationContext("bench-json", MessageField.VALUE)
    theirs_client, ours_client = CClient({"url": url}), SchemaRegistryClient({"url": url})
    c_ser, o_ser = CSer(schema_str, theirs_client), JSONSerializer(schema_str, ours_client)
    c_de = CDe(None, schema_registry_client=theirs_client)
    o_de = JSONDeserializer(None, schema_registry_client=ours_client)

    def raw_ser(rec: Any, _ctx: Any = None) -> bytes:
        validator.validate(rec)
        return json.dumps(rec, separators=(",", ":")).encode()

    def raw_de(body: bytes, _ctx: Any = None) -> Any:
        value = json.loads(body)
        validator.validate(value)
        return value

    framed = [o_ser(r, ctx) for r in records]
    for rec, ours in zip(records[:2000], framed[:2000], strict=True):
        assert ours == c_ser(rec, ctx), "JSON bytes differ from confluent-kafka's"
        assert o_de(ours, ctx) == c_de(ours, ctx) == raw_de(ours[5:]) == rec
    bodies = [f[5:] for f in framed]
    # python-jsonschema is slow: fewer records for the raw and confluent-kafka paths
    few = max(1000, n // 10)
    ser = best(
        {"raw": raw_ser, "confluent": c_ser, "serdes": o_ser},
        {"raw": records[:few], "confluent": records[:few], "serdes": records},
        rounds,
        ctx,
    )
    de = best(
        {"raw": raw_de, "confluent": c_de, "serdes": o_de},
        {"raw": bodies[:few], "confluent": framed[:few], "serdes": framed},
        rounds,
        ctx,
    )
    return [
        ("JSON Schema", "serialize", ser["raw"], ser["confluent"], ser["serdes"]),
        ("JSON Schema", "deserialize", de["raw"], de["confluent"], de["serdes"]),
    ]


# -- data-contract rules -----------------------------------------------------------------------

RULE_ROWS = [
    ("CEL condition", "serialize"),
    ("CEL_FIELD transform", "serialize"),
    ("JSONata migration", "deserialize"),
]


def _register_ruled(client: Any, subject: str, schema: dict[str, Any], **rule_set: Any) -> None:
    from serdes import Metadata, RuleSet, Schema

    metadata = rule_set.pop("metadata", None)
    client.register_schema(
        subject,
        Schema(
            json.dumps(schema),
            "AVRO",
            [],
            Metadata(doc=metadata) if metadata else None,
            RuleSet(doc=rule_set) if rule_set else None,
        ),
    )


def bench_rules(url: str, n: int, rounds: int) -> list[tuple[str, str, float, float, float]]:
    """Avro with rules: (rule, direction, serdes without the rule, confluent-kafka, serdes)."""
    import copy

    from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer as CDe
    from confluent_kafka.schema_registry.avro import AvroSerializer as CSer
    from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor as CCel
    from confluent_kafka.schema_registry.rules.cel.cel_field_executor import (
        CelFieldExecutor as CCelField,
    )
    from confluent_kafka.schema_registry.rules.jsonata.jsonata_executor import (
        JsonataExecutor as CJsonata,
    )

    from serdes import SchemaRegistryClient
    from serdes.avro import AvroDeserializer, AvroSerializer
    from serdes.rules.cel import CelExecutor, CelFieldExecutor
    from serdes.rules.jsonata import JsonataExecutor

    for executor in (CCel, CCelField, CJsonata, CelExecutor, CelFieldExecutor, JsonataExecutor):
        executor.register()
    theirs_client, ours_client = CClient({"url": url}), SchemaRegistryClient({"url": url})
    latest = {"auto.register.schemas": False, "use.latest.version": True}
    records = [avro_record(i) for i in range(n)]
    tagged = copy.deepcopy(AVRO_SCHEMA)
    tagged["fields"][1]["confluent:tags"] = ["PII"]
    rows: list[tuple[str, str, float, float, float]] = []

    def rule(name: str, kind: str, mode: str, kind_type: str, expr: str, **extra: Any) -> Any:
        return {"name": name, "kind": kind, "mode": mode, "type": kind_type, "expr": expr, **extra}

    def serialize_row(label: str, rules: list[Any], schema: dict[str, Any]) -> None:
        ctx = SerializationContext(f"bench-rules-{label.split()[0].lower()}", MessageField.VALUE)
        plain_ctx = SerializationContext(ctx.topic + "-plain", MessageField.VALUE)
        _register_ruled(ours_client, f"{ctx.topic}-value", schema, domainRules=rules)
        _register_ruled(ours_client, f"{plain_ctx.topic}-value", schema)
        text = json.dumps(schema)
        c_ser = CSer(theirs_client, text, conf=dict(latest))
        o_ser = AvroSerializer(ours_client, text, conf=dict(latest))
        plain = AvroSerializer(ours_client, text, conf=dict(latest))
        mine, theirs = copy.deepcopy(records), copy.deepcopy(records)
        for a, b in zip(mine[:500], theirs[:500], strict=True):
            assert o_ser(a, ctx)[5:] == c_ser(b, ctx)[5:], f"{label}: bytes differ"
        few = max(500, n // 20)  # confluent-kafka's rules are slow: fewer records
        result = best(
            {
                "plain": lambda r, _c: plain(r, plain_ctx),
                "confluent": c_ser,
                "serdes": o_ser,
            },
            {"plain": copy.deepcopy(records), "confluent": theirs[:few], "serdes": mine},
            rounds,
            ctx,
        )
        rows.append((label, "serialize", result["plain"], result["confluent"], result["serdes"]))

    serialize_row(
        "CEL condition",
        [
            rule(
                "valid", "CONDITION", "WRITE", "CEL",
                "message.quantity >= 0 && message.customer.startsWith('customer')",
            )
        ],
        AVRO_SCHEMA,
    )  # fmt: skip
    serialize_row(
        "CEL_FIELD transform",
        [
            rule(
                "mask", "TRANSFORM", "WRITE", "CEL_FIELD",
                "value.startsWith('customer') ? 'c***' : value", tags=["PII"],
            )
        ],
        tagged,
    )  # fmt: skip

    # JSONata migration on read: frames written as v1, read as the latest v2.
    v1 = {
        "type": "record",
        "name": "Widget",
        "fields": [{"name": "name", "type": "string"}, {"name": "size", "type": "int"}],
    }
    v2 = {
        "type": "record",
        "name": "Widget",
        "fields": [{"name": "name", "type": "string"}, {"name": "height", "type": "int"}],
    }
    ctx = SerializationContext("bench-rules-jsonata", MessageField.VALUE)
    subject = f"{ctx.topic}-value"
    ours_client.set_compatibility(subject, "NONE")
    _register_ruled(ours_client, subject, v1, metadata={"properties": {"v": "1"}})
    up = "$merge([$sift($, function($v, $k) {$k != 'size'}), {'height': $.'size'}])"
    _register_ruled(
        ours_client,
        subject,
        v2,
        metadata={"properties": {"v": "2"}},
        migrationRules=[rule("up", "TRANSFORM", "UPGRADE", "JSONATA", up)],
    )
    old = AvroSerializer(
        ours_client,
        json.dumps(v1),
        conf={"auto.register.schemas": False, "use.latest.with.metadata": {"v": "1"}},
    )
    frames = [old({"name": f"w{i}", "size": i}, ctx) for i in range(n)]
    plain_de = AvroDeserializer(ours_client)
    c_de = CDe(theirs_client, conf={"use.latest.version": True})
    o_de = AvroDeserializer(ours_client, conf={"use.latest.version": True})
    for frame in frames[:500]:
        assert o_de(frame, ctx) == c_de(frame, ctx), "JSONata: values differ"
    few = max(500, n // 20)
    result = best(
        {"plain": plain_de, "confluent": c_de, "serdes": o_de},
        {"plain": frames, "confluent": frames[:few], "serdes": frames},
        rounds,
        ctx,
    )
    rows.append(
        ("JSONata migration", "deserialize", result["plain"], result["confluent"], result["serdes"])
    )
    return rows


def rules_table(rows: list[tuple[str, str, float, float, float]]) -> str:
    lines = [
        "| rule (Avro) | direction | confluent-kafka rec/s | serdes rec/s "
        "| serdes / confluent-kafka | serdes without rules rec/s | the rule's cost |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for rule, direction, plain, theirs, ours in rows:
        cost = (1 / ours - 1 / plain) / (1 / plain)
        lines.append(
            f"| {rule} | {direction} | {theirs:,.0f} | {ours:,.0f} | {ours / theirs:.2f}x "
            f"| {plain:,.0f} | {cost:+.0%} |"
        )
    return "\n".join(lines)


# -- report ------------------------------------------------------------------------------------


def table(rows: list[tuple[str, str, float, float, float]]) -> str:
    lines = [
        "| format | direction | raw library rec/s | confluent-kafka rec/s | serdes rec/s "
        "| serdes / raw | serdes / confluent-kafka |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for fmt, direction, raw, theirs, ours in rows:
        lines.append(
            f"| {fmt} | {direction} | {raw:,.0f} | {theirs:,.0f} | {ours:,.0f} "
            f"| {ours / raw:.2f}x | {ours / theirs:.2f}x |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an existing registry (default: start ours)")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--formats", default="avro,protobuf,json,rules,encryption")
    args = parser.parse_args()

    with registry_url(args.url) as url:
        rows: list[tuple[str, str, float, float, float]] = []
        rule_rows: list[tuple[str, str, float, float, float]] = []
        formats = args.formats.split(",")
        benches = {"avro": bench_avro, "protobuf": bench_protobuf, "json": bench_json}
        benches["encryption"] = lambda u, n, r: bench_encryption(u, n, r, best)
        for name in formats:
            if name in benches:
                rows.extend(benches[name](url, args.records, args.rounds))
        if "rules" in formats:
            rule_rows = bench_rules(url, args.records, args.rounds)
    print(
        f"{args.records:,} records, best of {args.rounds} rounds, one thread; "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{dt.date.today().isoformat()}\n"
    )
    if rows:
        print(table(rows))
    if rule_rows:
        print("\nData-contract rules (rule's cost: extra time per record over serdes without it)\n")
        print(rules_table(rule_rows))


if __name__ == "__main__":
    main()
