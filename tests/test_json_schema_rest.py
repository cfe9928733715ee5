"""JSON Schema through the REST API (register, lookup, compatibility, references between
subjects) and with the real confluent-kafka ``JSONSerializer``/``JSONDeserializer`` against a
live server, references included."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import (
    Schema,
    SchemaReference,
    SchemaRegistryClient,
    SchemaRegistryError,
)
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError
from fastapi.testclient import TestClient

from tests.conftest import LiveServer, sqlite_live_server

ORDER_V1 = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {"id": {"type": "integer"}, "note": {"type": "string"}},
    "required": ["id"],
    "additionalProperties": False,
}
ORDER_V2 = {**ORDER_V1, "properties": {**ORDER_V1["properties"], "qty": {"type": "integer"}}}
ORDER_BAD = {**ORDER_V1, "properties": {**ORDER_V1["properties"], "id": {"type": "string"}}}
ADDRESS = {
    "type": "object",
    "properties": {"street": {"type": "string"}, "zip": {"type": "string"}},
    "required": ["street"],
}
CUSTOMER = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "address": {"$ref": "address.json"}},
    "required": ["name", "address"],
}


def body(schema: Any, **extra: Any) -> dict[str, Any]:
    text = schema if isinstance(schema, str) else json.dumps(schema, indent=2)
    return {"schemaType": "JSON", "schema": text, **extra}


def register(client: TestClient, subject: str, schema: Any, **extra: Any) -> Any:
    return client.post(f"/subjects/{subject}/versions", json=body(schema, **extra))


def test_register_stores_the_canonical_text_and_shares_ids(client: TestClient) -> None:
    first = register(client, "orders-value", ORDER_V1)
    assert first.status_code == 200, first.text
    schema_id = first.json()["id"]
    compact = json.dumps(ORDER_V1, separators=(",", ":"))
    stored = client.get("/subjects/orders-value/versions/1").json()
    assert stored["schemaType"] == "JSON"
    assert stored["schema"] == compact
    assert client.get(f"/schemas/ids/{schema_id}").json()["schema"] == compact
    # the same schema written differently is the same schema, here and in another subject
    again = register(client, "orders-value", compact)
    assert again.json()["id"] == schema_id
    assert client.get("/subjects/orders-value/versions").json() == [1]
    assert register(client, "other-value", ORDER_V1).json()["id"] == schema_id
    assert "JSON" in client.get("/schemas/types").json()


def test_lookup_finds_a_reformatted_schema(client: TestClient) -> None:
    register(client, "orders-value", ORDER_V1)
    found = client.post("/subjects/orders-value", json=body(json.dumps(ORDER_V1)))
    assert found.status_code == 200, found.text
    assert (found.json()["version"], found.json()["schemaType"]) == (1, "JSON")
    missing = client.post("/subjects/orders-value", json=body(ORDER_V2))
    assert missing.json()["error_code"] == 40403


@pytest.mark.parametrize(
    "schema",
    ['{"type": 12}', '{"type": "object", "properties": {"a": {"minLength": -1}}}', "[1]", "{"],
    ids=["type 12", "negative minLength", "array", "not JSON"],
)
def test_invalid_schema_is_42201(client: TestClient, schema: str) -> None:
    reply = register(client, "bad-value", schema)
    assert reply.status_code == 422
    assert reply.json()["error_code"] == 42201
    # Confluent 8.x's words: text Jackson cannot read fails in the provider ("of type JSON"),
    # a schema that reads but does not load in validate() (it prints the request's Schema)
    assert ("schemaType=JSON" if schema != "{" else "of type JSON") in reply.json()["message"]


def test_normalize_sorts_keys(client: TestClient) -> None:
    reply = client.post(
        "/subjects/norm-value/versions?normalize=true", json=body({"type": "string", "title": "t"})
    )
    assert reply.status_code == 200, reply.text
    assert client.get("/subjects/norm-value/versions/1/schema").json() == {
        "title": "t",
        "type": "string",
    }
    assert client.get("/subjects/norm-value/versions/1").json()["schema"] == (
        '{"title":"t","type":"string"}'
    )


def test_compatibility_endpoint_and_409(client: TestClient) -> None:
    register(client, "orders-value", ORDER_V1)
    ok = client.post(
        "/compatibility/subjects/orders-value/versions/latest?verbose=true", json=body(ORDER_V2)
    )
    assert ok.json() == {"is_compatible": True, "messages": []}
    bad = client.post(
        "/compatibility/subjects/orders-value/versions/latest?verbose=true", json=body(ORDER_BAD)
    )
    messages = bad.json()["messages"]
    assert bad.json()["is_compatible"] is False
    assert messages[0] == (
        '{errorType:"TYPE_CHANGED", description:"A type at path \'#/properties/id\' is '
        "different between the new schema and the old schema'}"
    )
    assert messages[1:] == [
        "{oldSchemaVersion: 1}",
        "{oldSchema: '" + json.dumps(ORDER_V1, separators=(",", ":")) + "'}",
        "{validateFields: 'false', compatibility: 'BACKWARD'}",
    ]
    refused = register(client, "orders-value", ORDER_BAD)
    assert refused.status_code == 409
    assert "TYPE_CHANGED" in refused.json()["message"]
    assert register(client, "orders-value", ORDER_V2).json()["id"] == 2


def test_open_content_model_is_strict_by_default(client: TestClient) -> None:
    open_v1 = {"type": "object", "properties": {"a": {"type": "string"}}}
    open_v2 = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    register(client, "open-value", open_v1)
    reply = client.post(
        "/compatibility/subjects/open-value/versions/latest?verbose=true", json=body(open_v2)
    )
    assert reply.json()["is_compatible"] is False
    assert "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL" in reply.json()["messages"][0]


def test_forward_and_full_levels(client: TestClient) -> None:
    narrow = {"type": "string", "maxLength": 5}
    wide = {"type": "string"}
    register(client, "f-value", narrow)
    client.put("/config/f-value", json={"compatibility": "FORWARD"})
    forward = client.post(
        "/compatibility/subjects/f-value/versions/latest?verbose=true", json=body(wide)
    )
    assert forward.json()["is_compatible"] is False
    assert "in the old schema is not present in the new schema" in forward.json()["messages"][0]
    client.put("/config/f-value", json={"compatibility": "FULL"})
    assert register(client, "f-value", wide).status_code == 409
    client.put("/config/f-value", json={"compatibility": "NONE"})
    assert register(client, "f-value", wide).status_code == 200


def test_reference_to_another_subject(client: TestClient) -> None:
    address_id = register(client, "address-value", ADDRESS).json()["id"]
    refs = [{"name": "address.json", "subject": "address-value", "version": 1}]
    reply = register(client, "customer-value", CUSTOMER, references=refs)
    assert reply.status_code == 200, reply.text
    customer_id = reply.json()["id"]
    stored = client.get("/subjects/customer-value/versions/1").json()
    assert stored["references"] == refs
    assert client.get("/subjects/address-value/versions/1/referencedby").json() == [customer_id]
    found = client.post("/subjects/customer-value", json=body(CUSTOMER, references=refs))
    assert found.json()["id"] == customer_id
    assert address_id != customer_id

    # the referenced subject evolves incompatibly: the customer schema using it is checked
    client.put("/config/address-value", json={"compatibility": "NONE"})
    address_v2 = {**ADDRESS, "properties": {**ADDRESS["properties"], "zip": {"type": "integer"}}}
    assert register(client, "address-value", address_v2).status_code == 200
    refs_v2 = [{"name": "address.json", "subject": "address-value", "version": 2}]
    check = client.post(
        "/compatibility/subjects/customer-value/versions/latest?verbose=true",
        json=body(CUSTOMER, references=refs_v2),
    )
    assert check.json()["is_compatible"] is False
    assert "#/properties/address/properties/zip" in check.json()["messages"][0]


def test_unresolvable_reference_is_42201(client: TestClient) -> None:
    reply = register(client, "customer-value", CUSTOMER)
    assert reply.status_code == 422
    assert "address.json" in reply.json()["message"]
    refs = [{"name": "address.json", "subject": "nope", "version": 1}]
    assert register(client, "customer-value", CUSTOMER, references=refs).status_code == 422


# ---- the real confluent-kafka serializers against a live server --------------------------


@pytest.fixture(scope="module")
def json_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One ``schema-registry serve`` process for this module's serializer tests (the
    ``live_server`` fixture of conftest, shared to start the process once)."""
    tmp = tmp_path_factory.mktemp("json-live")
    yield from sqlite_live_server(tmp)


@pytest.fixture
def sr(json_server: LiveServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": json_server.url})


def test_json_serializer_round_trip(sr: SchemaRegistryClient, json_server: LiveServer) -> None:
    ctx = SerializationContext("orders", MessageField.VALUE)
    serializer = JSONSerializer(json.dumps(ORDER_V1), sr)
    payload = serializer({"id": 7, "note": "hi"}, ctx)
    assert payload is not None and payload[0] == 0
    schema_id = int.from_bytes(payload[1:5], "big")
    assert schema_id == sr.get_latest_version("orders-value").schema_id
    fresh = SchemaRegistryClient({"url": json_server.url})
    deserializer = JSONDeserializer(None, schema_registry_client=fresh)
    assert deserializer(payload, ctx) == {"id": 7, "note": "hi"}
    with pytest.raises(SerializationError, match="is not of type"):
        serializer({"id": "not an integer"}, ctx)
    with pytest.raises(SchemaRegistryError) as err:
        JSONSerializer(json.dumps(ORDER_BAD), sr)({"id": "x"}, ctx)
    assert err.value.http_status_code == 409


def test_json_serializer_round_trip_with_references(
    sr: SchemaRegistryClient, json_server: LiveServer
) -> None:
    sr.register_schema("address-value", Schema(json.dumps(ADDRESS), "JSON"))
    version = sr.get_latest_version("address-value").version
    customer = Schema(
        json.dumps(CUSTOMER),
        "JSON",
        [SchemaReference("address.json", "address-value", version)],
    )
    ctx = SerializationContext("customers", MessageField.VALUE)
    serializer = JSONSerializer(customer, sr, conf={"auto.register.schemas": True})
    record = {"name": "Ada", "address": {"street": "Main", "zip": "1234"}}
    payload = serializer(record, ctx)
    assert payload is not None
    schema_id = int.from_bytes(payload[1:5], "big")
    registered = sr.get_schema(schema_id)
    assert [r.name for r in registered.references] == ["address.json"]
    fresh = SchemaRegistryClient({"url": json_server.url})
    deserializer = JSONDeserializer(None, schema_registry_client=fresh)
    assert deserializer(payload, ctx) == record
    # the referenced schema is enforced by the serializer: street is required there
    with pytest.raises(SerializationError, match="street"):
        serializer({"name": "Bob", "address": {"zip": "1"}}, ctx)
