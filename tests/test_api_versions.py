"""Listing subjects and versions and reading one version, with Confluent 7.9's filters,
version-id parsing (42202) and not-found codes (40401, 40402)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient


def record(name: str, *fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": f, "type": "int"} for f in fields]}
    )


def canonical(schema: str) -> str:
    return json.dumps(json.loads(schema), separators=(",", ":"))


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
def three_versions(client: TestClient) -> TestClient:
    """Subject ``s`` with versions 1..3 (ids 1..3); level NONE so anything registers."""
    client.put("/config/s", json={"compatibility": "NONE"})
    for field in ("a", "b", "c"):
        register(client, "s", record("R", field))
    return client


# ---- GET /subjects ----------------------------------------------------------------------


def test_subjects_are_sorted_and_filtered(client: TestClient) -> None:
    assert client.get("/subjects").json() == []
    for subject in ("b", "a", "ab", "c"):
        register(client, subject, record("R", "x"))
    assert client.get("/subjects").json() == ["a", "ab", "b", "c"]
    assert client.get("/subjects?subjectPrefix=a").json() == ["a", "ab"]
    assert client.get("/subjects?subjectPrefix=zz").json() == []
    assert client.get("/subjects?offset=1&limit=2").json() == ["ab", "b"]
    assert client.get("/subjects?offset=3").json() == ["c"]
    assert client.get("/subjects?limit=0").json() == ["a", "ab", "b", "c"]


def test_subjects_deleted_and_deleted_only(client: TestClient) -> None:
    register(client, "live", record("R", "x"))
    register(client, "gone", record("R", "x"))
    assert client.delete("/subjects/gone").json() == [1]
    assert client.get("/subjects").json() == ["live"]
    assert client.get("/subjects?deleted=true").json() == ["gone", "live"]
    assert client.get("/subjects?deletedOnly=true").json() == ["gone"]
    # deletedOnly wins over deleted
    assert client.get("/subjects?deleted=true&deletedOnly=true").json() == ["gone"]


def test_a_subject_with_one_live_version_is_not_deleted(three_versions: TestClient) -> None:
    client = three_versions
    client.delete("/subjects/s/versions/1")
    assert client.get("/subjects").json() == ["s"]
    assert client.get("/subjects?deletedOnly=true").json() == []


def test_subjects_lists_qualified_names_of_every_context(client: TestClient) -> None:
    register(client, "a", record("R", "x"))
    register(client, ":.ctx:b", record("R", "x"))
    assert client.get("/subjects").json() == [":.ctx:b", "a"]
    assert client.get("/subjects?subjectPrefix=:.ctx:").json() == [":.ctx:b"]


# ---- GET /subjects/{s}/versions ---------------------------------------------------------


def test_versions_of_a_missing_subject_are_40401(client: TestClient) -> None:
    message = error(client.get("/subjects/nope/versions"), 404, 40401)
    assert message == "Subject 'nope' not found."


def test_versions_with_deleted_filters(three_versions: TestClient) -> None:
    client = three_versions
    assert client.delete("/subjects/s/versions/2").json() == 2
    assert client.get("/subjects/s/versions").json() == [1, 3]
    assert client.get("/subjects/s/versions?deleted=true").json() == [1, 2, 3]
    assert client.get("/subjects/s/versions?deletedOnly=true").json() == [2]
    assert client.get("/subjects/s/versions?deletedAsNegative=true").json() == [1, -2, 3]
    assert client.get("/subjects/s/versions?offset=1&limit=1").json() == [3]


def test_deleted_only_of_a_subject_without_deleted_versions_is_empty(
    three_versions: TestClient,
) -> None:
    assert three_versions.get("/subjects/s/versions?deletedOnly=true").json() == []


def test_fully_soft_deleted_subject_needs_deleted_to_list(three_versions: TestClient) -> None:
    client = three_versions
    assert client.delete("/subjects/s").json() == [1, 2, 3]
    error(client.get("/subjects/s/versions"), 404, 40401)
    assert client.get("/subjects/s/versions?deleted=true").json() == [1, 2, 3]
    assert client.get("/subjects/s/versions?deletedOnly=true").json() == [1, 2, 3]


# ---- GET /subjects/{s}/versions/{v} -----------------------------------------------------


def test_get_version_body(three_versions: TestClient) -> None:
    body = three_versions.get("/subjects/s/versions/2").json()
    assert body == {"subject": "s", "version": 2, "id": 2, "schema": canonical(record("R", "b"))}


@pytest.mark.parametrize("latest", ["latest", "LATEST", " latest ", "-1"])
def test_latest_and_minus_one(three_versions: TestClient, latest: str) -> None:
    response = three_versions.get(f"/subjects/s/versions/{latest}")
    assert response.status_code == 200
    assert response.json()["version"] == 3


@pytest.mark.parametrize("version", ["0", "-2", "abc", "2147483648", "1.5"])
def test_invalid_version_ids_are_42202(three_versions: TestClient, version: str) -> None:
    message = error(three_versions.get(f"/subjects/s/versions/{version}"), 422, 42202)
    assert message == (
        f"The specified version '{version}' is not a valid version id. Allowed values are "
        'between [1, 2^31-1] and the string "latest"'
    )


def test_largest_version_id_is_valid_but_missing(three_versions: TestClient) -> None:
    message = error(three_versions.get("/subjects/s/versions/2147483647"), 404, 40402)
    assert message == "Version 2147483647 not found."


def test_missing_subject_is_40401_before_the_version(client: TestClient) -> None:
    assert error(client.get("/subjects/nope/versions/1"), 404, 40401) == (
        "Subject 'nope' not found."
    )
    error(client.get("/subjects/nope/versions/latest"), 404, 40401)
    # an invalid version id is rejected first
    error(client.get("/subjects/nope/versions/0"), 422, 42202)


def test_missing_version_is_40402(three_versions: TestClient) -> None:
    assert error(three_versions.get("/subjects/s/versions/4"), 404, 40402) == (
        "Version 4 not found."
    )


def test_soft_deleted_version_needs_deleted_true(three_versions: TestClient) -> None:
    client = three_versions
    client.delete("/subjects/s/versions/2")
    assert error(client.get("/subjects/s/versions/2"), 404, 40402) == "Version 2 not found."
    found = client.get("/subjects/s/versions/2?deleted=true")
    assert found.status_code == 200
    assert found.json() == {
        "subject": "s",
        "version": 2,
        "id": 2,
        "schema": canonical(record("R", "b")),
    }
    assert client.get("/subjects/s/versions/2/schema?deleted=true").status_code == 200
    error(client.get("/subjects/s/versions/2/schema"), 404, 40402)


def test_latest_skips_soft_deleted_versions(three_versions: TestClient) -> None:
    client = three_versions
    client.delete("/subjects/s/versions/3")
    assert client.get("/subjects/s/versions/latest").json()["version"] == 2
    # even with deleted=true "latest" means the latest live version
    assert client.get("/subjects/s/versions/latest?deleted=true").json()["version"] == 2


def test_latest_of_a_fully_soft_deleted_subject(three_versions: TestClient) -> None:
    client = three_versions
    client.delete("/subjects/s")
    error(client.get("/subjects/s/versions/latest"), 404, 40401)
    assert error(client.get("/subjects/s/versions/latest?deleted=true"), 404, 40402) == (
        "Version -1 not found."
    )
    assert client.get("/subjects/s/versions/1?deleted=true").json()["version"] == 1


def test_raw_schema_text(three_versions: TestClient) -> None:
    client = three_versions
    response = client.get("/subjects/s/versions/1/schema")
    assert response.status_code == 200
    assert response.text == canonical(record("R", "a"))
    assert response.headers["content-type"].startswith("application/vnd.schemaregistry.v1+json")
    assert client.get("/subjects/s/versions/latest/schema").text == canonical(record("R", "c"))
    error(client.get("/subjects/s/versions/9/schema"), 404, 40402)
    error(client.get("/subjects/nope/versions/1/schema"), 404, 40401)
    error(client.get("/subjects/s/versions/x/schema"), 422, 42202)


def test_empty_subject_prefix_matches_every_context(client: TestClient) -> None:
    register(client, "a", record("R", "x"))
    register(client, ":.ctx:b", record("R", "x"))
    # Confluent scans keys starting with the prefix: "" is every subject
    assert client.get("/subjects?subjectPrefix=").json() == [":.ctx:b", "a"]
    assert client.get("/subjects?subjectPrefix=:*:").json() == [":.ctx:b", "a"]
