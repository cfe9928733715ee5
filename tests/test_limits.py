"""Request limits: body size (413), schema size (42209) and nesting depth (42201), on
register, lookup and compatibility requests, including the context URL form and chunked
bodies without a Content-Length."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.api.limits import carries_schema, check, nesting_depth
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import CONTENT_TYPE, Server, running

SMALL = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


def nested_json_schema(levels: int) -> str:
    text = '{"type":"integer"}'
    for _ in range(levels):
        text = '{"type":"object","properties":{"a":' + text + "}}"
    return text


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(poll_interval=0, max_schema_bytes=2000, max_schema_depth=20)
    reg = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), settings)
    reg.start()
    try:
        app = create_app(reg, manage_lifecycle=False)
        with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as test_client:
            yield test_client
    finally:
        reg.stop()


PATHS = [
    "/subjects/s/versions",
    "/subjects/s",
    "/compatibility/subjects/s/versions/latest",
    "/compatibility/subjects/s/versions",
    "/contexts/.c/subjects/s/versions",
]


@pytest.mark.parametrize("path", PATHS)
def test_too_large_schema_is_42209(client: TestClient, path: str) -> None:
    big = '{"type":"record","name":"R","doc":"' + "x" * 2000 + '","fields":[]}'
    response = client.post(path, json={"schema": big})
    assert response.status_code == 422
    assert response.json() == {
        "error_code": 42209,
        "message": f"Schema too large: {len(big)} bytes, the limit is 2000 "
        "(SCHEMA_REGISTRY_MAX_SCHEMA_BYTES)",
    }
    assert "x-request-id" in response.headers


@pytest.mark.parametrize("path", PATHS)
def test_too_deep_schema_is_42201(client: TestClient, path: str) -> None:
    response = client.post(path, json={"schema": nested_json_schema(10), "schemaType": "JSON"})
    assert response.status_code == 422
    body = response.json()
    assert body["error_code"] == 42201
    assert "nested 21 levels deep, the limit is 20" in body["message"]


def test_schemas_within_the_limits_pass(client: TestClient) -> None:
    ok = client.post(
        "/subjects/s/versions", json={"schema": nested_json_schema(9), "schemaType": "JSON"}
    )
    assert ok.status_code == 200, ok.text
    # many brackets side by side are not deep
    wide = json.dumps(
        {
            "type": "record",
            "name": "W",
            "fields": [{"name": f"f{i}", "type": ["null", "int"]} for i in range(12)],
        }
    )
    assert wide.count("[") + wide.count("{") > 20
    assert client.post("/subjects/w/versions", json={"schema": wide}).status_code == 200
    # a malformed body is still the route's to answer
    bad = client.post("/subjects/s/versions", content=b"{not json")
    assert bad.status_code == 400


def test_depth_ignores_brackets_in_strings_and_protobuf_comments() -> None:
    assert nesting_depth('{"doc": "[[[[{{{{"}') == 1
    assert nesting_depth('{"a": "\\"[[["}') == 1
    assert nesting_depth("[[[]]]") == 3
    assert nesting_depth('"int"') == 0
    proto = """syntax = "proto3";
    // {{{{ a comment
    /* [[[[ another */
    message A { message B { string s = 1 [json_name = "{{"]; } }"""
    assert nesting_depth(proto, "PROTOBUF") == 3
    assert check({"schema": "[[[]]]"}, 100, 2) == (
        42201,
        "Invalid schema: nested 3 levels deep, the limit is 2 (SCHEMA_REGISTRY_MAX_SCHEMA_DEPTH)",
    )
    assert check({"schema": "é" * 30}, 50, 5) is not None  # bytes, not characters
    assert check({"schema": 5}, 1, 1) is None
    assert check([], 1, 1) is None


def test_which_requests_carry_schemas() -> None:
    assert carries_schema("POST", "/subjects/s/versions")
    assert carries_schema("POST", "/subjects/s")
    assert carries_schema("POST", "/compatibility/subjects/s/versions/1")
    assert not carries_schema("GET", "/subjects/s/versions")
    assert not carries_schema("POST", "/subjects")
    assert not carries_schema("PUT", "/config/s")


def test_deep_schemas_never_reach_the_parsers_on_a_live_server(tmp_path: Path) -> None:
    with running(Server(tmp_path, {"SCHEMA_REGISTRY_MAX_REQUEST_BYTES": "100000"})) as srv:
        with srv.client() as http:
            deep = nested_json_schema(150)  # 301 levels: over the default 200
            response = http.post(
                "/subjects/j/versions", json={"schema": deep, "schemaType": "JSON"}
            )
            assert response.status_code == 422
            assert response.json()["error_code"] == 42201
            # a chunked body (no Content-Length) over the body limit is still 413, not 500
            chunks = iter([b'{"schema": "' + b"x" * 60_000, b"y" * 60_000 + b'"}'])
            chunked = http.post("/subjects/j/versions", content=chunks)
            assert chunked.status_code == 413
            assert chunked.json() == {
                "error_code": 413,
                "message": "HTTP 413 Request Entity Too Large",
            }
        assert "Traceback" not in srv.log()


@pytest.mark.parametrize("charset", ["utf-16", "utf-16le", "utf-32"])
def test_limits_read_bodies_in_their_declared_charset(client: TestClient, charset: str) -> None:
    """A body in another charset is checked as the route reads it (it used to pass unchecked
    and reach the schema parsers)."""
    deep = json.dumps({"schemaType": "JSON", "schema": nested_json_schema(25)})
    big = json.dumps({"schema": SMALL.replace('"R"', '"' + "R" * 3000 + '"')})
    headers = {"Content-Type": f"{CONTENT_TYPE}; charset={charset}"}
    nested = client.post("/subjects/s/versions", content=deep.encode(charset), headers=headers)
    assert nested.status_code == 422, nested.text
    assert nested.json()["error_code"] == 42201
    assert "nested 51 levels deep, the limit is 20" in nested.json()["message"]
    large = client.post("/subjects/s/versions", content=big.encode(charset), headers=headers)
    assert large.status_code == 422, large.text
    assert large.json()["error_code"] == 42209
    fine = json.dumps({"schema": SMALL}).encode(charset)
    assert client.post("/subjects/s/versions", content=fine, headers=headers).status_code == 200
    assert client.get("/subjects").json() == ["s"]
