"""Every rejected request leaves the registry as it was: same subjects, versions, ids,
configs, modes and log offset."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry.core import Registry

V1 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
BREAKING = json.dumps({"type": "record", "name": "R", "fields": [{"name": "b", "type": "int"}]})
ADDRESS = json.dumps(
    {"type": "record", "name": "Address", "fields": [{"name": "street", "type": "string"}]}
)
USES_ADDRESS = json.dumps(
    {"type": "record", "name": "Customer", "fields": [{"name": "a", "type": "Address"}]}
)
REF = {"name": "Address", "subject": "address", "version": 1}


def snapshot(client: TestClient, registry: Registry) -> dict[str, Any]:
    """Everything a client can see, plus the store offset (nothing appended)."""
    subjects = client.get("/subjects?deleted=true").json()
    return {
        "offset": registry.state.offset,
        "subjects": subjects,
        "versions": {
            s: client.get(f"/subjects/{s}/versions?deleted=true").json() for s in subjects
        },
        "schemas": client.get("/schemas?deleted=true").json(),
        "max_id": client.get("/schemas/ids/1?fetchMaxId=true").json().get("maxId"),
        "config": client.get("/config").json(),
        "subject_config": client.get("/config/s").json(),
        "mode": client.get("/mode").json(),
        "contexts": client.get("/contexts").json(),
    }


@pytest.fixture
def seeded(client: TestClient) -> TestClient:
    """s v1 (id 1) with a FULL subject config; address v1 (id 2) referenced by customer v1
    (id 3); gone: soft-deleted."""
    assert client.post("/subjects/s/versions", json={"schema": V1}).status_code == 200
    assert client.put("/config/s", json={"compatibility": "FULL"}).status_code == 200
    client.post("/subjects/address/versions", json={"schema": ADDRESS})
    customer = {"schema": USES_ADDRESS, "references": [REF]}
    assert client.post("/subjects/customer/versions", json=customer).status_code == 200
    client.post("/subjects/gone/versions", json={"schema": V1})
    client.delete("/subjects/gone")
    return client


Request = Callable[[TestClient], Any]

REJECTED: list[tuple[str, Request, int]] = [
    ("invalid schema", lambda c: c.post("/subjects/s/versions", json={"schema": "{"}), 42201),
    (
        "bad schema type",
        lambda c: c.post("/subjects/n/versions", json={"schema": V1, "schemaType": "X"}),
        42201,
    ),
    ("empty schema", lambda c: c.post("/subjects/n/versions", json={"schema": ""}), 42201),
    (
        "wrong explicit version",
        lambda c: c.post("/subjects/s/versions", json={"schema": V1, "version": 9}),
        42201,
    ),
    ("explicit id", lambda c: c.post("/subjects/n/versions", json={"schema": V1, "id": 9}), 42205),
    ("incompatible", lambda c: c.post("/subjects/s/versions", json={"schema": BREAKING}), 409),
    (
        "missing reference",
        lambda c: c.post(
            "/subjects/n/versions",
            json={"schema": USES_ADDRESS, "references": [{**REF, "version": 5}]},
        ),
        42201,
    ),
    ("invalid subject", lambda c: c.post("/subjects/a%0Ab/versions", json={"schema": V1}), 42208),
    ("malformed json", lambda c: c.post("/subjects/n/versions", content=b"{"), 400),
    ("wrong json shape", lambda c: c.post("/subjects/n/versions", json=[V1]), 400),
    (
        "unsupported media type",
        lambda c: c.post(
            "/subjects/n/versions",
            content=json.dumps({"schema": V1}),
            headers={"Content-Type": "text/plain"},
        ),
        415,
    ),
    ("delete referenced", lambda c: c.delete("/subjects/address/versions/1"), 42206),
    ("delete referenced subject", lambda c: c.delete("/subjects/address"), 42206),
    ("permanent without soft", lambda c: c.delete("/subjects/s?permanent=true"), 40405),
    (
        "permanent version without soft",
        lambda c: c.delete("/subjects/s/versions/1?permanent=true"),
        40407,
    ),
    ("soft delete twice", lambda c: c.delete("/subjects/gone"), 40404),
    ("delete bad version", lambda c: c.delete("/subjects/s/versions/0"), 42202),
    ("delete missing version", lambda c: c.delete("/subjects/s/versions/7"), 40402),
    ("delete missing subject", lambda c: c.delete("/subjects/nope"), 40401),
    ("bad level", lambda c: c.put("/config", json={"compatibility": "SOMETIMES"}), 42203),
    ("bad subject level", lambda c: c.put("/config/s", json={"compatibility": "X"}), 42203),
    ("bad mode", lambda c: c.put("/mode", json={"mode": "SOMETIMES"}), 42204),
    ("import with subjects", lambda c: c.put("/mode", json={"mode": "IMPORT"}), 42205),
    ("delete unset config", lambda c: c.delete("/config/nope"), 40401),
    ("delete unset mode", lambda c: c.delete("/mode/nope"), 40401),
    ("delete non-empty context", lambda c: c.delete("/contexts/.ctx"), 42211),
]


@pytest.mark.parametrize(("what", "send", "code"), REJECTED, ids=[r[0] for r in REJECTED])
def test_rejected_request_changes_nothing(
    seeded: TestClient, registry: Registry, what: str, send: Request, code: int
) -> None:
    if what == "delete non-empty context":
        seeded.post("/subjects/:.ctx:x/versions", json={"schema": V1})
    before = snapshot(seeded, registry)
    response = send(seeded)
    assert response.status_code == int(str(code)[:3]), response.text
    assert response.json()["error_code"] == code
    assert snapshot(seeded, registry) == before


def test_read_only_rejections_change_nothing(seeded: TestClient, registry: Registry) -> None:
    seeded.put("/mode", json={"mode": "READONLY"})
    before = snapshot(seeded, registry)
    attempts = [
        seeded.post("/subjects/n/versions", json={"schema": V1}),
        seeded.delete("/subjects/s/versions/1"),
        seeded.delete("/subjects/s"),
        seeded.put("/config/s", json={"compatibility": "NONE"}),
    ]
    for response in attempts:
        assert (response.status_code, response.json()["error_code"]) == (422, 42205)
    assert snapshot(seeded, registry) == before


def test_a_lookup_whose_rule_set_holds_a_null_rule_matches_nothing(client) -> None:  # type: ignore[no-untyped-def]
    """Found by schemathesis: a look-up of a subject with a version, whose ``ruleSet`` lists a
    ``null`` rule, answered 500 while merging it with the previous version's rules."""
    schema = '{"type": "record", "name": "R", "fields": []}'
    assert client.post("/subjects/nullrule/versions", json={"schema": schema}).status_code == 200
    rule = {"name": "a", "kind": "CONDITION", "type": "CEL", "mode": "WRITE", "expr": "true"}
    default = {"defaultRuleSet": {"domainRules": [rule]}}  # merged with the look-up's
    assert client.put("/config/nullrule", json=default).status_code == 200
    body = {
        "schema": "",
        "schemaType": "AVRO",
        "metadata": {"properties": {}, "sensitive": [], "tags": {}},
        "ruleSet": {"migrationRules": [None], "domainRules": [], "encodingRules": []},
    }
    answer = client.post("/subjects/nullrule", json=body)
    assert answer.status_code == 404 and answer.json()["error_code"] == 40403, answer.text
