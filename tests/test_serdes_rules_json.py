"""Data-contract rules in serdes.json_schema against confluent-kafka 2.16's JSON serdes on
one live registry: same verdicts, same transformed bytes and values, both directions."""

# ruff: noqa: F811  (fixtures imported from tests.rules_helpers)
from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from confluent_kafka.schema_registry.json_schema import JSONDeserializer as CJSONDeserializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer as CJSONSerializer

from serdes.json_schema import JSONDeserializer, JSONSerializer
from tests.rules_helpers import (  # noqa: F401
    both,
    ours,
    register,
    register_executors,
    rule,
    rules_server,
    theirs,
    topic,
    value_ctx,
)

register_executors()

USER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "User",
    "type": "object",
    "properties": {
        "name": {"type": "string", "confluent:tags": ["PII"]},
        "age": {"type": "integer"},
        "ssn": {"type": "string"},
        "email": {"oneOf": [{"type": "null"}, {"type": "string", "confluent:tags": ["PII"]}]},
        "address": {"$ref": "#/definitions/Address"},
    },
    "required": ["name", "age"],
    "definitions": {
        "Address": {
            "type": "object",
            "properties": {"city": {"type": "string", "confluent:tags": ["PII"]}},
        }
    },
}
LATEST = {"auto.register.schemas": False, "use.latest.version": True}


def user(**over: Any) -> dict[str, Any]:
    base = {
        "name": "alice",
        "age": 30,
        "ssn": "123",
        "email": "a@x.io",
        "address": {"city": "Rome"},
    }
    base.update(over)
    return base


def setup(ours, prefix: str, **rules: Any) -> str:
    name = topic(prefix)
    register(ours, f"{name}-value", json.dumps(USER), "JSON", **rules)
    return name


def write_both(ours, theirs, name: str, record: dict[str, Any]) -> tuple[Any, Any]:
    c_ser = CJSONSerializer(json.dumps(USER), theirs, conf=dict(LATEST))
    s_ser = JSONSerializer(json.dumps(USER), ours, conf=dict(LATEST))
    ctx = value_ctx(name)
    return both(
        lambda: c_ser(copy.deepcopy(record), ctx), lambda: s_ser(copy.deepcopy(record), ctx)
    )


def decoded(frame: bytes) -> Any:
    return json.loads(frame[5:])


@pytest.mark.parametrize(
    ("expr", "record", "verdict"),
    [
        ("message.age >= 18", user(), "ok"),
        ("message.age >= 18", user(age=12), "failed"),
        ("message.address.city == 'Rome' && message.name.size() > 3", user(), "ok"),
        ("message.address.city == 'Rome' && message.name.size() > 3", user(name="al"), "failed"),
    ],
)
def test_cel_condition_on_write(ours, theirs, expr, record, verdict) -> None:
    name = setup(ours, "json-cel", domain=[rule("check", "CONDITION", "WRITE", "CEL", expr)])
    c, s = write_both(ours, theirs, name, record)
    assert s[0] == verdict
    assert c[0] == s[0]
    if verdict == "ok":
        assert decoded(c[1]) == decoded(s[1])


def test_cel_field_transform_with_refs_and_oneof(ours, theirs) -> None:
    rules = [
        rule("mask", "TRANSFORM", "WRITE", "CEL_FIELD", "value + '|' + fullName", tags=["PII"])
    ]
    name = setup(ours, "json-celf", domain=rules)
    c, s = write_both(ours, theirs, name, user())
    assert c[0] == s[0] == "ok"
    assert decoded(c[1]) == decoded(s[1])
    assert decoded(s[1])["name"] == "alice|$.name"
    assert decoded(s[1])["address"]["city"] == "Rome|$.address.city"
    assert decoded(s[1])["ssn"] == "123"


def test_cel_field_condition_on_read_both_directions(ours, theirs) -> None:
    rules = [rule("no-x", "CONDITION", "READ", "CEL_FIELD", "!value.contains('x')", tags=["PII"])]
    name = setup(ours, "json-celf-read", domain=rules)
    ctx = value_ctx(name)
    plain = JSONSerializer(json.dumps(USER), ours, conf=dict(LATEST))
    good = plain(user(email=None), ctx)
    bad = plain(user(name="xavier"), ctx)
    c_de = CJSONDeserializer(None, schema_registry_client=theirs)
    s_de = JSONDeserializer(None, schema_registry_client=ours)
    assert both(lambda: c_de(good, ctx), lambda: s_de(good, ctx)) == (
        ("ok", user(email=None)),
        ("ok", user(email=None)),
    )
    assert both(lambda: c_de(bad, ctx), lambda: s_de(bad, ctx)) == (
        ("failed", "SerializationError"),
        ("failed", "SerializationError"),
    )


V1 = {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}
V2 = {"type": "object", "properties": {"name": {"type": "string"}, "height": {"type": "integer"}}}


def test_jsonata_migrations_both_ways(ours, theirs) -> None:
    name = topic("json-jsonata")
    subject = f"{name}-value"
    ours.set_compatibility(subject, "NONE")
    register(ours, subject, json.dumps(V1), "JSON", metadata={"properties": {"app.v": "1"}})
    register(
        ours,
        subject,
        json.dumps(V2),
        "JSON",
        metadata={"properties": {"app.v": "2"}},
        migration=[
            rule("up", "TRANSFORM", "UPGRADE", "JSONATA",
                 "$merge([$sift($, function($v, $k) {$k != 'size'}), {'height': $.'size'}])"),
            rule("down", "TRANSFORM", "DOWNGRADE", "JSONATA",
                 "$merge([$sift($, function($v, $k) {$k != 'height'}), {'size': $.'height'}])"),
        ],
    )  # fmt: skip
    ctx = value_ctx(name)
    v1 = {"auto.register.schemas": False, "use.latest.with.metadata": {"app.v": "1"}}
    old = JSONSerializer(json.dumps(V1), ours, conf=dict(v1))({"name": "w", "size": 4}, ctx)
    new = JSONSerializer(json.dumps(V2), ours, conf=dict(LATEST))({"name": "w", "height": 5}, ctx)
    c_up = CJSONDeserializer(None, schema_registry_client=theirs, conf={"use.latest.version": True})
    s_up = JSONDeserializer(None, schema_registry_client=ours, conf={"use.latest.version": True})
    assert both(lambda: c_up(old, ctx), lambda: s_up(old, ctx)) == (
        ("ok", {"name": "w", "height": 4}),
        ("ok", {"name": "w", "height": 4}),
    )
    down = {"use.latest.with.metadata": {"app.v": "1"}}
    c_down = CJSONDeserializer(None, schema_registry_client=theirs, conf=dict(down))
    s_down = JSONDeserializer(None, schema_registry_client=ours, conf=dict(down))
    assert both(lambda: c_down(new, ctx), lambda: s_down(new, ctx)) == (
        ("ok", {"name": "w", "size": 5}),
        ("ok", {"name": "w", "size": 5}),
    )
