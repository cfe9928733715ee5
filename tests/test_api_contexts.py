"""Contexts: ``:.ctx:subject`` names, per-context ids, ``/contexts`` and the
``/contexts/{ctx}/...`` URL form."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient


def record(*fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": f, "type": "int"} for f in fields]}
    )


def canonical(text: str) -> str:
    return json.dumps(json.loads(text), separators=(",", ":"))


def register(client: TestClient, subject: str, text: str) -> Any:
    return client.post(f"/subjects/{subject}/versions", json={"schema": text})


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


def test_only_the_default_context_at_first(client: TestClient) -> None:
    assert client.get("/contexts").json() == ["."]


def test_ids_start_at_one_in_every_context(client: TestClient) -> None:
    assert register(client, "s", record("a")).json() == {"id": 1}
    assert register(client, "s", record("a", "b", "c")).status_code == 409
    assert register(client, ":.ctx1:s", record("x")).json() == {"id": 1}
    assert register(client, ":.ctx2:s", record("y")).json() == {"id": 1}
    assert register(client, ":.ctx2:t", record("z")).json() == {"id": 2}
    assert client.get("/contexts").json() == [".", ".ctx1", ".ctx2"]
    assert client.get("/subjects").json() == [":.ctx1:s", ":.ctx2:s", ":.ctx2:t", "s"]
    assert client.get("/contexts?contextPrefix=.ctx2").json() == [".ctx2"]
    assert client.get("/contexts?offset=1&limit=1").json() == [".ctx1"]


def test_qualified_reads(client: TestClient) -> None:
    register(client, ":.ctx:s", record("a"))
    body = client.get("/subjects/:.ctx:s/versions/1").json()
    assert body == {"subject": ":.ctx:s", "version": 1, "id": 1, "schema": canonical(record("a"))}
    # an unqualified subject found in no default-context subject falls back to the contexts
    assert client.get("/subjects/s/versions/1").json()["subject"] == ":.ctx:s"
    # the default context spelled out
    register(client, ":.:d", record("a"))
    assert client.get("/subjects/d/versions/1").json()["subject"] == "d"


def test_context_url_form(client: TestClient) -> None:
    response = client.post("/contexts/.ctx/subjects/s/versions", json={"schema": record("a")})
    assert (response.status_code, response.json()) == (200, {"id": 1})
    assert client.get("/contexts/.ctx/subjects").json() == [":.ctx:s"]
    assert client.get("/contexts/.ctx/subjects/s/versions").json() == [1]
    assert client.get("/contexts/.ctx/subjects/s/versions/1").json()["subject"] == ":.ctx:s"
    assert client.get("/subjects/:.ctx:s/versions").json() == [1]
    found = client.post("/contexts/.ctx/subjects/s", json={"schema": record("a")})
    assert found.json()["subject"] == ":.ctx:s"
    assert client.get("/contexts/.ctx/schemas/ids/1").json() == {"schema": canonical(record("a"))}
    check = client.post(
        "/contexts/.ctx/compatibility/subjects/s/versions/latest", json={"schema": record("a")}
    )
    assert check.json() == {"is_compatible": True}
    assert client.delete("/contexts/.ctx/subjects/s").json() == [1]
    error(client.get("/contexts/.ctx/subjects/s/versions"), 404, 40401)


def test_context_config_and_mode(client: TestClient) -> None:
    response = client.put("/contexts/.ctx/config", json={"compatibility": "NONE"})
    assert (response.status_code, response.json()) == (200, {"compatibility": "NONE"})
    assert client.get("/config/:.ctx:").json() == {"compatibilityLevel": "NONE"}
    assert client.get("/contexts/.ctx/config").json() == {"compatibilityLevel": "NONE"}
    # the context level applies to its subjects only
    register(client, ":.ctx:s", record("a"))
    assert register(client, ":.ctx:s", record("b")).status_code == 200
    register(client, "s", record("a"))
    error(register(client, "s", record("b")), 409, 409)
    client.put("/contexts/.ctx/mode", json={"mode": "READONLY"})
    assert client.get("/mode/:.ctx:").json() == {"mode": "READONLY"}
    error(register(client, ":.ctx:t", record("a")), 422, 42205)
    assert register(client, "t", record("a")).status_code == 200


def test_same_schema_in_two_contexts_has_independent_ids(client: TestClient) -> None:
    register(client, "s", record("a"))
    register(client, "s2", record("b", "c"))
    assert register(client, ":.ctx:s", record("b", "c")).json() == {"id": 1}
    assert client.get("/schemas/ids/1/subjects?subject=:.ctx:").json() == [":.ctx:s"]
    assert client.get("/schemas/ids/2/subjects").json() == ["s2"]


def test_delete_context(client: TestClient) -> None:
    register(client, ":.ctx:s", record("a"))
    message = error(client.delete("/contexts/.ctx"), 422, 42211)
    assert message == "The specified context '.ctx' is not empty."
    client.delete("/subjects/:.ctx:s")
    # soft-deleted subjects still count
    error(client.delete("/contexts/.ctx"), 422, 42211)
    client.delete("/subjects/:.ctx:s?permanent=true")
    assert client.delete("/contexts/.ctx").status_code == 204
    assert client.get("/contexts").json() == ["."]
