"""What a request without Confluent's client headers gets: self-managed Confluent Platform 8.x's
entities (``guid``, ``schemaType`` for Avro, ``ts``, ``deleted``) by default; Confluent Cloud's
gating on ``Confluent-Accept-Unknown-Properties`` / ``Confluent-Client-Version`` with the
setting ``v8_fields_by_header`` (issue 25, "Response shapes for every client")."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.cli import main
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.conftest import CONTENT_TYPE

AVRO = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
V8_FIELDS = {"guid", "schemaType", "ts", "deleted"}


def serve(sqlite_url: str, settings: Settings) -> Iterator[TestClient]:
    reg = Registry(open_store(sqlite_url), settings)
    reg.start()
    try:
        app = create_app(reg, manage_lifecycle=False)
        with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as test_client:
            yield test_client
    finally:
        reg.stop()


@pytest.fixture
def plain(sqlite_url: str) -> Iterator[TestClient]:
    """A registry with the default settings (Confluent Platform 8.x's shapes)."""
    yield from serve(sqlite_url, Settings(poll_interval=0))


@pytest.fixture
def gated(sqlite_url: str) -> Iterator[TestClient]:
    """A registry with ``v8_fields_by_header`` on (Confluent Cloud's shapes)."""
    yield from serve(sqlite_url, Settings(poll_interval=0, v8_fields_by_header=True))


def test_plain_requests_get_confluent_platform_8_entities(plain: TestClient) -> None:
    client = plain
    assert client.post("/subjects/s/versions", json={"schema": AVRO}).status_code == 200
    by_id = client.get("/schemas/ids/1").json()
    assert set(by_id) >= V8_FIELDS, by_id
    assert by_id["schemaType"] == "AVRO" and by_id["deleted"] is False
    version = client.get("/subjects/s/versions/1").json()
    assert set(version) >= V8_FIELDS, version
    assert version["guid"] == by_id["guid"]
    assert client.get(f"/schemas/guids/{by_id['guid']}").json()["schemaType"] == "AVRO"
    listed = client.get("/schemas").json()
    assert set(listed[0]) >= V8_FIELDS, listed
    found = client.post("/subjects/s", json={"schema": AVRO}).json()
    assert set(found) >= V8_FIELDS, found
    again = client.post("/subjects/s/versions", json={"schema": AVRO}).json()
    assert again["id"] == 1 and again["guid"] == by_id["guid"], again


def test_header_gating_as_a_setting(gated: TestClient) -> None:
    assert gated.post("/subjects/s/versions", json={"schema": AVRO}).json() == {"id": 1}
    plain = gated.get("/schemas/ids/1").json()
    assert not V8_FIELDS & set(plain), plain
    for header in (
        {"Confluent-Accept-Unknown-Properties": "true"},
        {"Confluent-Client-Version": "python/2.11.1"},
    ):
        asked = gated.get("/schemas/ids/1", headers=header).json()
        assert set(asked) >= V8_FIELDS, asked


def test_the_setting_from_the_environment_and_the_serve_flag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings.from_env({}).v8_fields_by_header is False
    env = {"SCHEMA_REGISTRY_V8_FIELDS_BY_HEADER": "true"}
    assert Settings.from_env(env).v8_fields_by_header is True
    seen: list[Settings] = []
    monkeypatch.setattr("registry.cli.serve_forever", lambda s: seen.append(s) or 0)
    monkeypatch.setattr("registry.logging_setup.configure", lambda *args: None)
    assert main(["serve", "--v8-fields-by-header"]) == 0
    assert seen[0].v8_fields_by_header is True
