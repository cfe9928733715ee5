"""``/mode`` and IMPORT: READWRITE, READONLY, READONLY_OVERRIDE and IMPORT as Confluent 7.9
applies them to registration, deletes and config (42204, 42205, 40409)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient


def record(*fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": f, "type": "int"} for f in fields]}
    )


def canonical(schema: str) -> str:
    return json.dumps(json.loads(schema), separators=(",", ":"))


def register(client: TestClient, subject: str, schema: str, **body: Any) -> Any:
    return client.post(f"/subjects/{subject}/versions", json={"schema": schema, **body})


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


def test_global_mode_defaults_to_readwrite(client: TestClient) -> None:
    assert client.get("/mode").json() == {"mode": "READWRITE"}


@pytest.mark.parametrize("mode", ["READONLY", "READONLY_OVERRIDE", "READWRITE", "IMPORT"])
def test_set_and_read_global_mode(client: TestClient, mode: str) -> None:
    response = client.put("/mode", json={"mode": mode})
    assert (response.status_code, response.json()) == (200, {"mode": mode})
    assert client.get("/mode").json() == {"mode": mode}


def test_mode_names_are_case_insensitive(client: TestClient) -> None:
    assert client.put("/mode/s", json={"mode": "readonly"}).status_code == 200
    assert client.get("/mode/s").json() == {"mode": "READONLY"}


@pytest.mark.parametrize("mode", ["WRITEONLY", "", "FORWARD"])
def test_invalid_mode_is_42204(client: TestClient, mode: str) -> None:
    message = error(client.put("/mode", json={"mode": mode}), 422, 42204)
    assert message == "Invalid mode. Valid values are READWRITE, READONLY, and IMPORT."
    error(client.put("/mode/s", json={"mode": mode}), 422, 42204)
    assert client.get("/mode").json() == {"mode": "READWRITE"}


def test_unset_subject_mode_is_40409(client: TestClient) -> None:
    message = error(client.get("/mode/s"), 404, 40409)
    assert message == "Subject 's' does not have subject-level mode configured"
    assert client.get("/mode/s?defaultToGlobal=true").json() == {"mode": "READWRITE"}
    client.put("/mode", json={"mode": "READONLY"})
    assert client.get("/mode/s?defaultToGlobal=true").json() == {"mode": "READONLY"}


def test_delete_subject_mode(client: TestClient) -> None:
    client.put("/mode/s", json={"mode": "READONLY"})
    response = client.delete("/mode/s")
    assert (response.status_code, response.json()) == (200, {"mode": "READONLY"})
    error(client.get("/mode/s"), 404, 40409)
    assert error(client.delete("/mode/s"), 404, 40401) == "Subject 's' not found."


def test_invalid_subject_mode_is_42208(client: TestClient) -> None:
    error(client.put("/mode/bad%09subject", json={"mode": "READONLY"}), 422, 42208)


@pytest.mark.parametrize("mode", ["READONLY", "READONLY_OVERRIDE"])
def test_read_only_blocks_registering_and_deleting(client: TestClient, mode: str) -> None:
    assert register(client, "s", record("a")).json() == {"id": 1}
    client.put("/mode/s", json={"mode": mode})
    message = error(register(client, "s", record("a", "b", "c")), 422, 42205)
    assert message == "Subject s is in read-only mode"
    error(client.delete("/subjects/s/versions/1"), 422, 42205)
    error(client.delete("/subjects/s"), 422, 42205)
    # registering a schema that is already there is a read and still succeeds
    assert register(client, "s", record("a")).json() == {"id": 1}
    assert client.get("/subjects/s/versions").json() == [1]
    # other subjects are not affected by a subject-level mode
    assert register(client, "t", record("a")).json() == {"id": 1}


def test_global_read_only_override_beats_subject_modes(client: TestClient) -> None:
    client.put("/mode/s", json={"mode": "READWRITE"})
    client.put("/mode", json={"mode": "READONLY_OVERRIDE"})
    error(register(client, "s", record("a")), 422, 42205)
    assert client.get("/mode/s").json() == {"mode": "READONLY_OVERRIDE"}


def test_global_read_only_does_not_beat_a_subject_mode(client: TestClient) -> None:
    client.put("/mode/s", json={"mode": "READWRITE"})
    client.put("/mode", json={"mode": "READONLY"})
    assert register(client, "s", record("a")).json() == {"id": 1}
    error(register(client, "t", record("a")), 422, 42205)


def test_import_requires_an_id(client: TestClient) -> None:
    client.put("/mode", json={"mode": "IMPORT"})
    message = error(register(client, "s", record("a")), 422, 42205)
    assert message == "Subject s is not in read-write mode"


def test_import_with_explicit_id_and_version(client: TestClient) -> None:
    client.put("/mode", json={"mode": "IMPORT"})
    response = register(client, "s", record("a"), id=100, version=3)
    assert (response.status_code, response.json()) == (200, {"id": 100})
    # incompatible schemas and arbitrary versions are accepted while importing
    assert register(client, "s", record("b"), id=50, version=1).json() == {"id": 50}
    assert client.get("/subjects/s/versions").json() == [1, 3]
    assert client.get("/subjects/s/versions/3").json() == {
        "subject": "s",
        "version": 3,
        "id": 100,
        "schema": canonical(record("a")),
    }
    client.put("/mode", json={"mode": "READWRITE"})
    # new ids continue after the highest imported one; versions after the highest version
    client.put("/config/s", json={"compatibility": "NONE"})
    assert register(client, "s", record("c")).json() == {"id": 101}
    assert client.get("/subjects/s/versions").json() == [1, 3, 4]


def test_import_rejects_reusing_an_id_for_another_schema(client: TestClient) -> None:
    client.put("/mode", json={"mode": "IMPORT"})
    register(client, "s", record("a"), id=7, version=1)
    message = error(register(client, "t", record("b"), id=7, version=1), 422, 42205)
    assert message == "Overwrite new schema with id 7 is not permitted."
    # the same schema under the same id in another subject is fine
    assert register(client, "t", record("a"), id=7, version=1).json() == {"id": 7}
    # and the same schema under another id too (allowed since 7.2)
    assert register(client, "u", record("a"), id=8, version=1).json() == {"id": 8}


def test_entering_import_needs_no_live_subjects_or_force(client: TestClient) -> None:
    register(client, "s", record("a"))
    message = error(client.put("/mode", json={"mode": "IMPORT"}), 422, 42205)
    assert message == "Cannot import since found existing subjects"
    assert client.get("/mode").json() == {"mode": "READWRITE"}
    forced = client.put("/mode?force=true", json={"mode": "IMPORT"})
    assert (forced.status_code, forced.json()) == (200, {"mode": "IMPORT"})


def test_entering_import_clears_soft_deleted_versions(client: TestClient) -> None:
    register(client, "s", record("a"))
    client.delete("/subjects/s")
    assert client.put("/mode", json={"mode": "IMPORT"}).status_code == 200
    error(client.get("/subjects/s/versions?deleted=true"), 404, 40401)
    # the subject can now be imported with another id for the same schema
    assert register(client, "s", record("a"), id=42, version=1).json() == {"id": 42}


def test_subject_level_import(client: TestClient) -> None:
    register(client, "other", record("a"))
    assert client.put("/mode/s", json={"mode": "IMPORT"}).status_code == 200
    assert register(client, "s", record("z"), id=9, version=1).json() == {"id": 9}
    error(register(client, "other", record("z"), id=10, version=2), 422, 42205)


def test_mode_body_must_be_an_object(client: TestClient) -> None:
    error(client.put("/mode", json=["READONLY"]), 400, 400)
    assert client.get("/mode").json() == {"mode": "READWRITE"}


def test_put_mode_echoes_the_request(client: TestClient) -> None:
    # Confluent returns the ModeUpdateRequest it was given
    assert client.put("/mode", json={"mode": "readonly"}).json() == {"mode": "readonly"}
    assert client.put("/mode/s", json={"mode": "ReadWrite"}).json() == {"mode": "ReadWrite"}
    assert client.get("/mode").json() == {"mode": "READONLY"}
