"""Context names and ids across contexts as Confluent 8.x reads them: ``:.ctx`` is the context
``:.ctx:``; ``/contexts/ctx/...`` (no dot) is ``.ctx`` (``QualifiedSubject.normalizeContext``);
a context name with a colon is a 400; ``GET /schemas/ids/{id}`` without ``?subject=`` does not
find an id that exists only in another context (40403)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from registry.subjects import parse_subject, qualify

SCHEMA = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


def test_context_without_closing_colon_is_the_context() -> None:
    assert qualify(":.ctx") == ":.ctx:"
    assert parse_subject(":.ctx").context == ".ctx"
    assert qualify(":.:x") == "x"


def test_contexts_path_without_a_dot(client: TestClient) -> None:
    assert client.post("/subjects/:.ctx:s/versions", json={"schema": SCHEMA}).status_code == 200
    assert client.get("/contexts/ctx/subjects").json() == [":.ctx:s"]
    assert client.get("/contexts/ctx/subjects/s/versions").json() == [1]
    assert client.get("/contexts/:.ctx:/subjects/s/versions").json() == [1]
    # a subject already qualified keeps its own context
    assert client.get("/contexts/.other/subjects/:.ctx:s/versions").json() == [1]


def test_context_name_with_a_colon_is_400(client: TestClient) -> None:
    response = client.get("/contexts/.a:b/subjects")
    assert response.status_code == 400
    assert response.json() == {"error_code": 400, "message": "Context name cannot contain a colon"}


def test_config_of_a_context_spelled_without_colon(client: TestClient) -> None:
    put = client.put("/config/:.ctx", json={"compatibility": "NONE"})
    assert put.status_code == 200
    assert client.get("/config/:.ctx:").json()["compatibilityLevel"] == "NONE"


def test_id_only_in_another_context_is_not_found_without_subject(client: TestClient) -> None:
    assert client.post("/subjects/:.ctx:s/versions", json={"schema": SCHEMA}).json() == {"id": 1}
    response = client.get("/schemas/ids/1")
    assert response.status_code == 404
    assert response.json()["error_code"] == 40403
    assert client.get("/schemas/ids/1?subject=s").status_code == 200
    assert client.get("/schemas/ids/1?subject=:.ctx:").status_code == 200
    assert client.get("/contexts/.ctx/schemas/ids/1").status_code == 200
