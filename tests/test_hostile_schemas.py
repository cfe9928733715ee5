"""Hostile schemas: the work a compatibility check or registration does is bounded by the input
(regexes in linear time, ``$ref`` graphs compared once per pair of nodes, reordered unions and
``oneOf`` matched without comparing every pair), and what is left is bounded by a CPU allowance
per request (``max_schema_work_seconds``) that fails with a 422 naming the limit.

Each test carries a timeout: on the code before these fixes they ran for minutes to hours.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry import budget
from registry.api.app import create_app
from registry.core import Registry
from registry.formats.json_schema import JsonSchemaFormat
from registry.formats.json_schema.compare import MAX_DIFFERENCES
from registry.settings import Settings
from registry.store.factory import open_store
from tests.conftest import CONTENT_TYPE


def _client(tmp_path: Path, **settings: object) -> Iterator[TestClient]:
    reg = Registry(
        open_store(f"sqlite:///{tmp_path / 'r.db'}"), Settings(poll_interval=0, **settings)
    )
    reg.start()
    try:
        app = create_app(reg, manage_lifecycle=False)
        with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as test_client:
            yield test_client
    finally:
        reg.stop()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    yield from _client(tmp_path)


@pytest.fixture
def tight(tmp_path: Path) -> Iterator[TestClient]:
    """A registry allowing a hundredth of a CPU second of schema work per request."""
    yield from _client(tmp_path, max_schema_work_seconds=0.01)


def _json(document: object) -> dict[str, object]:
    return {"schemaType": "JSON", "schema": json.dumps(document)}


def _register(client: TestClient, subject: str, body: dict[str, object]) -> None:
    response = client.post(f"/subjects/{subject}/versions", json=body)
    assert response.status_code == 200, response.text


def ref_chain(depth: int, leaf: str) -> dict[str, object]:
    """``d0 .. d(depth)``, each with two properties referring to the next: 2^depth paths."""
    defs: dict[str, object] = {
        f"d{i}": {
            "type": "object",
            "properties": {
                "a": {"$ref": f"#/definitions/d{i + 1}"},
                "b": {"$ref": f"#/definitions/d{i + 1}"},
            },
        }
        for i in range(depth)
    }
    defs[f"d{depth}"] = {"type": leaf}
    return {"definitions": defs, "$ref": "#/definitions/d0"}


def avro_union(count: int, reverse: bool) -> dict[str, object]:
    records = [
        {"type": "record", "name": f"R{i}", "fields": [{"name": "f", "type": "int"}]}
        for i in range(count)
    ]
    if reverse:
        records.reverse()
    return {
        "schema": json.dumps(
            {"type": "record", "name": "T", "fields": [{"name": "u", "type": records}]}
        )
    }


def one_of(count: int, reverse: bool, suffix: str = "") -> dict[str, object]:
    branches = [
        {
            "type": "object",
            "properties": {f"p{i}{suffix}": {"type": "string"}},
            "required": [f"p{i}{suffix}"],
        }
        for i in range(count)
    ]
    if reverse:
        branches.reverse()
    return _json({"oneOf": branches})


# ---- regexes ------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_catastrophic_pattern_in_new_schema_is_linear(client: TestClient) -> None:
    name = "customerShippingAddress1" + "x" * 40
    _register(client, "t", _json({"type": "object", "properties": {name: {"type": "string"}}}))
    candidate = _json(
        {"type": "object", "patternProperties": {"^(.|.)*!$": {}}, "additionalProperties": False}
    )
    response = client.post("/compatibility/subjects/t/versions/latest?verbose=true", json=candidate)
    assert response.status_code == 200
    body = response.json()
    assert body["is_compatible"] is False
    assert any("PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL" in m for m in body["messages"])


@pytest.mark.timeout(30)
def test_catastrophic_pattern_in_old_schema_is_linear(client: TestClient) -> None:
    _register(client, "t", _json({"type": "object", "patternProperties": {"^(a+)+$": {}}}))
    name = "a" * 40 + "!"
    response = client.post(
        "/subjects/t/versions",
        json=_json({"type": "object", "properties": {name: {"type": "string"}}}),
    )
    # the property is not covered by the pattern, so it is added to a closed-by-pattern model
    assert response.status_code in (200, 409), response.text


def test_pattern_matching_still_decides_coverage(client: TestClient) -> None:
    _register(
        client, "t", _json({"type": "object", "patternProperties": {"^x_": {"type": "string"}}})
    )
    covered = _json({"type": "object", "properties": {"x_a": {"type": "string"}}})
    response = client.post("/compatibility/subjects/t/versions/latest", json=covered)
    assert response.json() == {"is_compatible": True}


def test_pattern_needing_backtracking_is_refused_when_it_must_run(client: TestClient) -> None:
    _register(
        client,
        "t",
        _json({"type": "object", "patternProperties": {"^(a)\\1$": {"type": "string"}}}),
    )
    candidate = _json({"type": "object", "properties": {"aa": {"type": "integer"}}})
    response = client.post("/compatibility/subjects/t/versions/latest", json=candidate)
    assert response.status_code == 422
    body = response.json()
    assert body["error_code"] == 42201
    assert "^(a)\\1$" in body["message"] and "backreferences or lookaround" in body["message"]


# ---- $ref graphs, unions, oneOf -----------------------------------------------------------


@pytest.mark.timeout(30)
def test_shared_ref_graph_is_compared_once_per_node_pair(client: TestClient) -> None:
    _register(client, "t", _json(ref_chain(30, "integer")))
    widened = client.post(
        "/compatibility/subjects/t/versions/latest", json=_json(ref_chain(30, "number"))
    )
    assert widened.json() == {"is_compatible": True}
    _register(client, "u", _json(ref_chain(30, "number")))
    narrowed = client.post(
        "/compatibility/subjects/u/versions/latest?verbose=true",
        json=_json(ref_chain(30, "integer")),
    )
    body = narrowed.json()
    assert body["is_compatible"] is False
    # 2^30 paths differ; the list is bounded per pair of nodes
    assert 0 < len(body["messages"]) <= MAX_DIFFERENCES + 3
    assert "TYPE_NARROWED" in body["messages"][0]


def test_bounded_differences_keep_the_verdict() -> None:
    fmt = JsonSchemaFormat()
    old = fmt.parse(json.dumps(ref_chain(12, "number")), (), strict=False)
    new = fmt.parse(json.dumps(ref_chain(12, "integer")), (), strict=False)
    found = fmt.differences(new, old)
    assert len(found) == MAX_DIFFERENCES
    assert {d.type for d in found} == {"TYPE_NARROWED"}


@pytest.mark.timeout(30)
def test_reordered_avro_union_of_many_records(client: TestClient) -> None:
    _register(client, "t", avro_union(2000, reverse=False))
    response = client.post(
        "/compatibility/subjects/t/versions/latest", json=avro_union(2000, reverse=True)
    )
    assert response.json() == {"is_compatible": True}


def test_avro_union_missing_a_branch_is_still_incompatible(client: TestClient) -> None:
    _register(client, "t", avro_union(50, reverse=False))
    smaller = json.loads(str(avro_union(50, reverse=True)["schema"]))
    smaller["fields"][0]["type"] = smaller["fields"][0]["type"][1:]  # drops R49
    response = client.post(
        "/compatibility/subjects/t/versions/latest?verbose=true",
        json={"schema": json.dumps(smaller)},
    )
    body = response.json()
    assert body["is_compatible"] is False
    assert "MISSING_UNION_BRANCH" in body["messages"][0]


@pytest.mark.timeout(30)
def test_reversed_one_of(client: TestClient) -> None:
    _register(client, "t", one_of(600, reverse=False))
    response = client.post(
        "/compatibility/subjects/t/versions/latest", json=one_of(600, reverse=True)
    )
    assert response.json() == {"is_compatible": True}


# ---- the allowance ------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_work_over_the_allowance_is_a_422_naming_the_limit(tight: TestClient) -> None:
    _register(tight, "t", one_of(150, reverse=False))
    # every branch renamed: no identical pair, so every pair of branches is compared
    response = tight.post(
        "/compatibility/subjects/t/versions/latest", json=one_of(150, reverse=True, suffix="x")
    )
    assert response.status_code == 422
    body = response.json()
    assert body["error_code"] == 42201
    assert budget.SETTING in body["message"] and "0.01 s" in body["message"]
    # a small request still passes under the same allowance
    _register(tight, "small", _json({"type": "string"}))


def test_cancelled_allowance_stops_the_walk() -> None:
    fmt = JsonSchemaFormat()
    old = fmt.parse(str(one_of(30, reverse=False)["schema"]), (), strict=False)
    new = fmt.parse(str(one_of(30, reverse=False, suffix="x")["schema"]), (), strict=False)
    gone = threading.Event()
    gone.set()
    with budget.allowed(budget.Allowance(0, gone)), pytest.raises(budget.WorkLimitExceeded):
        fmt.compatibility_errors(new, old)


@pytest.mark.timeout(30)
def test_unterminated_protobuf_comments_are_scanned_once(client: TestClient) -> None:
    # each "/*" used to be scanned to the end of the text for its "*/": quadratic, in C, holding
    # the GIL (60 KB: 9 s)
    text = 'syntax = "proto3";\nmessage A { int32 a = 1; }\n' + "/* " * 100_000 + "{" * 300
    response = client.post("/subjects/p/versions", json={"schemaType": "PROTOBUF", "schema": text})
    assert response.status_code == 422
    body = response.json()
    assert body["error_code"] == 42201
    # protoc's errors (one per comment) are quoted up to a limit
    assert body["message"].count("inside block comment") <= 20
    assert body["message"].endswith("more errors")
