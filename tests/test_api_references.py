"""Schema references: registering a schema that uses another subject's named type,
``referencedby``, delete protection (42206) and missing references (42201)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

ADDRESS = json.dumps(
    {
        "type": "record",
        "name": "Address",
        "namespace": "com.acme",
        "fields": [{"name": "street", "type": "string"}],
    }
)
CUSTOMER = json.dumps(
    {
        "type": "record",
        "name": "Customer",
        "namespace": "com.acme",
        "fields": [{"name": "address", "type": "com.acme.Address"}],
    }
)
REF = {"name": "com.acme.Address", "subject": "address", "version": 1}


def register(client: TestClient, subject: str, schema: str, **body: Any) -> Any:
    return client.post(f"/subjects/{subject}/versions", json={"schema": schema, **body})


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


@pytest.fixture
def referenced(client: TestClient) -> TestClient:
    """``address`` v1 (id 1) referenced by ``customer`` v1 (id 2)."""
    assert register(client, "address", ADDRESS).json() == {"id": 1}
    assert register(client, "customer", CUSTOMER, references=[REF]).json() == {"id": 2}
    return client


def test_register_with_a_reference(referenced: TestClient) -> None:
    body = referenced.get("/subjects/customer/versions/1").json()
    assert body["references"] == [REF]
    assert body["id"] == 2
    assert referenced.get("/schemas/ids/2").json() == {
        "schema": body["schema"],
        "references": [REF],
    }
    # idempotent, and lookup finds it with its references
    assert register(referenced, "customer", CUSTOMER, references=[REF]).json() == {"id": 2}
    found = referenced.post("/subjects/customer", json={"schema": CUSTOMER, "references": [REF]})
    assert (found.status_code, found.json()["version"]) == (200, 1)


def test_latest_reference_version_is_pinned(client: TestClient) -> None:
    register(client, "address", ADDRESS)
    latest = {**REF, "version": -1}
    assert register(client, "customer", CUSTOMER, references=[latest]).json() == {"id": 2}
    assert client.get("/subjects/customer/versions/1").json()["references"] == [REF]


def test_referenced_by(referenced: TestClient) -> None:
    response = referenced.get("/subjects/address/versions/1/referencedby")
    assert (response.status_code, response.json()) == (200, [2])
    assert referenced.get("/subjects/address/versions/latest/referencedby").json() == [2]
    assert referenced.get("/subjects/customer/versions/1/referencedby").json() == []
    error(referenced.get("/subjects/address/versions/2/referencedby"), 404, 40402)
    error(referenced.get("/subjects/nope/versions/1/referencedby"), 404, 40401)
    error(referenced.get("/subjects/address/versions/0/referencedby"), 422, 42202)


def test_deleting_a_referenced_version_is_42206(referenced: TestClient) -> None:
    client = referenced
    message = error(client.delete("/subjects/address/versions/1"), 422, 42206)
    assert message == (
        "One or more references exist to the schema "
        "{magic=1,keytype=SCHEMA,subject=address,version=1}."
    )
    error(client.delete("/subjects/address"), 422, 42206)
    assert client.get("/subjects/address/versions").json() == [1]


def test_a_soft_deleted_referrer_protects_only_from_a_permanent_delete(
    referenced: TestClient,
) -> None:
    client = referenced
    assert client.delete("/subjects/customer/versions/1").json() == 1
    assert client.get("/subjects/address/versions/1/referencedby").json() == []
    assert client.delete("/subjects/address/versions/1").json() == 1
    # Confluent 8.x: getReferencedBy(key, permanentDelete) counts the soft-deleted referrer
    error(client.delete("/subjects/address/versions/1?permanent=true"), 422, 42206)
    assert client.delete("/subjects/customer/versions/1?permanent=true").json() == 1
    assert client.delete("/subjects/address/versions/1?permanent=true").json() == 1


def test_the_referrer_can_be_deleted_first(referenced: TestClient) -> None:
    client = referenced
    assert client.delete("/subjects/customer").json() == [1]
    assert client.delete("/subjects/customer?permanent=true").json() == [1]
    assert client.delete("/subjects/address").json() == [1]


def test_missing_reference_is_42201(client: TestClient) -> None:
    message = error(register(client, "customer", CUSTOMER, references=[REF]), 422, 42201)
    # 8.5: loadSchema wraps AvroSchemaProvider's message, which prints the request
    assert message.startswith(
        "Invalid schema of type AVRO, details: Invalid schema {subject=customer,version=null,"
        "id=null,guid="
    )
    assert message.endswith(
        "with refs [{name='com.acme.Address', subject='address', version=1}] of type AVRO, "
        "details: "
        'No schema reference found for subject "address" and version 1'
    )
    register(client, "address", ADDRESS)
    missing_version = {**REF, "version": 2}
    message = error(
        register(client, "customer", CUSTOMER, references=[missing_version]), 422, 42201
    )
    assert message.endswith('No schema reference found for subject "address" and version 2')
    assert client.get("/subjects").json() == ["address"]


def test_unknown_type_without_references_is_42201(client: TestClient) -> None:
    message = error(register(client, "customer", CUSTOMER), 422, 42201)
    assert "com.acme.Address" in message


def test_reference_to_a_soft_deleted_version_is_42201(client: TestClient) -> None:
    register(client, "address", ADDRESS)
    register(client, "other", ADDRESS)
    client.delete("/subjects/address/versions/1")
    error(register(client, "customer", CUSTOMER, references=[REF]), 422, 42201)


def test_incomplete_reference_is_42201(client: TestClient) -> None:
    register(client, "address", ADDRESS)
    incomplete = {"name": "com.acme.Address", "subject": "address"}
    message = error(register(client, "customer", CUSTOMER, references=[incomplete]), 422, 42201)
    assert message.endswith(
        "details: Invalid reference: {name='com.acme.Address', subject='address', version=null}"
    )


def test_references_resolve_in_the_referrers_context(client: TestClient) -> None:
    register(client, ":.ctx:address", ADDRESS)
    assert register(client, ":.ctx:customer", CUSTOMER, references=[REF]).json() == {"id": 2}
    # the default context has no "address"
    error(register(client, "customer", CUSTOMER, references=[REF]), 422, 42201)
    assert client.get("/subjects/:.ctx:address/versions/1/referencedby").json() == [2]
