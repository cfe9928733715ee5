"""`compatibilityPolicy` (Confluent 8.2): LENIENT relaxes JSON Schema's open content model."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

OPEN_V1 = json.dumps({"type": "object", "properties": {"a": {"type": "string"}}})
OPEN_V2 = json.dumps(
    {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
)


def register(client: TestClient, subject: str, schema: str) -> tuple[int, dict]:
    response = client.post(
        f"/subjects/{subject}/versions", json={"schema": schema, "schemaType": "JSON"}
    )
    return response.status_code, response.json()


def test_strict_refuses_an_optional_property_added_to_an_open_model(client: TestClient) -> None:
    assert register(client, "s", OPEN_V1)[0] == 200
    status, body = register(client, "s", OPEN_V2)
    assert (status, body["error_code"]) == (409, 409)
    assert "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL" in body["message"]


def test_lenient_accepts_it(client: TestClient) -> None:
    put = client.put("/config/s", json={"compatibilityPolicy": "lenient"})
    assert put.json() == {"compatibilityPolicy": "LENIENT"}  # the stored config (8.x)
    assert client.get("/config/s").json()["compatibilityPolicy"] == "LENIENT"
    assert register(client, "s", OPEN_V1)[0] == 200
    status, body = register(client, "s", OPEN_V2)
    assert status == 200, body
    check = client.post(
        "/compatibility/subjects/s/versions/1",
        json={"schema": OPEN_V2, "schemaType": "JSON"},
    )
    assert check.json() == {"is_compatible": True}


def test_global_lenient_applies_to_subjects_without_their_own_config(client: TestClient) -> None:
    assert client.put("/config", json={"compatibilityPolicy": "LENIENT"}).status_code == 200
    assert register(client, "t", OPEN_V1)[0] == 200
    assert register(client, "t", OPEN_V2)[0] == 200


def test_invalid_policy_is_refused_and_nothing_is_stored(client: TestClient) -> None:
    response = client.put("/config/s", json={"compatibilityPolicy": "SLOPPY"})
    assert (response.status_code, response.json()["error_code"]) == (422, 42203)
    assert client.get("/config/s").json()["error_code"] == 40408
