"""The audit trail covers every route that changes state: the routes are enumerated from the
OpenAPI document (every PUT, POST, DELETE and PATCH not marked ``x-read-only``), so a new one
without a scenario here, or without its event, fails. For each: exactly one event for a success
(with a hash of the state before and after), for a failure (with the answer's error code), for
a request without credentials (401) and for one the rules refuse (403). And no event holds a
password, a token, KEK or DEK material, KMS properties or schema text."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import CONTENT_TYPE, Signer, write_users

KEKS = "/dek-registry/v1/keks"
PASSWORDS = {
    "admin": "AUDIT-PW-admin-1",
    "reader": "AUDIT-PW-reader-2",
    "limited": "AUDIT-PW-limited-3",
}
SCHEMA_MARKER = "AUDIT-SCHEMA-TEXT-MARKER"
USER = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "com.acme",
        "doc": SCHEMA_MARKER,
        "fields": [{"name": "name", "type": "string"}],
    }
)
KMS_SECRET = "AUDIT-KMS-PROP-SECRET"
MATERIAL = [base64.b64encode(f"AUDIT-DEK-MATERIAL-{n}".encode()).decode() for n in (1, 2)]
MUTATING = ("put", "post", "delete", "patch")


def basic(user: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def assoc_request(subject: str, kind: str = "value", rid: str | None = "t-1") -> dict[str, Any]:
    body: dict[str, Any] = {
        "resourceName": "orders",
        "resourceNamespace": "lkc-1",
        "resourceType": "topic",
        "associations": [{"subject": subject, "associationType": kind, "lifecycle": "WEAK"}],
    }
    if rid is not None:
        body["resourceId"] = rid
    return body


DEK = f"{KEKS}/{{name}}/deks/{{subject}}"
#: a schema exporter towards a registry that is not there (it only goes to ERROR)
EXPORTER = {
    "name": "e1",
    "subjects": ["s2"],
    "contextType": "CUSTOM",
    "context": "copy",
    "config": {"schema.registry.url": "http://127.0.0.1:9"},
}
#: (method, route template, path, body): run in order as the admin, each must succeed and
#: change the state; every route that changes state needs at least one
SUCCESS: list[tuple[str, str, str, Any]] = [
    ("PUT", "/config", "/config", {"compatibility": "NONE"}),
    ("PUT", "/mode", "/mode", {"mode": "READWRITE"}),
    ("POST", "/subjects/{subject}/versions", "/subjects/s1/versions", {"schema": USER}),
    (
        "POST",
        "/subjects/{subject}/versions/{version}/tags",
        "/subjects/s1/versions/1/tags",
        {
            "tagsToAdd": [
                {
                    "schemaEntity": {"entityPath": "com.acme.User.name", "entityType": "sr_field"},
                    "tags": ["PII"],
                }
            ]
        },
    ),
    ("PUT", "/config/{subject}", "/config/s1", {"compatibility": "FULL"}),
    ("DELETE", "/config/{subject}", "/config/s1", None),
    ("PUT", "/mode/{subject}", "/mode/s1", {"mode": "READONLY"}),
    ("DELETE", "/mode/{subject}", "/mode/s1", None),
    ("DELETE", "/subjects/{subject}/versions/{version}", "/subjects/s1/versions/1", None),
    ("DELETE", "/config", "/config", None),
    ("DELETE", "/mode", "/mode", None),
    ("POST", "/subjects/{subject}/versions", "/subjects/:.ctx1:c1/versions", {"schema": USER}),
    ("DELETE", "/subjects/{subject}", "/subjects/:.ctx1:c1", None),
    ("DELETE", "/subjects/{subject}", "/subjects/:.ctx1:c1?permanent=true", None),
    ("DELETE", "/contexts/{context}", "/contexts/.ctx1", None),
    (
        "POST",
        KEKS,
        KEKS,
        {"name": "k1", "kmsType": "local-kms", "kmsKeyId": "key1", "kmsProps": {"x": KMS_SECRET}},
    ),
    ("PUT", f"{KEKS}/{{name}}", f"{KEKS}/k1", {"doc": "orders"}),
    (
        "POST",
        f"{KEKS}/{{name}}/deks",
        f"{KEKS}/k1/deks",
        {"subject": "d1", "encryptedKeyMaterial": MATERIAL[0]},
    ),
    ("POST", DEK, f"{KEKS}/k1/deks/d1", {"version": 2, "encryptedKeyMaterial": MATERIAL[1]}),
    ("DELETE", f"{DEK}/versions/{{version}}", f"{KEKS}/k1/deks/d1/versions/1", None),
    (
        "POST",
        f"{DEK}/versions/{{version}}/undelete",
        f"{KEKS}/k1/deks/d1/versions/1/undelete",
        None,
    ),
    ("DELETE", DEK, f"{KEKS}/k1/deks/d1", None),
    ("POST", f"{DEK}/undelete", f"{KEKS}/k1/deks/d1/undelete", None),
    ("DELETE", DEK, f"{KEKS}/k1/deks/d1", None),
    ("DELETE", f"{KEKS}/{{name}}", f"{KEKS}/k1", None),
    ("POST", f"{KEKS}/{{name}}/undelete", f"{KEKS}/k1/undelete", None),
    ("POST", "/subjects/{subject}/versions", "/subjects/s2/versions", {"schema": '"string"'}),
    ("POST", "/subjects/{subject}/versions", "/subjects/k2/versions", {"schema": '"int"'}),
    ("POST", "/associations", "/associations", assoc_request("s2")),
    (
        "PUT",
        "/associations/resources/{resource_id}",
        "/associations/resources/t-1",
        assoc_request("k2", "key"),
    ),
    (
        "POST",
        "/associations:batchMutate",
        "/associations:batchMutate",
        {
            "requests": [
                {
                    "resourceName": "pay",
                    "resourceNamespace": "lkc-1",
                    "resourceId": "t-2",
                    "associations": [{"opType": "CREATE", "subject": "s2", "lifecycle": "WEAK"}],
                }
            ]
        },
    ),
    ("DELETE", "/associations/resources/{resource_id}", "/associations/resources/t-1", None),
    ("POST", "/exporters", "/exporters", EXPORTER),
    ("PUT", "/exporters/{name}/pause", "/exporters/e1/pause", None),  # changes need a pause
    ("PUT", "/exporters/{name}", "/exporters/e1", {"subjects": ["s2", "k2"]}),
    ("PUT", "/exporters/{name}/config", "/exporters/e1/config", {"extra": "1"}),
    ("PUT", "/exporters/{name}/reset", "/exporters/e1/reset", None),
    ("PUT", "/exporters/{name}/resume", "/exporters/e1/resume", None),
    ("PUT", "/exporters/{name}/pause", "/exporters/e1/pause", None),
    ("DELETE", "/exporters/{name}", "/exporters/e1", None),
]

#: values for a route's path parameters that name nothing (a failure)
MISSING = {
    "subject": "missing-subject",
    "version": "not-a-version",
    "name": "missing-kek",
    "context": ".full",  # not empty (42211): the failure test registers in it
    "resource_id": "missing-resource",
}


class Audited:
    """An in-process registry with auth and an audit file, and the events each request added."""

    def __init__(self, tmp: Path) -> None:
        users, rules, keys = tmp / "users", tmp / "rules.yaml", tmp / "jwt.pem"
        write_users(users, PASSWORDS)
        rules.write_text(
            "rules:\n"
            "  - principals: [admin, alice]\n    permission: admin\n"
            "  - principals: [reader]\n    permission: read\n"
            "  - principals: [limited]\n    subjects: [hist]\n    permission: read\n"
        )
        self.signer = Signer("k1")
        keys.write_bytes(self.signer.public_pem())
        self.audit_file = tmp / "audit" / "events.jsonl"
        settings = Settings(
            poll_interval=0,
            auth_users_file=str(users),
            auth_rules_file=str(rules),
            auth_jwt_keys_file=str(keys),
            audit_file=str(self.audit_file),
        )
        self.registry = Registry(open_store(f"sqlite:///{tmp / 'r.db'}"), settings)
        self._seen = 0
        self.count = 0

    def events(self) -> list[dict[str, Any]]:
        """The events written since the last call."""
        if not self.audit_file.exists():
            return []
        lines = self.audit_file.read_bytes().splitlines()
        new, self._seen = lines[self._seen :], len(lines)
        return [json.loads(line) for line in new]

    def send(
        self, client: TestClient, method: str, path: str, body: Any, headers: dict[str, str]
    ) -> tuple[Any, list[dict[str, Any]]]:
        self.events()
        self.count += 1
        rid = f"audit-test-{self.count}"
        headers = {**headers, "X-Request-ID": rid, "User-Agent": "audit-test/1.0"}
        if isinstance(body, bytes):
            answer = client.request(method, path, content=body, headers=headers)
        else:
            answer = client.request(method, path, json=body, headers=headers)
        events = self.events()
        for event in events:
            assert event["data"]["requestMetadata"]["requestId"] == rid
        return answer, events


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Audited, TestClient]]:
    env = Audited(tmp_path_factory.mktemp("audit-routes"))
    env.registry.start()
    try:
        app = create_app(env.registry, manage_lifecycle=False)
        with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as client:
            yield env, client
    finally:
        env.registry.stop()


def state_changing_routes(client: TestClient) -> set[tuple[str, str]]:
    spec = client.get("/openapi.json", headers=basic("admin")).json()
    return {
        (method.upper(), path)
        for path, operations in spec["paths"].items()
        for method, operation in operations.items()
        if method in MUTATING and not operation.get("x-read-only")
    }


def check_common(event: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """The fields every event has; its ``data``."""
    assert event["specversion"] == "1.0"
    assert event["datacontenttype"] == "application/json"
    assert event["id"] and event["source"].startswith("crn://schema-registry/")
    assert event["time"].endswith("Z") and event["time"][:2] == "20"
    data: dict[str, Any] = event["data"]
    assert data["methodName"].startswith("schema-registry.")
    assert data["requestMetadata"]["clientAddress"] == "testclient"
    assert data["requestMetadata"]["userAgent"] == "audit-test/1.0"
    assert data["request"]["method"] == method
    assert data["request"]["path"] == path.split("?")[0]
    for key in ("subject", "context", "version", "schemaId", "schemaType"):
        assert key in data["request"]
    assert set(data["result"]) == {"outcome", "status", "errorCode", "message"}
    assert set(data["state"]) == {"changed", "records", "before", "after"}
    return data


def test_every_route_that_changes_state_has_a_success_scenario_with_one_event(
    audited: tuple[Audited, TestClient],
) -> None:
    env, client = audited
    routes = state_changing_routes(client)
    covered = {(method, route) for method, route, _, _ in SUCCESS}
    assert routes - covered == set(), "routes changing state without an audit scenario here"
    operations: dict[tuple[str, str], str] = {}
    for method, route, path, body in SUCCESS:
        answer, events = env.send(client, method, path, body, basic("admin"))
        assert answer.status_code < 300, (method, path, answer.text)
        assert len(events) == 1, (method, path, events)
        data = check_common(events[0], method, path)
        assert data["authenticationInfo"] == {"principal": "admin", "method": "basic"}
        assert data["authorizationInfo"] == {"granted": True}
        assert data["result"] == {
            "outcome": "success",
            "status": answer.status_code,
            "errorCode": None,
            "message": None,
        }
        assert data["state"]["changed"], (method, path)
        assert data["state"]["before"] != data["state"]["after"], (method, path)
        assert data["state"]["before"].startswith("sha256:")
        operations.setdefault((method, route), data["methodName"])
        if route == "/subjects/{subject}/versions":
            request = data["request"]
            assert request["schemaId"] == answer.json()["id"]
            assert isinstance(request["version"], int) and request["schemaType"] == "AVRO"
            assert request["subject"] == path.split("/")[2]
        if "{subject}" in route and not route.startswith(KEKS):
            subject = path.split("/")[2].split("?")[0]
            assert data["request"]["subject"] == subject, data["request"]
            assert data["request"]["context"] == (".ctx1" if subject.startswith(":") else ".")
    # one operation name per route, different routes named apart
    assert len(set(operations.values())) == len(operations)


def fill(route: str) -> str:
    for name, value in MISSING.items():
        route = route.replace("{" + name + "}", value)
    return route


def test_every_failure_has_one_event_with_its_error_code(
    audited: tuple[Audited, TestClient],
) -> None:
    env, client = audited
    env.send(client, "POST", "/subjects/:.full:x/versions", {"schema": '"int"'}, basic("admin"))
    for method, route in sorted(state_changing_routes(client)):
        path = fill(route)
        answer, events = env.send(client, method, path, b'{"not json', basic("admin"))
        assert len(events) == 1, (method, route, events)
        data = check_common(events[0], method, path)
        if "{" not in route and method == "DELETE":  # nothing to get wrong: /config, /mode
            continue
        assert answer.status_code >= 400, (method, route, answer.text)
        assert data["result"]["outcome"] == "failure"
        assert data["result"]["status"] == answer.status_code
        assert data["result"]["errorCode"] == answer.json()["error_code"]
        assert data["result"]["message"]
        assert not data["state"]["changed"]
        assert data["authorizationInfo"] == {"granted": True}


def test_every_refusal_has_one_event(audited: tuple[Audited, TestClient]) -> None:
    env, client = audited
    env.send(client, "POST", "/subjects/:.full:x/versions", {"schema": '"int"'}, basic("admin"))
    for method, route in sorted(state_changing_routes(client)):
        path = fill(route).replace("missing-", "x-")
        for who, headers, status in (
            ("anonymous", {}, 401),
            ("reader", basic("reader"), 403),
            ("anonymous", {"Authorization": "Bearer not.a.token"}, 401),
        ):
            answer, events = env.send(client, method, path, {"schema": USER}, headers)
            assert answer.status_code == status, (method, route, who, answer.text)
            assert len(events) == 1, (method, route, who, events)
            data = check_common(events[0], method, path)
            assert data["authenticationInfo"]["principal"] == who
            assert data["authorizationInfo"] == {"granted": False}
            assert data["result"]["outcome"] == "denied"
            assert data["result"]["status"] == status
            assert data["result"]["errorCode"] == answer.json()["error_code"]
            kind = "authentication" if status == 401 else "authorization"
            assert events[0]["type"] == f"io.confluent.sg.server/{kind}"
            assert not data["state"]["changed"]


def test_reads_are_not_audited_but_refused_reads_are(audited: tuple[Audited, TestClient]) -> None:
    env, client = audited
    for method, path, body in (
        ("GET", "/subjects", None),
        ("POST", "/subjects/s2", {"schema": '"string"'}),  # a look-up
        ("POST", "/compatibility/subjects/s2/versions/latest", {"schema": '"string"'}),
        ("GET", "/audit/subjects/s2", None),
    ):
        answer, events = env.send(client, method, path, body, basic("reader"))
        assert answer.status_code == 200, answer.text
        assert events == [], (method, path)
    answer, events = env.send(client, "GET", "/subjects", None, {})
    assert answer.status_code == 401
    assert [e["data"]["result"]["outcome"] for e in events] == ["denied"]


def test_bearer_principal_and_the_subject_history(audited: tuple[Audited, TestClient]) -> None:
    env, client = audited
    token = env.signer.token({"sub": "alice"})
    bearer = {"Authorization": f"Bearer {token}"}
    answer, events = env.send(
        client, "POST", "/subjects/hist/versions", {"schema": '"long"'}, bearer
    )
    assert answer.status_code == 200
    assert events[0]["data"]["authenticationInfo"] == {"principal": "alice", "method": "bearer"}
    env.send(client, "PUT", "/config/hist", {"compatibility": "NOPE"}, bearer)
    history = client.get("/audit/subjects/hist", headers=basic("reader")).json()
    assert [(h["operation"], h["outcome"]) for h in history] == [
        ("schema-registry.config.put_subject", "failure"),
        ("schema-registry.subjects.register", "success"),
    ]
    assert history[1]["principal"] == "alice" and history[1]["version"] == 1
    assert client.get("/audit/subjects/hist", headers={}).status_code == 401
    # the refused read is in the subject's history too
    limited = client.get("/audit/subjects/hist", headers=basic("limited")).json()
    assert (limited[0]["operation"], limited[0]["outcome"]) == (
        "schema-registry.audit_history.history",
        "denied",
    )
    assert limited[1:] == history
    # a subject the caller may not read has no history, as one that does not exist
    env.send(client, "POST", "/subjects/hidden/versions", {"schema": '"int"'}, basic("admin"))
    assert client.get("/audit/subjects/hidden", headers=basic("admin")).json() != []
    hidden = client.get("/audit/subjects/hidden", headers=basic("limited"))
    missing = client.get("/audit/subjects/never-there", headers=basic("limited"))
    assert (hidden.status_code, hidden.json()) == (missing.status_code, missing.json()) == (200, [])


def test_no_secret_in_any_event(audited: tuple[Audited, TestClient]) -> None:
    """Scans every event this module's tests wrote (KEK and DEK scenarios, Basic and bearer
    authentication, refusals, failures echoing request bodies); run alone, it first makes the
    requests that carry secrets itself."""
    env, client = audited
    token = env.signer.token({"sub": "alice"})
    if "dek_registry.create_dek" not in (
        env.audit_file.read_text() if env.audit_file.exists() else ""
    ):
        for method, _, path, body in SUCCESS:
            env.send(client, method, path, body, basic("admin"))
        env.send(client, "POST", "/subjects/x/versions", {"schema": USER}, basic("reader"))
        bearer = {"Authorization": f"Bearer {token}"}
        env.send(client, "POST", "/subjects/b/versions", {"schema": '"int"'}, bearer)
    text = env.audit_file.read_text()
    assert "dek_registry.create_dek" in text and '"denied"' in text and '"bearer"' in text
    secrets = [
        *PASSWORDS.values(),
        *(basic(u)["Authorization"].split()[1] for u in PASSWORDS),
        token.split(".")[2],
        KMS_SECRET,
        *MATERIAL,
        *(base64.b64decode(m).decode() for m in MATERIAL),
        SCHEMA_MARKER,
        '"fields"',
    ]
    for secret in secrets:
        assert secret not in text, secret
