"""``/config``: global and subject compatibility configuration as Confluent 7.9 serves it
(GET answers ``compatibilityLevel``, PUT takes and echoes ``compatibility``)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

LEVELS = [
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
]
INVALID_LEVEL = (
    "Invalid compatibility level. Valid values are none, backward, forward, full, "
    "backward_transitive, forward_transitive, and full_transitive"
)


def record(*fields: str) -> str:
    return json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": f, "type": "int"} for f in fields]}
    )


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


def test_global_default_is_backward(client: TestClient) -> None:
    response = client.get("/config")
    assert (response.status_code, response.json()) == (200, {"compatibilityLevel": "BACKWARD"})


@pytest.mark.parametrize("level", LEVELS)
def test_put_global_level_echoes_the_request(client: TestClient, level: str) -> None:
    response = client.put("/config", json={"compatibility": level})
    assert (response.status_code, response.json()) == (200, {"compatibility": level})
    assert client.get("/config").json() == {"compatibilityLevel": level}


def test_level_names_are_case_insensitive(client: TestClient) -> None:
    response = client.put("/config", json={"compatibility": "full_transitive"})
    assert response.status_code == 200
    assert client.get("/config").json() == {"compatibilityLevel": "FULL_TRANSITIVE"}


@pytest.mark.parametrize("level", ["SIDEWAYS", "", 3])
def test_invalid_level_is_42203(client: TestClient, level: object) -> None:
    assert error(client.put("/config", json={"compatibility": level}), 422, 42203) == (
        INVALID_LEVEL
    )
    assert error(client.put("/config/s", json={"compatibility": level}), 422, 42203) == (
        INVALID_LEVEL
    )
    assert client.get("/config").json() == {"compatibilityLevel": "BACKWARD"}
    error(client.get("/config/s"), 404, 40408)


def test_compatibility_level_name_in_a_put_is_ignored(client: TestClient) -> None:
    # ConfigUpdateRequest names the level "compatibility"; unknown fields are ignored
    response = client.put("/config", json={"compatibilityLevel": "FULL"})
    assert response.status_code == 200
    assert client.get("/config").json() == {"compatibilityLevel": "BACKWARD"}


def test_subject_config_unset_is_40408(client: TestClient) -> None:
    message = error(client.get("/config/s"), 404, 40408)
    assert message == "Subject 's' does not have subject-level compatibility configured"


def test_subject_config_for_a_subject_without_schemas(client: TestClient) -> None:
    response = client.put("/config/nothing-here", json={"compatibility": "FORWARD"})
    assert (response.status_code, response.json()) == (200, {"compatibility": "FORWARD"})
    assert client.get("/config/nothing-here").json() == {"compatibilityLevel": "FORWARD"}
    # the global level is untouched
    assert client.get("/config").json() == {"compatibilityLevel": "BACKWARD"}


def test_default_to_global(client: TestClient) -> None:
    client.put("/config", json={"compatibility": "FULL"})
    assert client.get("/config/s?defaultToGlobal=true").json() == {"compatibilityLevel": "FULL"}
    client.put("/config/s", json={"compatibility": "NONE"})
    assert client.get("/config/s?defaultToGlobal=true").json() == {"compatibilityLevel": "NONE"}


def test_partial_update_keeps_other_fields(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "FULL", "normalize": True})
    response = client.put("/config/s", json={"compatibilityGroup": "major"})
    # Confluent 8.x answers the config now stored, not the request
    assert response.json() == {
        "normalize": True,
        "compatibility": "FULL",
        "compatibilityGroup": "major",
    }
    assert client.get("/config/s").json() == {
        "compatibilityLevel": "FULL",
        "normalize": True,
        "compatibilityGroup": "major",
    }


def test_null_fields_keep_the_stored_value(client: TestClient) -> None:
    # Confluent 7.9 merges field by field and cannot tell null from absent
    client.put("/config/s", json={"compatibility": "FULL", "normalize": True})
    response = client.put("/config/s", json={"compatibility": None, "normalize": False})
    assert response.json() == {"normalize": False, "compatibility": "FULL"}
    assert client.get("/config/s").json() == {"compatibilityLevel": "FULL", "normalize": False}


def test_subject_config_without_level_reads_the_default_level(client: TestClient) -> None:
    client.put("/config", json={"compatibility": "FULL"})
    client.put("/config/s", json={"normalize": True})
    # a subject record without a level is completed with the server default, not the global one
    assert client.get("/config/s").json() == {"compatibilityLevel": "BACKWARD", "normalize": True}


def test_delete_subject_config_returns_the_previous_one(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "FULL"})
    response = client.delete("/config/s")
    assert (response.status_code, response.json()) == (200, {"compatibilityLevel": "FULL"})
    error(client.get("/config/s"), 404, 40408)
    # none left: 40401, not 40408
    assert error(client.delete("/config/s"), 404, 40401) == "Subject 's' not found."


def test_delete_global_config(client: TestClient) -> None:
    assert client.delete("/config").json() == {"compatibilityLevel": "BACKWARD"}
    client.put("/config", json={"compatibility": "NONE"})
    assert client.delete("/config").json() == {"compatibilityLevel": "NONE"}
    assert client.get("/config").json() == {"compatibilityLevel": "BACKWARD"}


def test_subject_config_decides_registration(client: TestClient) -> None:
    assert client.post("/subjects/s/versions", json={"schema": record("a")}).status_code == 200
    refused = client.post("/subjects/s/versions", json={"schema": record("b")})
    error(refused, 409, 409)
    client.put("/config/s", json={"compatibility": "NONE"})
    assert client.post("/subjects/s/versions", json={"schema": record("b")}).json() == {"id": 2}
    # another subject still uses the global BACKWARD
    client.post("/subjects/t/versions", json={"schema": record("a")})
    error(client.post("/subjects/t/versions", json={"schema": record("b")}), 409, 409)


def test_invalid_subject_in_config_is_42208(client: TestClient) -> None:
    response = client.put("/config/bad%0Asubject", json={"compatibility": "FULL"})
    assert error(response, 422, 42208) == "The specified subject 'bad\nsubject' is not a valid."


def test_config_body_must_be_an_object(client: TestClient) -> None:
    error(client.put("/config", json=["FULL"]), 400, 400)
    error(client.put("/config", json={"normalize": "yes"}), 400, 400)
    assert client.get("/config").json() == {"compatibilityLevel": "BACKWARD"}


def test_read_only_subject_refuses_config_changes(client: TestClient) -> None:
    client.put("/mode/s", json={"mode": "READONLY"})
    message = error(client.put("/config/s", json={"compatibility": "FULL"}), 422, 42205)
    assert message == "Subject s is in read-only mode"
    error(client.get("/config/s"), 404, 40408)


def test_global_read_only_refuses_global_config_changes(client: TestClient) -> None:
    client.put("/mode", json={"mode": "READONLY"})
    message = error(client.put("/config", json={"compatibility": "FULL"}), 422, 42205)
    assert message == "Subject null is in read-only mode"
    assert client.get("/config").json() == {"compatibilityLevel": "BACKWARD"}


def test_a_subject_config_takes_some_fields_from_the_global_one(client: TestClient) -> None:
    # Confluent's Config.mergeConfigs (every line since June 2026; 7.9.0 inherited nothing):
    # normalize, validateFields, validateNewSchemas, validateRules, compatibilityPolicy and
    # compatibilityGroup fall back to the global record; the level and the rest do not
    client.put(
        "/config",
        json={"compatibility": "FULL", "validateFields": True, "alias": "x", "normalize": True},
    )
    client.put("/config/s", json={"compatibility": "BACKWARD", "normalize": False})
    assert client.get("/config/s?defaultToGlobal=true").json() == {
        "normalize": False,
        "validateFields": True,
        "compatibilityLevel": "BACKWARD",
    }
    assert client.get("/config/s").json() == {"normalize": False, "compatibilityLevel": "BACKWARD"}
    # the compatibility trailer shows the config in force for each subject
    for subject, trailer in (
        ("s", "{validateFields: 'true', compatibility: 'BACKWARD'}"),
        ("t", "{validateFields: 'true', compatibility: 'FULL'}"),
    ):
        client.post(f"/subjects/{subject}/versions", json={"schema": record("a")})
        check = client.post(
            f"/compatibility/subjects/{subject}/versions?verbose=true",
            json={"schema": record("b")},
        )
        assert check.json()["messages"][-1] == trailer


def test_context_subjects_use_the_context_config_not_the_global_one(client: TestClient) -> None:
    client.put("/config", json={"compatibility": "NONE"})
    assert client.get("/config/:.ctx:s?defaultToGlobal=true").json() == {
        "compatibilityLevel": "BACKWARD"
    }
    client.put("/config/:.ctx:", json={"compatibility": "FULL"})
    assert client.get("/config/:.ctx:s?defaultToGlobal=true").json() == {
        "compatibilityLevel": "FULL"
    }
