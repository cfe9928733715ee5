"""The web UI shows a subject's history of changes from the audit file (a real browser against
a live server with the file sink on; the other UI tests run without one, where the card is
left out and their pages must raise no JavaScript error)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.conftest import LiveServer
from tests.production_helpers import CONTENT_TYPE
from tests.ui_browser import WAIT_MS, chromium, open_view

expect.set_options(timeout=WAIT_MS)
HEADERS = {"Content-Type": CONTENT_TYPE, "User-Agent": "ui-history-test"}
AVRO = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("audit-ui")
    env = {"SCHEMA_REGISTRY_AUDIT_FILE": str(tmp / "audit.jsonl")}
    srv = LiveServer(f"sqlite:///{tmp / 'ui.db'}", tmp, env)
    srv.start(timeout=120)
    try:
        yield srv
    finally:
        srv.stop()


def test_subject_page_shows_its_history(server: LiveServer) -> None:
    url = server.url
    with httpx.Client(base_url=url, headers=HEADERS, timeout=20) as client:
        assert client.post("/subjects/hist-value/versions", json={"schema": AVRO}).is_success
        assert client.put("/config/hist-value", json={"compatibility": "NOPE"}).status_code == 422
        assert client.put("/config/hist-value", json={"compatibility": "NONE"}).is_success
        assert client.post("/subjects/other/versions", json={"schema": AVRO}).is_success
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        open_view(page, url, "#/subject/hist-value")
        rows = page.locator("[data-history] tbody tr")
        expect(rows).to_have_count(3)
        assert [r.get_attribute("data-operation") for r in rows.all()] == [
            "config.put_subject",
            "config.put_subject",
            "subjects.register",
        ]
        assert [r.get_attribute("data-outcome") for r in rows.all()] == [
            "success",
            "failure",
            "success",
        ]
        expect(rows.nth(1)).to_contain_text("42203")
        expect(rows.nth(2)).to_contain_text("anonymous")
        context.close()
    assert not errors, errors
