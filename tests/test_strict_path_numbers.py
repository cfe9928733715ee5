"""Path numbers read as Java's ``Integer.parseInt`` reads them (Confluent's path parameters are
Java ints), by the routers and by the auth middleware alike: ``1_0`` is refused (a version:
42202; an id: 404 ``HTTP 404 Not Found``, as for ``2147483648``), ``+1`` and non-ASCII digits are
accepted. A version is trimmed first (Confluent's ``VersionId``), an id is not."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from registry.path_numbers import java_int

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
