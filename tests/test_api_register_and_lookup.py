"""``POST /subjects/{s}/versions`` (register) and ``POST /subjects/{s}`` (lookup), as Confluent
Schema Registry 7.9 answers them: ids, versions, idempotency and every refusal."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient


def record(name: str, *fields: str, **extra: Any) -> str:
    """An Avro record with int fields ``fields``; extra keys go into the schema object."""
    body = {"type": "record", "name": name, "fields": [{"name": f, "type": "int"} for f in fields]}
    body.update(extra)
    return json.dumps(body)


def canonical(schema: str) -> str:
    return json.dumps(json.loads(schema), separators=(",", ":"))


def register(client: TestClient, subject: str, schema: str, **body: Any) -> Any:
    return client.post(f"/subjects/{subject}/versions", json={"schema": schema, **body})


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error_code", "message"}
    assert body["error_code"] == code
    message: str = body["message"]
    return message


def test_first_registration_answers_only_the_id(client: TestClient) -> None:
    response = register(client, "s", record("R", "a"))
    assert response.status_code == 200
    assert response.json() == {"id": 1}
    assert client.get("/subjects/s/versions").json() == [1]


def test_registering_the_same_schema_again_is_idempotent(client: TestClient) -> None:
    first = register(client, "s", record("R", "a")).json()
    again = register(client, "s", record("R", "a"))
    assert again.status_code == 200
    assert again.json() == first == {"id": 1}
    assert client.get("/subjects/s/versions").json() == [1]


def test_ten_schemas_get_ids_one_to_ten_and_keep_them(client: TestClient) -> None:
    schemas = [record("R", *[f"f{j}" for j in range(i + 1)]) for i in range(10)]
    client.put("/config/s", json={"compatibility": "NONE"})
    ids = [register(client, "s", s).json()["id"] for s in schemas]
    assert ids == list(range(1, 11))
    assert [register(client, "s", s).json()["id"] for s in schemas] == ids
    assert client.get("/subjects/s/versions").json() == list(range(1, 11))


def test_same_schema_in_two_subjects_shares_the_id(client: TestClient) -> None:
    assert register(client, "a", record("R", "x")).json() == {"id": 1}
    assert register(client, "b", record("R", "x")).json() == {"id": 1}
    assert client.get("/subjects/b/versions/1").json()["id"] == 1
    assert client.get("/schemas/ids/1/subjects").json() == ["a", "b"]
    assert register(client, "c", record("Other", "x")).json() == {"id": 2}


def test_whitespace_and_key_order_give_no_new_version(client: TestClient) -> None:
    register(client, "s", record("R", "a"))
    spaced = '{ "type" : "record",\n  "name": "R",\n "fields": [ {"name": "a", "type": "int"} ] }'
    assert register(client, "s", spaced).json() == {"id": 1}
    reordered = '{"fields": [{"type": "int", "name": "a"}], "name": "R", "type": "record"}'
    assert register(client, "s", reordered).json() == {"id": 1}
    assert client.get("/subjects/s/versions").json() == [1]
    assert client.get("/subjects/s/versions/1/schema").text == canonical(record("R", "a"))


def test_stored_text_is_the_canonical_form(client: TestClient) -> None:
    spaced = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}'
    register(client, "s", spaced)
    body = client.get("/subjects/s/versions/1").json()
    assert body == {"subject": "s", "version": 1, "id": 1, "schema": canonical(record("R", "a"))}


def test_normalize_makes_equivalent_spellings_one_schema(client: TestClient) -> None:
    plain = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"}]})
    verbose = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": {"type": "string"}}]}
    )
    first = client.post("/subjects/s/versions?normalize=true", json={"schema": verbose})
    assert first.json() == {"id": 1}
    again = client.post("/subjects/s/versions?normalize=true", json={"schema": plain})
    assert again.json() == {"id": 1}
    assert client.get("/subjects/s/versions").json() == [1]
    found = client.post("/subjects/s?normalize=true", json={"schema": verbose})
    assert found.status_code == 200
    assert (found.json()["version"], found.json()["id"]) == (1, 1)


def test_invalid_schema_is_42201_with_the_parser_reason(client: TestClient) -> None:
    message = error(register(client, "s", '{"type": "record", "name": "R"}'), 422, 42201)
    assert message.startswith("Invalid schema of type AVRO, details: Invalid schema {subject=s,")
    assert "fields" in message
    fields = [{"name": "a", "type": "nope"}]
    bad_type = json.dumps({"type": "record", "name": "R", "fields": fields})
    assert "nope" in error(register(client, "s", bad_type), 422, 42201)
    assert "Invalid JSON" in error(register(client, "s", "not a json"), 422, 42201)
    assert client.get("/subjects").json() == []


def test_bad_default_is_42201(client: TestClient) -> None:
    bad = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": "x"}]}
    )
    message = error(register(client, "s", bad), 422, 42201)
    assert "default" in message.lower()


def test_unknown_schema_type_is_42201(client: TestClient) -> None:
    message = error(register(client, "s", record("R", "a"), schemaType="XML"), 422, 42201)
    assert message == "Invalid schema type XML"


def test_subject_with_control_characters_is_42208(client: TestClient) -> None:
    response = client.post("/subjects/%0Dbad%0Asubject%09/versions", json={"schema": record("R")})
    message = error(response, 422, 42208)
    assert message == "The specified subject '\rbad\nsubject\t' is not a valid."


def test_reserved_subject_names_are_42208(client: TestClient) -> None:
    for name in ("__GLOBAL", "__EMPTY", ":.__GLOBAL:x"):
        response = register(client, name, record("R", "a"))
        assert error(response, 422, 42208) == f"The specified subject '{name}' is not a valid."


def test_empty_schema_without_previous_version_is_42201(client: TestClient) -> None:
    assert error(register(client, "s", ""), 422, 42201) == "Empty schema"
    assert error(client.post("/subjects/s/versions", json={}), 422, 42201) == "Empty schema"


def test_empty_schema_reuses_the_latest_version(client: TestClient) -> None:
    register(client, "s", record("R", "a"))
    response = register(client, "s", "  ")
    assert response.status_code == 200
    # the server filled the schema in, so it answers with the whole schema
    assert response.json() == {"id": 1, "version": 1, "schema": canonical(record("R", "a"))}
    assert client.get("/subjects/s/versions").json() == [1]


def test_explicit_version_must_be_the_next_one(client: TestClient) -> None:
    register(client, "s", record("R", "a"))
    message = error(register(client, "s", record("R", "a", doc="x"), version=5), 422, 42201)
    assert message == "Version is not one more than previous version"
    assert client.get("/subjects/s/versions").json() == [1]


def test_explicit_next_version_stamps_confluent_version(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "NONE"})
    register(client, "s", record("R", "a"))
    response = register(client, "s", record("R", "b"), version=2)
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == 2 and body["version"] == 2
    assert body["metadata"] == {"properties": {"confluent:version": "2"}}


def test_explicit_id_outside_import_mode_is_42205(client: TestClient) -> None:
    message = error(register(client, "s", record("R", "a"), id=7), 422, 42205)
    assert message == "Subject s is not in import mode"
    assert client.get("/subjects").json() == []


def test_references_that_are_not_objects_are_400(client: TestClient) -> None:
    response = register(client, "s", record("R", "a"), references="x")
    assert error(response, 400, 400)


# ---- lookup -----------------------------------------------------------------------------


def test_lookup_finds_the_registered_version(client: TestClient) -> None:
    register(client, "s", record("R", "a"))
    client.put("/config/s", json={"compatibility": "NONE"})
    register(client, "s", record("R", "b"))
    response = client.post("/subjects/s", json={"schema": record("R", "a")})
    assert response.status_code == 200
    assert response.json() == {
        "subject": "s",
        "version": 1,
        "id": 1,
        "schema": canonical(record("R", "a")),
    }
    spaced = client.post("/subjects/s", json={"schema": record("R", "b").replace(",", " ,  ")})
    assert (spaced.json()["version"], spaced.json()["id"]) == (2, 2)


def test_lookup_under_a_missing_subject_is_40401(client: TestClient) -> None:
    register(client, "other", record("R", "a"))
    message = error(client.post("/subjects/s", json={"schema": record("R", "a")}), 404, 40401)
    assert message == "Subject 's' not found."


def test_lookup_of_an_unknown_schema_is_40403(client: TestClient) -> None:
    register(client, "s", record("R", "a"))
    response = client.post("/subjects/s", json={"schema": record("R", "z")})
    assert error(response, 404, 40403) == "Schema not found"


def test_lookup_of_an_invalid_schema_is_42201(client: TestClient) -> None:
    register(client, "s", record("R", "a"))
    error(client.post("/subjects/s", json={"schema": "{"}), 422, 42201)


def test_lookup_of_a_soft_deleted_version_needs_deleted_true(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "NONE"})
    register(client, "s", record("R", "a"))
    register(client, "s", record("R", "b"))
    assert client.delete("/subjects/s/versions/1").json() == 1
    error(client.post("/subjects/s", json={"schema": record("R", "a")}), 404, 40403)
    found = client.post("/subjects/s?deleted=true", json={"schema": record("R", "a")})
    assert found.status_code == 200
    assert (found.json()["version"], found.json()["id"]) == (1, 1)


def test_lookup_in_a_fully_soft_deleted_subject(client: TestClient) -> None:
    register(client, "s", record("R", "a"))
    assert client.delete("/subjects/s").json() == [1]
    error(client.post("/subjects/s", json={"schema": record("R", "a")}), 404, 40401)
    found = client.post("/subjects/s?deleted=true", json={"schema": record("R", "a")})
    assert found.status_code == 200
    assert found.json()["version"] == 1


def test_lookup_does_not_validate_the_subject_name(client: TestClient) -> None:
    # Confluent 7.9's lookup finds nothing under such a name rather than rejecting it
    response = client.post("/subjects/bad%0Aname", json={"schema": record("R", "a")})
    assert error(response, 404, 40401) == "Subject 'bad\nname' not found."


def test_rule_sets_not_shaped_as_rules_are_answered_not_crashed_on(client: TestClient) -> None:
    """A look-up hashes the request's rule set to find it; one whose rules are not objects
    (a fuzzer's: arrays, strings, a map where a list belongs) matches nothing (40403) instead of
    failing the hash (500), with a valid schema text or not, and a registration refuses it."""
    schema = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
    assert client.post("/subjects/s/versions", json={"schema": schema}).status_code == 200
    shapes: list[Any] = [
        {"migrationRules": [[None, None, 5.7e16], {}, []]},
        {"": [], "migrationRules": {"k": [[None, None, 5.7e16], {}, []]}},
        {"domainRules": ["x"]},
        {"domainRules": [{"name": "r", "type": "CEL", "tags": [1, "a"]}]},
        {"encodingRules": [{"name": "r", "type": "CEL", "params": ["a"]}]},
    ]
    for rule_set in shapes:
        for text in (schema, "\U0001f1fa\U0001f1f8"):
            answer = client.post("/subjects/s", json={"schema": text, "ruleSet": rule_set})
            assert answer.status_code < 500, (rule_set, text, answer.text)
        found = client.post("/subjects/s", json={"schema": schema, "ruleSet": rule_set})
        assert found.status_code == 404 and found.json()["error_code"] == 40403, found.text
        registered = client.post(
            "/subjects/s/versions", json={"schema": schema, "ruleSet": rule_set}
        )
        assert registered.status_code < 500, (rule_set, registered.text)
