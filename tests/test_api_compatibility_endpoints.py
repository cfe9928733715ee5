"""``POST /compatibility/subjects/{s}/versions[/{v}]`` and the seven compatibility levels
end to end through registration, as Confluent 7.9 answers them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient


def schema(*fields: str, defaults: tuple[str, ...] = ()) -> str:
    """Record R with int fields; names in ``defaults`` get ``"default": 0``."""
    out = []
    for name in fields:
        field: dict[str, Any] = {"name": name, "type": "int"}
        if name in defaults:
            field["default"] = 0
        out.append(field)
    return json.dumps({"type": "record", "name": "R", "fields": out})


def canonical(text: str) -> str:
    return json.dumps(json.loads(text), separators=(",", ":"))


def register(client: TestClient, subject: str, text: str) -> Any:
    return client.post(f"/subjects/{subject}/versions", json={"schema": text})


def check(client: TestClient, path: str, text: str, verbose: bool = False) -> Any:
    query = "?verbose=true" if verbose else ""
    return client.post(f"/compatibility/subjects/{path}{query}", json={"schema": text})


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


V1 = schema("a")
ADD_WITH_DEFAULT = schema("a", "b", defaults=("b",))
ADD_WITHOUT_DEFAULT = schema("a", "b")
DROP_A = schema()


def test_compatible_against_one_version(client: TestClient) -> None:
    register(client, "s", V1)
    response = check(client, "s/versions/latest", ADD_WITH_DEFAULT)
    assert (response.status_code, response.json()) == (200, {"is_compatible": True})
    assert check(client, "s/versions/1", ADD_WITH_DEFAULT).json() == {"is_compatible": True}


def test_incompatible_verbose_messages(client: TestClient) -> None:
    register(client, "s", V1)
    assert check(client, "s/versions/latest", ADD_WITHOUT_DEFAULT).json() == {
        "is_compatible": False
    }
    body = check(client, "s/versions/latest", ADD_WITHOUT_DEFAULT, verbose=True).json()
    assert body["is_compatible"] is False
    messages = body["messages"]
    assert messages[0] == (
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path "
        "'/fields/1' in the new schema has no default value and is missing in the old schema', "
        "additionalInfo:'b'}"
    )
    assert messages[1:] == [
        "{oldSchemaVersion: 1}",
        f"{{oldSchema: '{canonical(V1)}'}}",
        "{validateFields: 'false', compatibility: 'BACKWARD'}",
    ]
    ok = check(client, "s/versions", ADD_WITH_DEFAULT, verbose=True).json()
    assert ok == {"is_compatible": True, "messages": []}


def test_nonexistent_subject_is_compatible_with_latest(client: TestClient) -> None:
    response = check(client, "nope/versions/latest", V1)
    assert (response.status_code, response.json()) == (200, {"is_compatible": True})
    assert check(client, "nope/versions", V1).json() == {"is_compatible": True}


def test_missing_explicit_version_is_40402(client: TestClient) -> None:
    register(client, "s", V1)
    assert error(check(client, "s/versions/2", V1), 404, 40402) == "Version 2 not found."


def test_soft_deleted_version_is_not_compared(client: TestClient) -> None:
    register(client, "s", V1)
    register(client, "s", ADD_WITH_DEFAULT)
    client.delete("/subjects/s/versions/1")
    error(check(client, "s/versions/1", V1), 404, 40402)


@pytest.mark.parametrize("version", ["0", "-2", "abc", "2147483648"])
def test_invalid_version_is_42202(client: TestClient, version: str) -> None:
    register(client, "s", V1)
    error(check(client, f"s/versions/{version}", V1), 422, 42202)


def test_invalid_schema(client: TestClient) -> None:
    register(client, "s", V1)
    error(check(client, "s/versions/latest", "{"), 422, 42201)
    verbose = check(client, "s/versions/latest", "{", verbose=True)
    assert verbose.status_code == 200
    body = verbose.json()
    assert body["is_compatible"] is False
    assert len(body["messages"]) == 1
    assert body["messages"][0].startswith("Invalid schema")


def test_transitive_single_version_versus_subject(client: TestClient) -> None:
    """FORWARD_TRANSITIVE: compatible with the latest version, not with version 1."""
    client.put("/config/s", json={"compatibility": "FORWARD_TRANSITIVE"})
    register(client, "s", schema("a"))
    # v2 gives a a default: v1 can read it
    assert register(client, "s", schema("a", defaults=("a",))).status_code == 200
    # without a: v2 reads it (default), v1 cannot (a has no default there)
    candidate = schema("c")
    assert check(client, "s/versions/latest", candidate).json() == {"is_compatible": True}
    assert check(client, "s/versions/2", candidate).json() == {"is_compatible": True}
    assert check(client, "s/versions/1", candidate).json() == {"is_compatible": False}
    assert check(client, "s/versions", candidate).json() == {"is_compatible": False}
    error(register(client, "s", candidate), 409, 409)


def test_incompatible_registration_message(client: TestClient) -> None:
    register(client, "s", V1)
    message = error(register(client, "s", ADD_WITHOUT_DEFAULT), 409, 409)
    assert message.startswith(
        'Schema being registered is incompatible with an earlier schema for subject "s", '
        "details: [{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE'"
    )
    assert "{oldSchemaVersion: 1}" in message
    assert f"{{oldSchema: '{canonical(V1)}'}}" in message
    assert message.endswith("{validateFields: 'false', compatibility: 'BACKWARD'}]")


def test_full_lists_both_directions(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "FULL"})
    register(client, "s", V1)
    body = check(client, "s/versions/latest", schema("b"), verbose=True).json()
    assert body["is_compatible"] is False
    assert body["messages"][-3:] == [
        "{oldSchemaVersion: 1}",
        f"{{oldSchema: '{canonical(V1)}'}}",
        "{validateFields: 'false', compatibility: 'FULL'}",
    ]
    assert len(body["messages"]) >= 5


# ---- the seven levels end to end --------------------------------------------------------

# (level, history, compatible candidate, incompatible candidate)
CASES = [
    ("NONE", [V1], schema("z"), None),
    ("BACKWARD", [V1], ADD_WITH_DEFAULT, ADD_WITHOUT_DEFAULT),
    ("FORWARD", [V1], ADD_WITHOUT_DEFAULT, DROP_A),
    ("FULL", [V1], ADD_WITH_DEFAULT, ADD_WITHOUT_DEFAULT),
    # v1 {a}, v2 {a, b=0}; dropping the default of b is fine against v2, not against v1
    (
        "BACKWARD_TRANSITIVE",
        [V1, ADD_WITH_DEFAULT],
        schema("a", "b", "c", defaults=("b", "c")),
        schema("a", "b", "c", defaults=("c",)),
    ),
    # v1 {a}, v2 {a=0}: dropping a is fine for v2, not for v1
    ("FORWARD_TRANSITIVE", [V1, schema("a", defaults=("a",))], schema("a", "c"), schema("c")),
    (
        "FULL_TRANSITIVE",
        [V1, ADD_WITH_DEFAULT],
        schema("a", "b", "c", defaults=("b", "c")),
        schema("a", "b", "c", defaults=("b",)),
    ),
]


@pytest.mark.parametrize(("level", "history", "good", "bad"), CASES, ids=[c[0] for c in CASES])
def test_level_end_to_end(
    client: TestClient, level: str, history: list[str], good: str, bad: str | None
) -> None:
    client.put("/config/s", json={"compatibility": level})
    for text in history:
        assert register(client, "s", text).status_code == 200
    if bad is not None:
        error(register(client, "s", bad), 409, 409)
        assert check(client, "s/versions", bad).json() == {"is_compatible": False}
    assert check(client, "s/versions", good).json() == {"is_compatible": True}
    response = register(client, "s", good)
    assert response.status_code == 200, response.text
    assert client.get("/subjects/s/versions").json() == list(range(1, len(history) + 2))


def test_transitive_levels_differ_from_their_single_version_level(client: TestClient) -> None:
    """The BACKWARD_TRANSITIVE bad candidate is accepted by plain BACKWARD."""
    client.put("/config/s", json={"compatibility": "BACKWARD"})
    register(client, "s", V1)
    register(client, "s", ADD_WITH_DEFAULT)
    candidate = schema("a", "b", "c", defaults=("c",))
    assert register(client, "s", candidate).status_code == 200
