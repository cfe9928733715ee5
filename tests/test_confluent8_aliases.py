"""Subject aliases (Confluent 8.x ``AliasFilter``): ``alias`` in a subject's config makes that
subject name stand for another wherever a request names a subject."""

from __future__ import annotations

import json
from typing import Any

import httpx
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from fastapi.testclient import TestClient

from tests.api_helpers import record
from tests.conftest import LiveServer


def body(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def test_an_alias_reads_its_target(client: TestClient) -> None:
    client.put("/config/orders-value", json={"compatibility": "NONE"})
    client.post("/subjects/orders-value/versions", json={"schema": record("a")})
    client.post("/subjects/orders-value/versions", json={"schema": record("a", "b")})
    assert body(client.put("/config/orders", json={"alias": "orders-value"})) == {
        "alias": "orders-value"
    }
    got = body(client.get("/subjects/orders/versions/1"))
    assert (got["subject"], got["version"], got["id"]) == ("orders-value", 1, 1)
    assert body(client.get("/subjects/orders/versions/latest"))["version"] == 2
    assert body(client.get("/subjects/orders/versions")) == [1, 2]
    assert client.get("/subjects/orders/versions/2/schema").text == record("a", "b")
    found = body(client.post("/subjects/orders", json={"schema": record("a")}))
    assert (found["subject"], found["version"]) == ("orders-value", 1)
    compat = client.post(
        "/compatibility/subjects/orders/versions/2", json={"schema": record("a", "b")}
    )
    assert body(compat) == {"is_compatible": True}
    by_id = body(client.get("/schemas/ids/1/versions?subject=orders"))
    assert by_id == [{"subject": "orders-value", "version": 1}]
    # writes through the alias land in the target; the alias's own config is left alone
    assert body(client.post("/subjects/orders/versions", json={"schema": record("a", "b", "c")}))
    assert body(client.get("/subjects/orders-value/versions")) == [1, 2, 3]
    assert body(client.get("/config/orders"))["alias"] == "orders-value"
    assert body(client.get("/subjects")) == ["orders-value"]


def test_an_alias_is_relative_to_its_context(client: TestClient) -> None:
    client.post("/subjects/:.team:target/versions", json={"schema": record("a")})
    client.put("/config/:.team:short", json={"alias": "target"})
    got = body(client.get("/subjects/:.team:short/versions/1"))
    assert got["subject"] == ":.team:target"
    client.post("/subjects/target/versions", json={"schema": record("b")})
    client.put("/config/short", json={"alias": "target"})
    assert body(client.get("/subjects/short/versions/1"))["subject"] == "target"


def test_removing_the_alias_restores_the_name(client: TestClient) -> None:
    client.post("/subjects/t/versions", json={"schema": record("a")})
    client.put("/config/a", json={"alias": "t"})
    assert body(client.get("/subjects/a/versions/1"))["subject"] == "t"
    client.delete("/config/a")
    assert client.get("/subjects/a/versions/1").json()["error_code"] == 40401


def test_serializer_with_latest_version_through_an_alias(live_server: LiveServer) -> None:
    sr = SchemaRegistryClient({"url": live_server.url})
    schema = {"type": "record", "name": "U", "fields": [{"name": "name", "type": "string"}]}
    sr.register_schema("users-value-v2", Schema(json.dumps(schema), "AVRO"))
    sr.register_schema("other", Schema('"string"', "AVRO"))
    reply = httpx.put(f"{live_server.url}/config/users-value", json={"alias": "users-value-v2"})
    assert reply.status_code == 200
    serializer = AvroSerializer(
        sr, None, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    ctx = SerializationContext("users", MessageField.VALUE)
    payload = serializer({"name": "Ada Lovelace"}, ctx)
    assert payload is not None and int.from_bytes(payload[1:5], "big") == 1
