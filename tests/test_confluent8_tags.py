"""``POST /subjects/{s}/versions/{v}/tags`` (Confluent 8.x): a new version whose Avro schema
carries inline ``confluent:tags`` on the records and fields named."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from registry.identity import guid_of, schema_hash
from tests.api_helpers import error

USER = {
    "type": "record",
    "name": "User",
    "namespace": "com.acme",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "street", "type": "string"}]}},
    ],
}  # fmt: skip


def field(name: str) -> dict[str, Any]:
    return {"schemaEntity": {"entityPath": f"com.acme.User.{name}", "entityType": "sr_field"}}


def test_tags_make_a_new_version(client: TestClient) -> None:
    client.post("/subjects/u/versions", json={"schema": json.dumps(USER)})
    body = {
        "tagsToAdd": [
            {**field("name"), "tags": ["PII", "PII"]},
            {
                "schemaEntity": {"entityPath": "com.acme.Address", "entityType": "sr_record"},
                "tags": ["LOCATION"],
            },
        ]
    }
    tagged = client.post("/subjects/u/versions/1/tags", json=body)
    assert tagged.status_code == 200, tagged.text
    reply = tagged.json()
    assert (reply["id"], reply["version"], reply["schemaType"]) == (2, 2, "AVRO")
    assert reply["metadata"] == {"properties": {"confluent:version": "2"}}
    stored = json.loads(client.get("/subjects/u/versions/2/schema").text)
    assert stored["fields"][0]["confluent:tags"] == ["PII"]
    assert stored["fields"][1]["type"]["confluent:tags"] == ["LOCATION"]
    version = client.get("/subjects/u/versions/2").json()
    assert reply["guid"] == guid_of(schema_hash(version["schema"], [], version["metadata"], None))
    # removing the tag again gives a third version without it
    removed = client.post(
        "/subjects/u/versions/latest/tags",
        json={"tagsToRemove": [{**field("name"), "tags": ["PII"]}], "newVersion": 3},
    )
    assert removed.json()["version"] == 3
    third = json.loads(client.get("/subjects/u/versions/3/schema").text)
    assert "confluent:tags" not in third["fields"][0]
    assert third["fields"][1]["type"]["confluent:tags"] == ["LOCATION"]


def test_tag_errors(client: TestClient) -> None:
    body = {"tagsToAdd": [{**field("name"), "tags": ["PII"]}]}
    error(client.post("/subjects/u/versions/1/tags", json=body), 404, 40401)
    client.post("/subjects/u/versions", json={"schema": json.dumps(USER)})
    error(client.post("/subjects/u/versions/7/tags", json=body), 404, 40402)
    error(client.post("/subjects/u/versions/0/tags", json=body), 422, 42202)
    missing = {"tagsToAdd": [{**field("nope"), "tags": ["PII"]}]}
    message = error(client.post("/subjects/u/versions/1/tags", json=missing), 422, 42201)
    assert message.endswith("No matching path 'com.acme.User.nope' found in the schema")
    both = {**body, "ruleSet": {"domainRules": []}, "rulesToRemove": ["x"]}
    error(client.post("/subjects/u/versions/1/tags", json=both), 422, 42210)
    assert client.get("/subjects/u/versions").json() == [1]


def test_find_tags_lists_the_tagged_entities(client: TestClient) -> None:
    client.post("/subjects/u/versions", json={"schema": json.dumps(USER)})
    body = {
        "tagsToAdd": [
            {**field("name"), "tags": ["PII"]},
            {
                "schemaEntity": {"entityPath": "com.acme.Address", "entityType": "sr_record"},
                "tags": ["LOCATION"],
            },
        ]
    }
    client.post("/subjects/u/versions/1/tags", json=body)
    everything = client.get("/subjects/u/versions/2?findTags=*").json()["schemaTags"]
    assert everything == [
        {
            "schemaEntity": {"entityPath": "com.acme.User.name", "entityType": "sr_field"},
            "tags": ["PII"],
        },
        {
            "schemaEntity": {"entityPath": "com.acme.Address", "entityType": "sr_record"},
            "tags": ["LOCATION"],
        },
    ]
    only = client.get("/schemas/ids/2?findTags=LOCATION").json()["schemaTags"]
    assert [t["schemaEntity"]["entityPath"] for t in only] == ["com.acme.Address"]
    assert "schemaTags" not in client.get("/subjects/u/versions/2?findTags=NONE").json()
    assert "schemaTags" not in client.get("/subjects/u/versions/2").json()


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "address": {"type": "object", "properties": {"street": {"type": "string"}}},
        "phones": {"type": "array", "items": {"type": "object", "properties": {
            "number": {"type": "string"}}}},
    },
    "definitions": {"Zip": {"type": "object", "properties": {"code": {"type": "string"}}}},
}  # fmt: skip


def json_entity(path: str, kind: str = "sr_field") -> dict[str, Any]:
    return {"schemaEntity": {"entityPath": path, "entityType": kind}}


def test_json_schema_tags_make_a_new_version(client: TestClient) -> None:
    registered = client.post(
        "/subjects/j/versions", json={"schema": json.dumps(PERSON), "schemaType": "JSON"}
    )
    assert registered.status_code == 200, registered.text
    body = {
        "tagsToAdd": [
            {**json_entity("object.name"), "tags": ["PII", "PII"]},
            {**json_entity("object.address.object", "sr_record"), "tags": ["LOCATION"]},
            {**json_entity("object.phones.array.object.number"), "tags": ["PII"]},
            {**json_entity("object.definitions.Zip.object.code"), "tags": ["LOCATION"]},
            {**json_entity("object", "sr_record"), "tags": ["ROOT"]},
        ]
    }
    tagged = client.post("/subjects/j/versions/1/tags", json=body)
    assert tagged.status_code == 200, tagged.text
    reply = tagged.json()
    assert (reply["id"], reply["version"], reply["schemaType"]) == (2, 2, "JSON")
    assert reply["metadata"] == {"properties": {"confluent:version": "2"}}
    stored = json.loads(client.get("/subjects/j/versions/2/schema").text)
    props = stored["properties"]
    assert props["name"] == {"type": "string", "confluent:tags": ["PII"]}
    assert props["address"]["confluent:tags"] == ["LOCATION"]
    assert props["phones"]["items"]["properties"]["number"]["confluent:tags"] == ["PII"]
    assert stored["definitions"]["Zip"]["properties"]["code"]["confluent:tags"] == ["LOCATION"]
    assert stored["confluent:tags"] == ["ROOT"]
    # removing the last tag of a node drops its confluent:tags; others stay
    removed = client.post(
        "/subjects/j/versions/latest/tags",
        json={"tagsToRemove": [{**json_entity("object.name"), "tags": ["PII"]}]},
    )
    assert removed.status_code == 200, removed.text
    assert removed.json()["version"] == 3
    third = json.loads(client.get("/subjects/j/versions/3/schema").text)
    assert "confluent:tags" not in third["properties"]["name"]
    assert third["properties"]["address"]["confluent:tags"] == ["LOCATION"]


def test_json_schema_tag_errors(client: TestClient) -> None:
    client.post("/subjects/j/versions", json={"schema": json.dumps(PERSON), "schemaType": "JSON"})
    for path, kind in (
        ("object.nope", "sr_field"),
        ("object.address.object.nope", "sr_field"),
        ("array.name", "sr_field"),
    ):
        missing = {"tagsToAdd": [{**json_entity(path, kind), "tags": ["PII"]}]}
        message = error(client.post("/subjects/j/versions/1/tags", json=missing), 422, 42201)
        assert message.endswith(f"No matching path '{path}' found in the schema")
    assert client.get("/subjects/j/versions").json() == [1]
