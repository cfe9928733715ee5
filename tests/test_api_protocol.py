"""Protocol conventions Confluent 7.9 (Jersey + rest-utils) shows to clients: media types,
JSON error bodies for unknown paths and methods, 400/406/413/415, request ids, security
headers, server metadata and encoded slashes in subject names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store

SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
V1 = "application/vnd.schemaregistry.v1+json"


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error_code", "message"}
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


@pytest.fixture
def small_client(sqlite_url: str) -> Iterator[TestClient]:
    """A registry accepting request bodies of at most 1 KiB."""
    reg = Registry(open_store(sqlite_url), Settings(poll_interval=0, max_request_bytes=1024))
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as test_client:
            yield test_client
    finally:
        reg.stop()


# ---- media types ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        V1,
        "application/vnd.schemaregistry+json",
        "application/json",
        "application/json; charset=utf-8",
        "application/octet-stream",
    ],
)
def test_accepted_request_media_types(client: TestClient, content_type: str) -> None:
    response = client.post(
        "/subjects/s/versions",
        content=json.dumps({"schema": SCHEMA}),
        headers={"Content-Type": content_type},
    )
    assert (response.status_code, response.json()) == (200, {"id": 1})


def test_other_request_media_types_are_415(client: TestClient) -> None:
    for content_type in ("text/plain", "application/xml"):
        response = client.post(
            "/subjects/s/versions",
            content=json.dumps({"schema": SCHEMA}),
            headers={"Content-Type": content_type},
        )
        assert error(response, 415, 415) == "HTTP 415 Unsupported Media Type"
    assert client.get("/subjects").json() == []


@pytest.mark.parametrize(
    ("accept", "produced"),
    [
        (None, V1),
        ("*/*", V1),
        (V1, V1),
        ("application/vnd.schemaregistry+json", "application/vnd.schemaregistry+json"),
        ("application/json", "application/json"),
        ("application/json, application/vnd.schemaregistry.v1+json; q=0.9", V1),
    ],
)
def test_response_media_type_negotiation(
    client: TestClient, accept: str | None, produced: str
) -> None:
    headers = {"Accept": accept} if accept else {}
    response = client.get("/subjects", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] == produced
    # errors are negotiated the same way
    missing = client.get("/subjects/nope/versions", headers=headers)
    assert missing.headers["content-type"].split(";")[0] == produced


def test_unacceptable_accept_is_406(client: TestClient) -> None:
    response = client.get("/subjects", headers={"Accept": "text/html"})
    assert error(response, 406, 406) == "HTTP 406 Not Acceptable"


# ---- unknown paths and methods ----------------------------------------------------------


@pytest.mark.parametrize("path", ["/nope", "/subjects/s/nope", "/schemas/ids/1/nope"])
def test_unknown_paths_are_404_json(client: TestClient, path: str) -> None:
    assert error(client.get(path), 404, 404) == "HTTP 404 Not Found"


@pytest.mark.parametrize(
    ("method", "path"),
    [("PUT", "/subjects"), ("DELETE", "/schemas/ids/1"), ("PATCH", "/config"), ("PUT", "/")],
)
def test_unknown_methods_are_405_json(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path, json={})
    assert error(response, 405, 405) == "HTTP 405 Method Not Allowed"


# ---- bodies -----------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [b"{", b'{"schema": }', b"not json", b'{"schema": "x"'])
def test_malformed_json_is_400(client: TestClient, raw: bytes) -> None:
    for path in ("/subjects/s/versions", "/subjects/s", "/compatibility/subjects/s/versions"):
        error(client.post(path, content=raw), 400, 400)
    error(client.put("/config", content=raw), 400, 400)
    error(client.put("/mode", content=raw), 400, 400)


@pytest.mark.parametrize(
    "body",
    [
        [],
        "schema",
        42,
        {"schema": {"type": "string"}},
        {"schema": SCHEMA, "references": {}},
        {"schema": SCHEMA, "references": [1]},
        {"schema": SCHEMA, "version": "one"},
        {"schema": SCHEMA, "id": True},
        {"schema": SCHEMA, "metadata": []},
        {"schema": SCHEMA, "metadata": {"properties": {"a": {"b": 1}}}},
    ],
)
def test_json_of_the_wrong_shape_is_400(client: TestClient, body: object) -> None:
    error(client.post("/subjects/s/versions", json=body), 400, 400)
    assert client.get("/subjects").json() == []


def test_numbers_are_coerced_like_jackson(client: TestClient) -> None:
    response = client.post("/subjects/s/versions", json={"schema": SCHEMA, "version": "1"})
    assert response.status_code == 200
    assert response.json()["id"] == 1


def test_unknown_fields_are_ignored(client: TestClient) -> None:
    response = client.post("/subjects/s/versions", json={"schema": SCHEMA, "colour": "blue"})
    assert (response.status_code, response.json()) == (200, {"id": 1})


def test_huge_bodies_are_413(small_client: TestClient) -> None:
    big = json.dumps({"schema": SCHEMA, "doc": "x" * 4096})
    response = small_client.post("/subjects/s/versions", content=big, headers={"Content-Type": V1})
    assert error(response, 413, 413) == "HTTP 413 Request Entity Too Large"
    assert small_client.get("/subjects").json() == []
    small = small_client.post(
        "/subjects/s/versions", content=json.dumps({"schema": SCHEMA}), headers={"Content-Type": V1}
    )
    assert small.status_code == 200


# ---- headers ----------------------------------------------------------------------------


def test_request_id_is_echoed_or_made_up(client: TestClient) -> None:
    echoed = client.get("/subjects", headers={"X-Request-ID": "abc-123"})
    assert echoed.headers["x-request-id"] == "abc-123"
    made = client.get("/subjects").headers["x-request-id"]
    assert len(made) == 36 and made.count("-") == 4
    assert client.get("/nope", headers={"X-Request-ID": "e1"}).headers["x-request-id"] == "e1"


def test_security_headers(client: TestClient) -> None:
    for response in (client.get("/subjects"), client.get("/nope")):
        assert response.headers["x-xss-protection"] == "1; mode=block"
        assert response.headers["cache-control"] == "no-cache, no-store, must-revalidate"


# ---- root and metadata ------------------------------------------------------------------


def test_root(client: TestClient) -> None:
    assert (client.get("/").status_code, client.get("/").json()) == (200, {})
    assert client.post("/", json={}).json() == {}


def test_server_metadata(client: TestClient, registry: Registry) -> None:
    cluster = client.get("/v1/metadata/id")
    assert cluster.status_code == 200
    assert cluster.json() == {
        "scope": {
            "path": [],
            "clusters": {
                "kafka-cluster": registry.store.cluster_id(),
                "schema-registry-cluster": registry.settings.group_id,
            },
        }
    }
    version = client.get("/v1/metadata/version").json()
    assert set(version) == {"version", "commitId"}
    assert isinstance(version["version"], str) and version["version"]


# ---- subject names in paths -------------------------------------------------------------


def test_encoded_slash_in_a_subject(client: TestClient) -> None:
    response = client.post("/subjects/a%2Fb/versions", json={"schema": SCHEMA})
    assert (response.status_code, response.json()) == (200, {"id": 1})
    assert client.get("/subjects").json() == ["a/b"]
    assert client.get("/subjects/a%2Fb/versions/1").json()["subject"] == "a/b"
    assert client.get("/subjects/a%2fb/versions").json() == [1]
    assert client.put("/config/a%2Fb", json={"compatibility": "NONE"}).status_code == 200
    assert client.get("/config/a%2Fb").json() == {"compatibilityLevel": "NONE"}
    assert client.delete("/subjects/a%2Fb").json() == [1]


def test_other_encoded_characters_in_a_subject(client: TestClient) -> None:
    response = client.post(
        "/subjects/topic%20with%20spaces-value/versions", json={"schema": SCHEMA}
    )
    assert response.status_code == 200
    assert client.get("/subjects").json() == ["topic with spaces-value"]
