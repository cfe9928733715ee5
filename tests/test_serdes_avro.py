"""serdes.avro against confluent-kafka's Avro serdes on one live registry: the same bytes for
keys and values (references included), each library reading the other's output, the same
reader-schema resolution, and precise errors where confluent-kafka writes or reads a wrong
value silently."""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import json
import threading
import uuid
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as CSchema
from confluent_kafka.schema_registry import SchemaReference as CReference
from confluent_kafka.schema_registry import (
    record_subject_name_strategy as c_record_strategy,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import (
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SerializationError,
    UnknownSchemaError,
    header_schema_id_serializer,
    record_subject_name_strategy,
)
from serdes.avro import AvroDeserializer, AvroSerializer
from tests.serdes_helpers import ours, registry_server, theirs  # noqa: F401

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "quantity", "type": "int"},
        {"name": "price", "type": "double"},
        {"name": "discount", "type": "float"},
        {"name": "paid", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
        {"name": "blob", "type": "bytes"},
        {
            "name": "amount",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {"name": "ref", "type": {"type": "string", "logicalType": "uuid"}},
        {
            "name": "payment",
            "type": [
                "null",
                {"type": "record", "name": "Card", "fields": [{"name": "last4", "type": "string"}]},
                {"type": "record", "name": "Cash", "fields": [{"name": "change", "type": "int"}]},
            ],
            "default": None,
        },
    ],
}


def order(i: int) -> dict[str, Any]:
    return {
        "id": 2**40 + i,
        "customer": f"cüstomer {i}",
        "quantity": i - 3,
        "price": i * 1.25,
        "discount": 0.5,
        "paid": i % 2 == 0,
        "note": None if i % 2 else f"note {i}",
        "status": ["NEW", "PAID"][i % 2],
        "tags": ["a", "b"][: i % 3],
        "attrs": {"x": -i, "y": 2**50},
        "created": dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC) + dt.timedelta(milliseconds=i),
        "day": dt.date(2026, 3, 1) + dt.timedelta(days=i),
        "digest": bytes([i % 256]) * 4,
        "blob": b"\x00\xff" * i,
        "amount": decimal.Decimal(f"{i}.25"),
        "ref": uuid.UUID(int=i),
        "payment": [None, {"last4": "4242"}, {"change": i}][i % 3],
    }


def ctx(topic: str, field: str = MessageField.VALUE, headers: Any = None) -> SerializationContext:
    return SerializationContext(topic, field, headers)


def test_values_are_byte_identical_and_read_back_by_both_libraries(ours, theirs) -> None:
    schema = json.dumps(ORDER)
    c = ctx("orders")
    mine, confluents = AvroSerializer(ours, schema), CAvroSerializer(theirs, schema)
    records = [order(i) for i in range(12)]
    ours_bytes = [mine(r, c) for r in records]
    assert ours_bytes == [confluents(r, c) for r in records]
    assert ours_bytes[0][0] == 0 and len({b[1:5] for b in ours_bytes}) == 1
    mine_de, their_de = AvroDeserializer(ours), CAvroDeserializer(theirs)
    for record, data in zip(records, ours_bytes, strict=True):
        assert mine_de(data, c) == their_de(data, c) == their_de(confluents(record, c), c)
        assert mine_de(data, c)["amount"] == record["amount"]
        assert mine_de(data, c)["ref"] == record["ref"]


@pytest.mark.parametrize(
    ("schema", "key"),
    [
        ('"string"', "user-17"),
        ('"long"', 2**33),
        ('"bytes"', b"\x00raw\xff"),
        ('"int"', -5),
        ('{"type": "string"}', "x"),
    ],
)
def test_primitive_keys_are_byte_identical(ours, theirs, schema: str, key: Any) -> None:
    topic = f"keys-{abs(hash(schema))}"
    c = ctx(topic, MessageField.KEY)
    data = AvroSerializer(ours, schema)(key, c)
    assert data == CAvroSerializer(theirs, schema)(key, c)
    assert AvroDeserializer(ours)(data, c) == key
    assert CAvroDeserializer(theirs)(data, c) == key
    # the key went to the -key subject, registered as confluent-kafka registers it
    assert ours.get_latest_version(f"{topic}-key").schema_id == int.from_bytes(data[1:5], "big")


def test_references_are_resolved_and_bytes_identical(ours, theirs) -> None:
    address = {
        "type": "record",
        "name": "Address",
        "namespace": "geo",
        "fields": [{"name": "street", "type": "string"}, {"name": "zip", "type": "int"}],
    }
    ours.register_schema("geo.Address", Schema(json.dumps(address)))
    person = {
        "type": "record",
        "name": "Person",
        "namespace": "people",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "home", "type": "geo.Address"},
            {"name": "work", "type": ["null", "geo.Address"], "default": None},
        ],
    }
    mine_schema = Schema(
        json.dumps(person), "AVRO", [SchemaReference("geo.Address", "geo.Address", 1)]
    )
    their_schema = CSchema(
        json.dumps(person), "AVRO", [CReference("geo.Address", "geo.Address", 1)]
    )
    record = {
        "name": "Ada",
        "home": {"street": "Main", "zip": 1},
        "work": {"street": "B", "zip": 2},
    }
    c = ctx("people")
    data = AvroSerializer(ours, mine_schema)(record, c)
    assert data == CAvroSerializer(theirs, their_schema)(record, c)
    assert AvroDeserializer(ours)(data, c) == record == CAvroDeserializer(theirs)(data, c)
    registered = ours.get_latest_version("people-value")
    assert registered.schema.references == [SchemaReference("geo.Address", "geo.Address", 1)]


def test_reader_schema_resolution_matches_confluent(ours, theirs) -> None:
    v1 = {
        "type": "record",
        "name": "User",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
    }
    v2 = {
        "type": "record",
        "name": "User",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": "long"},  # promoted
            {"name": "email", "type": ["null", "string"], "default": None},
        ],
    }
    c = ctx("users")
    data = AvroSerializer(ours, json.dumps(v1))({"name": "Ann", "age": 41}, c)
    mine = AvroDeserializer(ours, json.dumps(v2))(data, c)
    assert mine == CAvroDeserializer(theirs, json.dumps(v2))(data, c)
    assert mine == {"name": "Ann", "age": 41, "email": None}
    # the latest registered version as reader schema
    AvroSerializer(ours, json.dumps(v2))({"name": "Bob", "age": 1, "email": "b@x"}, c)
    latest = AvroDeserializer(ours, conf={"use.latest.version": True})(data, c)
    assert latest == CAvroDeserializer(theirs, conf={"use.latest.version": True})(data, c)
    assert latest["email"] is None


def test_use_latest_version_and_use_schema_id_write_what_confluent_writes(ours, theirs) -> None:
    base = {"type": "record", "name": "Evt", "fields": [{"name": "n", "type": "int"}]}
    newer = {**base, "fields": [*base["fields"], {"name": "s", "type": "string", "default": "d"}]}
    c = ctx("events")
    first = AvroSerializer(ours, json.dumps(base))({"n": 1}, c)
    AvroSerializer(ours, json.dumps(newer))({"n": 1, "s": "x"}, c)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    record = {"n": 7, "s": "latest"}
    mine = AvroSerializer(ours, json.dumps(base), conf=conf)(record, c)
    assert mine == CAvroSerializer(theirs, json.dumps(base), conf=conf)(record, c)
    assert AvroDeserializer(ours)(mine, c) == record
    pinned = {"auto.register.schemas": False, "use.schema.id": int.from_bytes(first[1:5], "big")}
    mine = AvroSerializer(ours, json.dumps(base), conf=pinned)({"n": 3}, c)
    assert mine == CAvroSerializer(theirs, json.dumps(base), conf=pinned)({"n": 3}, c)
    assert mine[1:5] == first[1:5]


def _requests(url: str) -> dict[tuple[str, str], float]:
    """The registry's request counts by (method, route template), from ``/metrics``."""
    import urllib.request

    counts: dict[tuple[str, str], float] = {}
    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith("schema_registry_http_requests_total{"):
                labels, value = line[len("schema_registry_http_requests_total{") :].split("} ")
                pairs = dict(p.split("=", 1) for p in labels.split('",') if "=" in p)
                key = (pairs["method"].strip('"'), pairs["route"].strip('"'))
                counts[key] = counts.get(key, 0) + float(value)
    return counts


def test_use_schema_id_asks_only_for_the_schema_when_the_answer_names_the_version(
    registry_server,
) -> None:
    """With ``use.schema.id`` a serializer needs the id's subject and version: the registry's
    ``GET /schemas/ids/{id}?subject=`` answer names them (Confluent 8.x), so, as confluent-kafka,
    a new client makes that one request and no lookup (``POST /subjects/{subject}``)."""
    schema = {"type": "record", "name": "Pinned", "fields": [{"name": "n", "type": "int"}]}
    c = ctx(f"pinned-{uuid.uuid4().hex[:8]}")
    setup = SchemaRegistryClient({"url": registry_server.url})
    schema_id = int.from_bytes(AvroSerializer(setup, json.dumps(schema))({"n": 1}, c)[1:5], "big")
    before = _requests(registry_server.url)
    pinned = {"auto.register.schemas": False, "use.schema.id": schema_id}
    client = SchemaRegistryClient({"url": registry_server.url})
    ser = AvroSerializer(client, json.dumps(schema), conf=pinned)
    assert ser({"n": 2}, c)[1:5] == schema_id.to_bytes(4, "big")
    assert ser({"n": 3}, c)[1:5] == schema_id.to_bytes(4, "big")
    after = _requests(registry_server.url)
    made = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    assert made[("GET", "/schemas/ids/{schema_id}")] == 1, made
    assert not [route for method, route in made if method == "POST"], made  # no lookup


def test_strategies_choose_the_same_subjects(ours, theirs) -> None:
    schema = json.dumps(
        {
            "type": "record",
            "name": "Ping",
            "namespace": "net",
            "fields": [{"name": "t", "type": "long"}],
        }
    )
    c = ctx("pings")
    for conf in (
        {"subject.name.strategy.type": "TOPIC_RECORD"},
        {"subject.name.strategy.type": "RECORD"},
    ):
        assert AvroSerializer(ours, schema, conf=conf)({"t": 1}, c) == CAvroSerializer(
            theirs, schema, conf=conf
        )({"t": 1}, c)
    mine = AvroSerializer(
        ours, schema, conf={"subject.name.strategy": record_subject_name_strategy}
    )
    assert mine({"t": 2}, None) == CAvroSerializer(
        theirs, schema, conf={"subject.name.strategy": c_record_strategy}
    )({"t": 2}, None)
    custom = AvroSerializer(
        ours, schema, conf={"subject.name.strategy": lambda ctx, name: "my-pings"}
    )
    custom({"t": 3}, c)
    subjects = set(ours.get_subjects())
    assert {"pings-net.Ping", "net.Ping", "my-pings"} <= subjects


def test_auto_register_off_needs_a_registered_schema(ours, theirs) -> None:
    schema = json.dumps(
        {"type": "record", "name": "Nope", "fields": [{"name": "a", "type": "int"}]}
    )
    with pytest.raises(Exception) as raised:
        AvroSerializer(ours, schema, conf={"auto.register.schemas": False})({"a": 1}, ctx("nope"))
    assert getattr(raised.value, "error_code", None) == 40401


def test_unknown_conf_keys_and_conflicts_are_refused(ours) -> None:
    with pytest.raises(ValueError, match="Unrecognized properties: bogus"):
        AvroSerializer(ours, '"string"', conf={"bogus": 1})
    with pytest.raises(ValueError, match=r"use\.latest\.version and auto\.register\.schemas"):
        AvroSerializer(ours, '"string"', conf={"use.latest.version": True})
    with pytest.raises(ValueError, match=r"Unrecognized properties: auto\.register\.schemas"):
        AvroDeserializer(ours, conf={"auto.register.schemas": True})


def test_tombstones_pass_through(ours) -> None:
    assert AvroSerializer(ours, '"string"')(None, ctx("t")) is None
    assert AvroDeserializer(ours)(None, ctx("t")) is None


# -- what confluent-kafka lets through silently ----------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("quantity", 1.5, "field shop.Order.quantity: 1.5 is a float but the schema says int"),
        ("quantity", 2**31, "field shop.Order.quantity: 2147483648 does not fit an Avro int"),
        ("id", 7.9, "field shop.Order.id: 7.9 is a float but the schema says long"),
        ("paid", "yes", "field shop.Order.paid: 'yes' (str) is not a boolean"),
        ("paid", None, "field shop.Order.paid: None (NoneType) is not a boolean"),
        ("discount", 1e39, "field shop.Order.discount: 1e+39 is beyond the range of an Avro float"),
        ("attrs", {"k": 0.5}, "field shop.Order.attrs{}: 0.5 is a float but the schema says long"),
        ("customer", 42, "shop.Order.customer is <42> of type <class 'int'> expected string"),
        ("status", "LOST", "shop.Order.status is <LOST>"),
    ],
)
def test_records_that_do_not_match_name_the_field(
    ours, field: str, value: Any, message: str
) -> None:
    record = order(1)
    record[field] = value
    with pytest.raises(SerializationError) as raised:
        AvroSerializer(ours, json.dumps(ORDER))(record, ctx("orders"))
    assert message in str(raised.value)


def test_missing_field_with_a_default_is_written_as_confluent_writes_it(ours, theirs) -> None:
    record = order(2)
    del record["note"]
    c = ctx("orders")
    assert AvroSerializer(ours, json.dumps(ORDER))(record, c) == CAvroSerializer(
        theirs, json.dumps(ORDER)
    )(record, c)


def test_bad_frames_say_what_is_wrong(ours) -> None:
    c = ctx("orders")
    good = AvroSerializer(ours, json.dumps(ORDER))(order(3), c)
    de = AvroDeserializer(ours)
    cases = [
        (b"\x05" + good[1:], "Unknown magic byte 5 (0x05)"),
        (good[:3], "truncated frame: 3 bytes, but magic byte 0 must be followed by a 4-byte"),
        (b"", "truncated frame: empty payload"),
        (b"\x01" + b"\x00" * 8, "truncated frame: 9 bytes, but magic byte 1 must be followed by"),
        (b"\x00\x00\x00\x7f\xff" + good[5:], "unknown schema id 32767"),
        (good[:-3], "payload does not decode as Avro with writer schema id"),
        (good + b"\x00\x01", "2 bytes left over after the record"),
    ]
    for data, message in cases:
        with pytest.raises(SerializationError) as raised:
            de(data, c)
        assert message in str(raised.value), (data, str(raised.value))
    with pytest.raises(UnknownSchemaError) as unknown:
        de(b"\x00\x00\x00\x7f\xff" + good[5:], c)
    assert unknown.value.error_code == 40403 and unknown.value.http_status_code == 404


def test_schema_id_or_guid_in_a_header_is_read(ours, theirs) -> None:
    c = ctx("orders")
    good = AvroSerializer(ours, json.dumps(ORDER))(order(4), c)
    schema_id = int.from_bytes(good[1:5], "big")
    # the registry's GUID is the MD5 of the schema text it serves, as a UUID (as Confluent)
    text = ours.get_schema(schema_id).schema_str or ""
    guid = uuid.UUID(bytes=hashlib.md5(text.encode()).digest())
    assert json.loads(ours.get_schema_by_guid(str(guid)).schema_str or "") == json.loads(text)
    for header in (b"\x01" + guid.bytes, good[:5]):
        headers = [("other", b"x"), ("__value_schema_id", header)]
        with_header = ctx("orders", headers=headers)
        assert AvroDeserializer(ours)(good[5:], with_header) == order(4)
        assert CAvroDeserializer(theirs)(good[5:], with_header) == order(4)
    # a key header is not the value's
    with pytest.raises(SerializationError, match="magic byte"):
        AvroDeserializer(ours)(good[5:], ctx("orders", headers=[("__key_schema_id", good[:5])]))
    with pytest.raises(UnknownSchemaError, match="unknown schema GUID"):
        AvroDeserializer(ours)(good[5:], ctx("orders", headers=[
            ("__value_schema_id", b"\x01" + uuid.UUID(int=7).bytes)]))  # fmt: skip
    # the header serializer needs a GUID in the registration answer, and says so
    if ours.register_schema_full_response("orders-value", _order_schema()).guid is None:
        ser = AvroSerializer(
            ours, json.dumps(ORDER), conf={"schema.id.serializer": header_schema_id_serializer}
        )
        with pytest.raises(SerializationError, match="Schema GUID is not set"):
            ser(order(4), ctx("orders", headers=[]))


def _order_schema() -> Schema:
    return Schema(json.dumps(ORDER), "AVRO")


def test_one_serializer_shared_by_threads_gives_the_same_bytes(ours) -> None:
    schema = json.dumps(ORDER)
    ser = AvroSerializer(ours, schema)
    expected = [ser(order(i), ctx(f"threads-{i % 3}")) for i in range(30)]
    fresh = AvroSerializer(ours, schema)
    results: dict[int, list[bytes]] = {}

    def work(n: int) -> None:
        results[n] = [fresh(order(i), ctx(f"threads-{i % 3}")) for i in range(30)]

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results.values()) and len(results) == 6


def test_steady_state_makes_no_http_calls(registry_server) -> None:
    client = SchemaRegistryClient({"url": registry_server.url, "max.retries": 0})
    schema = json.dumps(ORDER)
    ser, de = AvroSerializer(client, schema), AvroDeserializer(client)
    c = ctx("steady")
    data = ser(order(5), c)
    de(data, c)
    pool = client._rest.pool
    before = sum(p.num_requests for p in pool.pools._container.values())
    for i in range(50):
        assert de(ser(order(i), c), c)["id"] == order(i)["id"]
    after = sum(p.num_requests for p in pool.pools._container.values())
    assert after == before


def test_latest_reader_schema_follows_new_versions_after_the_ttl(registry_server) -> None:
    import time

    client = SchemaRegistryClient({"url": registry_server.url, "cache.latest.ttl.sec": 0.2})
    client.set_compatibility("evolving-value", "NONE")
    v1 = {"type": "record", "name": "E", "fields": [{"name": "a", "type": "int"}]}
    v2 = {**v1, "fields": [*v1["fields"], {"name": "b", "type": "string", "default": "two"}]}
    c = ctx("evolving")
    data = AvroSerializer(client, json.dumps(v1))({"a": 1}, c)
    de = AvroDeserializer(client, conf={"use.latest.version": True})
    assert de(data, c) == {"a": 1}
    AvroSerializer(client, json.dumps(v2))({"a": 2, "b": "x"}, c)
    time.sleep(0.3)
    assert de(data, c) == {"a": 1, "b": "two"}


def test_schemas_with_rules_run_them_never_skip_them(ours) -> None:
    """A rule set is executed (tests/test_serdes_rules_*.py); with no executor for its type
    the write fails as confluent-kafka's does, rather than going through unchecked."""
    from serdes import RuleSet
    from serdes.rules import RuleRegistry

    text = json.dumps({"type": "record", "name": "Ruled", "fields": [{"name": "a", "type": "int"}]})
    rules = RuleSet(domain_rules=[{
        "name": "positive", "kind": "CONDITION", "mode": "WRITE", "type": "CEL",
        "expr": "message.a > 0",
    }])  # fmt: skip
    schema_id = ours.register_schema("ruled-value", Schema(text, "AVRO", [], None, rules))
    assert ours.get_schema(schema_id).rule_set is not None
    c = ctx("ruled")
    latest = AvroSerializer(ours, text, conf={"auto.register.schemas": False,
                                              "use.latest.version": True},
                            rule_registry=RuleRegistry())  # fmt: skip
    with pytest.raises(SerializationError, match="Could not find rule executor of type CEL"):
        latest({"a": 1}, c)
    framed = wire_prefix(schema_id) + b"\x02"
    assert AvroDeserializer(ours, rule_registry=RuleRegistry())(framed, c) == {"a": 1}


def wire_prefix(schema_id: int) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big")
