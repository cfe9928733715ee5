"""The Confluent 8.x endpoints added last: ``POST /associations:batchGet``,
``POST /associations:batchMutate`` (207, one result or error per request, in order;
``AbstractSchemaRegistry.batchGetAssociations`` / ``mutateAssociations``) and
``GET /v1/metadata/deployment``; the batch calls under an authorization file."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.api_helpers import error, record
from tests.production_helpers import CONTENT_TYPE, write_users

NS = "lkc-1"


def resource(name: str, resource_id: str | None, *ops: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"resourceName": name, "resourceNamespace": NS, "associations": ops}
    if resource_id is not None:
        body["resourceId"] = resource_id
    return body


def create(**fields: Any) -> dict[str, Any]:
    return {"opType": "CREATE", **fields}


def mutate(client: TestClient, *requests: dict[str, Any], query: str = "") -> list[Any]:
    answer = client.post(f"/associations:batchMutate{query}", json={"requests": list(requests)})
    assert answer.status_code == 207, answer.text
    assert answer.headers["content-type"].startswith("application/vnd.schemaregistry.v1+json")
    return list(answer.json()["results"])


def test_batch_mutate_creates_topics_with_their_schemas(client: TestClient) -> None:
    client.post("/subjects/shared-value/versions", json={"schema": record("s")})
    results = mutate(
        client,
        resource(
            "orders",
            "t-1",
            create(associationType="key", schema={"schema": '"string"'}),
            create(associationType="value", schema={"schema": record("a")}),
        ),
        resource("pay", "t-2", create(subject="shared-value", lifecycle="WEAK")),
    )
    orders = results[0]["result"]
    assert {k: v for k, v in orders.items() if k != "associations"} == {
        "resourceName": "orders",
        "resourceNamespace": NS,
        "resourceId": "t-1",
        "resourceType": "topic",
    }
    key, value = orders["associations"]
    # frozen is left out where it is the lifecycle's default (8.x AssociationInfo.getFrozen)
    assert {k: v for k, v in key.items() if k != "schema"} == {
        "subject": f":.{NS}:orders-key",
        "associationType": "key",
        "lifecycle": "STRONG",
    }
    assert key["schema"]["schema"] == '"string"' and key["schema"]["version"] == 1
    assert value["schema"]["subject"] == f":.{NS}:orders-value"
    assert results[1] == {
        "result": {
            "resourceName": "pay",
            "resourceNamespace": NS,
            "resourceId": "t-2",
            "resourceType": "topic",
            "associations": [
                {"subject": "shared-value", "associationType": "value", "lifecycle": "WEAK"}
            ],
        }
    }
    listed = client.get("/associations/resources/t-1").json()
    assert [a["subject"] for a in listed] == [f":.{NS}:orders-key", f":.{NS}:orders-value"]
    versions = client.get(f"/subjects/:.{NS}:orders-value/versions").json()
    assert versions == [1]


def test_batch_mutate_reports_each_request_on_its_own(client: TestClient) -> None:
    client.post("/subjects/shared-value/versions", json={"schema": record("s")})
    results = mutate(
        client,
        resource("bad name", "t-1", create(subject="shared-value", lifecycle="WEAK")),
        resource("a", "t-2", create(subject="missing", lifecycle="WEAK")),
        resource("b", None, create(subject="shared-value", lifecycle="WEAK")),
        resource(
            "c",
            "t-4",
            create(subject="shared-value", lifecycle="WEAK"),
            {"opType": "DELETE", "associationType": "value"},
        ),
        {"error": {"error_code": 40403, "message": "forwarded"}, "resourceName": "d"},
        resource("e", "t-5", create(subject="shared-value", lifecycle="WEAK")),
    )
    assert results[0]["error"] == {
        "error_code": 42212,
        "message": "The association specified an invalid value for property: 'resourceName', "
        "detail: illegal character ' '",
    }
    assert results[1]["error"] == {
        "error_code": 40907,
        "message": "No active (non-deleted) version exists for subject 'missing'",
    }
    assert results[2]["error"]["message"].endswith("'resourceId', detail: cannot be null or empty")
    assert results[3]["error"]["message"].endswith(
        "detail: may only appear once per request, but 'value' appears more than once"
    )
    assert results[4] == {"error": {"error_code": 40403, "message": "forwarded"}}
    assert results[5]["result"]["resourceId"] == "t-5"
    assert [a["resourceId"] for a in client.get("/associations/subjects/shared-value").json()] == [
        "t-5"
    ]


def test_batch_mutate_upsert_delete_and_dry_run(client: TestClient) -> None:
    for subject in ("s-key", "s-value"):
        client.post(f"/subjects/{subject}/versions", json={"schema": record("s")})
    weak = create(subject="s-key", associationType="key", lifecycle="WEAK")
    dry = mutate(client, resource("orders", "t-1", weak), query="?dryRun=true")
    assert dry == [
        {
            "result": {
                "resourceName": "orders",
                "resourceNamespace": NS,
                "resourceId": "t-1",
                "resourceType": "topic",
            }
        }
    ]
    assert client.get("/associations/resources/t-1").json() == []
    upsert = {"opType": "UPSERT", "subject": "s-value", "lifecycle": "WEAK"}
    done = mutate(client, resource("orders", "t-1", weak, upsert))[0]["result"]
    assert [a["subject"] for a in done["associations"]] == ["s-key", "s-value"]
    # a delete of a type with no association is no error in a batch (40410 in the single call)
    deleted = mutate(
        client,
        resource(
            "orders",
            "t-1",
            {"opType": "DELETE", "associationType": "key"},
            {"opType": "DELETE", "associationType": "value"},
        ),
    )
    assert deleted == [deleted[0]] and "associations" not in deleted[0]["result"]
    again = mutate(client, resource("orders", "t-1", {"opType": "DELETE"}))
    assert "error" not in again[0]
    assert client.get("/associations/resources/t-1").json() == []
    assert client.get("/subjects/s-key/versions").json() == [1]  # WEAK: subject kept


def test_batch_mutate_bad_bodies(client: TestClient) -> None:
    empty = client.post("/associations:batchMutate", content=b"")
    assert error(empty, 422, 422) == "mutateAssociations.arg4 must not be null"
    for body in ({}, {"requests": []}):
        answer = client.post("/associations:batchMutate", json=body)
        assert error(answer, 422, 42212).endswith("'requests', detail: cannot be null or empty")
    no_type = client.post(
        "/associations:batchMutate", json={"requests": [resource("a", "t", {"subject": "x"})]}
    )
    assert "missing type id property 'opType'" in error(no_type, 400, 400)
    unknown = client.post(
        "/associations:batchMutate",
        json={"requests": [resource("a", "t", {"opType": "MOVE"})]},
    )
    assert "known type ids = [CREATE, DELETE, UPSERT]" in error(unknown, 400, 400)
    assert client.get("/subjects").json() == []


def test_batch_get(client: TestClient) -> None:
    client.put("/config/shared-value", json={"compatibility": "NONE"})
    client.post("/subjects/shared-value/versions", json={"schema": record("s")})
    client.post("/subjects/shared-value/versions", json={"schema": record("s", "t")})
    mutate(
        client,
        resource("orders", "t-1", create(schema={"schema": record("a")})),
        resource("pay", "t-2", create(subject="shared-value", lifecycle="WEAK")),
    )
    answer = client.post(
        "/associations:batchGet",
        json={
            "requests": [
                {"resourceId": "t-1"},
                {"resourceName": "pay", "resourceNamespace": NS, "lifecycle": "WEAK"},
                {"resourceName": "nothing", "resourceNamespace": NS},
                {"resourceName": "pay"},
                {},
                {"resourceId": "t-2", "resourceName": "other", "resourceNamespace": NS},
            ]
        },
    )
    assert answer.status_code == 207, answer.text
    results = answer.json()["results"]
    assert results[0]["result"]["associations"] == [
        {"subject": f":.{NS}:orders-value", "associationType": "value", "lifecycle": "STRONG"}
    ]
    # resourceName and namespace come from the associations found
    assert results[0]["result"]["resourceName"] == "orders"
    assert results[1]["result"]["resourceId"] == "t-2"
    assert results[2] == {
        "result": {"resourceName": "nothing", "resourceNamespace": NS, "resourceType": "topic"}
    }
    assert results[3]["error"] == {
        "error_code": 500,
        "message": "Error while getting associations: property: resourceNamespace; detail: "
        "resourceNamespace is required when resourceName is specified",
    }
    assert results[4]["error"]["message"].endswith(
        "either resourceId or resourceName must be specified"
    )
    assert results[5]["error"]["message"] == (
        "Error while getting associations: All associations must have the same resourceName, "
        "resourceNamespace, resourceId, and resourceType."
    )
    with_schemas = client.post(
        "/associations:batchGet?includeSchemas=true", json={"requests": [{"resourceId": "t-2"}]}
    ).json()["results"][0]["result"]["associations"][0]
    assert with_schemas["schema"]["subject"] == "shared-value"
    assert with_schemas["schema"]["version"] == 2  # the latest version
    empty = client.post("/associations:batchGet", json={"requests": []})
    assert error(empty, 422, 42212).endswith("'requests', detail: cannot be null or empty")
    null = client.post("/associations:batchGet", content=b"null")
    assert error(null, 422, 422) == "batchGetAssociations.arg1 must not be null"


def test_single_calls_without_body_name_the_argument(client: TestClient) -> None:
    made = client.post("/associations", content=b"")
    assert error(made, 422, 422) == "createAssociation.arg4 must not be null"
    put = client.put("/associations/resources/t-1", content=b"null")
    assert error(put, 422, 422) == "createOrUpdateAssociation.arg5 must not be null"


def test_deployment_metadata(client: TestClient, tmp_path: Path) -> None:
    assert client.get("/v1/metadata/deployment").json() == {"attributes": []}
    assert client.get("/v1/metadata/version").json()["version"]  # unchanged
    assert set(client.get("/v1/metadata/id").json()) == {"scope"}
    settings = Settings.from_env(
        {"SCHEMA_REGISTRY_DEPLOYMENT_ATTRIBUTES": " onprem , ha ,"}, poll_interval=0
    )
    reg = Registry(open_store(f"sqlite:///{tmp_path / 'd.db'}"), settings)
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as other:
            assert other.get("/v1/metadata/deployment").json() == {"attributes": ["onprem", "ha"]}
    finally:
        reg.stop()


# ---- under an authorization file ------------------------------------------------------------

USERS = {"admin": "a", "dev": "d"}
RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: [dev]
    subjects: ["orders-*"]
    permission: write
"""


def as_user(name: str) -> dict[str, str]:
    token = base64.b64encode(f"{name}:{USERS[name]}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": CONTENT_TYPE}


@pytest.fixture
def auth_client(tmp_path: Path) -> Iterator[TestClient]:
    write_users(tmp_path / "users", USERS)
    (tmp_path / "rules.yaml").write_text(RULES)
    settings = Settings(
        poll_interval=0,
        auth_users_file=str(tmp_path / "users"),
        auth_rules_file=str(tmp_path / "rules.yaml"),
    )
    reg = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), settings)
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as test_client:
            yield test_client
    finally:
        reg.stop()


def test_batches_apply_the_single_calls_rights(auth_client: TestClient) -> None:
    admin, dev = as_user("admin"), as_user("dev")
    for subject in ("orders-value", "pay-key"):
        made = auth_client.post(
            f"/subjects/{subject}/versions", json={"schema": record("a")}, headers=admin
        )
        assert made.status_code == 200, made.text
    body = {
        "requests": [
            resource(
                "t",
                "t-1",
                create(subject="orders-value", lifecycle="WEAK"),
                create(subject="pay-key", associationType="key", lifecycle="WEAK"),
            )
        ]
    }
    # writing associations needs admin, as POST /associations does: nothing is written
    refused = auth_client.post("/associations:batchMutate", json=body, headers=dev)
    assert refused.status_code == 403, refused.text
    single = auth_client.post("/associations", json=body["requests"][0], headers=dev)
    assert single.status_code == refused.status_code
    got = {"requests": [{"resourceId": "t-1"}]}
    before = auth_client.post("/associations:batchGet", json=got, headers=admin).json()
    assert "associations" not in before["results"][0]["result"]
    done = auth_client.post("/associations:batchMutate", json=body, headers=admin)
    assert done.status_code == 207 and "result" in done.json()["results"][0]
    # reading: only the associations of subjects the caller may read, as the listings
    mine = auth_client.post("/associations:batchGet", json=got, headers=dev).json()
    assert [a["subject"] for a in mine["results"][0]["result"]["associations"]] == ["orders-value"]
    listed = auth_client.get("/associations/resources/t-1", headers=dev).json()
    assert [a["subject"] for a in listed] == ["orders-value"]
    everything = auth_client.post("/associations:batchGet", json=got, headers=admin).json()
    assert len(everything["results"][0]["result"]["associations"]) == 2
    anonymous = auth_client.post("/associations:batchGet", json=got)
    assert anonymous.status_code == 401


# ---- GET /schemas/ids/{id}?subject= -----------------------------------------------------------

V8 = {"Confluent-Client-Version": "python/2.16.1"}


def test_schema_by_id_with_subject_names_subject_and_version(client: TestClient) -> None:
    client.put("/config/b", json={"compatibility": "NONE"})
    first = client.post("/subjects/a/versions", json={"schema": record("x")}).json()["id"]
    client.post("/subjects/b/versions", json={"schema": record("y")})
    assert client.post("/subjects/b/versions", json={"schema": record("x")}).json()["id"] == first
    client.post("/subjects/:.ctx:c/versions", json={"schema": record("x")})
    answer = client.get(f"/schemas/ids/{first}?subject=b", headers=V8).json()
    plain = client.get(f"/schemas/ids/{first}", headers=V8).json()
    # 8.x's SchemaString with subject and version: the subject's own version of the id
    # (ts is that version's own registration time)
    same = {k: v for k, v in plain.items() if k != "ts"}
    assert {k: v for k, v in answer.items() if k != "ts"} == {
        "subject": "b",
        "version": 2,
        "id": first,
        **same,
    }
    assert answer["ts"] > plain["ts"]
    assert list(answer)[:5] == ["subject", "version", "id", "guid", "schemaType"]
    assert "subject" not in plain and "id" not in plain
    # found under another subject of the context when the named one lacks it; an empty
    # ?subject= still names where it was found
    assert client.get(f"/schemas/ids/{first}?subject=zz", headers=V8).json()["subject"] == "a"
    assert client.get(f"/schemas/ids/{first}?subject=", headers=V8).json()["version"] == 1
    # an unqualified subject also finds it in another context, under its qualified name
    other = client.get("/subjects/:.ctx:c/versions/1").json()["id"]
    in_ctx = client.get(f"/schemas/ids/{other}?subject=c", headers=V8).json()
    assert (in_ctx["subject"], in_ctx["version"]) == (":.ctx:c", 1)
    # a subject of another context that does not hold the id: 40403 (no fallback there), and
    # the context alone: any version of the id in it
    for tail in ("", "/subjects", "/versions"):
        qualified = client.get(f"/schemas/ids/{other}{tail}?subject=:.ctx:zz", headers=V8)
        assert error(qualified, 404, 40403)
        assert client.get(f"/schemas/ids/{other}{tail}?subject=:.ctx:").status_code == 200
    # 7.x callers (no Confluent client headers) keep 7.9's shape
    assert set(client.get(f"/schemas/ids/{first}?subject=b").json()) == {"schema"}


# ---- every field of 8.x's Config round-trips; validateNewSchemas and aliasForDeks apply -------

EVERY_FIELD: dict[str, Any] = {
    "alias": "target",
    "aliasForDeks": "dek-target",
    "normalize": True,
    "validateFields": False,
    "validateNewSchemas": False,
    "validateRules": True,
    "compatibility": "FULL",
    "compatibilityPolicy": "LENIENT",
    "compatibilityGroup": "app.version",
    "defaultMetadata": {"properties": {"owner": "team-a"}},
    "overrideMetadata": {"properties": {"tier": "1"}},
    "defaultRuleSet": {"domainRules": [{"name": "r1", "kind": "CONDITION", "type": "CEL"}]},
    "overrideRuleSet": {"migrationRules": [{"name": "m1", "kind": "TRANSFORM", "type": "JSONATA"}]},
}


def test_every_config_field_round_trips(client: TestClient) -> None:
    for key in ("/config/s", "/config"):
        put = client.put(key, json=EVERY_FIELD)
        assert put.status_code == 200, put.text
        assert put.json() == EVERY_FIELD  # the request echoed
        got = client.get(key).json()
        # Config: the level named compatibilityLevel, 8.x's field order
        expected = {
            ("compatibilityLevel" if k == "compatibility" else k): v for k, v in EVERY_FIELD.items()
        }
        assert got == expected
        assert list(got) == [
            "alias",
            "aliasForDeks",
            "normalize",
            "validateFields",
            "validateNewSchemas",
            "validateRules",
            "compatibilityLevel",
            "compatibilityPolicy",
            "compatibilityGroup",
            "defaultMetadata",
            "overrideMetadata",
            "defaultRuleSet",
            "overrideRuleSet",
        ]
    # partial update: absent fields keep their value; Jackson's coercions apply; the answer is
    # the config now stored (8.x)
    assert client.put("/config/s", json={"validateNewSchemas": "true"}).json() == {
        **EVERY_FIELD,
        "validateNewSchemas": True,
    }
    got = client.get("/config/s").json()
    assert got["validateNewSchemas"] is True and got["aliasForDeks"] == "dek-target"
    for bad in ({"validateNewSchemas": "maybe"}, {"aliasForDeks": [5]}):
        assert client.put("/config/s", json=bad).status_code == 400
    assert client.get("/config/s").json() == got


def test_validate_new_schemas_false_accepts_what_validation_refuses(client: TestClient) -> None:
    # an int field with a string default: 8.x refuses it unless the subject's config (or the
    # global one) turns validateNewSchemas off
    bad = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": "1"}]},
        separators=(",", ":"),
    )
    refused = client.post("/subjects/strict/versions", json={"schema": bad})
    assert error(refused, 422, 42201)
    check = client.post("/compatibility/subjects/lenient/versions", json={"schema": bad})
    assert check.status_code == 422
    client.put("/config/lenient", json={"validateNewSchemas": False})
    assert client.post("/compatibility/subjects/lenient/versions", json={"schema": bad}).json() == {
        "is_compatible": True
    }
    made = client.post("/subjects/lenient/versions", json={"schema": bad})
    assert made.status_code == 200, made.text
    assert client.get("/subjects/lenient/versions/1").json()["schema"] == bad
    assert error(client.post("/subjects/strict/versions", json={"schema": bad}), 422, 42201)


def test_alias_for_deks_wins_on_dek_paths(client: TestClient) -> None:
    keks = "/dek-registry/v1/keks"
    made = client.post(keks, json={"name": "k1", "kmsType": "local-kms", "kmsKeyId": "key1"})
    assert made.status_code == 200, made.text
    wrapped = base64.b64encode(b"wrapped").decode()
    for subject in ("dek-target", "plain-target"):
        dek = client.post(f"{keks}/k1/deks/{subject}", json={"encryptedKeyMaterial": wrapped})
        assert dek.status_code == 200, dek.text
    client.put("/config/orders-value", json={"alias": "plain-target"})
    assert client.get(f"{keks}/k1/deks/orders-value").json()["subject"] == "plain-target"
    client.put("/config/orders-value", json={"aliasForDeks": "dek-target"})
    assert client.get(f"{keks}/k1/deks/orders-value").json()["subject"] == "dek-target"
    # elsewhere the plain alias still applies
    client.post("/subjects/plain-target/versions", json={"schema": '"string"'})
    assert client.get("/subjects/orders-value/versions/1").json()["subject"] == "plain-target"


def test_validate_new_schemas_false_allows_references_to_soft_deleted_versions(
    client: TestClient,
) -> None:
    # AbstractSchemaProvider: lookupDeletedSchema = !validateAsNew
    client.post("/subjects/ref/versions", json={"schema": record("a")})
    client.delete("/subjects/ref/versions/1")
    outer = json.dumps({"type": "record", "name": "O", "fields": [{"name": "r", "type": "R"}]})
    body = {"schema": outer, "references": [{"name": "R", "subject": "ref", "version": 1}]}
    assert error(client.post("/subjects/o/versions", json=body), 422, 42201)
    client.put("/config/o", json={"validateNewSchemas": False})
    check = client.post("/compatibility/subjects/o/versions", json=body)
    assert check.json() == {"is_compatible": True}
    made = client.post("/subjects/o/versions", json=body)
    assert made.status_code == 200, made.text


def test_auth_middleware_does_not_import_the_app() -> None:
    # issue 13: the import circle between registry/api/app.py and registry/auth/middleware.py
    code = (
        "import sys, registry.auth.middleware; "
        "assert 'registry.api.app' not in sys.modules, 'middleware imports the app'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
