"""A ``_schemas`` topic written the way Confluent Schema Registry writes it (plain producer, every
record type, old key field orders, values without ``schemaType``) is served by ours unchanged,
and ours continues it (next id after Confluent's highest)."""

from __future__ import annotations

import json

from confluent_kafka.admin import AdminClient, NewTopic

from tests.kafka_helpers import kafka_client, produce_raw, read_topic

COMPACT = (",", ":")


def avro(name: str) -> str:
    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": "a", "type": "int"}]},
        separators=COMPACT,
    )


def v(value: dict[str, object]) -> bytes:
    return json.dumps(value, separators=COMPACT).encode()


def schema_value(subject: str, version: int, schema_id: int, schema: str, **extra: object) -> bytes:
    return v(
        {
            "subject": subject,
            "version": version,
            "id": schema_id,
            "schema": schema,
            "deleted": False,
            **extra,
        }
    )


JSON_SCHEMA = '{"type":"object","properties":{"a":{"type":"string"}}}'

CONFLUENT_RECORDS: list[tuple[bytes, bytes | None]] = [
    # start-up NOOP of a Confluent instance
    (b'{"keytype":"NOOP","magic":0}', None),
    (b'{"keytype":"CONFIG","magic":0}', v({"compatibilityLevel": "FULL"})),
    # an old registry's key field order and magic 0, no schemaType
    (
        b'{"subject":"orders-value","version":1,"magic":0,"keytype":"SCHEMA"}',
        schema_value("orders-value", 1, 1, avro("Order")),
    ),
    (
        b'{"keytype":"SCHEMA","subject":"orders-value","version":2,"magic":1}',
        schema_value("orders-value", 2, 2, avro("Order2"), schemaType="AVRO"),
    ),
    # a legacy subject CONFIG value without "subject"
    (b'{"keytype":"CONFIG","subject":"orders-value","magic":0}', v({"compatibilityLevel": "NONE"})),
    (
        b'{"keytype":"MODE","subject":"frozen","magic":0}',
        v({"subject": "frozen", "mode": "READONLY"}),
    ),
    # soft-deleted subject
    (
        b'{"keytype":"SCHEMA","subject":"gone","version":1,"magic":1}',
        schema_value("gone", 1, 3, avro("Gone")),
    ),
    (
        b'{"keytype":"DELETE_SUBJECT","subject":"gone","magic":0}',
        v({"subject": "gone", "version": 1}),
    ),
    # hard-deleted version: a tombstone on the key bytes
    (
        b'{"keytype":"SCHEMA","subject":"hard","version":1,"magic":1}',
        schema_value("hard", 1, 4, avro("Hard1")),
    ),
    (
        b'{"keytype":"SCHEMA","subject":"hard","version":2,"magic":1}',
        schema_value("hard", 2, 5, avro("Hard2")),
    ),
    (b'{"keytype":"SCHEMA","subject":"hard","version":1,"magic":1}', None),
    (
        b'{"keytype":"SCHEMA","subject":"js","version":1,"magic":1}',
        schema_value("js", 1, 6, JSON_SCHEMA, schemaType="JSON"),
    ),
    # a context and a schema in it (ids are per context)
    (
        b'{"keytype":"CONTEXT","tenant":"default","context":".team","magic":0}',
        v({"tenant": "default", "context": ".team"}),
    ),
    (
        b'{"keytype":"SCHEMA","subject":":.team:pay","version":1,"magic":1}',
        schema_value(":.team:pay", 1, 1, avro("Pay")),
    ),
    # undeserialisable records are skipped, as Confluent's reader does
    (b"not json", b"{}"),
    (b'{"keytype":"SCHEMA","subject":"bad","version":1,"magic":1}', b"not json"),
    (b'{"keytype":"NOOP","magic":0}', None),
]


def test_a_topic_written_by_confluent_is_served_unchanged(
    kafka_bootstrap: str, kafka_topic: str
) -> None:
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    topic = NewTopic(kafka_topic, 1, 1, config={"cleanup.policy": "compact"})
    admin.create_topics([topic])[kafka_topic].result(timeout=30)
    produce_raw(kafka_bootstrap, kafka_topic, CONFLUENT_RECORDS)

    with kafka_client(f"kafka://{kafka_bootstrap}/?topic={kafka_topic}") as client:
        live = [":.team:pay", "hard", "js", "orders-value"]
        assert client.get("/subjects").json() == live
        assert client.get("/subjects?deleted=true").json() == sorted([*live, "gone"])
        assert client.get("/subjects/orders-value/versions").json() == [1, 2]
        first = client.get("/subjects/orders-value/versions/1").json()
        assert first == {
            "subject": "orders-value",
            "version": 1,
            "id": 1,
            "schema": avro("Order"),
        }
        assert client.get("/schemas/ids/2").json()["schema"] == avro("Order2")
        assert client.get("/schemas/ids/6").json() == {"schemaType": "JSON", "schema": JSON_SCHEMA}
        assert client.get("/config").json()["compatibilityLevel"] == "FULL"
        assert client.get("/config/orders-value").json()["compatibilityLevel"] == "NONE"
        assert client.get("/mode/frozen").json() == {"mode": "READONLY"}
        assert client.get("/subjects/gone/versions").json()["error_code"] == 40401
        assert client.get("/subjects/gone/versions?deleted=true").json() == [1]
        assert client.get("/subjects/hard/versions").json() == [2]
        assert client.get("/subjects/hard/versions/1").json()["error_code"] == 40402
        assert client.get("/contexts").json() == [".", ".team"]
        pay = client.get("/subjects/:.team:pay/versions/1").json()
        assert (pay["id"], pay["schema"]) == (1, avro("Pay"))

        # ours continues the topic: the next id follows Confluent's highest in the context
        new = client.post("/subjects/new-value/versions", json={"schema": avro("New")})
        assert new.json()["id"] == 7
        again = client.post("/subjects/other/versions", json={"schema": avro("Order")})
        assert again.json()["id"] == 1  # same schema, same id across subjects
        team = client.post("/subjects/:.team:more/versions", json={"schema": avro("More")})
        assert team.json()["id"] == 2

    # what ours appended is Confluent's format
    appended = read_topic(kafka_bootstrap, kafka_topic)[len(CONFLUENT_RECORDS) :]
    keys = [k for k, _ in appended]
    assert keys == [
        b'{"keytype":"SCHEMA","subject":"new-value","version":1,"magic":1}',
        b'{"keytype":"SCHEMA","subject":"other","version":1,"magic":1}',
        b'{"keytype":"SCHEMA","subject":":.team:more","version":1,"magic":1}',
    ]
    value = json.loads(appended[0][1] or b"")
    assert value == {
        "subject": "new-value",
        "version": 1,
        "id": 7,
        "schemaType": "AVRO",
        "schema": avro("New"),
        "deleted": False,
    } or value == {
        "subject": "new-value",
        "version": 1,
        "id": 7,
        "schema": avro("New"),
        "deleted": False,
    }
