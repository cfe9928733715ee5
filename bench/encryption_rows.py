"""The field-level encryption rows of ``bench/serdes_bench.py``: an Avro record with one
``ENCRYPT``ed string field (AES256_GCM DEK, local KMS), serialized and deserialized by
confluent-kafka and by serdes against the same registry; the raw column is fastavro without
encryption. Each library reads what the other wrote before timing."""

from __future__ import annotations

import json
import uuid
from typing import Any

from confluent_kafka.serialization import MessageField, SerializationContext

from bench._raw_avro import raw_avro

SECRET = "bench-local-kms-secret"
SCHEMA = {
    "type": "record",
    "name": "Customer",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "ssn", "type": "string", "confluent:tags": ["PII"]},
        {"name": "city", "type": "string"},
        {"name": "score", "type": "double"},
    ],
}


def record(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "name": f"customer {i % 977}",
        "ssn": f"{i % 1000:03d}-{i % 100:02d}-{i % 10000:04d}",
        "city": "Lyon",
        "score": i * 0.5,
    }


def bench_encryption(
    url: str, n: int, rounds: int, best: Any
) -> list[tuple[str, str, float, float, float]]:
    import fastavro
    from confluent_kafka.schema_registry import SchemaRegistryClient as CClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer as CDe
    from confluent_kafka.schema_registry.avro import AvroSerializer as CSer
    from confluent_kafka.schema_registry.rule_registry import RuleRegistry as CRules
    from confluent_kafka.schema_registry.rules.encryption.encrypt_executor import (
        FieldEncryptionExecutor as CEncrypt,
    )
    from confluent_kafka.schema_registry.rules.encryption.localkms.local_driver import (
        LocalKmsDriver,
    )

    from serdes import RuleSet, Schema, SchemaRegistryClient
    from serdes.avro import AvroDeserializer, AvroSerializer
    from serdes.encryption.executor import FieldEncryptionExecutor
    from serdes.rules import RuleRegistry

    topic = f"bench-encrypt-{uuid.uuid4().hex[:6]}"
    rule = {
        "name": "encrypt_pii",
        "kind": "TRANSFORM",
        "mode": "WRITEREAD",
        "type": "ENCRYPT",
        "tags": ["PII"],
        "params": {
            "encrypt.kek.name": f"bench_{uuid.uuid4().hex[:6]}",
            "encrypt.kms.type": "local-kms",
            "encrypt.kms.key.id": "bench",
        },
    }
    schema_str = json.dumps(SCHEMA)
    ours_client = SchemaRegistryClient({"url": url})
    ours_client.register_schema(
        f"{topic}-value", Schema(schema_str, "AVRO", rule_set=RuleSet(domain_rules=[rule]))
    )
    LocalKmsDriver.register()
    c_rules = CRules()
    c_rules.register_executor(CEncrypt())
    o_rules = RuleRegistry()
    o_rules.register_executor(FieldEncryptionExecutor())
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    rule_conf = {"secret": SECRET}
    theirs_client = CClient({"url": url})
    c_ser = CSer(theirs_client, None, conf=conf, rule_conf=rule_conf, rule_registry=c_rules)
    c_de = CDe(theirs_client, rule_conf=rule_conf, rule_registry=c_rules)
    o_ser = AvroSerializer(ours_client, None, conf=conf, rule_conf=rule_conf, rule_registry=o_rules)
    o_de = AvroDeserializer(ours_client, rule_conf=rule_conf, rule_registry=o_rules)
    parsed = fastavro.parse_schema(SCHEMA)
    ctx = SerializationContext(topic, MessageField.VALUE)
    raw_ser, raw_de = raw_avro(parsed)

    # confluent-kafka's transform rewrites the dict it is given: every path gets its own copies
    records = [record(i) for i in range(n)]
    inputs = {name: [dict(r) for r in records] for name in ("raw", "confluent", "serdes")}
    ours = [o_ser(dict(r), ctx) for r in records]
    theirs = [c_ser(dict(r), ctx) for r in records[:2000]]
    for rec, mine, other in zip(records[:2000], ours[:2000], theirs, strict=True):
        assert c_de(mine, ctx) == rec, "confluent-kafka cannot read serdes' ciphertext"
        assert o_de(other, ctx) == rec, "serdes cannot read confluent-kafka's ciphertext"
        assert rec["ssn"].encode() not in mine
    ser = best({"raw": raw_ser, "confluent": c_ser, "serdes": o_ser}, inputs, rounds, ctx)
    bodies = [raw_ser(r) for r in records]
    de = best(
        {"raw": raw_de, "confluent": c_de, "serdes": o_de},
        {"raw": bodies, "confluent": ours, "serdes": ours},
        rounds,
        ctx,
    )
    label = "Avro, 1 ENCRYPT field"
    return [
        (label, "serialize", ser["raw"], ser["confluent"], ser["serdes"]),
        (label, "deserialize", de["raw"], de["confluent"], de["serdes"]),
    ]
