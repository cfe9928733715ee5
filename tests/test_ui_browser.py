"""The web UI in a real browser (Debian's Chromium via Playwright) against a live registry:
register through the UI, the field-level diff of two versions, an incompatible change refused
with its reason, a deep link opening the right view, keyboard navigation, a restricted user not
seeing a hidden subject, and the overview on a Kafka store."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from registry import reads
from registry.core import Registry
from registry.identity import guid_of
from registry.settings import Settings
from registry.store.factory import open_store
from tests.conftest import LiveServer, free_port
from tests.production_helpers import (
    CONTENT_TYPE,
    Server,
    Signer,
    settled_leader,
    write_users,
)
from tests.ui_browser import WAIT_MS, chromium, open_view, wait_view

expect.set_options(timeout=WAIT_MS)
HEADERS = {"Content-Type": CONTENT_TYPE}


def record(fields: list[dict[str, object]], name: str = "Order") -> str:
    return json.dumps({"type": "record", "name": name, "fields": fields})


V1 = record(
    [
        {"name": "id", "type": "long"},
        {"name": "note", "type": "string", "default": "x"},
        {"name": "old", "type": "int", "default": 0},
        {"name": "qty", "type": "int"},
    ]
)
V2 = record(
    [
        {"name": "id", "type": "long"},
        {"name": "note", "type": "string", "default": "y"},
        {"name": "qty", "type": "long"},
        {"name": "added", "type": "string", "default": ""},
    ]
)


def register(
    url: str, subject: str, schema: str, auth: tuple[str, str] | None = None, **kw: object
) -> int:
    r = httpx.post(
        f"{url}/subjects/{subject}/versions",
        json={"schema": schema, **kw},
        headers=HEADERS,
        auth=auth,
        timeout=20,
    )
    assert r.status_code == 200, r.text
    return int(r.json()["id"])


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("ui")
    srv = LiveServer(f"sqlite:///{tmp / 'ui.db'}", tmp)
    srv.start(timeout=120)  # several suites may be starting servers on a loaded machine
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield pg
    finally:
        context.close()
    assert not errors, f"JavaScript errors: {errors}"


def set_schema(page: Page, text: str) -> None:
    page.fill("textarea[name=schema]", text)


def test_register_through_the_ui(server: LiveServer, page: Page) -> None:
    open_view(page, server.url, "#/new")
    page.fill("input[name=subject]", "ui-new-value")
    set_schema(page, record([{"name": "a", "type": "int"}], "New"))
    expect(page.locator("#check")).to_have_attribute("data-verdict", "compatible")
    page.click("#register")
    page.click("#confirm-yes")
    result = page.locator("#result")
    expect(result).to_have_attribute("data-registered", re.compile(r"^\d+$"))
    got = httpx.get(f"{server.url}/subjects/ui-new-value/versions/latest", timeout=20).json()
    assert result.get_attribute("data-registered") == str(got["id"])
    assert json.loads(got["schema"])["name"] == "New"
    # the link in the answer opens the new version
    page.click("#result a")
    wait_view(page, "#/subject/ui-new-value/v/1")
    expect(page.locator("[data-id]")).to_have_text(str(got["id"]))


def test_diff_marks_each_changed_field_and_gives_the_verdict(
    server: LiveServer, page: Page
) -> None:
    httpx.put(
        f"{server.url}/config/ui-diff-value", json={"compatibility": "NONE"}, headers=HEADERS
    ).raise_for_status()
    register(server.url, "ui-diff-value", V1)
    register(server.url, "ui-diff-value", V2)
    httpx.put(
        f"{server.url}/config/ui-diff-value", json={"compatibility": "BACKWARD"}, headers=HEADERS
    ).raise_for_status()
    open_view(page, server.url, "#/subject/ui-diff-value/diff/1/2")
    changes = {
        row.get_attribute("data-field"): row.get_attribute("data-change")
        for row in page.locator("table.fields tbody tr").all()
    }
    assert changes == {
        "id": "same",
        "note": "default",
        "old": "removed",
        "qty": "type",
        "added": "added",
    }
    # the changed lines are marked in the side-by-side texts
    right = page.locator(".side-by-side .card").nth(1)
    expect(right.locator(".ln.m-added")).to_contain_text('"added"')
    expect(page.locator(".side-by-side .card").first.locator(".ln.m-removed")).to_contain_text(
        '"old"'
    )
    # int -> long is a promotion a BACKWARD reader accepts: compatible at the subject's level
    verdict = page.locator("[data-verdict]")
    expect(verdict).to_have_attribute("data-verdict", "compatible")
    expect(verdict).to_contain_text("BACKWARD")
    # and the other way round is not, with the reason in words
    page.select_option("select[name=a]", "2")
    page.select_option("select[name=b]", "1")
    wait_view(page, "#/subject/ui-diff-value/diff/2/1")
    expect(page.locator("[data-verdict]")).to_have_attribute("data-verdict", "incompatible")
    expect(page.locator(".reasons")).to_contain_text("qty")


def test_incompatible_change_is_refused_with_its_reason(server: LiveServer, page: Page) -> None:
    register(server.url, "ui-strict-value", record([{"name": "a", "type": "int"}], "S"))
    open_view(page, server.url, "#/subject/ui-strict-value/try")
    expect(page.locator("#check")).to_have_attribute("data-verdict", "compatible")
    # a new field without a default: a BACKWARD reader cannot read the old data
    set_schema(
        page,
        json.dumps(
            {
                "type": "record",
                "name": "S",
                "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}],
            },
            indent=2,
        ),
    )
    check = page.locator("#check")
    expect(check).to_have_attribute("data-verdict", "incompatible")
    expect(check).to_contain_text("'b'")
    # the reason is mapped to the line declaring the field
    marked = page.locator("#preview .ln.m-bad")
    expect(marked).to_have_count(1)
    expect(marked).to_contain_text('"b"')
    page.click("#register")
    page.click("#confirm-yes")
    result = page.locator("#result")
    expect(result).to_have_attribute("data-refused", "409")
    expect(result).to_contain_text("incompatible")
    versions = httpx.get(f"{server.url}/subjects/ui-strict-value/versions", timeout=20).json()
    assert versions == [1]


def test_protobuf_reason_is_marked_on_the_field_it_names(server: LiveServer, page: Page) -> None:
    old = 'syntax = "proto3";\nmessage Order {\n  string id = 1;\n  int32 qty = 2;\n}\n'
    register(server.url, "ui-proto-reason-value", old, schemaType="PROTOBUF")
    open_view(page, server.url, "#/subject/ui-proto-reason-value/try")
    # field 2 changes from int32 to string: the reason's path is '#/Order/2'
    set_schema(page, old.replace("int32 qty = 2;", "string qty = 2;"))
    check = page.locator("#check")
    expect(check).to_have_attribute("data-verdict", "incompatible")
    marked = page.locator("#preview .ln.m-bad")
    expect(marked).to_have_count(1)
    expect(marked).to_contain_text("qty = 2")


def test_deep_link_opens_the_version_and_keys_move_between_versions(
    server: LiveServer, page: Page
) -> None:
    first = register(server.url, "ui-link-value", record([{"name": "a", "type": "int"}], "L"))
    second = register(
        server.url,
        "ui-link-value",
        record([{"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 1}], "L"),
    )
    open_view(page, server.url, "#/subject/ui-link-value/v/1")
    expect(page.locator("[data-id]")).to_have_text(str(first))
    guid = httpx.get(
        f"{server.url}/subjects/ui-link-value/versions/1",
        headers={"Confluent-Accept-Unknown-Properties": "true"},
    ).json()["guid"]
    expect(page.locator("[data-guid]")).to_have_text(guid)
    expect(page.locator(".timeline [aria-current=page]")).to_have_text("v1")
    page.keyboard.press("]")
    wait_view(page, "#/subject/ui-link-value/v/2")
    expect(page.locator("[data-id]")).to_have_text(str(second))
    # the subjects list: "/" focuses the search; typing filters, Enter on a row opens it
    open_view(page, server.url, "#/")
    page.keyboard.press("Escape")  # out of the search box the view focuses
    page.keyboard.press("/")
    page.keyboard.type("ui-link")
    wait_view(page, "#/subjects?q=ui-link")
    expect(page.locator("table.subjects tbody tr")).to_have_count(1)
    row = page.locator("table.subjects tbody tr").first
    expect(row.locator("td").nth(2)).to_have_text("v2")
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    wait_view(page, "#/subject/ui-link-value")
    expect(page.locator("[data-id]")).to_have_text(str(second))


def test_lookup_by_id_lists_the_subjects_using_it(server: LiveServer, page: Page) -> None:
    schema_id = register(server.url, "ui-look-a", record([{"name": "z", "type": "int"}], "Z"))
    register(server.url, "ui-look-b", record([{"name": "z", "type": "int"}], "Z"))
    open_view(page, server.url, f"#/lookup?id={schema_id}")
    found = page.locator("[data-found] .refs")
    expect(found).to_contain_text("ui-look-a v1")
    expect(found).to_contain_text("ui-look-b v1")


RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: [dev]
    subjects: ["orders-*"]
    permission: write
  - principals: [viewer]
    permission: read
"""


SIGNER = Signer("ui")
ISSUER, AUDIENCE = "https://issuer.test", "schema-registry"


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("ui-auth")
    write_users(tmp / "users", {"admin": "a", "dev": "d", "viewer": "v"})
    (tmp / "rules.yaml").write_text(RULES)
    (tmp / "keys.pem").write_bytes(SIGNER.public_pem())
    env = {
        "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(tmp / "users"),
        "SCHEMA_REGISTRY_AUTH_RULES_FILE": str(tmp / "rules.yaml"),
        "SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE": str(tmp / "keys.pem"),
        "SCHEMA_REGISTRY_AUTH_JWT_ISSUER": ISSUER,
        "SCHEMA_REGISTRY_AUTH_JWT_AUDIENCE": AUDIENCE,
    }
    srv = Server(tmp, env).start(timeout=120)  # a loaded machine may start it slowly
    try:
        for subject in ("orders-value", "secret-value"):
            register(srv.url, subject, record([{"name": "a", "type": "int"}]), auth=("admin", "a"))
        yield srv
    finally:
        srv.stop()


def test_restricted_user_does_not_see_a_hidden_subject(auth_server: Server, page: Page) -> None:
    # the UI's files need no credentials; its data calls do
    assert httpx.get(auth_server.url + "/ui/app.js", timeout=20).status_code == 200
    assert httpx.get(auth_server.url + "/subjects", timeout=20).status_code == 401
    open_view(page, auth_server.url, "#/")
    expect(page.locator("#view")).to_contain_text("Sign in needed")
    open_view(page, auth_server.url, "#/login")
    page.fill("#basic input[name=user]", "dev")
    page.fill("#basic input[name=password]", "d")
    page.click("#basic button[type=submit]")
    wait_view(page, "#/")
    subjects = page.locator("table.subjects tbody tr")
    expect(subjects).to_have_count(1)
    expect(subjects.first).to_have_attribute("data-subject", "orders-value")
    # a shared link to the hidden subject answers as for a missing one
    open_view(page, auth_server.url, "#/subject/secret-value")
    expect(page.locator("#view")).to_contain_text("Subject 'secret-value' not found")
    expect(page.locator("#view")).not_to_contain_text('"name": "a"')
    # a wrong password is refused
    open_view(page, auth_server.url, "#/login")
    page.fill("#basic input[name=user]", "dev")
    page.fill("#basic input[name=password]", "wrong")
    page.click("#basic button[type=submit]")
    expect(page.locator("#login-result")).to_contain_text("Refused")


def test_pasted_bearer_token_sees_what_its_principal_may_read(
    auth_server: Server, page: Page
) -> None:
    token = SIGNER.token({"iss": ISSUER, "aud": AUDIENCE, "sub": "dev"})
    open_view(page, auth_server.url, "#/login")
    page.fill("#bearer textarea[name=token]", token)
    page.click("#bearer button[type=submit]")
    wait_view(page, "#/")
    expect(page.locator("#who")).to_have_text("token")
    assert subjects_shown(page) == ["orders-value"]
    # a write it may not do is not offered: the Register button is disabled, saying why
    open_view(page, auth_server.url, "#/new")
    page.fill("input[name=subject]", "secret-value")
    expect(page.locator("#register")).to_be_disabled()
    expect(page.locator("#write-note")).to_contain_text("may not register schemas")


def test_overview_on_a_kafka_store_names_the_leader(
    kafka_url: str, tmp_path: Path, page: Page
) -> None:
    server = LiveServer(kafka_url, tmp_path)
    server.start(timeout=120)
    try:
        settled_leader([server], lambda s: httpx.get(s.url + "/ready", timeout=20).json())
        register(server.url, "ui-kafka-value", record([{"name": "a", "type": "int"}]))
        register(
            server.url,
            "ui-kafka-proto",
            'syntax = "proto3";\nmessage M { int32 a = 1; }\n',
            schemaType="PROTOBUF",
        )
        open_view(page, server.url, "#/overview")
        expect(page.locator("[data-readiness]")).to_have_attribute("data-readiness", "true")
        expect(page.locator("[data-leader]")).to_contain_text(server.url)
        expect(page.locator("[data-leader]")).to_contain_text("this instance")
        expect(page.locator("[data-counts=Format] tr[data-key=AVRO] td").nth(1)).to_have_text("1")
        expect(page.locator("[data-counts=Format] tr[data-key=PROTOBUF] td").nth(1)).to_have_text(
            "1"
        )
    finally:
        server.stop()


def field_changes(page: Page) -> dict[str | None, str | None]:
    return {
        row.get_attribute("data-field"): row.get_attribute("data-change")
        for row in page.locator("table.fields tbody tr").all()
    }


PROTO_V1 = """syntax = "proto3";
package shop;

message Payment {
  string id = 1;
  int64 amount = 2;
  string legacy = 3;
  message Card { string number = 1; }
  Card card = 4;
}
"""
PROTO_V2 = """syntax = "proto3";
package shop;

message Payment {
  string id = 1;
  string amount = 2;
  message Card { string number = 1; int32 expiry = 2; }
  Card card = 4;
  repeated string tags = 5;
}
"""
JSON_V1 = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "age": {"type": "integer", "default": 0},
        "gone": {"type": "string"},
    },
}
JSON_V2 = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "age": {"type": "integer", "default": 18},
        "email": {"type": "string", "format": "email"},
    },
}


def test_overview_shows_each_exporter_its_state_lag_and_last_error(
    server: LiveServer, page: Page
) -> None:
    register(server.url, "ui-exported-value", record([{"name": "e", "type": "int"}]))
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens: the exporter is in ERROR
    body = {"name": "ui-dr", "contextType": "NONE", "config": {"schema.registry.url": dead}}
    created = httpx.post(f"{server.url}/exporters", json=body, headers=HEADERS, timeout=20)
    assert created.status_code == 200, created.text
    try:
        open_view(page, server.url, "#/overview")
        row = page.locator("[data-exporters] tr[data-exporter=ui-dr]")
        for _ in range(40):  # the overview shows the state when it is drawn: draw it again
            if row.locator("[data-state]").get_attribute("data-state") == "ERROR":
                break
            page.wait_for_timeout(250)
            page.reload()
        expect(row.locator("[data-state]")).to_have_attribute("data-state", "ERROR")
        expect(row.locator("[data-trace]")).to_contain_text(dead.removeprefix("http://"))
        expect(row.locator("[data-lag]")).to_have_text(re.compile(r"^\d+"))
    finally:
        httpx.delete(f"{server.url}/exporters/ui-dr", timeout=20)


def test_diff_marks_fields_of_protobuf_and_json_schema(server: LiveServer, page: Page) -> None:
    for subject, kind, v1, v2 in [
        ("ui-proto-value", "PROTOBUF", PROTO_V1, PROTO_V2),
        ("ui-json-value", "JSON", json.dumps(JSON_V1), json.dumps(JSON_V2)),
    ]:
        httpx.put(
            f"{server.url}/config/{subject}", json={"compatibility": "NONE"}, headers=HEADERS
        ).raise_for_status()
        register(server.url, subject, v1, schemaType=kind)
        register(server.url, subject, v2, schemaType=kind)
    open_view(page, server.url, "#/subject/ui-proto-value/diff/1/2")
    assert field_changes(page) == {
        "Payment.id": "same",
        "Payment.amount": "type",
        "Payment.legacy": "removed",
        "Payment.Card.number": "same",
        "Payment.card": "same",
        "Payment.Card.expiry": "added",
        "Payment.tags": "added",
    }
    expect(page.locator("[data-verdict]")).to_have_attribute("data-verdict", "compatible")
    expect(page.locator(".side-by-side .card").nth(1).locator(".ln.m-type")).to_contain_text(
        "string amount = 2"
    )
    open_view(page, server.url, "#/subject/ui-json-value/diff/1/2")
    assert field_changes(page) == {
        "id": "same",
        "age": "default",
        "gone": "removed",
        "email": "added",
    }


def test_references_are_links_both_ways(server: LiveServer, page: Page) -> None:
    money = record([{"name": "units", "type": "long"}], "Money")
    register(server.url, "ui-money", money)
    uses = record([{"name": "total", "type": "Money"}], "Bill")
    register(
        server.url,
        "ui-bill-value",
        uses,
        references=[{"name": "Money", "subject": "ui-money", "version": 1}],
    )
    open_view(page, server.url, "#/subject/ui-money")
    users = page.locator("[data-referenced-by] a")
    expect(users).to_have_text(["ui-bill-value v1"])
    users.first.click()
    wait_view(page, "#/subject/ui-bill-value/v/1")
    page.locator(".refs a", has_text="ui-money v1").click()
    wait_view(page, "#/subject/ui-money/v/1")


def subjects_shown(page: Page) -> list[str | None]:
    return [
        row.get_attribute("data-subject") for row in page.locator("table.subjects tbody tr").all()
    ]


def test_subjects_filter_by_format_context_and_soft_deleted(server: LiveServer, page: Page) -> None:
    register(server.url, "uif-avro", record([{"name": "a", "type": "int"}], "FA"))
    register(
        server.url,
        "uif-proto",
        'syntax = "proto3";\nmessage FP { int32 a = 1; }\n',
        schemaType="PROTOBUF",
    )
    register(server.url, ":.uifctx:uif-ctx", record([{"name": "a", "type": "int"}], "FC"))
    register(server.url, "uif-gone", record([{"name": "a", "type": "int"}], "FG"))
    httpx.delete(f"{server.url}/subjects/uif-gone", timeout=20).raise_for_status()
    open_view(page, server.url, "#/subjects?q=uif")
    expect(page.locator("table.subjects tbody tr")).to_have_count(3)
    assert sorted(subjects_shown(page)) == [":.uifctx:uif-ctx", "uif-avro", "uif-proto"]
    page.select_option("select[name=format]", "PROTOBUF")
    wait_view(page, "#/subjects?q=uif&format=PROTOBUF")
    assert subjects_shown(page) == ["uif-proto"]
    open_view(page, server.url, "#/subjects?q=uif&ctx=.uifctx")
    assert subjects_shown(page) == [":.uifctx:uif-ctx"]
    open_view(page, server.url, "#/subjects?q=uif&format=AVRO")
    assert sorted(subjects_shown(page)) == [":.uifctx:uif-ctx", "uif-avro"]
    open_view(page, server.url, "#/subjects?q=uif-g")
    expect(page.locator("#view")).to_contain_text("No subject matches")
    page.check("input[name=deleted]")
    wait_view(page, "#/subjects?q=uif-g&deleted=1")
    assert subjects_shown(page) == ["uif-gone"]
    expect(page.locator("tr[data-subject=uif-gone] .badge.del")).to_have_text("deleted")


def test_config_saved_from_the_ui(server: LiveServer, page: Page) -> None:
    register(server.url, "uic-value", record([{"name": "a", "type": "int"}], "C"))
    open_view(page, server.url, "#/config")
    page.fill("#subject input[name=subject]", "uic-value")
    page.select_option("#subject select[name=level]", "FULL")
    page.click("#subject button[type=submit]")
    expect(page.locator("#subject-saved")).to_have_text("Saved.")
    got = httpx.get(f"{server.url}/config/uic-value", timeout=20).json()
    assert got["compatibilityLevel"] == "FULL"
    open_view(page, server.url, "#/subject/uic-value")
    expect(page.locator("[data-level]")).to_have_text("FULL")


def test_lookup_by_guid(server: LiveServer, page: Page) -> None:
    schema_id = register(server.url, "ui-guid-value", record([{"name": "g", "type": "int"}], "G"))
    # the API gives a schema's GUID only to a lookup by GUID: read it from the store
    settings = Settings(store=server.store)
    reg = Registry(open_store(settings.store), settings)
    reg.start()
    try:
        guid = guid_of(reads.get_version(reg, "ui-guid-value", 1).digest)
    finally:
        reg.stop()
    open_view(page, server.url, "#/lookup")
    page.fill("input[name=key]", guid)
    page.keyboard.press("Enter")
    wait_view(page, f"#/lookup?guid={guid}")
    found = page.locator("[data-found]")
    expect(found).to_contain_text(f"Ids: {schema_id}")
    expect(found.locator(".refs")).to_contain_text("ui-guid-value v1")
    expect(found.locator(".code")).to_contain_text('"name": "g"')


def test_readable_on_a_phone(server: LiveServer, browser: Browser) -> None:
    httpx.put(
        f"{server.url}/config/ui-phone-value", json={"compatibility": "NONE"}, headers=HEADERS
    ).raise_for_status()
    register(server.url, "ui-phone-value", V1)
    register(server.url, "ui-phone-value", V2)
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = context.new_page()
        for hash_ in ["#/", "#/subject/ui-phone-value", "#/subject/ui-phone-value/diff/1/2"]:
            open_view(page, server.url, hash_)
            # nothing wider than the screen: the two sides of the diff stack up
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, (hash_, width)
        sides = page.locator(".side-by-side .card")
        first, second = sides.nth(0).bounding_box(), sides.nth(1).bounding_box()
        assert first is not None and second is not None
        assert second["y"] > first["y"] + first["height"] - 1
        # and the keys reach every view: g then o opens the overview
        page.keyboard.press("g")
        page.keyboard.press("o")
        wait_view(page, "#/overview")
    finally:
        context.close()


def sign_in(page: Page, url: str, user: str, password: str) -> None:
    open_view(page, url, "#/login")
    page.fill("#basic input[name=user]", user)
    page.fill("#basic input[name=password]", password)
    page.click("#basic button[type=submit]")
    wait_view(page, "#/")


def test_write_controls_follow_the_users_rights(auth_server: Server, page: Page) -> None:
    register_button, note = page.locator("#register"), page.locator("#write-note")
    # a read-only user: Register and both Save buttons disabled, saying why
    sign_in(page, auth_server.url, "viewer", "v")
    open_view(page, auth_server.url, "#/subject/orders-value/try")
    expect(register_button).to_be_disabled()
    expect(note).to_contain_text("your user may not register schemas under 'orders-value'")
    open_view(page, auth_server.url, "#/config")
    expect(page.locator("#save-global")).to_be_disabled()
    expect(page.locator("#global-note")).to_contain_text("may not change the global config")
    expect(page.locator("#save-subject")).to_be_disabled()
    # a writer of orders-*: Register there, not elsewhere; config changes are for admins
    sign_in(page, auth_server.url, "dev", "d")
    open_view(page, auth_server.url, "#/subject/orders-value/try")
    expect(register_button).to_be_enabled()
    expect(note).to_be_hidden()
    open_view(page, auth_server.url, "#/new")
    page.fill("input[name=subject]", "secret-value")
    expect(register_button).to_be_disabled()
    page.fill("input[name=subject]", "orders-other")
    expect(register_button).to_be_enabled()
    open_view(page, auth_server.url, "#/config")
    expect(page.locator("#save-global")).to_be_disabled()
    # an admin: everything
    sign_in(page, auth_server.url, "admin", "a")
    open_view(page, auth_server.url, "#/config")
    expect(page.locator("#save-global")).to_be_enabled()
    expect(page.locator("#save-subject")).to_be_enabled()
    # the probes stored nothing
    listed = httpx.get(auth_server.url + "/subjects", auth=("admin", "a"), timeout=20).json()
    assert sorted(listed) == ["orders-value", "secret-value"]
    config = httpx.get(auth_server.url + "/config", auth=("admin", "a"), timeout=20).json()
    assert config["compatibilityLevel"] == "BACKWARD"


def test_register_is_disabled_for_a_subject_in_readonly_mode(
    server: LiveServer, page: Page
) -> None:
    register(server.url, "ui-ro-value", record([{"name": "a", "type": "int"}], "Ro"))
    register(server.url, "ui-rw-value", record([{"name": "a", "type": "int"}], "Rw"))
    made = httpx.put(
        f"{server.url}/mode/ui-ro-value", json={"mode": "READONLY"}, headers=HEADERS, timeout=20
    )
    assert made.status_code == 200, made.text
    open_view(page, server.url, "#/subject/ui-ro-value/try")
    expect(page.locator("#register")).to_be_disabled()
    expect(page.locator("#write-note")).to_contain_text("'ui-ro-value' is in READONLY mode")
    open_view(page, server.url, "#/subject/ui-rw-value/try")
    expect(page.locator("#register")).to_be_enabled()
