"""Data-contract rules in serdes.avro against confluent-kafka 2.16's Avro serdes, on one live
registry: the same rule sets give the same verdicts, the same transformed bytes and the
same values read back, in both directions (each library reading the other's frames)."""

# ruff: noqa: F811  (fixtures imported from tests.rules_helpers)
from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from confluent_kafka.schema_registry.avro import AvroDeserializer as CAvroDeserializer
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer

from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.errors import SerializationError
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
    "type": "record",
    "name": "User",
    "namespace": "app",
    "fields": [
        {"name": "name", "type": "string", "confluent:tags": ["PII"]},
        {"name": "age", "type": "int"},
        {"name": "ssn", "type": "string"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {
            "name": "address",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [{"name": "city", "type": "string", "confluent:tags": ["PII"]}],
            },
        },
    ],
}
LATEST = {"auto.register.schemas": False, "use.latest.version": True}


def user(**over: Any) -> dict[str, Any]:
    base = {
        "name": "alice",
        "age": 30,
        "ssn": "123-45-6789",
        "email": "alice@example.com",
        "address": {"city": "Paris"},
    }
    base.update(over)
    return base


def serializers(ours, theirs, conf: dict[str, Any] | None = None) -> tuple[Any, Any]:
    conf = conf or LATEST
    return (
        CAvroSerializer(theirs, json.dumps(USER), conf=dict(conf)),
        AvroSerializer(ours, json.dumps(USER), conf=dict(conf)),
    )


def setup(ours, prefix: str, **rules: Any) -> str:
    name = topic(prefix)
    register(ours, f"{name}-value", json.dumps(USER), "AVRO", **rules)
    return name


def write_both(ours, theirs, name: str, record: dict[str, Any]) -> tuple[Any, Any]:
    c_ser, s_ser = serializers(ours, theirs)
    ctx = value_ctx(name)
    return both(
        lambda: c_ser(copy.deepcopy(record), ctx), lambda: s_ser(copy.deepcopy(record), ctx)
    )


@pytest.mark.parametrize(
    ("expr", "record"),
    [
        ("message.age >= 18", user()),
        ("message.age >= 18", user(age=12)),
        ("message.name.startsWith('a') && size(message.ssn) == 11", user()),
        ("message.name.startsWith('a') && size(message.ssn) == 11", user(name="bob")),
        ("message.email != null; message.email.endsWith('@example.com')", user()),
        ("message.email != null; message.email.endsWith('@example.com')", user(email=None)),
        ("message.email != null; message.email.endsWith('@example.com')", user(email="a@b.c")),
        ("message.address.city in ['Paris', 'Rome']", user()),
        ("message.address.city in ['Paris', 'Rome']", user(address={"city": "Oslo"})),
        ("message.nosuchfield == 1", user()),
    ],
)
def test_cel_condition_on_write_same_verdict(ours, theirs, expr, record) -> None:
    name = setup(ours, "cel-cond", domain=[rule("check", "CONDITION", "WRITE", "CEL", expr)])
    c, s = write_both(ours, theirs, name, record)
    assert c == s
    assert c[0] in ("ok", "failed")


def test_cel_condition_verdicts_are_not_all_alike(ours, theirs) -> None:
    """The parametrized cases above must include both verdicts to mean anything."""
    name = setup(
        ours, "cel-mix", domain=[rule("adult", "CONDITION", "WRITE", "CEL", "message.age >= 18")]
    )
    ok = write_both(ours, theirs, name, user())
    failed = write_both(ours, theirs, name, user(age=3))
    assert ok[0][0] == ok[1][0] == "ok"
    assert failed == (("failed", "SerializationError"), ("failed", "SerializationError"))


@pytest.mark.parametrize(
    ("rules", "reason"),
    [
        # a condition without doc: its expression; with doc: the doc
        ([rule("adult", "CONDITION", "WRITE", "CEL", "message.age >= 18")], "message.age >= 18"),
        ([rule("adult", "CONDITION", "WRITE", "CEL", "message.age >= 18", doc="minors")], "minors"),
        # an executor that is not there
        ([rule("adult", "CONDITION", "WRITE", "NOPE", "message.age >= 18")], "NOPE"),
    ],
)
def test_every_rule_error_names_the_rule(ours, rules, reason) -> None:
    """As the JavaScript client words it: ``rule NAME failed: REASON``."""
    name = setup(ours, "cel-name", domain=rules)
    with pytest.raises(SerializationError) as failed:
        AvroSerializer(ours, json.dumps(USER), conf=dict(LATEST))(user(age=3), value_ctx(name))
    assert str(failed.value).startswith("rule adult failed: "), str(failed.value)
    assert reason in str(failed.value)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"on_failure": "NONE"}, "ok"),
        ({"on_failure": "ERROR"}, "failed"),
        ({"disabled": True}, "ok"),
    ],
)
def test_actions_and_disabled(ours, theirs, extra, expected) -> None:
    rules = [rule("adult", "CONDITION", "WRITE", "CEL", "message.age >= 18", **extra)]
    name = setup(ours, "cel-act", domain=rules)
    c, s = write_both(ours, theirs, name, user(age=3))
    assert c == s
    assert s[0] == expected


def test_writeread_rule_runs_on_both_sides_with_split_actions(ours, theirs) -> None:
    rules = [
        rule("adult", "CONDITION", "WRITEREAD", "CEL", "message.age >= 18", on_failure="NONE,ERROR")
    ]
    name = setup(ours, "cel-wr", domain=rules)
    c, s = write_both(ours, theirs, name, user(age=3))  # WRITE: NONE lets it through
    assert c == s and s[0] == "ok"
    ctx = value_ctx(name)
    c_de, s_de = CAvroDeserializer(theirs), AvroDeserializer(ours)
    read = both(lambda: c_de(s[1], ctx), lambda: s_de(c[1], ctx))  # READ: ERROR
    assert read == (("failed", "SerializationError"), ("failed", "SerializationError"))


def test_cel_field_transform_by_inline_tags(ours, theirs) -> None:
    rules = [
        rule(
            "mask",
            "TRANSFORM",
            "WRITE",
            "CEL_FIELD",
            "typeName == 'STRING' ; value + '-' + name + '-' + fullName",
            tags=["PII"],
        )
    ]
    name = setup(ours, "celf", domain=rules)
    c, s = write_both(ours, theirs, name, user())
    assert c == s and s[0] == "ok"
    decoded = AvroDeserializer(ours)(s[1], value_ctx(name))
    assert decoded["name"] == "alice-name-app.User.name"
    assert decoded["address"]["city"] == "Paris-city-app.Address.city"
    assert decoded["ssn"] == "123-45-6789"  # not tagged


def test_cel_field_transform_by_metadata_tags(ours, theirs) -> None:
    rules = [rule("redact", "TRANSFORM", "WRITE", "CEL_FIELD", "'XXX'", tags=["SECRET"])]
    name = setup(
        ours,
        "celf-meta",
        domain=rules,
        metadata={"tags": {"app.User.ssn": ["SECRET"], "**.email": ["SECRET"]}},
    )
    c, s = write_both(ours, theirs, name, user())
    assert c == s and s[0] == "ok"
    decoded = AvroDeserializer(ours)(s[1], value_ctx(name))
    assert (decoded["ssn"], decoded["email"], decoded["name"]) == ("XXX", "XXX", "alice")


@pytest.mark.parametrize("city", ["Paris", "Oslo"])
def test_cel_field_condition_on_read(ours, theirs, city) -> None:
    rules = [
        rule("city", "CONDITION", "READ", "CEL_FIELD", "value in ['Paris', 'Rome']", tags=["PII"])
    ]
    name = setup(ours, "celf-read", domain=rules)
    rules_free = AvroSerializer(ours, json.dumps(USER), conf=dict(LATEST))
    ctx = value_ctx(name)
    data = rules_free(user(name="Paris", address={"city": city}), ctx)
    c_de, s_de = CAvroDeserializer(theirs), AvroDeserializer(ours)
    c, s = both(lambda: c_de(data, ctx), lambda: s_de(data, ctx))
    assert c == s
    assert s[0] == ("ok" if city == "Paris" else "failed")


def test_missing_executor_fails_alike(ours, theirs) -> None:
    rules = [rule("x", "CONDITION", "WRITE", "NO_SUCH_TYPE", "true")]
    name = setup(ours, "noexec", domain=rules)
    c, s = write_both(ours, theirs, name, user())
    assert c == s == ("failed", "SerializationError")


def test_enable_at_other_environment_disables(ours, theirs) -> None:
    name = topic("enable-at")
    from serdes import RuleSet, Schema

    doc = {
        "domainRules": [rule("adult", "CONDITION", "WRITE", "CEL", "message.age >= 18")],
        "enableAt": "SERVER",
    }
    ours.register_schema(
        f"{name}-value", Schema(json.dumps(USER), "AVRO", [], None, RuleSet(doc=doc))
    )
    c, s = write_both(ours, theirs, name, user(age=3))
    assert c == s


V1 = {
    "type": "record",
    "name": "Widget",
    "fields": [{"name": "name", "type": "string"}, {"name": "size", "type": "int"}],
}
V2 = {
    "type": "record",
    "name": "Widget",
    "fields": [{"name": "name", "type": "string"}, {"name": "height", "type": "int"}],
}
UPGRADE = "$merge([$sift($, function($v, $k) {$k != 'size'}), {'height': $.'size'}])"
DOWNGRADE = "$merge([$sift($, function($v, $k) {$k != 'height'}), {'size': $.'height'}])"


def migrating_subject(ours, prefix: str) -> str:
    name = topic(prefix)
    subject = f"{name}-value"
    ours.set_compatibility(subject, "NONE")
    register(ours, subject, json.dumps(V1), "AVRO", metadata={"properties": {"app.v": "1"}})
    register(
        ours,
        subject,
        json.dumps(V2),
        "AVRO",
        metadata={"properties": {"app.v": "2"}},
        migration=[
            rule("up", "TRANSFORM", "UPGRADE", "JSONATA", UPGRADE),
            rule("down", "TRANSFORM", "DOWNGRADE", "JSONATA", DOWNGRADE),
        ],
    )
    return name


def test_jsonata_upgrade_on_read(ours, theirs) -> None:
    """Written as v1 (use.latest.with.metadata), read as the latest v2: ``size`` becomes
    ``height`` through the UPGRADE rule, in both libraries and across them."""
    name = migrating_subject(ours, "jsonata-up")
    ctx = value_ctx(name)
    v1_conf = {"auto.register.schemas": False, "use.latest.with.metadata": {"app.v": "1"}}
    c_bytes = CAvroSerializer(theirs, json.dumps(V1), conf=dict(v1_conf))(
        {"name": "w", "size": 7}, ctx
    )
    s_bytes = AvroSerializer(ours, json.dumps(V1), conf=dict(v1_conf))(
        {"name": "w", "size": 7}, ctx
    )
    assert c_bytes == s_bytes
    latest = {"use.latest.version": True}
    c_de = CAvroDeserializer(theirs, conf=dict(latest))
    s_de = AvroDeserializer(ours, conf=dict(latest))
    c, s = both(lambda: c_de(s_bytes, ctx), lambda: s_de(c_bytes, ctx))
    assert c == s == ("ok", {"name": "w", "height": 7})


def test_jsonata_downgrade_on_read(ours, theirs) -> None:
    name = migrating_subject(ours, "jsonata-down")
    ctx = value_ctx(name)
    data = AvroSerializer(ours, json.dumps(V2), conf=dict(LATEST))({"name": "w", "height": 9}, ctx)
    v1 = {"use.latest.with.metadata": {"app.v": "1"}}
    c_de = CAvroDeserializer(theirs, conf=dict(v1))
    s_de = AvroDeserializer(ours, conf=dict(v1))
    c, s = both(lambda: c_de(data, ctx), lambda: s_de(data, ctx))
    assert c == s == ("ok", {"name": "w", "size": 9})


def test_no_migration_without_latest(ours, theirs) -> None:
    """Without use.latest.*, a v1 frame reads as v1 (no rules walk the versions)."""
    name = migrating_subject(ours, "jsonata-none")
    ctx = value_ctx(name)
    v1_conf = {"auto.register.schemas": False, "use.latest.with.metadata": {"app.v": "1"}}
    data = AvroSerializer(ours, json.dumps(V1), conf=v1_conf)({"name": "w", "size": 7}, ctx)
    c, s = both(
        lambda: CAvroDeserializer(theirs)(data, ctx), lambda: AvroDeserializer(ours)(data, ctx)
    )
    assert c == s == ("ok", {"name": "w", "size": 7})
