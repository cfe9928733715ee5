"""Request bodies and query parameters bound as Confluent 8.x's Jackson and Jersey bind them
(issue 25, items 12 and 14), and 8.5's wording of an invalid schema (item 15)."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

AVRO = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    message: str = body["message"]
    return message


def test_metadata_numbers_and_booleans_are_stored_as_their_text(client: TestClient) -> None:
    metadata = {"properties": {"n": 1, "f": 1.5, "b": True}, "tags": {"a": [2]}, "sensitive": [3]}
    response = client.post("/subjects/s/versions", json={"schema": AVRO, "metadata": metadata})
    assert response.status_code == 200, response.text
    stored = client.get("/subjects/s/versions/1").json()["metadata"]
    assert stored == {
        "properties": {"b": "true", "f": "1.5", "n": "1"},
        "tags": {"a": ["2"]},
        "sensitive": ["3"],
    }


def test_a_property_value_that_is_an_object_is_still_a_400(client: TestClient) -> None:
    metadata = {"properties": {"n": {"x": 1}}}
    response = client.post("/subjects/s/versions", json={"schema": AVRO, "metadata": metadata})
    error(response, 400, 400)
    assert client.get("/subjects").json() == []


def test_unknown_metadata_keys_are_dropped(client: TestClient) -> None:
    metadata = {"properties": {"k": "v"}, "owner": "me"}
    response = client.post("/subjects/s/versions", json={"schema": AVRO, "metadata": metadata})
    assert response.status_code == 200, response.text
    assert client.get("/subjects/s/versions/1").json()["metadata"] == {"properties": {"k": "v"}}


def test_an_empty_version_string_is_null(client: TestClient) -> None:
    response = client.post("/subjects/s/versions", json={"schema": AVRO, "version": ""})
    assert response.status_code == 200, response.text
    assert client.get("/subjects/s/versions").json() == [1]


def test_a_numeric_alias_is_its_text(client: TestClient) -> None:
    assert client.put("/config/a", json={"alias": 5}).status_code == 200
    assert client.get("/config/a").json()["alias"] == "5"


def test_a_rule_kind_outside_the_enum_is_a_mapping_error(client: TestClient) -> None:
    rule = {"name": "r", "kind": "BOGUS", "mode": "WRITE", "type": "CEL", "expr": "true"}
    body = {"schema": AVRO, "ruleSet": {"domainRules": [rule]}}
    message = error(client.post("/subjects/s/versions", json=body), 400, 400)
    assert "RuleKind" in message and '"BOGUS"' in message
    rule["kind"] = "transform"  # Jackson's enums are case-sensitive
    error(client.post("/subjects/s/versions", json=body), 400, 400)
    rule["kind"] = "CONDITION"
    assert client.post("/subjects/s/versions", json=body).status_code == 200


def test_int_query_parameters_as_jersey_converts_them(client: TestClient) -> None:
    for _ in range(3):
        client.post("/subjects/s/versions", json={"schema": AVRO})
    for text in ("a", "b", "c"):
        client.post(f"/subjects/{text}/versions", json={"schema": AVRO})
    assert client.get("/subjects?limit=%201").status_code == 404
    assert client.get("/subjects?limit=2147483648").status_code == 404
    assert client.get("/subjects?limit=1_0").status_code == 404
    assert client.get("/subjects?limit=2147483647").json() == ["a", "b", "c", "s"]
    assert client.get("/subjects?limit=%2B2").json() == ["a", "b"]
    assert client.get("/subjects?limit=+2").status_code == 404  # "+" is a space
    # a repeated single-valued parameter takes its first value, as Jersey's getFirst
    assert client.get("/subjects?offset=1&offset=0").json() == ["b", "c", "s"]
    assert client.get("/subjects?offset=0&offset=1&limit=1&limit=3").json() == ["a"]


def test_modify_tags_without_a_body(client: TestClient) -> None:
    client.post("/subjects/s/versions", json={"schema": AVRO})
    for path in ("/subjects/s/versions/1/tags", "/subjects/s/versions/bad/tags"):
        message = error(client.post(path, content=b""), 422, 422)
        assert message == "modifyTags.arg4 must not be null"


def test_an_invalid_schema_is_worded_as_confluent_8_5(client: TestClient) -> None:
    response = client.post("/subjects/s/versions", json={"schema": '{"type": "nope"}'})
    message = error(response, 422, 42201)
    # loadSchema wraps the provider's message: Avro's prints the request (Schema.toString)
    assert message.startswith(
        "Invalid schema of type AVRO, details: Invalid schema {subject=s,version=null,id=null,"
    ), message
    assert "schemaTags=null,ts=null,deleted=null} with refs [] of type AVRO, details: " in message
    body = {"schema": '{"type": ', "schemaType": "JSON"}
    message = error(client.post("/subjects/j/versions", json=body), 422, 42201)
    assert message == (
        "Invalid schema of type JSON, details: Invalid schema of type JSON, details: "
        "Invalid JSON schema"
    )
    refs = [{"name": "x", "subject": "missing", "version": 1}]
    response = client.post("/subjects/s/versions", json={"schema": AVRO, "references": refs})
    message = error(response, 422, 42201)
    assert message.startswith("Invalid schema of type AVRO, details: "), message
    assert "None" not in message


def test_messages_print_java_null_not_python_none(client: TestClient) -> None:
    client.post("/subjects/s/versions", json={"schema": AVRO})
    entity = {"entityPath": None, "entityType": "sr_field"}
    body = {"tagsToAdd": [{"schemaEntity": entity, "tags": ["X"]}]}
    message = error(client.post("/subjects/s/versions/1/tags", json=body), 422, 42201)
    assert "entityPath='null'" in message and "None" not in message, message
    refs = [{"subject": "s"}]
    response = client.post("/subjects/t/versions", json={"schema": AVRO, "references": refs})
    message = error(response, 422, 42201)
    assert "name='null'" in message and "None" not in message, message


def test_delete_a_subject_mode_under_a_global_read_only_override(client: TestClient) -> None:
    # 8.5's deleteSubjectMode reads the subject's own mode (getMode: no global override there)
    client.put("/mode/s", json={"mode": "READONLY"})
    client.put("/mode", json={"mode": "READONLY_OVERRIDE"})
    assert client.delete("/mode/s").json() == {"mode": "READONLY"}
    error(client.delete("/mode/other"), 404, 40401)
    assert client.delete("/mode").json() == {"mode": "READONLY_OVERRIDE"}
