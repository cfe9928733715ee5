"""Per-subject authorisation: read/write/admin rules on subject patterns, hidden subjects that
answer exactly as missing ones (existence does not leak), filtered listings, 40301 for denied
writes, admin-only global config and mode, rules reloaded when the file changes."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.auth.middleware import GLOBAL, GUID, SCHEMA_ID, SUBJECT, need_of
from registry.auth.rules import Permission, parse_rules
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import CONTENT_TYPE, Server, running, write_users

RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: [dev]
    subjects: ["orders-*", ":.ctx:orders-*"]
    permission: write
  - principals: [dev, "svc-*"]
    subjects: ["shared-*"]
    permission: read
  - principals: [owner]
    subjects: ["orders-*"]
    permission: admin
"""
USERS = {"admin": "a", "dev": "d", "owner": "o", "svc-billing": "s", "nobody": "n"}
PAY = '{"type":"record","name":"Pay","fields":[{"name":"p","type":"long"}]}'
SHARED = '{"type":"record","name":"Shared","fields":[{"name":"s","type":"string"}]}'
ORDER = '{"type":"record","name":"Order","fields":[{"name":"o","type":"int"}]}'


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    write_users(tmp_path / "users", USERS)
    (tmp_path / "rules.yaml").write_text(RULES)
    return {"users": tmp_path / "users", "rules": tmp_path / "rules.yaml", "tmp": tmp_path}


@pytest.fixture
def app_client(files: dict[str, Path]) -> Iterator[TestClient]:
    settings = Settings(
        poll_interval=0,
        auth_users_file=str(files["users"]),
        auth_rules_file=str(files["rules"]),
    )
    reg = Registry(open_store(f"sqlite:///{files['tmp'] / 'r.db'}"), settings)
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as client:
            as_admin = as_user("admin")
            for subject, schema in [
                ("pay-value", PAY),
                ("pay/value", PAY),
                (":.ctx:pay-value", PAY),
                ("orders-value", ORDER),
                ("shared-value", SHARED),
                ("pay-shared", SHARED),
            ]:
                response = client.post(
                    f"/subjects/{subject.replace('/', '%2F')}/versions",
                    json={"schema": schema},
                    headers=as_admin,
                )
                assert response.status_code == 200, response.text
            assert (
                client.put(
                    "/config/pay-value", json={"compatibility": "NONE"}, headers=as_admin
                ).status_code
                == 200
            )
            assert (
                client.put(
                    "/mode/pay-value", json={"mode": "READONLY"}, headers=as_admin
                ).status_code
                == 200
            )
            yield client
    finally:
        reg.stop()


def as_user(name: str) -> dict[str, str]:
    import base64

    token = base64.b64encode(f"{name}:{USERS[name]}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": CONTENT_TYPE}


def ids(client: TestClient, subject: str) -> int:
    response = client.get(
        f"/subjects/{subject.replace('/', '%2F')}/versions/1", headers=as_user("admin")
    )
    return int(response.json()["id"])


READS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/subjects/{s}/versions", None),
    ("GET", "/subjects/{s}/versions?deleted=true", None),
    ("GET", "/subjects/{s}/versions/1", None),
    ("GET", "/subjects/{s}/versions/latest", None),
    ("GET", "/subjects/{s}/versions/1/schema", None),
    ("GET", "/subjects/{s}/versions/1/referencedby", None),
    ("GET", "/subjects/{s}/metadata", None),
    ("POST", "/subjects/{s}", {"schema": PAY}),
    ("POST", "/compatibility/subjects/{s}/versions/latest", {"schema": PAY}),
    ("POST", "/compatibility/subjects/{s}/versions/1", {"schema": PAY}),
    ("POST", "/compatibility/subjects/{s}/versions?verbose=true", {"schema": PAY}),
    ("GET", "/config/{s}", None),
    ("GET", "/config/{s}?defaultToGlobal=true", None),
    ("GET", "/mode/{s}", None),
    ("GET", "/mode/{s}?defaultToGlobal=true", None),
]


@pytest.mark.parametrize(("method", "template", "body"), READS)
@pytest.mark.parametrize(
    ("hidden", "missing"),
    [
        ("pay-value", "pay-missing"),
        ("pay%2Fvalue", "pay%2Fmissing"),
        (":.ctx:pay-value", ":.ctx:pay-missing"),
    ],
)
def test_an_unreadable_subject_answers_exactly_as_a_missing_one(
    app_client: TestClient,
    method: str,
    template: str,
    body: dict[str, Any] | None,
    hidden: str,
    missing: str,
) -> None:
    dev = as_user("dev")
    seen = app_client.request(method, template.format(s=hidden), json=body, headers=dev)
    absent = app_client.request(method, template.format(s=missing), json=body, headers=dev)
    assert seen.status_code == absent.status_code
    if seen.status_code == 200:  # what a missing subject answers there
        assert "defaultToGlobal" in template or template.startswith("/compatibility"), template
    hidden_name, missing_name = hidden.replace("%2F", "/"), missing.replace("%2F", "/")
    assert seen.text == absent.text.replace(missing_name, hidden_name)
    assert seen.headers["content-length"] == str(len(seen.content))
    if hidden == "pay-value" and "compatibility" not in template:
        admin = app_client.request(
            method, template.format(s=hidden), json=body, headers=as_user("admin")
        )
        assert admin.status_code == 200, template


def test_context_url_form_hides_the_same_way(app_client: TestClient) -> None:
    dev = as_user("dev")
    seen = app_client.get("/contexts/.ctx/subjects/pay-value/versions", headers=dev)
    absent = app_client.get("/contexts/.ctx/subjects/pay-nope/versions", headers=dev)
    assert seen.status_code == absent.status_code == 404
    assert seen.json() == {"error_code": 40401, "message": "Subject ':.ctx:pay-value' not found."}
    assert absent.json()["message"] == "Subject ':.ctx:pay-nope' not found."


def test_no_fallback_into_another_contexts_unreadable_subject(app_client: TestClient) -> None:
    admin, dev = as_user("admin"), as_user("dev")
    secret = '{"type":"record","name":"Secret","fields":[{"name":"k","type":"string"}]}'
    made = app_client.post(
        "/subjects/:.other:orders-secret/versions", json={"schema": secret}, headers=admin
    )
    assert made.status_code == 200
    # an unqualified subject missing from the default context falls back to other contexts
    found = app_client.get("/subjects/orders-secret/versions/1", headers=admin)
    assert found.json()["subject"] == ":.other:orders-secret"
    # dev may read orders-* only in the default context: it must not see :.other:
    for path in ("/subjects/orders-secret/versions/1", "/subjects/orders-secret/versions"):
        seen = app_client.get(path, headers=dev)
        absent = app_client.get(path.replace("secret", "nothing"), headers=dev)
        assert seen.status_code == absent.status_code == 404
        assert seen.text == absent.text.replace("orders-nothing", "orders-secret")
    # and may still register the subject in the default context
    mine = app_client.post("/subjects/orders-secret/versions", json={"schema": ORDER}, headers=dev)
    assert mine.status_code == 200
    assert app_client.get("/subjects/orders-secret/versions", headers=dev).json() == [1]


def test_schema_ids_only_through_a_readable_subject(app_client: TestClient) -> None:
    dev = as_user("dev")
    pay_id, shared_id = ids(app_client, "pay-value"), ids(app_client, "shared-value")
    for suffix in ("", "/schema", "/subjects", "/versions", "?subject=pay-value"):
        seen = app_client.get(f"/schemas/ids/{pay_id}{suffix}", headers=dev)
        absent = app_client.get(f"/schemas/ids/99999{suffix}", headers=dev)
        assert seen.status_code == absent.status_code == 404, suffix
        assert seen.text == absent.text.replace("99999", str(pay_id))
    # the shared schema is also in pay-shared: readable through shared-value, listed without it
    assert app_client.get(f"/schemas/ids/{shared_id}", headers=dev).json()["schema"] == SHARED
    assert app_client.get(f"/schemas/ids/{shared_id}/subjects", headers=dev).json() == [
        "shared-value"
    ]
    assert app_client.get(f"/schemas/ids/{shared_id}/versions", headers=dev).json() == [
        {"subject": "shared-value", "version": 1}
    ]
    admin = as_user("admin")
    assert app_client.get(f"/schemas/ids/{shared_id}/subjects", headers=admin).json() == [
        "pay-shared",
        "shared-value",
    ]


def test_guids_only_through_a_readable_subject(app_client: TestClient) -> None:
    from registry import reads
    from registry.identity import guid_of

    admin, dev = as_user("admin"), as_user("dev")
    reg = app_client.app.state.registry  # type: ignore[attr-defined]
    guid = guid_of(reads.schema_by_id(reg, ids(app_client, "pay-value")).digest).upper()
    assert app_client.get(f"/schemas/guids/{guid}", headers=admin).status_code == 200
    other = str(uuid.uuid4()).upper()
    for suffix in ("", "/ids"):
        seen = app_client.get(f"/schemas/guids/{guid}{suffix}", headers=dev)
        absent = app_client.get(f"/schemas/guids/{other}{suffix}", headers=dev)
        assert seen.status_code == absent.status_code
        assert seen.text == absent.text.replace(other, guid)


def test_listings_leave_out_unreadable_subjects(app_client: TestClient) -> None:
    dev, svc, nobody = as_user("dev"), as_user("svc-billing"), as_user("nobody")
    assert app_client.get("/subjects", headers=dev).json() == ["orders-value", "shared-value"]
    assert app_client.get("/subjects", headers=svc).json() == ["shared-value"]
    assert app_client.get("/subjects", headers=nobody).json() == []
    listed = app_client.get("/schemas", headers=dev).json()
    assert sorted(s["subject"] for s in listed) == ["orders-value", "shared-value"]
    everything = app_client.get("/subjects?subjectPrefix=:*:", headers=as_user("admin")).json()
    assert ":.ctx:pay-value" in everything and "pay/value" in everything


def test_denied_writes_are_40301_whether_or_not_the_subject_exists(app_client: TestClient) -> None:
    dev = as_user("dev")
    for subject in ("pay-value", "pay-missing", "shared-value"):
        for method, path, body in [
            ("POST", f"/subjects/{subject}/versions", {"schema": PAY}),
            ("DELETE", f"/subjects/{subject}", None),
            ("DELETE", f"/subjects/{subject}/versions/1", None),
            ("PUT", f"/config/{subject}", {"compatibility": "FULL"}),
            ("DELETE", f"/mode/{subject}", None),
        ]:
            response = app_client.request(method, path, json=body, headers=dev)
            assert response.status_code == 403, (method, path)
            assert response.json()["error_code"] == 40301
            assert subject in response.json()["message"]
    response = app_client.post("/subjects/shared-value/versions", json={"schema": PAY}, headers=dev)
    assert response.json() == {
        "error_code": 40301,
        "message": "User is denied operation Write on Subject: shared-value",
    }
    # nothing was written
    assert app_client.get("/subjects/pay-value/versions", headers=as_user("admin")).json() == [1]


def test_write_and_admin_levels(app_client: TestClient) -> None:
    dev, owner = as_user("dev"), as_user("owner")
    new = '{"type":"record","name":"Order","fields":[{"name":"o","type":"int"},'
    new += '{"name":"n","type":"int","default":0}]}'
    registered = app_client.post(
        "/subjects/orders-value/versions", json={"schema": new}, headers=dev
    )
    assert registered.status_code == 200
    assert isinstance(registered.json()["id"], int)
    denied = app_client.put("/config/orders-value", json={"compatibility": "FULL"}, headers=dev)
    assert denied.status_code == 403
    assert denied.json()["message"] == (
        "User is denied operation AlterConfigs on Subject: orders-value"
    )
    allowed = app_client.put("/config/orders-value", json={"compatibility": "FULL"}, headers=owner)
    assert allowed.status_code == 200
    assert app_client.get("/config/orders-value", headers=dev).json() == {
        "compatibilityLevel": "FULL"
    }
    assert app_client.delete("/subjects/orders-value/versions/2", headers=dev).json() == 2


def test_global_config_mode_and_contexts_need_admin_on_everything(app_client: TestClient) -> None:
    owner, admin = as_user("owner"), as_user("admin")
    assert app_client.get("/config", headers=owner).status_code == 200
    assert app_client.get("/mode", headers=owner).status_code == 200
    for method, path, body in [
        ("PUT", "/config", {"compatibility": "NONE"}),
        ("DELETE", "/config", None),
        ("PUT", "/mode", {"mode": "READONLY"}),
        ("DELETE", "/mode", None),
        ("DELETE", "/contexts/.ctx", None),
    ]:
        response = app_client.request(method, path, json=body, headers=owner)
        assert response.status_code == 403, path
        assert response.json()["error_code"] == 40301
    assert app_client.put("/config", json={"compatibility": "NONE"}, headers=admin).json() == {
        "compatibility": "NONE"
    }


def test_rules_file_is_reloaded(app_client: TestClient, files: dict[str, Path]) -> None:
    nobody = as_user("nobody")
    assert app_client.get("/subjects/pay-value/versions", headers=nobody).status_code == 404
    files["rules"].write_text(
        RULES + "  - principals: [nobody]\n    subjects: [pay-*]\n    permission: read\n"
    )
    assert app_client.get("/subjects/pay-value/versions", headers=nobody).json() == [1]
    files["rules"].write_text("rules: [{principals: nobody}]\n")  # broken: kept the last good
    assert app_client.get("/subjects/pay-value/versions", headers=nobody).json() == [1]


def test_every_route_is_classified() -> None:
    spec = json.loads(Path("openapi/openapi.json").read_text())
    for template, operations in spec["paths"].items():
        segs = template.split("/")[1:]
        for method in operations:
            need = need_of(method.upper(), segs)
            if "{subject}" in segs:
                if segs[0] in ("config", "mode") and method != "get":
                    assert need.perm == Permission.ADMIN, template
                assert need.kind == SUBJECT and segs[need.index] == "{subject}", template
            elif "{schema_id}" in segs:
                assert need.kind == SCHEMA_ID and segs[need.index] == "{schema_id}", template
            elif "{guid}" in segs:
                assert need.kind == GUID and segs[need.index] == "{guid}", template
            elif method in ("put", "delete") or template == "/contexts/{context}":
                assert need.kind == GLOBAL, (method, template)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("rules: [{subjects: '*', permission: read}]", "'principals' is required"),
        ("rules: [{principals: a, permission: root}]", "permission must be read"),
        ("rules: [{principals: a, permission: read, extra: 1}]", "unknown keys"),
        ("rules: [{principals: [1], permission: read}]", "list of strings"),
        ("rules: {}", "a 'rules' list"),
        ("rules: [", "not YAML"),
        ("rules: [a]", "expected a mapping"),
    ],
)
def test_bad_rules_are_refused_with_the_reason(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_rules(text)


def test_rules_without_authentication_are_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(RULES)
    settings = Settings(auth_rules_file=str(tmp_path / "rules.yaml"))
    reg = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), settings)
    with pytest.raises(ValueError, match="needs authentication"):
        create_app(reg)


def test_confluent_client_sees_403_and_missing_subjects(tmp_path: Path) -> None:
    write_users(tmp_path / "users", USERS)
    (tmp_path / "rules.yaml").write_text(RULES)
    env = {
        "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(tmp_path / "users"),
        "SCHEMA_REGISTRY_AUTH_RULES_FILE": str(tmp_path / "rules.yaml"),
    }
    with running(Server(tmp_path, env)) as srv:
        admin = SchemaRegistryClient({"url": srv.url, "basic.auth.user.info": "admin:a"})
        dev = SchemaRegistryClient({"url": srv.url, "basic.auth.user.info": "dev:d"})
        admin.register_schema("pay-value", Schema(PAY, "AVRO"))
        assert dev.register_schema("orders-value", Schema(ORDER, "AVRO")) == 2
        with pytest.raises(SchemaRegistryError) as denied:
            dev.register_schema("pay-value", Schema(PAY, "AVRO"))
        assert (denied.value.http_status_code, denied.value.error_code) == (403, 40301)
        with pytest.raises(SchemaRegistryError) as hidden:
            dev.get_latest_version("pay-value")
        assert (hidden.value.http_status_code, hidden.value.error_code) == (404, 40401)
        assert dev.get_subjects() == ["orders-value"]
