"""Path numbers read as Java's ``Integer.parseInt`` reads them (Confluent's path parameters are
Java ints), by the routers and by the auth middleware alike: ``1_0`` is refused (a version:
42202; an id: 404 ``HTTP 404 Not Found``, as for ``2147483648``), ``+1`` and non-ASCII digits are
accepted. A version is trimmed first (Confluent's ``VersionId``), an id is not."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.path_numbers import java_int
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import write_users

SCHEMA = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


@pytest.mark.parametrize(
    ("text", "value"),
    [("1", 1), ("+1", 1), ("-1", -1), ("\u0661", 1), ("2147483647", 2**31 - 1)],
)
def test_java_accepts(text: str, value: int) -> None:
    assert java_int(text) == value


@pytest.mark.parametrize("text", ["1_0", " 1", "1 ", "", "+", "2147483648", "-2147483649", "1.0"])
def test_java_refuses(text: str) -> None:
    assert java_int(text) is None


@pytest.fixture
def registered(client: TestClient) -> TestClient:
    for _ in range(1):
        assert client.post("/subjects/s/versions", json={"schema": SCHEMA}).status_code == 200
    return client


@pytest.mark.parametrize("version", ["1_0", "%201_0", "2147483648", "0x1"])
def test_bad_version_numbers_are_42202(registered: TestClient, version: str) -> None:
    response = registered.get(f"/subjects/s/versions/{version}")
    assert response.status_code == 422
    assert response.json()["error_code"] == 42202


@pytest.mark.parametrize("version", ["+1", "%D9%A1", "%201", "1%20", "%09%2B1"])
def test_java_version_numbers_are_read(registered: TestClient, version: str) -> None:
    assert registered.get(f"/subjects/s/versions/{version}").json()["version"] == 1


@pytest.mark.parametrize("schema_id", ["1_0", "%201", "2147483648", "1%20"])
def test_bad_ids_are_http_404(registered: TestClient, schema_id: str) -> None:
    response = registered.get(f"/schemas/ids/{schema_id}")
    assert response.status_code == 404
    assert response.json() == {"error_code": 404, "message": "HTTP 404 Not Found"}


@pytest.mark.parametrize("schema_id", ["+1", "%D9%A1"])
def test_java_ids_are_read(registered: TestClient, schema_id: str) -> None:
    assert registered.get(f"/schemas/ids/{schema_id}").status_code == 200


# ---- the auth middleware reads the same numbers --------------------------------------------

RULES = """
rules:
  - principals: [owner]
    subjects: ["s"]
    permission: read
  - principals: [stranger]
    subjects: ["t"]
    permission: read
"""


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[TestClient]:
    write_users(tmp_path / "users", {"admin": "a", "owner": "o", "stranger": "s"})
    (tmp_path / "rules.yaml").write_text(RULES + "  - principals: [admin]\n    permission: admin\n")
    settings = Settings(
        poll_interval=0,
        auth_users_file=str(tmp_path / "users"),
        auth_rules_file=str(tmp_path / "rules.yaml"),
    )
    reg = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), settings)
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as client:
            made = client.post(
                "/subjects/s/versions", json={"schema": SCHEMA}, headers=_who("admin")
            )
            assert made.status_code == 200, made.text
            yield client
    finally:
        reg.stop()


def _who(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{user[0]}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


NOT_FOUND = {"error_code": 404, "message": "HTTP 404 Not Found"}
HIDDEN_ID = {"error_code": 40403, "message": "Schema 1 not found"}


@pytest.mark.parametrize(
    ("user", "path", "status", "body"),
    [
        ("owner", "/subjects/s/versions/+1", 200, None),
        ("owner", "/subjects/s/versions/%D9%A1", 200, None),
        ("owner", "/schemas/ids/+1", 200, None),
        ("owner", "/schemas/ids/%201", 404, NOT_FOUND),
        ("owner", "/schemas/ids/1_0", 404, NOT_FOUND),
        ("stranger", "/schemas/ids/+1", 404, HIDDEN_ID),
        ("stranger", "/schemas/ids/%D9%A1", 404, HIDDEN_ID),
        # not a number for the router: not one the middleware hides either
        ("stranger", "/schemas/ids/%201", 404, NOT_FOUND),
        ("stranger", "/schemas/ids/1%20", 404, NOT_FOUND),
        ("admin", "/schemas/ids/%201", 404, NOT_FOUND),
    ],
)
def test_the_auth_middleware_reads_path_numbers_as_the_routers_do(
    guarded: TestClient, user: str, path: str, status: int, body: dict[str, object] | None
) -> None:
    response = guarded.get(path, headers=_who(user))
    assert response.status_code == status, response.text
    if body is not None:
        assert response.json() == body
