"""``/associations`` (Confluent 8.x): topic-subject associations, their lifecycle rules and
409xx/42212 codes, ``dryRun``, the ASSOC records on SQLite and on the Kafka ``_schemas`` topic,
and confluent-kafka's associated subject-name strategy against the server."""

from __future__ import annotations

import json
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from fastapi.testclient import TestClient

from registry import records
from registry.core import Registry
from registry.store.factory import open_store
from tests.api_helpers import error, record
from tests.conftest import LiveServer
from tests.kafka_helpers import kafka_client, read_topic

NS = "lkc-1"
STRONG_SUBJECT = f":.{NS}:orders-value"


def request(*associations: dict[str, Any], resource_id: str | None = "t-1") -> dict[str, Any]:
    body: dict[str, Any] = {
        "resourceName": "orders",
        "resourceNamespace": NS,
        "resourceType": "topic",
        "associations": list(associations),
    }
    if resource_id is not None:
        body["resourceId"] = resource_id
    return body


def weak(subject: str, kind: str = "value") -> dict[str, Any]:
    return {"subject": subject, "associationType": kind, "lifecycle": "WEAK"}


def test_weak_associations_created_and_read_every_way(client: TestClient) -> None:
    client.post("/subjects/shared-key/versions", json={"schema": '"string"'})
    client.post("/subjects/shared-value/versions", json={"schema": record("a")})
    body = request(weak("shared-key", "key"), weak("shared-value"))
    created = client.post("/associations", json=body)
    assert created.status_code == 200, created.text
    assert created.json() == {
        "resourceName": "orders",
        "resourceNamespace": NS,
        "resourceId": "t-1",
        "resourceType": "topic",
        "associations": [
            {
                "subject": "shared-key",
                "associationType": "key",
                "lifecycle": "WEAK",
                "frozen": False,
            },
            {
                "subject": "shared-value",
                "associationType": "value",
                "lifecycle": "WEAK",
                "frozen": False,
            },
        ],
    }
    by_id = client.get("/associations/resources/t-1").json()
    assert [a["associationType"] for a in by_id] == ["key", "value"]
    first = by_id[1]
    assert first["subject"] == "shared-value" and first["resourceId"] == "t-1"
    assert first["createTs"] > 0 and first["updateTs"] >= first["createTs"]
    assert len(first["guid"]) == 36
    assert client.get("/associations/subjects/shared-value").json() == [first]
    only_key = client.get("/associations/resources/t-1?associationType=key").json()
    assert [a["subject"] for a in only_key] == ["shared-key"]
    assert client.get(f"/associations/resources/{NS}/orders").json() == by_id
    # "-" matches every namespace (the client strategy's default), and every name
    assert client.get("/associations/resources/-/orders?associationType=value").json() == [first]
    assert client.get(f"/associations/resources/{NS}/-").json() == by_id
    assert client.get("/associations/resources/-/other").json() == []
    assert client.get("/associations/resources/t-1?lifecycle=STRONG").json() == []
    # the same request again changes nothing and reports nothing written
    again = client.post("/associations", json=body).json()
    assert "associations" not in again
    assert client.get("/associations/resources/t-1").json() == by_id


def test_dry_run_validates_and_writes_nothing(client: TestClient) -> None:
    client.post("/subjects/s/versions", json={"schema": record("a")})
    dry = client.post("/associations?dryRun=true", json=request(weak("s"), resource_id=None))
    assert dry.json() == {
        "resourceName": "orders",
        "resourceNamespace": NS,
        "resourceType": "topic",
    }
    assert client.get("/associations/subjects/s").json() == []
    message = error(
        client.post("/associations", json=request(weak("s"), resource_id=None)), 422, 42212
    )
    assert message == (
        "The association specified an invalid value for property: 'resourceId', "
        "detail: cannot be null or empty"
    )
    # a dry run still reports what would fail
    error(client.post("/associations?dryRun=true", json=request(weak("nope"))), 409, 40907)


def test_strong_association_registers_its_schema_on_the_default_subject(
    client: TestClient,
) -> None:
    body = request({"associationType": "value", "schema": {"schema": record("a")}})
    created = client.post("/associations", json=body)
    assert created.status_code == 200, created.text
    (info,) = created.json()["associations"]
    assert (info["subject"], info["lifecycle"], info["frozen"]) == (STRONG_SUBJECT, "STRONG", True)
    assert info["schema"]["id"] == 1 and info["schema"]["version"] == 1
    assert client.get(f"/subjects/{STRONG_SUBJECT}/versions/1").json()["schema"] == record("a")
    # frozen: not deleted without cascadeLifecycle, not updated
    message = error(client.delete("/associations/resources/t-1"), 409, 40908)
    assert message == f"The association of type  'value' is frozen for subject '{STRONG_SUBJECT}'"
    # a WEAK association cannot share a subject a STRONG one owns
    other = request(weak(STRONG_SUBJECT), resource_id="t-2")
    other["resourceName"] = "other"
    message = error(client.post("/associations", json=other), 409, 40905)
    assert message == f"A strong association already exists for subject '{STRONG_SUBJECT}'"
    # nor can a schema reference it
    refs = [{"name": "R", "subject": STRONG_SUBJECT, "version": 1}]
    outer = {"type": "record", "name": "O", "fields": [{"name": "r", "type": "R"}]}
    referrer = client.post(
        "/subjects/outer/versions", json={"schema": json.dumps(outer), "references": refs}
    )
    assert error(referrer, 422, 42205) == (
        f"Subject '{STRONG_SUBJECT}' has a strong association and cannot be referenced"
    )
    # dry run of the cascade keeps everything; the cascade deletes the subject too
    assert (
        client.delete("/associations/resources/t-1?cascadeLifecycle=true&dryRun=true").status_code
        == 204
    )
    assert client.get("/associations/resources/t-1").json() != []
    assert client.delete("/associations/resources/t-1?cascadeLifecycle=true").status_code == 204
    assert client.get("/associations/resources/t-1").json() == []
    error(client.get(f"/subjects/{STRONG_SUBJECT}/versions?deleted=true"), 404, 40401)
    error(client.delete("/associations/resources/t-1"), 404, 40410)


def test_conflicts_are_409xx(client: TestClient) -> None:
    client.post("/subjects/s/versions", json={"schema": record("a")})
    client.post("/subjects/u/versions", json={"schema": record("a")})
    assert client.post("/associations", json=request(weak("s"))).status_code == 200
    message = error(client.post("/associations", json=request(weak("u"))), 409, 40903)
    assert message == "An association of type 'value' already exists for resource 'orders'"
    error(client.post("/associations", json=request(weak("never"), resource_id="t-9")), 409, 40907)
    # a STRONG association needs a subject no other association uses
    strong = request(
        {"associationType": "value", "schema": {"schema": record("a")}}, resource_id="t-3"
    )
    strong["resourceName"] = "s"
    strong["resourceNamespace"] = "ns"
    client.post("/subjects/:.ns:s-value/versions", json={"schema": record("a")})
    client.post(
        "/associations",
        json={**request(weak(":.ns:s-value"), resource_id="t-4"), "resourceName": "x"},
    )
    message = error(client.post("/associations", json=strong), 409, 40904)
    assert message == "An association already exists for subject ':.ns:s-value'"


def test_request_validation_is_42212(client: TestClient) -> None:
    cases = [
        ({**request(weak("s")), "resourceType": "table"}, "resourceType", "must be 'topic'"),
        ({**request(weak("s")), "resourceName": "a b"}, "resourceName", "illegal character ' '"),
        (request({**weak("s"), "associationType": "both"}), "associationType",
         "must be either 'key' or 'value'"),
        (request({**weak("s"), "schema": {"schema": record("a")}}), "lifecycle",
         "cannot be WEAK when schema is provided"),
        (request(weak(STRONG_SUBJECT)), "subject",
         f"WEAK associations cannot use subject '{STRONG_SUBJECT}'"),
        (request({"associationType": "value", "lifecycle": "STRONG"}), "schema",
         "schema must be provided when creating a frozen association"),
        (request({"associationType": "value", "lifecycle": "WEAK"}), "subject",
         "must be provided for WEAK associations"),
        ({**request(weak("s")), "associations": []}, "associations", "cannot be null or empty"),
    ]  # fmt: skip
    for body, prop, detail in cases:
        message = error(client.post("/associations", json=body), 422, 42212)
        assert message == (
            f"The association specified an invalid value for property: '{prop}', detail: {detail}"
        )
    assert client.get("/associations/resources/t-1").json() == []


def test_put_adds_and_updates_but_never_moves_a_subject(client: TestClient) -> None:
    for subject in ("s", "k", "u"):
        client.post(f"/subjects/{subject}/versions", json={"schema": record("a")})
    put = client.put("/associations/resources/t-1", json=request(weak("s"), resource_id=None))
    assert put.status_code == 200, put.text
    assert put.json()["associations"][0]["subject"] == "s"
    added = client.put("/associations/resources/t-1", json=request(weak("k", "key")))
    assert [a["associationType"] for a in added.json()["associations"]] == ["key"]
    assert len(client.get("/associations/resources/t-1").json()) == 2
    moved = client.put("/associations/resources/t-1", json=request(weak("u")))
    assert error(moved, 422, 42212).endswith(
        "subject of association cannot be changed from 's' to 'u'"
    )
    mismatch = client.put("/associations/resources/t-2", json=request(weak("s")))
    assert error(mismatch, 422, 42212).endswith(
        "Resource ID in the path parameter does not match the resource ID in the request body"
    )
    strong = client.put(
        "/associations/resources/t-5",
        json=request({"subject": "u", "associationType": "value", "lifecycle": "STRONG"}),
    )
    error(strong, 422, 42212)


def test_associations_replay_from_the_sqlite_log(
    client: TestClient, registry: Any, sqlite_url: str
) -> None:
    client.post("/subjects/s/versions", json={"schema": record("a")})
    client.post("/associations", json=request(weak("s")))
    before = client.get("/associations/resources/t-1").json()
    key = records.association_key(("orders", NS, "topic", "value"), "s").to_bytes()
    assert key == (
        b'{"keytype":"ASSOC","tenant":"default","resourceName":"orders",'
        b'"resourceNamespace":"lkc-1","resourceType":"topic","associationType":"value",'
        b'"subject":"s","magic":0}'
    )
    again = Registry(open_store(sqlite_url), registry.settings)
    again.start()
    try:
        (assoc,) = again.state.associations.values()
        assert (assoc.guid, assoc.resource_id, assoc.lifecycle) == (
            before[0]["guid"],
            "t-1",
            "WEAK",
        )
    finally:
        again.stop()


def test_associations_on_the_kafka_topic(
    kafka_bootstrap: str, kafka_url: str, kafka_topic: str
) -> None:
    with kafka_client(kafka_url) as client:
        client.post("/subjects/s/versions", json={"schema": record("a")})
        assert client.post("/associations", json=request(weak("s"))).status_code == 200
        before = client.get("/associations/subjects/s").json()
        assert client.delete("/associations/resources/t-1").status_code == 204
        assert (
            client.post("/associations", json=request(weak("s"), resource_id="t-2")).status_code
            == 200
        )
    written = read_topic(kafka_bootstrap, kafka_topic)
    key = (
        b'{"keytype":"ASSOC","tenant":"default","resourceName":"orders",'
        b'"resourceNamespace":"lkc-1","resourceType":"topic","associationType":"value",'
        b'"subject":"s","magic":0}'
    )
    values = [v for k, v in written if k == key]
    assert len(values) == 3 and values[1] is None
    first = json.loads(values[0] or b"{}")
    assert first["resourceId"] == "t-1" and first["lifecycle"] == "WEAK"
    assert first["guid"] == before[0]["guid"] and first["frozen"] is False
    with kafka_client(kafka_url) as client:  # a new instance replays the topic
        (after,) = client.get("/associations/subjects/s").json()
        assert after["resourceId"] == "t-2"


def test_confluent_client_subject_strategy_asks_associations(live_server: LiveServer) -> None:
    sr = SchemaRegistryClient({"url": live_server.url})
    schema = json.dumps(
        {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "string"}]}
    )
    from confluent_kafka.schema_registry import Schema

    chosen = sr.register_schema("orders-data", Schema(schema, "AVRO"))
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    ctx = SerializationContext("orders", MessageField.VALUE)
    serializer = AvroSerializer(sr, None, conf=conf)
    # no association yet: the fallback is the topic strategy, whose subject does not exist
    try:
        serializer({"id": "order-0001"}, ctx)
        raise AssertionError("orders-value should not exist")
    except Exception as exc:
        assert "40401" in str(exc) or "not found" in str(exc).lower()
    body = {
        "resourceName": "orders",
        "resourceNamespace": "lkc-9",
        "resourceId": "topic-id-1",
        "associations": [{"subject": "orders-data", "associationType": "value"}],
    }
    reply = __import__("httpx").post(f"{live_server.url}/associations", json=body)
    assert reply.status_code == 200, reply.text
    fresh = AvroSerializer(SchemaRegistryClient({"url": live_server.url}), None, conf=conf)
    payload = fresh({"id": "order-0001"}, ctx)
    assert payload is not None and int.from_bytes(payload[1:5], "big") == chosen
