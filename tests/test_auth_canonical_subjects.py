"""Authorisation is decided on the subject the registry acts on, whatever the spelling: ``x``,
``:.:x``, percent-encodings, a trailing slash, the ``/contexts/{ctx}/...`` form. For every route
and every spelling, a user allowed only elsewhere gets the answer of a missing subject (reads) or
40301 (writes), never the subject itself; and the per-process placeholder used to answer as a
missing subject never shows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import write_users

RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: [ctxuser]
    subjects: [":.*:*"]
    permission: admin
  - principals: [plain]
    subjects: ["other-*"]
    permission: admin
"""
USERS = {"admin": "a", "ctxuser": "c", "plain": "p"}
SCHEMA = '{"type":"record","name":"S","fields":[{"name":"s","type":"string"}]}'
OTHER = '{"type":"record","name":"O","fields":[{"name":"o","type":"int"}]}'


def auth(user: str) -> dict[str, str]:
    import base64

    token = base64.b64encode(f"{user}:{USERS[user]}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("canonical")
    write_users(tmp / "users", USERS)
    (tmp / "rules.yaml").write_text(RULES)
    settings = Settings(
        poll_interval=0, auth_users_file=str(tmp / "users"), auth_rules_file=str(tmp / "rules.yaml")
    )
    reg = Registry(open_store(f"sqlite:///{tmp / 'r.db'}"), settings)
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as test_client:
            for subject in ("secret-a", ":.ctx:secret-c"):
                made = test_client.post(
                    f"/subjects/{subject}/versions", json={"schema": SCHEMA}, headers=auth("admin")
                )
                assert made.status_code == 200, made.text
            yield test_client
    finally:
        reg.stop()


# the default-context subject ``secret-a`` spelled every way the registry reads as it
DEFAULT_SPELLINGS = [
    "/subjects/{}",
    "/subjects/:.:{}",
    "/subjects/%3A.%3A{}",
    "/subjects/:.%3A{}",
    "/contexts/%2E/subjects/{}",
    "/contexts/:.:/subjects/{}",
]
# the ``.ctx`` subject ``secret-c``
CONTEXT_SPELLINGS = [
    "/subjects/:.ctx:{}",
    "/subjects/%3A.ctx%3A{}",
    "/contexts/.ctx/subjects/{}",
    "/contexts/ctx/subjects/{}",
    "/contexts/:.ctx:/subjects/{}",
]
# (method, suffix after the subject, body, is a write)
ROUTES = [
    ("GET", "/versions", None, False),
    ("GET", "/versions/", None, False),
    ("GET", "/versions/1", None, False),
    ("GET", "/versions/1/", None, False),
    ("GET", "/versions/latest/schema", None, False),
    ("GET", "/versions/1/referencedby", None, False),
    ("POST", "", {"schema": SCHEMA}, False),
    ("POST", "/versions", {"schema": OTHER}, True),
    ("DELETE", "/versions/1", None, True),
    ("DELETE", "", None, True),
]
CONFIG_ROUTES = [
    ("GET", "/config/{}", None, False),
    ("PUT", "/config/{}", {"compatibility": "NONE"}, True),
    ("GET", "/mode/{}", None, False),
    ("PUT", "/mode/{}", {"mode": "READONLY"}, True),
    ("POST", "/compatibility/subjects/{}/versions/latest", {"schema": OTHER}, False),
    ("POST", "/compatibility/subjects/{}/versions", {"schema": OTHER}, False),
]


def _config_spellings(spellings: list[str]) -> list[str]:
    # the same subject spellings for /config, /mode and /compatibility routes
    out = []
    for spelling in spellings:
        head, _, _ = spelling.partition("/subjects/")
        out.append(head + "{route}" + spelling.split("/subjects/")[1])
    return out


def _ask(client: TestClient, user: str, method: str, url: str, body: object) -> tuple[int, str]:
    response = client.request(method, url, json=body, headers=auth(user), follow_redirects=False)
    return response.status_code, response.text


def _check(
    client: TestClient, user: str, method: str, url: str, body: object, write: bool, name: str
) -> None:
    status, text = _ask(client, user, method, url.format(name), body)
    assert "hidden-" not in text
    if write:
        assert status == 403, (url, text)
        assert '"error_code":40301' in text
        return
    missing_status, missing_text = _ask(client, user, method, url.format("nosuch-x"), body)
    assert status == missing_status and status != 307, (url, text)
    assert text == missing_text.replace("nosuch-x", name), url


@pytest.mark.parametrize("spelling", DEFAULT_SPELLINGS)
def test_every_spelling_of_a_default_subject_is_hidden_from_a_context_user(
    client: TestClient, spelling: str
) -> None:
    for method, suffix, body, write in ROUTES:
        _check(client, "ctxuser", method, spelling + suffix, body, write, "secret-a")
    for method, route, body, write in CONFIG_ROUTES:
        for url in _config_spellings([spelling]):
            full = url.replace("{route}", route.split("{}")[0]) + route.split("{}")[1]
            _check(client, "ctxuser", method, full, body, write, "secret-a")


@pytest.mark.parametrize("spelling", CONTEXT_SPELLINGS)
def test_every_spelling_of_a_context_subject_is_hidden_from_a_default_user(
    client: TestClient, spelling: str
) -> None:
    for method, suffix, body, write in ROUTES:
        _check(client, "plain", method, spelling + suffix, body, write, "secret-c")


def test_the_owner_reads_through_every_spelling(client: TestClient) -> None:
    for spelling in DEFAULT_SPELLINGS:
        status, text = _ask(
            client, "admin", "GET", spelling.format("secret-a") + "/versions/1/", None
        )
        assert status == 200 and '"subject":"secret-a"' in text, spelling
        # GET /subjects/:.:x/versions used to answer 404 although /versions/1 answered
        listed = _ask(client, "admin", "GET", spelling.format("secret-a") + "/versions", None)
        assert listed == (200, "[1]"), spelling
    for spelling in CONTEXT_SPELLINGS:
        status, text = _ask(client, "admin", "GET", spelling.format("secret-c") + "/versions", None)
        assert (status, text) == (200, "[1]"), spelling


def test_a_subject_named_like_the_placeholder_is_not_served_for_hidden_ones(
    client: TestClient,
) -> None:
    status, text = _ask(client, "plain", "GET", "/subjects/secret-a/versions/1/", None)
    assert status == 404 and "hidden" not in text
