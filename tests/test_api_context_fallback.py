"""Which reads of an unqualified subject try the other contexts (Confluent 8.x): a version
(``getUsingContexts``) and a lookup (``lookUpSchemaUnderSubjectUsingContexts``) do; the list of
versions (``getAllVersions``) and the latest with metadata do not (issue 25, item 13)."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

AVRO = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


def test_only_versions_and_lookups_fall_back_to_other_contexts(client: TestClient) -> None:
    metadata = {"properties": {"owner": "x"}}
    body = {"schema": AVRO, "metadata": metadata}
    assert client.post("/subjects/:.ctx:s/versions", json=body).status_code == 200
    assert client.get("/subjects/s/versions/1").json()["subject"] == ":.ctx:s"
    assert client.post("/subjects/s", json=body).json()["subject"] == ":.ctx:s"
    listed = client.get("/subjects/s/versions")
    assert listed.status_code == 404 and listed.json()["error_code"] == 40401
    latest = client.get("/subjects/s/metadata?key=owner&value=x")
    assert latest.status_code == 404 and latest.json()["error_code"] == 40401
    assert client.get("/subjects/:.ctx:s/versions").json() == [1]


def test_an_alias_inside_a_context_resolves_there(client: TestClient) -> None:
    assert client.post("/subjects/:.ctx:target/versions", json={"schema": AVRO}).status_code == 200
    assert client.put("/contexts/.ctx/config/alias", json={"alias": "target"}).status_code == 200
    found = client.get("/contexts/.ctx/subjects/alias/versions/1")
    assert found.status_code == 200, found.text
    assert found.json()["subject"] == ":.ctx:target"
    assert client.get("/subjects/:.ctx:alias/versions").json() == [1]
