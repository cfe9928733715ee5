"""What a restricted caller sees: every read endpoint either answers for a schema it may not
read exactly as for a missing one, or lists only what it may read (paged after filtering);
references to unreadable subjects in register, lookup and compatibility requests answer as
missing references and store nothing; /contexts lists "." and the contexts it can read in."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry import reads
from registry.api.app import create_app
from registry.core import Registry
from registry.identity import guid_of
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import CONTENT_TYPE, write_users

RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: [dev]
    subjects: ["orders-*", ":.ctx:orders-*"]
    permission: write
  - principals: [dev]
    subjects: ["shared-*"]
    permission: read
  - principals: [ctxreader]
    subjects: [":.ctx:*"]
    permission: read
"""
USERS = {"admin": "a", "dev": "d", "ctxreader": "c", "nobody": "n"}


def record(name: str, field: str = "f", kind: str = "long") -> str:
    return json.dumps({"type": "record", "name": name, "fields": [{"name": field, "type": kind}]})


PAY, SHARED, ORDER = record("Pay"), record("Shared", "s", "string"), record("Order", "o", "int")
MONEY, CASH = record("Money", "c"), record("Cash", "c")
USES_MONEY, USES_CASH = record("UsesMoney", "m", "Money"), record("UsesCash", "m", "Cash")
ORDERS_USES_CASH = record("OrdersUsesCash", "m", "Cash")
BOTH = json.dumps(
    {
        "type": "record",
        "name": "Both",
        "fields": [{"name": "m", "type": "Money"}, {"name": "c", "type": "Cash"}],
    }
)
GONE = record("Gone")


def ref(name: str, subject: str, version: int | str = 1) -> dict[str, Any]:
    return {"name": name, "subject": subject, "version": version}


#: (subject, schema, references), registered by admin in this order
SUBJECTS: list[tuple[str, str, list[dict[str, Any]]]] = [
    ("pay-value", PAY, []),
    ("shared-value", SHARED, []),
    ("pay-shared", SHARED, []),  # the same id as shared-value
    ("base-secret", MONEY, []),
    ("shared-base", CASH, []),
    ("pay-uses-cash", USES_CASH, [ref("Cash", "shared-base")]),
    ("orders-uses-cash", ORDERS_USES_CASH, [ref("Cash", "shared-base")]),
    ("orders-value", ORDER, []),
    (":.ctx:pay-value", PAY, []),
    (":.ctx:orders-value", ORDER, []),
    (":.ctx:base-secret", MONEY, []),
    (":.other:pay-value", PAY, []),
    (":.other2:pay-shared", SHARED, []),
    ("pay-gone", GONE, []),
    ("orders-gone", GONE, []),
]


def headers(name: str) -> dict[str, str]:
    token = base64.b64encode(f"{name}:{USERS[name]}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": CONTENT_TYPE}


ADMIN, DEV = headers("admin"), headers("dev")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("visibility")
    write_users(tmp / "users", USERS)
    (tmp / "rules.yaml").write_text(RULES)
    settings = Settings(
        poll_interval=0,
        auth_users_file=str(tmp / "users"),
        auth_rules_file=str(tmp / "rules.yaml"),
    )
    reg = Registry(open_store(f"sqlite:///{tmp / 'r.db'}"), settings)
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as test_client:
            for subject, schema, refs in SUBJECTS:
                body = {"schema": schema, "references": refs}
                made = test_client.post(f"/subjects/{subject}/versions", json=body, headers=ADMIN)
                assert made.status_code == 200, (subject, made.text)
            for subject in ("pay-gone", "orders-gone"):
                assert test_client.delete(f"/subjects/{subject}", headers=ADMIN).status_code == 200
            yield test_client
    finally:
        reg.stop()


def schema_id(client: TestClient, subject: str) -> int:
    found = client.get(f"/subjects/{subject}/versions/1", headers=ADMIN).json()
    return int(found["id"])


def guid(client: TestClient, subject: str) -> str:
    reg = client.app.state.registry  # type: ignore[attr-defined]
    sv = reads.get_version(reg, subject, 1)
    return guid_of(sv.digest)


def state_of(client: TestClient) -> Any:
    """Everything admin sees: any write would change it."""
    return [
        client.get("/schemas?deleted=true&subjectPrefix=:*:", headers=ADMIN).json(),
        client.get("/subjects?deleted=true", headers=ADMIN).json(),
    ]


# ---- references ------------------------------------------------------------------------------

#: (method, path, error_code): every route whose body may carry references
REFERENCING = [
    ("POST", "/subjects/orders-new/versions", 42201),
    ("POST", "/subjects/orders-value", 42201),
    ("POST", "/subjects/pay-value", 40401),  # the subject is hidden too: checked first
    ("POST", "/compatibility/subjects/orders-value/versions/latest", 42201),
    ("POST", "/compatibility/subjects/orders-value/versions/1?verbose=true", 200),  # messages
    ("POST", "/compatibility/subjects/orders-value/versions", 42201),
    ("POST", "/contexts/.ctx/subjects/orders-new/versions", 42201),
    ("POST", "/subjects/:.ctx:orders-value?normalize=true", 42201),
]
#: (reference as sent, the same shape naming a missing subject)
HIDDEN_REFERENCES = [
    (ref("Money", "base-secret"), ref("Money", "base-missing")),
    (ref("Money", "base-secret", -1), ref("Money", "base-missing", -1)),
    (ref("Money", ":.ctx:base-secret", 1), ref("Money", ":.ctx:base-missing", 1)),
    (ref("Money", ":.other:pay-value", 1), ref("Money", ":.other:pay-missing", 1)),
]


@pytest.mark.parametrize(("method", "path", "code"), REFERENCING)
@pytest.mark.parametrize(("hidden", "missing"), HIDDEN_REFERENCES)
def test_a_reference_to_an_unreadable_subject_answers_as_a_missing_one(
    client: TestClient,
    method: str,
    path: str,
    code: int,
    hidden: dict[str, Any],
    missing: dict[str, Any],
) -> None:
    before = state_of(client)
    seen = client.request(
        method, path, json={"schema": USES_MONEY, "references": [hidden]}, headers=DEV
    )
    absent = client.request(
        method, path, json={"schema": USES_MONEY, "references": [missing]}, headers=DEV
    )
    status = code if code == 200 else code // 100
    assert seen.status_code == absent.status_code == status, seen.text
    assert seen.json().get("error_code") == absent.json().get("error_code")
    assert seen.json().get("error_code", 200) == code
    # 42201 prints the request as 8.5 does, with the guid of its text and references: the
    # guid of another request, not a trace of the hidden subject
    assert _guidless(seen.content) == _guidless(absent.content).replace(
        json.dumps(missing["subject"]).encode()[1:-1], json.dumps(hidden["subject"]).encode()[1:-1]
    )
    if code != 40401:
        assert b"No schema reference found for subject" in seen.content
        assert json.dumps(hidden["subject"]).encode()[1:-1] in seen.content
    assert seen.headers["content-length"] == str(len(seen.content))
    assert state_of(client) == before


def test_the_same_reference_is_resolved_for_admin(client: TestClient) -> None:
    # the hidden references above exist: admin resolves them (checked against the subject)
    body = {"schema": USES_MONEY, "references": [ref("Money", "base-secret")]}
    allowed = client.post("/compatibility/subjects/orders-value/versions", json=body, headers=ADMIN)
    assert allowed.status_code == 200, allowed.text


def test_several_references_hide_only_the_unreadable_ones(client: TestClient) -> None:
    before = state_of(client)
    refs = [ref("Cash", "shared-base"), ref("Money", "base-secret")]
    seen = client.post(
        "/subjects/orders-both/versions", json={"schema": BOTH, "references": refs}, headers=DEV
    )
    assert seen.json()["error_code"] == 42201
    assert seen.json()["message"].endswith(
        'No schema reference found for subject "base-secret" and version 1'
    )
    assert state_of(client) == before


def test_a_reference_key_written_with_escapes_is_still_checked(client: TestClient) -> None:
    text = json.dumps(USES_MONEY)
    raw = f'{{"schema": {text}, "\\u0072eferences": [{json.dumps(ref("Money", "base-secret"))}]}}'
    seen = client.post("/subjects/orders-new/versions", content=raw.encode(), headers=DEV)
    assert seen.json()["message"].endswith(
        'No schema reference found for subject "base-secret" and version 1'
    )


def test_a_readable_reference_works(client: TestClient) -> None:
    body = {"schema": ORDERS_USES_CASH, "references": [ref("Cash", "shared-base")]}
    found = client.post("/subjects/orders-uses-cash", json=body, headers=DEV)
    assert found.status_code == 200, found.text
    assert found.json()["references"] == [ref("Cash", "shared-base")]
    checked = client.post("/compatibility/subjects/orders-value/versions", json=body, headers=DEV)
    assert checked.json() == {"is_compatible": False}


def test_malformed_bodies_answer_as_without_rules(client: TestClient) -> None:
    for raw in (b"{not json", b'{"schema": "x", "references": "nope"}', b"[]"):
        as_dev = client.post("/subjects/orders-x/versions", content=raw, headers=DEV)
        as_admin = client.post("/subjects/orders-x/versions", content=raw, headers=ADMIN)
        assert as_dev.status_code == as_admin.status_code
        assert as_dev.content == as_admin.content


# ---- read endpoints: hidden answers exactly as missing ----------------------------------------


def _hidden_cases(client: TestClient) -> list[tuple[str, str, str, str]]:
    """(path for an unreadable schema, path for a missing one, text of each in the answer)."""
    pay = str(schema_id(client, "pay-value"))
    ctx_pay = str(schema_id(client, ":.ctx:pay-value"))
    pay_guid = guid(client, "pay-value")
    other = str(uuid.uuid4())
    cases = []
    for tail in ("", "/schema", "/subjects", "/versions", "?fetchMaxId=true", "?format=resolved"):
        cases.append((f"/schemas/ids/{pay}{tail}", f"/schemas/ids/77777{tail}", pay, "77777"))
    for tail in ("", "/subjects", "/versions"):
        cases.append(
            (
                f"/schemas/ids/{ctx_pay}{tail}?subject=:.ctx:",
                f"/schemas/ids/88888{tail}?subject=:.ctx:",
                ctx_pay,
                "88888",
            )
        )
        cases.append(
            (
                f"/contexts/.ctx/schemas/ids/{ctx_pay}{tail}",
                f"/contexts/.ctx/schemas/ids/88888{tail}",
                ctx_pay,
                "88888",
            )
        )
    for tail in ("", "/ids"):
        for form in (pay_guid, pay_guid.upper()):
            cases.append(
                (f"/schemas/guids/{form}{tail}", f"/schemas/guids/{other}{tail}", form, other)
            )
    return cases


def test_every_by_id_and_by_guid_read_hides_unreadable_schemas(client: TestClient) -> None:
    cases = _hidden_cases(client)
    assert len(cases) == 6 + 6 + 4
    for hidden, missing, hidden_text, missing_text in cases:
        seen = client.get(hidden, headers=DEV)
        absent = client.get(missing, headers=DEV)
        assert seen.status_code == absent.status_code == 404, (hidden, seen.text)
        assert seen.json()["error_code"] == 40403, hidden
        assert seen.content == absent.content.replace(
            missing_text.encode(), hidden_text.encode()
        ), hidden
        assert client.get(hidden, headers=ADMIN).status_code == 200, hidden


# ---- read endpoints: listings hold only what the caller may read -------------------------------


READABLE = ["orders-uses-cash", "orders-value", "shared-base", "shared-value"]


def _listings(client: TestClient) -> list[tuple[str, Any]]:
    """(path, what dev sees) for every listing that names subjects, versions, ids or contexts."""
    shared = schema_id(client, "shared-value")
    cash_user = schema_id(client, "orders-uses-cash")
    return [
        ("/subjects", [":.ctx:orders-value", *READABLE]),
        ("/subjects?deleted=true", [":.ctx:orders-value", "orders-gone", *READABLE]),
        ("/subjects?deletedOnly=true", ["orders-gone"]),
        ("/subjects?subjectPrefix=:.ctx:", [":.ctx:orders-value"]),
        ("/contexts/.ctx/subjects", [":.ctx:orders-value"]),
        ("/subjects?subjectPrefix=pay", []),
        ("/subjects?offset=1&limit=2", ["orders-uses-cash", "orders-value"]),
        (
            "/schemas?subjectPrefix=:*:",
            [
                (":.ctx:orders-value", 1),
                ("orders-uses-cash", 1),
                ("orders-value", 1),
                ("shared-base", 1),
                ("shared-value", 1),
            ],
        ),
        ("/schemas?limit=1", [(":.ctx:orders-value", 1)]),
        ("/schemas?offset=3&latestOnly=true", [("shared-base", 1), ("shared-value", 1)]),
        ("/schemas?deleted=true&subjectPrefix=orders-g", [("orders-gone", 1)]),
        ("/contexts/.ctx/schemas", [(":.ctx:orders-value", 1)]),
        (f"/schemas/ids/{shared}/subjects", ["shared-value"]),
        (f"/schemas/ids/{shared}/subjects?limit=1", ["shared-value"]),
        (f"/schemas/ids/{shared}/versions", [{"subject": "shared-value", "version": 1}]),
        (f"/schemas/guids/{guid(client, 'shared-value')}/ids", [{"context": ".", "id": shared}]),
        ("/subjects/shared-base/versions/1/referencedby", [cash_user]),
        ("/subjects/shared-base/versions/1/referencedby?limit=1", [cash_user]),
        ("/contexts", [".", ".ctx"]),
    ]


def test_every_listing_holds_only_readable_subjects_and_pages_after_filtering(
    client: TestClient,
) -> None:
    for path, expected in _listings(client):
        answer = client.get(path, headers=DEV)
        assert answer.status_code == 200, (path, answer.text)
        body = answer.json()
        if path.startswith("/schemas?") or path == "/contexts/.ctx/schemas":
            body = [(s["subject"], s["version"]) for s in body]
        assert body == expected, path
        # admin sees more in each (so the filter did something)
        assert len(client.get(path.split("?")[0], headers=ADMIN).json()) > len(expected), path


def test_listings_are_unchanged_for_callers_who_may_read_everything(client: TestClient) -> None:
    assert client.get("/contexts", headers=ADMIN).json() == [".", ".ctx", ".other", ".other2"]
    shared = schema_id(client, "shared-value")
    assert client.get(
        f"/schemas/guids/{guid(client, 'shared-value')}/ids", headers=ADMIN
    ).json() == [
        {"context": ".", "id": shared},
        {"context": ".other2", "id": schema_id(client, ":.other2:pay-shared")},
    ]
    assert (
        len(client.get("/subjects/shared-base/versions/1/referencedby", headers=ADMIN).json()) == 2
    )


def test_contexts_list_the_default_and_the_readable_ones(client: TestClient) -> None:
    assert client.get("/contexts", headers=headers("ctxreader")).json() == [".", ".ctx"]
    assert client.get("/contexts?contextPrefix=.o", headers=headers("ctxreader")).json() == []
    assert client.get("/contexts?offset=1", headers=headers("ctxreader")).json() == [".ctx"]
    assert client.get("/contexts", headers=headers("nobody")).json() == ["."]
    # the one context's subjects, and nothing of the default one
    assert client.get("/subjects", headers=headers("ctxreader")).json() == [
        ":.ctx:base-secret",
        ":.ctx:orders-value",
        ":.ctx:pay-value",
    ]


#: every GET route (OpenAPI template) and the test that covers it for a restricted caller
COVERED = {
    "/schemas/ids/{schema_id}": "by id",
    "/schemas/ids/{schema_id}/schema": "by id",
    "/schemas/ids/{schema_id}/subjects": "by id + listing",
    "/schemas/ids/{schema_id}/versions": "by id + listing",
    "/schemas/guids/{guid}": "by guid",
    "/schemas/guids/{guid}/ids": "by guid + listing",
    "/schemas": "listing",
    "/subjects": "listing",
    "/contexts": "listing",
    "/subjects/{subject}/versions/{version}/referencedby": "listing; hidden subject in rules",
    "/subjects/{subject}/versions": "test_auth_rules READS",
    "/subjects/{subject}/versions/{version}": "test_auth_rules READS",
    "/subjects/{subject}/versions/{version}/schema": "test_auth_rules READS",
    "/subjects/{subject}/metadata": "test_auth_rules READS",
    "/config/{subject}": "test_auth_rules READS",
    "/mode/{subject}": "test_auth_rules READS",
    "/dek-registry/v1/keks/{name}/deks": "test_dek_registry rights (listing)",
    "/dek-registry/v1/keks/{name}/deks/{subject}": "test_dek_registry rights",
    "/dek-registry/v1/keks/{name}/deks/{subject}/versions": "test_dek_registry rights",
    "/dek-registry/v1/keks/{name}/deks/{subject}/versions/{version}": "test_dek_registry rights",
    # names no subject, version or id
    "/dek-registry/v1/keks": "",
    "/dek-registry/v1/keks/{name}": "",
    "/": "",
    "/config": "",
    "/mode": "",
    "/schemas/types": "",
    "/v1/metadata/id": "",
    "/v1/metadata/version": "",
    "/v1/metadata/deployment": "",
    "/associations/subjects/{subject}": "associations listing",
    "/associations/resources/{resource_id}": "associations listing",
    "/associations/resources/{namespace}/{name}": "associations listing",
    "/audit/subjects/{subject}": "test_audit_routes history of a subject it may not read",
    # exporters copy every subject they name: reading them needs admin on "*"
    # (test_exporters_need_global_admin below)
    "/exporters": "global admin",
    "/exporters/{name}": "global admin",
    "/exporters/{name}/config": "global admin",
    "/exporters/{name}/status": "global admin",
}


def test_exporters_need_global_admin(client: TestClient) -> None:
    for path in ("/exporters", "/exporters/e/config", "/exporters/e/status", "/exporters/e"):
        assert client.get(path, headers=DEV).status_code == 403, path
        assert client.get(path, headers=ADMIN).status_code in (200, 404), path


def test_association_listings_show_readable_subjects(client: TestClient) -> None:
    for kind, subject in (("key", "pay-value"), ("value", "orders-value")):
        body = {
            "resourceName": "topic-a",
            "resourceNamespace": "ns",
            "resourceId": "topic-a-id",
            "associations": [{"subject": subject, "associationType": kind}],
        }
        made = client.post("/associations", json=body, headers=ADMIN)
        assert made.status_code == 200, made.text
    refused = client.post("/associations", json=body, headers=DEV)
    assert refused.status_code == 403
    for path in ("/associations/resources/topic-a-id", "/associations/resources/ns/topic-a"):
        assert len(client.get(path, headers=ADMIN).json()) == 2
        seen = client.get(path, headers=DEV).json()
        assert [a["subject"] for a in seen] == ["orders-value"]
    mine = client.get("/associations/subjects/orders-value", headers=DEV).json()
    assert [a["resourceId"] for a in mine] == ["topic-a-id"]
    hidden = client.get("/associations/subjects/pay-value", headers=DEV)
    assert hidden.status_code != 200 or hidden.json() == []
    assert client.delete("/associations/resources/topic-a-id", headers=ADMIN).status_code == 204


def test_every_read_route_is_covered() -> None:
    spec = json.loads(Path("openapi/openapi.json").read_text())
    gets = {path for path, ops in spec["paths"].items() if "get" in ops}
    assert gets == set(COVERED)


def test_an_alias_does_not_widen_what_a_caller_may_read(client: TestClient) -> None:
    # dev may read orders-*, not pay-*: an alias orders-alias -> pay-value does not open it
    assert client.put("/config/orders-alias", json={"alias": "pay-value"}, headers=ADMIN).json()
    try:
        seen = client.get("/subjects/orders-alias/versions/1", headers=DEV)
        assert seen.json()["error_code"] == 40401
        own = client.get("/subjects/orders-alias/versions/1", headers=ADMIN).json()
        assert own["subject"] == "pay-value"
    finally:
        client.delete("/config/orders-alias", headers=ADMIN)


def _guidless(content: bytes) -> bytes:
    return re.sub(rb"guid=[0-9a-f-]+", b"guid=?", content)
