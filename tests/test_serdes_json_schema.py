"""serdes.json_schema against confluent-kafka's JSON Schema serdes on one live registry: the same
bytes for keys and values (references included), each library reading the other's output, the
same validation verdicts, with the JSON path of what failed."""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
from __future__ import annotations

import json
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema as CSchema
from confluent_kafka.schema_registry import SchemaReference as CReference
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJSONDeserializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import Schema, SchemaReference, SerializationError
from serdes.json_schema import JSONDeserializer, JSONSerializer
from tests.serdes_helpers import ours, registry_server, theirs  # noqa: F401

ORDER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": "string", "minLength": 1},
        "price": {"type": "number", "minimum": 0},
        "paid": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "note": {"type": ["string", "null"]},
        "status": {"enum": ["NEW", "PAID"]},
        "email": {"type": "string", "format": "email"},
    },
    "required": ["id", "customer", "price"],
    "additionalProperties": False,
}


def order(i: int) -> dict[str, Any]:
    return {
        "id": 2**40 + i,
        "customer": f"cüstomer {i}",
        "price": i * 1.25,
        "paid": i % 2 == 0,
        "tags": ["a", "b"][: i % 3],
        "note": None if i % 2 else "n",
        "status": ["NEW", "PAID"][i % 2],
        "email": "not an email, and format is not asserted",
    }


def ctx(topic: str, field: str = MessageField.VALUE) -> SerializationContext:
    return SerializationContext(topic, field)


def test_values_are_byte_identical_and_read_back_by_both_libraries(ours, theirs) -> None:
    schema = json.dumps(ORDER)
    c = ctx("jorders")
    mine, confluents = JSONSerializer(schema, ours), CJSONSerializer(schema, theirs)
    records = [order(i) for i in range(10)]
    data = [mine(r, c) for r in records]
    assert data == [confluents(r, c) for r in records]
    assert data[0][:1] == b"\x00" and json.loads(data[0][5:]) == records[0]
    mine_de = JSONDeserializer(None, schema_registry_client=ours)
    their_de = CJSONDeserializer(None, schema_registry_client=theirs)
    for record, payload in zip(records, data, strict=True):
        assert mine_de(payload, c) == their_de(payload, c) == record
    assert JSONDeserializer(schema)(data[1], c) == records[1]  # no registry, given schema


@pytest.mark.parametrize("key", ["k-1", 17, ["a", 1]])
def test_keys_are_byte_identical(ours, theirs, key: Any) -> None:
    schema = json.dumps({"type": ["string", "integer", "array"]})
    c = ctx(f"jkeys-{type(key).__name__}", MessageField.KEY)
    data = JSONSerializer(schema, ours)(key, c)
    assert data == CJSONSerializer(schema, theirs)(key, c)
    assert JSONDeserializer(None, schema_registry_client=ours)(data, c) == key


def test_references_are_resolved_and_bytes_identical(ours, theirs) -> None:
    address = {"type": "object", "properties": {"zip": {"type": "integer"}}, "required": ["zip"]}
    ours.register_schema("address.json", Schema(json.dumps(address), "JSON"))
    person = {
        "title": "Person",
        "type": "object",
        "properties": {"name": {"type": "string"}, "home": {"$ref": "address.json"}},
    }
    mine_schema = Schema(
        json.dumps(person), "JSON", [SchemaReference("address.json", "address.json", 1)]
    )
    their_schema = CSchema(
        json.dumps(person), "JSON", [CReference("address.json", "address.json", 1)]
    )
    record = {"name": "Ada", "home": {"zip": 12345}}
    c = ctx("jpeople")
    data = JSONSerializer(mine_schema, ours)(record, c)
    assert data == CJSONSerializer(their_schema, theirs)(record, c)
    assert JSONDeserializer(None, schema_registry_client=ours)(data, c) == record
    with pytest.raises(SerializationError, match=r"at \$\.home\.zip: \"x\" is not of type"):
        JSONSerializer(mine_schema, ours)({"name": "Ada", "home": {"zip": "x"}}, c)


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"price": -1}, "$.price"),
        ({"customer": ""}, "$.customer"),
        ({"tags": ["a", 3]}, "$.tags[1]"),
        ({"status": "LOST"}, "$.status"),
        ({"extra": 1}, "$:"),
    ],
)
def test_invalid_records_are_refused_by_both_with_the_path(ours, theirs, change, where) -> None:
    record = order(1) | change
    c = ctx("jorders")
    with pytest.raises(SerializationError) as raised:
        JSONSerializer(json.dumps(ORDER), ours)(record, c)
    assert f"does not match the JSON schema at {where}" in str(raised.value)
    with pytest.raises(SerializationError):
        CJSONSerializer(json.dumps(ORDER), theirs)(record, c)


def test_invalid_payloads_are_refused_when_reading(ours) -> None:
    c = ctx("jorders")
    good = JSONSerializer(json.dumps(ORDER), ours)(order(2), c)
    de = JSONDeserializer(None, schema_registry_client=ours)
    with pytest.raises(SerializationError, match="is not valid JSON"):
        de(good[:-2], c)
    bad = good[:5] + json.dumps(order(2) | {"price": -5}).encode()
    with pytest.raises(SerializationError, match=r"at \$\.price"):
        de(bad, c)
    assert (
        JSONDeserializer(None, schema_registry_client=ours, conf={"validate": False})(bad, c)[
            "price"
        ]
        == -5
    )
    with pytest.raises(SerializationError, match="Unknown magic byte 123"):
        de(b'{"a": 1}', c)


def test_tombstones_pass_through(ours) -> None:
    assert JSONSerializer('{"type": "string"}', ours)(None, ctx("t")) is None
    assert JSONDeserializer('{"type": "string"}')(None, ctx("t")) is None


def test_use_latest_version_writes_what_confluent_writes(ours, theirs) -> None:
    v1 = {"title": "Evt", "type": "object", "properties": {"n": {"type": "integer"}}}
    v2 = {**v1, "properties": {**v1["properties"], "s": {"type": "string"}}}
    c = ctx("jevents")
    ours.set_compatibility("jevents-value", "NONE")
    first = JSONSerializer(json.dumps(v1), ours)({"n": 1}, c)
    second = JSONSerializer(json.dumps(v2), ours)({"n": 1, "s": "x"}, c)
    assert first[1:5] != second[1:5]
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    mine = JSONSerializer(json.dumps(v1), ours, conf=conf)({"n": 2}, c)
    assert mine == CJSONSerializer(json.dumps(v1), theirs, conf=conf)({"n": 2}, c)
    assert mine[1:5] == second[1:5]  # written with the latest version's id


def test_latest_version_resolves_refs_the_given_text_cannot(ours, theirs) -> None:
    """With ``use.latest.version`` the serializer's own text may ``$ref`` a name only the
    registered version's references resolve: confluent-kafka builds its validator lazily and
    serializes; serdes did not get past construction."""
    inner = {"type": "object", "properties": {"a": {"type": "integer"}}}
    ours.register_schema("lazy-ref-inner", Schema(json.dumps(inner), "JSON"))
    outer = json.dumps({"type": "object", "properties": {"other": {"$ref": "ref"}}})
    ref = SchemaReference("ref", "lazy-ref-inner", 1)
    ours.register_schema("lazy-ref-value", Schema(outer, "JSON", [ref]))
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    ctx = SerializationContext("lazy-ref", MessageField.VALUE)
    value = {"other": {"a": 1}}
    mine = JSONSerializer(outer, ours, conf=conf)(value, ctx)
    assert mine == CJSONSerializer(outer, theirs, conf=conf)(value, ctx)
    with pytest.raises(SerializationError):
        JSONSerializer(outer, ours, conf=conf)({"other": {"a": "x"}}, ctx)
    assert JSONDeserializer(None, schema_registry_client=ours)(mine, ctx) == value
