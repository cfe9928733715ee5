"""``/schemas``: listing, by id (+ ``/schema``, ``/subjects``, ``/versions``, ``fetchMaxId``),
by GUID and ``/schemas/types``, as Confluent 7.9 answers them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry.core import Registry
from registry.identity import guid_of


def record(name: str, *fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": f, "type": "int"} for f in fields]}
    )


def canonical(schema: str) -> str:
    return json.dumps(json.loads(schema), separators=(",", ":"))


A, B, C = record("R", "a"), record("R", "b"), record("R", "c")


def register(client: TestClient, subject: str, schema: str) -> int:
    response = client.post(f"/subjects/{subject}/versions", json={"schema": schema})
    assert response.status_code == 200, response.text
    schema_id: int = response.json()["id"]
    return schema_id


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


@pytest.fixture
def populated(client: TestClient) -> TestClient:
    """s1: A (id 1), B (id 2); s2: A (id 1), C (id 3); level NONE."""
    client.put("/config", json={"compatibility": "NONE"})
    register(client, "s1", A)
    register(client, "s1", B)
    register(client, "s2", A)
    register(client, "s2", C)
    return client


# ---- /schemas/ids/{id} ------------------------------------------------------------------


def test_schema_by_id(populated: TestClient) -> None:
    response = populated.get("/schemas/ids/2")
    assert response.status_code == 200
    assert response.json() == {"schema": canonical(B)}


def test_schema_by_unknown_id_is_40403(populated: TestClient) -> None:
    assert error(populated.get("/schemas/ids/99"), 404, 40403) == "Schema 99 not found"
    assert error(populated.get("/schemas/ids/99/schema"), 404, 40403) == "Schema 99 not found"


@pytest.mark.parametrize("path", ["/schemas/ids/abc", "/schemas/ids/1.5/schema"])
def test_non_numeric_id_is_a_plain_404(populated: TestClient, path: str) -> None:
    assert error(populated.get(path), 404, 404) == "HTTP 404 Not Found"


def test_fetch_max_id(populated: TestClient) -> None:
    assert populated.get("/schemas/ids/1?fetchMaxId=true").json() == {
        "schema": canonical(A),
        "maxId": 3,
    }
    assert "maxId" not in populated.get("/schemas/ids/1?fetchMaxId=false").json()


def test_raw_schema_by_id(populated: TestClient) -> None:
    response = populated.get("/schemas/ids/3/schema")
    assert response.status_code == 200
    assert response.text == canonical(C)


def test_subjects_and_versions_of_an_id(populated: TestClient) -> None:
    client = populated
    assert client.get("/schemas/ids/1/subjects").json() == ["s1", "s2"]
    assert client.get("/schemas/ids/1/versions").json() == [
        {"subject": "s1", "version": 1},
        {"subject": "s2", "version": 1},
    ]
    assert client.get("/schemas/ids/3/subjects").json() == ["s2"]
    assert error(client.get("/schemas/ids/99/subjects"), 404, 40403) == "Schema not found"
    assert error(client.get("/schemas/ids/99/versions"), 404, 40403) == "Schema not found"


def test_subject_parameter_selects_the_context_only(populated: TestClient) -> None:
    # Confluent 7.9 uses ``subject`` to pick the context; it does not filter the answer
    assert populated.get("/schemas/ids/1/subjects?subject=s1").json() == ["s1", "s2"]


def test_soft_deleted_holders_need_deleted(populated: TestClient) -> None:
    client = populated
    client.delete("/subjects/s1/versions/1")
    assert client.get("/schemas/ids/1/subjects").json() == ["s2"]
    assert client.get("/schemas/ids/1/subjects?deleted=true").json() == ["s1", "s2"]
    assert client.get("/schemas/ids/1/versions").json() == [{"subject": "s2", "version": 1}]
    client.delete("/subjects/s2/versions/1")
    assert client.get("/schemas/ids/1/subjects").json() == []
    # the schema itself is still served
    assert client.get("/schemas/ids/1").json() == {"schema": canonical(A)}


def test_ids_live_in_their_context(client: TestClient) -> None:
    register(client, ":.ctx:s", B)
    # Confluent 8.x: without ?subject= only the default context is searched; an unqualified
    # subject falls back to the same subject name in every context
    error(client.get("/schemas/ids/1"), 404, 40403)
    assert client.get("/schemas/ids/1?subject=s").json() == {"schema": canonical(B)}
    assert client.get("/schemas/ids/1?subject=:.ctx:s").json() == {"schema": canonical(B)}
    register(client, "s", A)
    assert client.get("/schemas/ids/1").json() == {"schema": canonical(A)}
    assert client.get("/schemas/ids/1?subject=:.ctx:").json() == {"schema": canonical(B)}
    error(client.get("/schemas/ids/2?subject=:.ctx:"), 404, 40403)


# ---- /schemas ---------------------------------------------------------------------------


def entity(subject: str, version: int, schema_id: int, schema: str) -> dict[str, Any]:
    return {"subject": subject, "version": version, "id": schema_id, "schema": canonical(schema)}


def test_list_schemas(populated: TestClient) -> None:
    assert populated.get("/schemas").json() == [
        entity("s1", 1, 1, A),
        entity("s1", 2, 2, B),
        entity("s2", 1, 1, A),
        entity("s2", 2, 3, C),
    ]


def test_list_schemas_latest_only_prefix_and_paging(populated: TestClient) -> None:
    client = populated
    assert client.get("/schemas?latestOnly=true").json() == [
        entity("s1", 2, 2, B),
        entity("s2", 2, 3, C),
    ]
    assert client.get("/schemas?subjectPrefix=s2").json() == [
        entity("s2", 1, 1, A),
        entity("s2", 2, 3, C),
    ]
    assert client.get("/schemas?subjectPrefix=x").json() == []
    assert client.get("/schemas?offset=1&limit=2").json() == [
        entity("s1", 2, 2, B),
        entity("s2", 1, 1, A),
    ]


def test_list_schemas_deleted(populated: TestClient) -> None:
    client = populated
    client.delete("/subjects/s1/versions/2")
    assert [e["id"] for e in client.get("/schemas").json()] == [1, 1, 3]
    assert [e["id"] for e in client.get("/schemas?deleted=true").json()] == [1, 2, 1, 3]
    # latestOnly skips the soft-deleted latest version
    assert [e["version"] for e in client.get("/schemas?latestOnly=true").json()] == [1, 2]


def test_list_schemas_covers_every_context_by_default(client: TestClient) -> None:
    register(client, "a", A)
    register(client, ":.ctx:b", B)
    # Confluent's empty prefix matches every key; ``:`` sorts before letters
    assert client.get("/schemas").json() == [entity(":.ctx:b", 1, 1, B), entity("a", 1, 1, A)]
    assert client.get("/schemas?subjectPrefix=:.ctx:").json() == [entity(":.ctx:b", 1, 1, B)]
    assert client.get("/contexts/.ctx/schemas").json() == [entity(":.ctx:b", 1, 1, B)]


# ---- GUIDs and types --------------------------------------------------------------------


def test_schema_by_guid(populated: TestClient, registry: Registry) -> None:
    digest = registry.state.versions("s2")[2].digest
    guid = guid_of(digest)
    assert populated.get(f"/schemas/guids/{guid}").json() == {"schema": canonical(C)}
    assert populated.get(f"/schemas/guids/{guid}/ids").json() == [{"context": ".", "id": 3}]
    unknown = "00000000-0000-0000-0000-000000000000"
    message = error(populated.get(f"/schemas/guids/{unknown}"), 404, 40403)
    assert message == f"Schema {unknown} not found"
    error(populated.get(f"/schemas/guids/{unknown}/ids"), 404, 40403)


def test_schema_types(client: TestClient, registry: Registry) -> None:
    response = client.get("/schemas/types")
    assert response.status_code == 200
    types = response.json()
    assert "AVRO" in types
    assert sorted(types) == sorted(registry.formats)
