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
KEKS = "/dek-registry/v1/keks"
KEK = {"name": "k1", "kmsType": "local-kms", "kmsKeyId": "key1"}
MATERIAL = "d3JhcHBlZA=="


def association(subject: str, topic: str) -> dict[str, object]:
    return {
        "resourceName": topic,
        "resourceNamespace": "ns",
        "resourceId": topic + "-id",
        "resourceType": "topic",
        "associations": [{"subject": subject, "associationType": "value"}],
    }


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
            admin = auth("admin")
            made = test_client.post(KEKS, json=KEK, headers=admin)
            assert made.status_code == 200, made.text
            for n, subject in enumerate(("secret-a", ":.ctx:secret-c")):
                for path, body in (
                    (f"/subjects/{subject}/versions", {"schema": SCHEMA}),
                    (f"{KEKS}/k1/deks/{subject}", {"encryptedKeyMaterial": MATERIAL}),
                    ("/associations", association(subject, f"topic-{n}")),
                ):
                    made = test_client.post(path, json=body, headers=admin)
                    assert made.status_code == 200, made.text
            made = test_client.put("/config/other-alias", json={"alias": "secret-a"}, headers=admin)
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


# ---- every route that names a subject, the 8.x ones included -------------------------------

# (context part, subject part): the default-context subject spelled every way
DEFAULT_FORMS = [
    ("", "{}"),
    ("", ":.:{}"),
    ("", "%3A.%3A{}"),
    ("", ":.%3A{}"),
    ("/contexts/%2E", "{}"),
    ("/contexts/:.:", "{}"),
]
CONTEXT_FORMS = [
    ("", ":.ctx:{}"),
    ("", "%3A.ctx%3A{}"),
    ("/contexts/.ctx", "{}"),
    ("/contexts/ctx", "{}"),
    ("/contexts/:.ctx:", "{}"),
]
DEK = "/dek-registry/v1/keks/k1/deks/{s}"
MISSING_A = '{"error_code":40401,"message":"Subject \'secret-a\' not found."}'
TAGS = {"tagsToAdd": [{"entityType": "SR_FIELD", "entityPath": "S.s", "tags": ["PII"]}]}
# (method, template with {ctx} and {s}, body, is a write)
ALL_ROUTES = [
    ("GET", "{ctx}/subjects/{s}/versions", None, False),
    ("GET", "{ctx}/subjects/{s}/versions/1/", None, False),
    ("GET", "{ctx}/subjects/{s}/versions/latest/schema", None, False),
    ("GET", "{ctx}/subjects/{s}/versions/1/referencedby", None, False),
    ("GET", "{ctx}/subjects/{s}/metadata", None, False),
    ("POST", "{ctx}/subjects/{s}", {"schema": SCHEMA}, False),
    ("POST", "{ctx}/subjects/{s}/versions", {"schema": OTHER}, True),
    ("POST", "{ctx}/subjects/{s}/versions/1/tags", TAGS, True),
    ("DELETE", "{ctx}/subjects/{s}/versions/1", None, True),
    ("DELETE", "{ctx}/subjects/{s}", None, True),
    ("GET", "{ctx}/config/{s}", None, False),
    ("PUT", "{ctx}/config/{s}", {"compatibility": "NONE"}, True),
    ("DELETE", "{ctx}/config/{s}", None, True),
    ("GET", "{ctx}/mode/{s}", None, False),
    ("PUT", "{ctx}/mode/{s}", {"mode": "READONLY"}, True),
    ("DELETE", "{ctx}/mode/{s}", None, True),
    ("POST", "{ctx}/compatibility/subjects/{s}/versions/latest", {"schema": OTHER}, False),
    ("POST", "{ctx}/compatibility/subjects/{s}/versions/1", {"schema": OTHER}, False),
    ("POST", "{ctx}/compatibility/subjects/{s}/versions", {"schema": OTHER}, False),
    ("GET", "{ctx}/associations/subjects/{s}", None, False),
    ("GET", "{ctx}" + DEK, None, False),
    ("GET", "{ctx}" + DEK + "/versions", None, False),
    ("GET", "{ctx}" + DEK + "/versions/1", None, False),
    ("GET", "{ctx}" + DEK + "/versions/latest", None, False),
    ("POST", "{ctx}" + DEK, {"encryptedKeyMaterial": MATERIAL, "version": 2}, True),
    ("DELETE", "{ctx}" + DEK, None, True),
    ("DELETE", "{ctx}" + DEK + "/versions/1", None, True),
    ("POST", "{ctx}" + DEK + "/undelete", None, True),
    ("POST", "{ctx}" + DEK + "/versions/1/undelete", None, True),
]
# what the owner reads through each spelling (so each spelling does name the subject)
OWNER_READS = [
    ("{ctx}/subjects/{s}/versions", "[1]"),
    ("{ctx}/subjects/{s}/metadata", '"version":1'),
    ("{ctx}/config/{s}", "40408"),  # no config of its own: the subject is the one looked up
    ("{ctx}/associations/subjects/{s}", '"associationType":"value"'),
    ("{ctx}" + DEK, '"version":1'),
    ("{ctx}" + DEK + "/versions", "[1]"),
]


def _url(template: str, form: tuple[str, str], name: str) -> str:
    return template.replace("{ctx}", form[0]).replace("{s}", form[1].format(name))


@pytest.mark.parametrize(("user", "name", "forms"), [
    ("ctxuser", "secret-a", DEFAULT_FORMS),
    ("plain", "secret-c", CONTEXT_FORMS),
])  # fmt: skip
@pytest.mark.parametrize("route", ALL_ROUTES, ids=lambda r: f"{r[0]} {r[1]}")
def test_every_route_and_spelling_answers_as_for_a_missing_subject(
    client: TestClient, user: str, name: str, forms: list[tuple[str, str]], route: tuple
) -> None:
    method, template, body, write = route
    for form in forms:
        _check(client, user, method, _url(template, form, "{}"), body, write, name)


@pytest.mark.parametrize(
    ("name", "forms"), [("secret-a", DEFAULT_FORMS), ("secret-c", CONTEXT_FORMS)]
)
def test_each_spelling_names_the_subject_for_its_owner(
    client: TestClient, name: str, forms: list[tuple[str, str]]
) -> None:
    for template, expected in OWNER_READS:
        for form in forms:
            status, text = _ask(client, "admin", "GET", _url(template, form, name), None)
            assert expected in text, (_url(template, form, name), status, text)


@pytest.mark.parametrize("query", ["{}", ":.:{}", "%3A.%3A{}"])
def test_schema_by_id_for_a_hidden_subject_answers_as_for_a_missing_one(
    client: TestClient, query: str
) -> None:
    for prefix in ("", "/contexts/%2E"):
        url = prefix + "/schemas/ids/1?subject=" + query
        status, text = _ask(client, "ctxuser", "GET", url.format("secret-a"), None)
        missing = _ask(client, "ctxuser", "GET", url.format("nosuch-x"), None)
        assert (status, text) == (missing[0], missing[1].replace("nosuch-x", "secret-a")), url


@pytest.mark.parametrize("form", DEFAULT_FORMS)
def test_an_alias_spelled_any_way_does_not_open_its_target(
    client: TestClient, form: tuple[str, str]
) -> None:
    # plain may do anything to other-*; other-alias stands for secret-a, which it may not read
    # (the alias's target is no secret: plain reads it in /config/other-alias)
    for template in ("{ctx}/subjects/{s}/versions/1", "{ctx}/subjects/{s}/versions"):
        status, text = _ask(client, "plain", "GET", _url(template, form, "other-alias"), None)
        assert (status, text) == (404, MISSING_A), _url(template, form, "other-alias")
    written = _ask(
        client, "plain", "POST", _url("{ctx}/subjects/{s}/versions", form, "other-alias"),
        {"schema": OTHER},
    )  # fmt: skip
    assert written[0] == 403, written
