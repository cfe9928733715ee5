"""The DLQ rule action through a real Kafka broker: serdes and confluent-kafka 2.16 send the
same dead-letter record (value, ``__rule.*`` headers) for a failing WRITE condition; a
failing READ condition sends the bytes read; a record re-read from the DLQ skips the rule
that sent it there."""

# ruff: noqa: F811  (fixtures imported from tests.rules_helpers)
from __future__ import annotations

import json
import uuid
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry.avro import AvroSerializer as CAvroSerializer
from confluent_kafka.schema_registry.rule_registry import RuleRegistry as CRuleRegistry
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor as CCel
from confluent_kafka.schema_registry.rules.dlq.dlq_action import DlqAction as CDlqAction

from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.rules import RuleRegistry
from serdes.rules.cel import CelExecutor
from serdes.rules.dlq import DlqAction
from tests.rules_helpers import both, ours, outcome, register, rule, rules_server, theirs, value_ctx  # noqa: F401

USER = json.dumps(
    {
        "type": "record",
        "name": "User",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
    }
)
LATEST = {"auto.register.schemas": False, "use.latest.version": True}


def _topic(bootstrap: str) -> str:
    name = f"dlq-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(timeout=30)
    return name


def _read(bootstrap: str, topic: str, count: int) -> list[Any]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        out = []
        while len(out) < count:
            msg = consumer.poll(30)
            assert msg is not None, f"only {len(out)} of {count} DLQ records arrived"
            assert msg.error() is None
            out.append(msg)
        return out
    finally:
        consumer.close()


def _rule_headers(msg: Any) -> dict[str, bytes | None]:
    return {k: v for k, v in msg.headers() or [] if k.startswith("__rule.")}


def _register_adult_rule(client: Any, name: str, mode: str, dlq: str) -> None:
    """USER under ``{name}-value`` with a CEL CONDITION (age >= 18) in ``mode`` whose failure
    goes to the ``dlq`` topic."""
    register(
        client,
        f"{name}-value",
        USER,
        "AVRO",
        domain=[
            rule(
                "adult", "CONDITION", mode, "CEL", "message.age >= 18",
                on_failure="DLQ", params={"dlq.topic": dlq},
            )
        ],
    )  # fmt: skip


def test_write_failure_goes_to_the_dlq_as_confluent_sends_it(ours, theirs, kafka_bootstrap) -> None:
    dlq = _topic(kafka_bootstrap)
    name = f"dlq-src-{uuid.uuid4().hex[:8]}"
    _register_adult_rule(ours, name, "WRITE", dlq)
    producer_conf = {"bootstrap.servers": kafka_bootstrap, "dlq.auto.flush": "true"}
    c_registry = CRuleRegistry()
    c_registry.register_executor(CCel())
    c_registry.register_action(CDlqAction(dict(producer_conf)))
    s_registry = RuleRegistry()
    s_registry.register_executor(CelExecutor())
    s_registry.register_action(DlqAction(dict(producer_conf)))
    c_ser = CAvroSerializer(theirs, USER, conf=dict(LATEST), rule_registry=c_registry)
    s_ser = AvroSerializer(ours, USER, conf=dict(LATEST), rule_registry=s_registry)
    ctx = value_ctx(name, [("trace", b"t-1")])
    record = {"name": "kid", "age": 7}
    c, s = both(lambda: c_ser(dict(record), ctx), lambda: s_ser(dict(record), ctx))
    assert c == s == ("failed", "SerializationError")
    theirs_msg, ours_msg = _read(kafka_bootstrap, dlq, 2)
    assert ours_msg.value() == theirs_msg.value() == json.dumps(record).encode()
    assert _rule_headers(ours_msg) == _rule_headers(theirs_msg)
    assert _rule_headers(ours_msg)["__rule.name"] == b"adult"
    assert _rule_headers(ours_msg)["__rule.mode"] == b"WRITE"
    assert _rule_headers(ours_msg)["__rule.topic"] == name.encode()
    assert ("trace", b"t-1") in ours_msg.headers()


def test_read_failure_sends_the_bytes_and_replay_skips_the_rule(ours, kafka_bootstrap) -> None:
    dlq = _topic(kafka_bootstrap)
    name = f"dlq-read-{uuid.uuid4().hex[:8]}"
    _register_adult_rule(ours, name, "READ", dlq)
    ctx = value_ctx(name)
    data = AvroSerializer(ours, USER, conf=dict(LATEST))({"name": "kid", "age": 7}, ctx)
    s_registry = RuleRegistry()
    s_registry.register_executor(CelExecutor())
    s_registry.register_action(
        DlqAction({"bootstrap.servers": kafka_bootstrap, "dlq.auto.flush": "true"})
    )
    de = AvroDeserializer(ours, rule_registry=s_registry)
    assert outcome(lambda: de(data, ctx)) == ("failed", "SerializationError")
    first = _read(kafka_bootstrap, dlq, 1)[0]
    assert first.value() == data
    replay = value_ctx(name, first.headers())
    assert de(first.value(), replay) == {"name": "kid", "age": 7}
