"""Request decoding as Confluent Platform 8.x's Jersey + Jackson stack does it: schema types
looked up as written, Jackson's scalar coercions, wildcard ``Accept`` headers, request bodies
in the declared charset, and the root resource's ``Map<String, String>`` body."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api_helpers import error

SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
JSON_TYPE = "application/json"


# ---- schemaType is matched exactly (AbstractSchemaRegistry.loadSchema: providers.get) ----


@pytest.mark.parametrize("schema_type", ["avro", "Avro", "", "json", "protobuf"])
def test_schema_type_in_other_case_or_empty_is_an_unknown_type(
    client: TestClient, schema_type: str
) -> None:
    body = {"schema": SCHEMA, "schemaType": schema_type}
    message = error(client.post("/subjects/t/versions", json=body), 422, 42201)
    assert message == f"Invalid schema type {schema_type}"
    assert client.get("/subjects").json() == []
    # the lookup and the compatibility check parse the same way
    assert client.post("/subjects/s/versions", json={"schema": SCHEMA}).status_code == 200
    error(client.post("/subjects/s", json=body), 422, 42201)
    error(client.post("/compatibility/subjects/s/versions/latest", json=body), 422, 42201)


def test_schema_type_absent_or_null_is_avro(client: TestClient) -> None:
    assert client.post("/subjects/s/versions", json={"schema": SCHEMA}).status_code == 200
    response = client.post("/subjects/s/versions", json={"schema": SCHEMA, "schemaType": None})
    assert response.status_code == 200, response.text


# ---- Jackson coercions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("true", True),
        ("True", True),
        (" TRUE ", True),
        ("false", False),
        (1, True),
        (2, True),
        (0, False),
    ],
)
def test_config_booleans_are_coerced_as_jackson_does(
    client: TestClient, sent: object, stored: bool
) -> None:
    for field in ("normalize", "validateFields"):
        response = client.put("/config/s", json={field: sent})
        assert response.status_code == 200, response.text
        assert response.json()[field] is stored  # the answer is the whole stored config (8.x)
        assert client.get("/config/s").json()[field] is stored


@pytest.mark.parametrize("sent", ["yes", "1", "tru", 1.5, [True], {"a": True}])
def test_config_booleans_jackson_refuses(client: TestClient, sent: object) -> None:
    message = error(client.put("/config", json={"normalize": sent}), 400, 400)
    assert "java.lang.Boolean" in message
    assert "normalize" not in client.get("/config").json()


def test_float_version_is_truncated_as_jackson_accept_float_as_int(client: TestClient) -> None:
    client.put("/mode/s", json={"mode": "IMPORT"})
    body = {"schema": SCHEMA, "version": 1.7, "id": 7.9}
    response = client.post("/subjects/s/versions", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["id"] == 7
    assert client.get("/subjects/s/versions").json() == [1]


def test_float_version_out_of_int_range_is_refused(client: TestClient) -> None:
    body = {"schema": SCHEMA, "version": 3e9}
    error(client.post("/subjects/s/versions", json=body), 400, 400)


# ---- content negotiation -----------------------------------------------------------------


@pytest.mark.parametrize("accept", ["*", "*/whatever", "*; q=.2", "text/html, */x;q=0.5"])
def test_wildcard_accept_forms_are_any_media_type(client: TestClient, accept: str) -> None:
    response = client.get("/subjects", headers={"Accept": accept})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/vnd.schemaregistry.v1+json"


@pytest.mark.parametrize(
    ("charset", "encoded"),
    [
        ("utf-16", lambda text: text.encode("utf-16")),  # with a byte-order mark
        ("UTF-16", lambda text: text.encode("utf-16-be")),  # Java: no mark = big-endian
        ("utf-16le", lambda text: text.encode("utf-16-le")),
        ("iso-8859-1", lambda text: text.encode("latin-1")),
    ],
)
def test_body_is_decoded_in_its_declared_charset(
    client: TestClient, charset: str, encoded: Any
) -> None:
    schema = json.dumps(
        {
            "type": "record",
            "name": "R",
            "doc": "caf\u00e9",
            "fields": [{"name": "a", "type": "int"}],
        },
    )
    response = client.post(
        "/subjects/s/versions",
        content=encoded(json.dumps({"schema": schema})),
        headers={"Content-Type": f"{JSON_TYPE}; charset={charset}"},
    )
    assert response.status_code == 200, response.text
    stored = json.loads(client.get("/subjects/s/versions/1/schema").text)
    assert stored["doc"] == "caf\u00e9"


def test_utf16_body_without_charset_is_detected(client: TestClient) -> None:
    response = client.post(
        "/subjects/s/versions",
        content=json.dumps({"schema": SCHEMA}).encode("utf-16-le"),
        headers={"Content-Type": JSON_TYPE},
    )
    assert response.status_code == 200, response.text


def test_unknown_charset_is_unsupported_media_type(client: TestClient) -> None:
    response = client.post(
        "/subjects/s/versions",
        content=json.dumps({"schema": SCHEMA}).encode(),
        headers={"Content-Type": f"{JSON_TYPE}; charset=klingon"},
    )
    error(response, 415, 415)
    assert client.get("/subjects").json() == []


# ---- POST / ----------------------------------------------------------------------------------


def test_root_post_refuses_a_body_that_is_not_json(client: TestClient) -> None:
    response = client.post("/", content=b"not json", headers={"Content-Type": JSON_TYPE})
    error(response, 400, 400)
    error(client.post("/", json=[1, 2]), 400, 400)
    error(client.post("/", json={"a": {"b": 1}}), 400, 400)


def test_root_post_accepts_a_string_map_or_nothing(client: TestClient) -> None:
    assert client.post("/", json={"a": "b", "n": 1}).json() == {}
    assert client.post("/").json() == {}


# ---- Jersey bean validation of @NotNull bodies ----------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "name"),
    [
        ("POST", "/subjects/s/versions", "register.arg5"),
        ("POST", "/subjects/s", "lookUpSchemaUnderSubject.arg5"),
        ("POST", "/compatibility/subjects/s/versions/1", "testCompatibilityBySubjectName.arg4"),
        ("POST", "/compatibility/subjects/s/versions", "testCompatibilityForSubject.arg3"),
        ("PUT", "/config", "updateTopLevelConfig.arg1"),
        ("PUT", "/config/s", "updateSubjectLevelConfig.arg2"),
        ("PUT", "/mode", "updateTopLevelMode.arg1"),
        ("PUT", "/mode/s", "updateMode.arg2"),
    ],
)
@pytest.mark.parametrize("body", [b"", b"null", b" null\n"])
def test_missing_body_is_a_not_null_violation(
    client: TestClient, method: str, path: str, name: str, body: bytes
) -> None:
    response = client.request(method, path, content=body, headers={"Content-Type": JSON_TYPE})
    assert error(response, 422, 422) == f"{name} must not be null"


# ---- the verbose trailer ----------------------------------------------------------------------


@pytest.mark.parametrize("version", ["latest", "1", None])
def test_verbose_trailer_names_the_configured_transitive_level(
    client: TestClient, version: str | None
) -> None:
    old = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
    new = json.dumps({"type": "record", "name": "R", "fields": [{"name": "b", "type": "int"}]})
    assert client.post("/subjects/s/versions", json={"schema": old}).status_code == 200
    client.put("/config/s", json={"compatibility": "BACKWARD_TRANSITIVE"})
    path = "/compatibility/subjects/s/versions" + (f"/{version}" if version else "")
    response = client.post(path, json={"schema": new}, params={"verbose": "true"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["is_compatible"] is False
    assert body["messages"][-1] == "{validateFields: 'false', compatibility: 'BACKWARD_TRANSITIVE'}"


def test_delete_global_mode_exists_in_8x(client: TestClient) -> None:
    """``DELETE /mode`` (Confluent 7.9.5+, 8.0.3+, 8.1.1+): the old mode, back to the default."""
    assert client.put("/mode", json={"mode": "READONLY"}).status_code == 200
    response = client.delete("/mode")
    assert response.status_code == 200, response.text
    assert response.json() == {"mode": "READONLY"}
    assert client.get("/mode").json() == {"mode": "READWRITE"}
