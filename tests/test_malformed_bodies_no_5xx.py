"""Malformed but well-typed request bodies (generated from the committed OpenAPI document, each
field either of its documented type, a tricky value of that type, or any JSON) for the tags,
associations and DEK registry endpoints: never a 5xx, and every refusal is a Confluent error
body (an int ``error_code`` and a string ``message``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store

SPEC = json.loads((Path(__file__).resolve().parent.parent / "openapi" / "openapi.json").read_text())
COMPONENTS: dict[str, Any] = SPEC["components"]["schemas"]
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"

USER = {
    "type": "record",
    "name": "User",
    "namespace": "com.acme",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "address", "type": ["null", {"type": "record", "name": "Address", "fields": [
            {"name": "street", "type": "string"}]}]},
    ],
}  # fmt: skip
JSON_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}

#: strings that reach indexes and splits: paths with no, one or many dots, names that exist
TRICKY_STRINGS = [
    "",
    ".",
    "..",
    "...",
    " ",
    "User",
    "Address",
    "com.acme.User",
    "com.acme.User.name",
    "com.acme.User.",
    ".com.acme.User",
    "com.acme.Address.street",
    "User.name",
    "a.b.c.d.e",
    "name",
    "u",
    "j",
    "k",
    "latest",
    "-1",
    "0",
    "9" * 12,
    "\u0000",
    "é.ü",
    "sr_field",
    "sr_record",
    "AES256_GCM",
    "STRONG",
    "CREATE",
    "topic",
    "*",
]
TRICKY_INTS = [0, 1, -1, 2, 3, 2**31 - 1, 2**31, -(2**31) - 1, 2**63, 10**30]

json_leaf = (
    st.none()
    | st.booleans()
    | st.sampled_from(TRICKY_INTS)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(TRICKY_STRINGS)
)
any_json = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(TRICKY_STRINGS), inner, max_size=3)
    ),
    max_leaves=8,
)


def shaped(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values for ``schema``: mostly of its type (tricky values first), sometimes any JSON."""
    if "$ref" in schema:
        schema = COMPONENTS[schema["$ref"].rsplit("/", 1)[-1]]
    kind = schema.get("type")
    if depth > 4:
        return any_json
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props:
            extra = schema.get("additionalProperties")
            values = shaped(extra, depth + 1) if isinstance(extra, dict) else any_json
            return st.dictionaries(st.sampled_from(TRICKY_STRINGS), values, max_size=3)
        every = st.fixed_dictionaries(
            {name: mostly(shaped(sub, depth + 1)) for name, sub in props.items()}
        )
        dropped = st.sets(st.sampled_from(sorted(props)), max_size=len(props))
        return st.tuples(every, dropped).map(
            lambda pair: {k: v for k, v in pair[0].items() if k not in pair[1]}
        )
    if kind == "array":
        return st.lists(shaped(schema.get("items") or {}, depth + 1), max_size=3)
    if kind == "string":
        pool = list(schema.get("enum") or []) + TRICKY_STRINGS
        return st.sampled_from(pool) | st.text(max_size=8)
    if kind == "integer":
        return st.sampled_from(TRICKY_INTS) | st.integers()
    if kind == "boolean":
        return st.booleans()
    return any_json


def mostly(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``strategy`` three times in four, any JSON value otherwise."""
    return st.one_of(strategy, strategy, strategy, any_json)


def well_typed_or_not(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    return mostly(shaped(schema))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    tmp = tmp_path_factory.mktemp("malformed")
    # a shared KEK without a KMS secret is Confluent's own 500 (50070): give the local KMS one
    patch = pytest.MonkeyPatch()
    patch.setenv("LOCAL_SECRET", "a local secret for the malformed-bodies test")
    reg = Registry(open_store(f"sqlite:///{tmp / 'r.db'}"), Settings(poll_interval=0))
    reg.start()
    try:
        app = create_app(reg, manage_lifecycle=False)
        with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as test_client:
            for subject, body in (
                ("u", {"schema": json.dumps(USER)}),
                ("j", {"schema": json.dumps(JSON_SCHEMA), "schemaType": "JSON"}),
            ):
                made = test_client.post(f"/subjects/{subject}/versions", json=body)
                assert made.status_code == 200, made.text
            kek = {"name": "k", "kmsType": "local-kms", "kmsKeyId": "key1"}
            assert test_client.post("/dek-registry/v1/keks", json=kek).status_code == 200
            yield test_client
    finally:
        reg.stop()
        patch.undo()


def assert_confluent_answer(response: Any, what: str) -> None:
    assert response.status_code < 500, f"{what}: {response.status_code} {response.text}"
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body, dict), (what, body)
        assert isinstance(body.get("error_code"), int), (what, body)
        assert isinstance(body.get("message"), str), (what, body)


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)

entity = st.fixed_dictionaries(
    {
        "entityPath": mostly(st.sampled_from(TRICKY_STRINGS)),
        "entityType": mostly(st.sampled_from(["sr_field", "sr_record"])),
    }
)
entity_tags = st.fixed_dictionaries(
    {
        "schemaEntity": mostly(entity),
        "tags": mostly(st.lists(mostly(st.sampled_from(TRICKY_STRINGS)), max_size=3)),
    }
)
tag_request = st.one_of(
    well_typed_or_not(COMPONENTS["TagSchemaRequest"]),
    st.fixed_dictionaries(
        {"tagsToAdd": mostly(st.lists(entity_tags, min_size=1, max_size=2))},
        optional={
            "tagsToRemove": mostly(st.lists(entity_tags, max_size=2)),
            "metadata": mostly(shaped(COMPONENTS["Metadata"])),
            "newVersion": st.sampled_from([*TRICKY_INTS, None, "2", ""]),
        },
    ),
)


@SETTINGS
@given(subject=st.sampled_from(["u", "u", "j", "missing"]), body=tag_request)
def test_tag_requests(client: TestClient, subject: str, body: Any) -> None:
    response = client.post(f"/subjects/{subject}/versions/1/tags", json=body)
    assert_confluent_answer(response, f"tags {subject} {body!r}")


ASSOCIATION_WRITES = [
    ("POST", "/associations", "AssociationCreateOrUpdateRequest"),
    ("PUT", "/associations/resources/r1", "AssociationCreateOrUpdateRequest"),
    ("POST", "/associations:batchGet", "AssociationBatchGetRequest"),
    ("POST", "/associations:batchMutate", "AssociationBatchRequest"),
]


@SETTINGS
@given(
    route=st.sampled_from(ASSOCIATION_WRITES),
    data=st.data(),
    dry_run=st.sampled_from(["", "?dryRun=true"]),
)
def test_association_requests(
    client: TestClient, route: tuple[str, str, str], data: st.DataObject, dry_run: str
) -> None:
    method, path, component = route
    body = data.draw(well_typed_or_not(COMPONENTS[component]))
    response = client.request(method, path + dry_run, json=body)
    assert_confluent_answer(response, f"{method} {path} {body!r}")


DEK_WRITES = [
    ("POST", "/dek-registry/v1/keks", "CreateKekRequest"),
    ("PUT", "/dek-registry/v1/keks/k", "UpdateKekRequest"),
    ("POST", "/dek-registry/v1/keks/k/deks", "CreateDekRequest"),
    ("POST", "/dek-registry/v1/keks/k/deks/u", "CreateDekRequest"),
    ("POST", "/dek-registry/v1/keks/missing/deks", "CreateDekRequest"),
]


@SETTINGS
@given(route=st.sampled_from(DEK_WRITES), data=st.data())
def test_dek_requests(client: TestClient, route: tuple[str, str, str], data: st.DataObject) -> None:
    method, path, component = route
    body = data.draw(well_typed_or_not(COMPONENTS[component]))
    response = client.request(method, path, json=body)
    assert_confluent_answer(response, f"{method} {path} {body!r}")
