"""Soft and permanent deletes of versions and subjects: results, every error code in
Confluent 7.9's order (40401, 40402, 40404-40407, 42202, 42205) and what deletes leave behind."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient


def record(name: str, *fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": name, "fields": [{"name": f, "type": "int"} for f in fields]}
    )


A, B, C = record("R", "a"), record("R", "b"), record("R", "c")


def register(client: TestClient, subject: str, schema: str) -> dict[str, Any]:
    response = client.post(f"/subjects/{subject}/versions", json={"schema": schema})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


@pytest.fixture
def two(client: TestClient) -> TestClient:
    """Subject ``test`` with versions 1 (id 1) and 2 (id 2)."""
    client.put("/config", json={"compatibility": "NONE"})
    register(client, "test", A)
    register(client, "test", B)
    return client


# ---- versions ---------------------------------------------------------------------------


def test_soft_delete_version_then_reads(two: TestClient) -> None:
    client = two
    response = client.delete("/subjects/test/versions/2")
    assert (response.status_code, response.json()) == (200, 2)
    assert client.get("/subjects/test/versions").json() == [1]
    error(client.get("/subjects/test/versions/2"), 404, 40402)
    error(client.post("/subjects/test", json={"schema": B}), 404, 40403)
    # the id still resolves
    assert client.get("/schemas/ids/2").status_code == 200
    assert client.delete("/subjects/test/versions/latest").json() == 1
    error(client.get("/subjects/test/versions"), 404, 40401)
    # registering again continues the version sequence, twice gives the same answer
    for _ in range(2):
        assert register(client, "test", A) == {"id": 1}
        assert client.get("/subjects/test/versions").json() == [3]


def test_soft_delete_twice_is_40406(two: TestClient) -> None:
    client = two
    client.delete("/subjects/test/versions/2")
    message = error(client.delete("/subjects/test/versions/2"), 404, 40406)
    assert message == (
        "Subject 'test' Version 2 was soft deleted.Set permanent=true to delete permanently"
    )


def test_permanent_delete_needs_a_soft_delete_first(two: TestClient) -> None:
    client = two
    message = error(client.delete("/subjects/test/versions/2?permanent=true"), 404, 40407)
    assert message == (
        "Subject 'test' Version 2 was not deleted first before being permanently deleted"
    )
    assert client.get("/subjects/test/versions").json() == [1, 2]


def test_permanent_delete_version_lifecycle(two: TestClient) -> None:
    client = two
    assert client.delete("/subjects/test/versions/2").json() == 2
    assert client.get("/subjects/test/versions?deleted=true").json() == [1, 2]
    assert client.get("/subjects/test/versions/2?deleted=true").json()["version"] == 2
    assert client.delete("/subjects/test/versions/2?permanent=true").json() == 2
    error(client.get("/subjects/test/versions/2?deleted=true"), 404, 40402)
    assert client.get("/subjects/test/versions?deleted=true").json() == [1]
    # deleting it again: the version is gone
    message = error(client.delete("/subjects/test/versions/2?permanent=true"), 404, 40402)
    assert message == "Version 2 not found."
    # the id is gone with its only holder
    error(client.get("/schemas/ids/2"), 404, 40403)
    assert client.delete("/subjects/test/versions/latest").json() == 1
    # after v2 was hard-deleted and v1 soft-deleted the next version is 2 again
    for _ in range(2):
        assert register(client, "test", A) == {"id": 1}
        assert client.get("/subjects/test/versions").json() == [2]


def test_delete_version_of_missing_subject_is_40401(client: TestClient) -> None:
    message = error(client.delete("/subjects/test/versions/1"), 404, 40401)
    assert message == "Subject 'test' not found."
    error(client.delete("/subjects/test/versions/latest"), 404, 40401)


def test_delete_missing_version_is_40402(two: TestClient) -> None:
    assert error(two.delete("/subjects/test/versions/7"), 404, 40402) == "Version 7 not found."


@pytest.mark.parametrize("version", ["0", "-2", "abc", "2147483648"])
def test_delete_invalid_version_is_42202(two: TestClient, version: str) -> None:
    message = error(two.delete(f"/subjects/test/versions/{version}"), 422, 42202)
    assert f"'{version}' is not a valid version id" in message
    assert two.get("/subjects/test/versions").json() == [1, 2]


def test_delete_latest_uses_latest_live_version(two: TestClient) -> None:
    client = two
    assert client.delete("/subjects/test/versions/latest").json() == 2
    assert client.get("/subjects/test/versions/latest").json()["schema"] == json.dumps(
        json.loads(A), separators=(",", ":")
    )
    assert client.delete("/subjects/test/versions/-1").json() == 1
    # nothing live is left: "latest" does not resolve
    error(client.delete("/subjects/test/versions/latest"), 404, 40402)


def test_read_only_mode_blocks_version_deletes(two: TestClient) -> None:
    client = two
    assert client.put("/mode/test", json={"mode": "READONLY"}).status_code == 200
    message = error(client.delete("/subjects/test/versions/2"), 422, 42205)
    assert message == "Subject test is in read-only mode"
    # read-only is checked before "not soft-deleted first"
    error(client.delete("/subjects/test/versions/2?permanent=true"), 422, 42205)
    assert client.get("/subjects/test/versions").json() == [1, 2]


def test_soft_deleting_the_last_live_version_keeps_subject_config_and_mode(
    client: TestClient,
) -> None:
    # Confluent 8.x (and the 7.9.x/8.0.x patch releases): only a permanent delete drops them
    register(client, "test", A)
    client.put("/config/test", json={"compatibility": "FULL"})
    client.put("/mode/test", json={"mode": "READWRITE"})
    assert client.delete("/subjects/test/versions/1").json() == 1
    assert client.get("/config/test").json() == {"compatibilityLevel": "FULL"}
    assert client.get("/mode/test").json() == {"mode": "READWRITE"}
    assert client.delete("/subjects/test/versions/1?permanent=true").json() == 1
    error(client.get("/config/test"), 404, 40408)
    error(client.get("/mode/test"), 404, 40409)


def test_soft_deleting_one_of_two_versions_keeps_subject_config(two: TestClient) -> None:
    client = two
    client.put("/config/test", json={"compatibility": "FULL"})
    client.delete("/subjects/test/versions/1")
    assert client.get("/config/test").json() == {"compatibilityLevel": "FULL"}


# ---- subjects ---------------------------------------------------------------------------


def test_soft_delete_subject(two: TestClient) -> None:
    client = two
    response = client.delete("/subjects/test")
    assert (response.status_code, response.json()) == (200, [1, 2])
    assert client.get("/subjects").json() == []
    error(client.get("/subjects/test/versions"), 404, 40401)
    error(client.get("/subjects/test/versions/latest"), 404, 40401)
    assert client.get("/subjects/test/versions/1?deleted=true").status_code == 200


def test_soft_delete_subject_twice_is_40404(two: TestClient) -> None:
    client = two
    client.delete("/subjects/test")
    message = error(client.delete("/subjects/test"), 404, 40404)
    assert message == ("Subject 'test' was soft deleted.Set permanent=true to delete permanently")


def test_delete_missing_subject_is_40401(client: TestClient) -> None:
    assert error(client.delete("/subjects/nope"), 404, 40401) == "Subject 'nope' not found."
    error(client.delete("/subjects/nope?permanent=true"), 404, 40401)


def test_permanent_subject_delete_needs_a_soft_delete_first(two: TestClient) -> None:
    client = two
    message = error(client.delete("/subjects/test?permanent=true"), 404, 40405)
    assert message == "Subject 'test' was not deleted first before being permanently deleted"
    # one soft-deleted version is not enough
    client.delete("/subjects/test/versions/1")
    error(client.delete("/subjects/test?permanent=true"), 404, 40405)
    assert client.get("/subjects/test/versions").json() == [2]


def test_permanent_subject_delete(two: TestClient) -> None:
    client = two
    assert client.delete("/subjects/test").json() == [1, 2]
    assert client.delete("/subjects/test?permanent=true").json() == [1, 2]
    error(client.get("/subjects/test/versions?deleted=true"), 404, 40401)
    assert client.get("/subjects?deleted=true").json() == []
    error(client.get("/schemas/ids/1"), 404, 40403)
    error(client.delete("/subjects/test?permanent=true"), 404, 40401)


def test_permanent_delete_frees_nothing_of_the_id_sequence(two: TestClient) -> None:
    client = two
    client.delete("/subjects/test")
    client.delete("/subjects/test?permanent=true")
    # the texts come back with fresh ids, the versions start over
    assert register(client, "test", C) == {"id": 3}
    assert register(client, "test", A) == {"id": 4}
    assert client.get("/subjects/test/versions").json() == [1, 2]


def test_reregistering_after_subject_soft_delete_continues_versions(two: TestClient) -> None:
    client = two
    client.delete("/subjects/test")
    # soft-deleted schemas keep their ids
    assert register(client, "test", A) == {"id": 1}
    assert register(client, "test", B) == {"id": 2}
    assert client.get("/subjects/test/versions").json() == [3, 4]
    # registering an id again tombstones the older soft-deleted versions holding it
    assert client.get("/subjects/test/versions?deleted=true").json() == [3, 4]


def test_only_a_permanent_subject_delete_drops_its_config_and_mode(two: TestClient) -> None:
    client = two
    client.put("/config/test", json={"compatibility": "FULL"})
    client.put("/mode/test", json={"mode": "READWRITE"})
    client.delete("/subjects/test")
    assert client.get("/config/test").json() == {"compatibilityLevel": "FULL"}
    assert client.get("/mode/test").json() == {"mode": "READWRITE"}
    client.delete("/subjects/test?permanent=true")
    error(client.get("/config/test"), 404, 40408)
    error(client.get("/mode/test"), 404, 40409)


def test_read_only_mode_blocks_subject_deletes(two: TestClient) -> None:
    client = two
    client.put("/mode", json={"mode": "READONLY"})
    message = error(client.delete("/subjects/test"), 422, 42205)
    assert message == "Subject test is in read-only mode"
    client.put("/mode", json={"mode": "READWRITE"})
    client.delete("/subjects/test")
    client.put("/mode", json={"mode": "READONLY"})
    error(client.delete("/subjects/test?permanent=true"), 422, 42205)
    assert client.get("/subjects/test/versions?deleted=true").json() == [1, 2]


def test_soft_deleted_versions_are_skipped_by_compatibility(two: TestClient) -> None:
    client = two
    client.put("/config", json={"compatibility": "BACKWARD"})
    # version 2 has field b only; a schema with field a only is incompatible with it
    incompatible = client.post("/subjects/test/versions", json={"schema": C})
    error(incompatible, 409, 409)
    client.delete("/subjects/test/versions/2")
    client.delete("/subjects/test/versions/1")
    # nothing live is left: anything registers
    assert register(client, "test", C) == {"id": 3}
