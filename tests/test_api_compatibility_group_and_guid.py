"""`compatibilityGroup` compares only versions of the same group; GUID lookups are indexed."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from registry.core import Registry
from registry.identity import guid_of

V1 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
BREAKING = json.dumps({"type": "record", "name": "R", "fields": [{"name": "b", "type": "int"}]})
GROUP = "application.major.version"


def register(client: TestClient, schema: str, major: str) -> tuple[int, dict]:
    response = client.post(
        "/subjects/s/versions",
        json={"schema": schema, "metadata": {"properties": {GROUP: major}}},
    )
    return response.status_code, response.json()


def test_compatibility_group_only_compares_versions_of_the_same_group(client: TestClient) -> None:
    assert client.put("/config/s", json={"compatibilityGroup": GROUP}).status_code == 200
    assert register(client, V1, "1")[0] == 200
    status, body = register(client, BREAKING, "2")
    assert status == 200, body  # a new major version starts a new group
    status, body = register(client, BREAKING.replace('"b"', '"c"'), "2")
    assert status == 409
    assert body["error_code"] == 409
    assert "oldSchemaVersion: 2" in body["message"]


def test_without_group_the_same_change_is_refused(client: TestClient) -> None:
    assert register(client, V1, "1")[0] == 200
    status, body = register(client, BREAKING, "2")
    assert (status, body["error_code"]) == (409, 409)


def test_guid_of_a_registered_schema_finds_it(client: TestClient, registry: Registry) -> None:
    client.post("/subjects/s/versions", json={"schema": V1})
    digest = registry.state.versions("s")[1].digest
    guid = guid_of(digest)
    assert client.get(f"/schemas/guids/{guid}").json() == {
        "schema": json.dumps(json.loads(V1), separators=(",", ":"))
    }
    assert client.get(f"/schemas/guids/{guid}/ids").json() == [{"context": ".", "id": 1}]
    missing = client.get("/schemas/guids/00000000-0000-0000-0000-000000000000")
    assert (missing.status_code, missing.json()["error_code"]) == (404, 40403)
    malformed = client.get("/schemas/guids/not-a-guid")
    assert malformed.json()["error_code"] == 40403
