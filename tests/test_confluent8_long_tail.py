"""Confluent 8.x's long tail (issue 25, items 1-7 and 9), each rule as
confluentinc/schema-registry 8.x's source has it: tags on a path too short for its entity type,
path numbers too long for ``int()``, ``validateFields`` and ``confluent:reserved``, ``PUT
/config`` answering the stored config, config and mode surviving a soft delete, ``DELETE
/config`` in read-only mode, a look-up of an empty schema, and a soft-deleted referrer
protecting from a permanent delete."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from tests.api_helpers import error, record

USER = {
    "type": "record",
    "name": "User",
    "namespace": "com.acme",
    "fields": [{"name": "name", "type": "string"}],
}
HUGE = "9" * 5000  # Python's int() refuses more than 4,300 digits


def register(client: TestClient, subject: str, schema: str, **extra: object) -> dict[str, object]:
    made = client.post(f"/subjects/{subject}/versions", json={"schema": schema, **extra})
    assert made.status_code == 200, made.text
    return dict(made.json())


# ---- 1. tags: an sr_field path naming only a record -----------------------------------------


@pytest.mark.parametrize(
    ("path", "kind", "detail"),
    [("User", "sr_field", "0 > -1"), (".", "sr_record", "0 > -1"), (".", "sr_field", "0 > -2")],
)
def test_a_tag_path_too_short_for_its_entity_type_is_42201(
    client: TestClient, path: str, kind: str, detail: str
) -> None:
    # AvroSchemaUtils.findMatchingEntity: Arrays.copyOfRange(identifiers, 0, length - 2) throws
    # IllegalArgumentException, which modifySchemaTags answers as an invalid schema
    register(client, "u", json.dumps(USER))
    body = {
        "tagsToAdd": [{"schemaEntity": {"entityPath": path, "entityType": kind}, "tags": ["X"]}]
    }
    message = error(client.post("/subjects/u/versions/1/tags", json=body), 422, 42201)
    assert message == f"java.lang.IllegalArgumentException: {detail}"
    assert client.get("/subjects/u/versions").json() == [1]


# ---- 2. a number too long for int() in a path -------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/schemas/ids/{n}"),
        ("GET", "/schemas/ids/{n}/schema"),
        ("GET", "/schemas/ids/{n}/subjects"),
        ("GET", "/schemas/ids/{n}/versions"),
        ("GET", "/subjects/s/versions/{n}"),
        ("GET", "/subjects/s/versions/{n}/schema"),
        ("GET", "/subjects/s/versions/{n}/referencedby"),
        ("DELETE", "/subjects/s/versions/{n}"),
        ("DELETE", "/subjects/s/versions/{n}?permanent=true"),
        ("POST", "/compatibility/subjects/s/versions/{n}"),
        ("POST", "/subjects/s/versions/{n}/tags"),
        ("GET", "/dek-registry/v1/keks/k/deks/s/versions/{n}"),
        ("DELETE", "/dek-registry/v1/keks/k/deks/s/versions/{n}"),
        ("POST", "/dek-registry/v1/keks/k/deks/s/versions/{n}/undelete"),
    ],
)
def test_a_5000_digit_path_number_answers_as_one_that_does_not_fit(
    client: TestClient, method: str, path: str
) -> None:
    register(client, "s", record("a"))
    body = {"schema": record("a")} if method == "POST" else None
    huge = client.request(method, path.format(n=HUGE), json=body)
    assert huge.status_code < 500, huge.text
    # the answer Confluent gives for a number past Integer.MAX_VALUE (404 for an id, 42202 for
    # a version), pinned by test_strict_path_numbers
    too_big = client.request(method, path.format(n="2147483648"), json=body)
    assert (huge.status_code, huge.json()["error_code"]) == (
        too_big.status_code,
        too_big.json()["error_code"],
    )
    if "/schemas/ids/" in path:
        assert huge.json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
    elif "/dek-registry/" not in path:
        assert huge.json()["error_code"] == 42202


def test_leading_zeros_past_4300_digits_are_read_as_java_reads_them(client: TestClient) -> None:
    register(client, "s", record("a"))
    one = "0" * 5000 + "1"
    assert client.get(f"/schemas/ids/{one}").status_code == 200
    assert client.get(f"/subjects/s/versions/{one}").json()["version"] == 1


# ---- 3. validateFields and confluent:reserved ----------------------------------------------


def reserved(names: str) -> dict[str, object]:
    return {"metadata": {"properties": {"confluent:reserved": names}}}


def test_validate_fields_refuses_a_field_named_by_confluent_reserved(client: TestClient) -> None:
    client.put("/config/s", json={"validateFields": True, "compatibility": "NONE"})
    refused = client.post(
        "/subjects/s/versions", json={"schema": record("a", "b"), **reserved("b")}
    )
    assert error(refused, 409, 409) == (
        'Schema being registered is incompatible with an earlier schema for subject "s", '
        "details: [The new schema has field that conflicts with the reserved field b., "
        "{validateFields: 'true', compatibility: 'NONE'}]"
    )
    error(client.get("/subjects/s/versions"), 404, 40401)
    # a name that is not a top-level field is fine; spaces and empty names are dropped
    register(client, "s", record("a"), **reserved(" x , ,y"))


def test_validate_fields_refuses_dropping_a_reserved_name(client: TestClient) -> None:
    client.put("/config/s", json={"validateFields": True, "compatibility": "NONE"})
    register(client, "s", record("a"), **reserved("x,y"))
    refused = client.post(
        "/subjects/s/versions", json={"schema": record("a", "c"), **reserved("x")}
    )
    assert error(refused, 409, 409).endswith(
        "[The new schema has reserved field y removed from its metadata which is present in the "
        "old schema's metadata., {validateFields: 'true', compatibility: 'NONE'}]"
    )
    # the compatibility test endpoint applies the same rule
    check = client.post(
        "/compatibility/subjects/s/versions/latest?verbose=true",
        json={"schema": record("a", "c"), **reserved("x")},
    )
    assert check.json()["is_compatible"] is False
    # keeping the reserved names (with more) registers
    assert register(client, "s", record("a", "c"), **reserved("x,y,z"))["version"] == 2


def test_without_validate_fields_reserved_names_are_not_checked(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "NONE"})
    register(client, "s", record("a", "b"), **reserved("b"))
    assert register(client, "s", record("a", "b", "c"), **reserved("c"))["version"] == 2


def test_validate_fields_on_json_schema_properties(client: TestClient) -> None:
    client.put("/config/j", json={"validateFields": True})
    schema = json.dumps({"type": "object", "properties": {"ssn": {"type": "string"}}})
    body = {"schema": schema, "schemaType": "JSON", **reserved("ssn")}
    error(client.post("/subjects/j/versions", json=body), 409, 409)


def test_validate_fields_on_protobuf_top_level_fields(client: TestClient) -> None:
    # AxonOps' "Protobuf reserved field conflict detected" (a 500 before: the check called
    # the descriptor property)
    client.put("/config/p", json={"validateFields": True, "compatibility": "NONE"})
    schema = 'syntax = "proto3";\nmessage Test {\n  string email = 1;\n}'
    body = {"schema": schema, "schemaType": "PROTOBUF", **reserved("email")}
    message = error(client.post("/subjects/p/versions", json=body), 409, 409)
    assert "conflicts with the reserved field email" in message
    allowed = {"schema": schema, "schemaType": "PROTOBUF", **reserved("phone")}
    assert client.post("/subjects/p/versions", json=allowed).status_code == 200


# ---- 4. PUT /config answers the stored config ---------------------------------------------


def test_put_config_answers_the_config_now_stored(client: TestClient) -> None:
    response = client.put("/config", json={"compatibility": "forward"})
    assert (response.status_code, response.json()) == (200, {"compatibility": "FORWARD"})
    assert client.put("/config", json={}).json() == {"compatibility": "FORWARD"}
    answer = client.put("/config/s", json={"normalize": True}).json()
    assert answer == {"normalize": True}  # no level stored for s: none answered
    answer = client.put("/config/s", json={"compatibilityPolicy": "lenient"}).json()
    assert answer == {"normalize": True, "compatibilityPolicy": "LENIENT"}


# ---- 5. a soft delete keeps config and mode ------------------------------------------------


def test_soft_delete_keeps_config_and_mode_a_permanent_delete_removes_them(
    client: TestClient,
) -> None:
    register(client, "s", record("a"))
    client.put("/config/s", json={"compatibility": "FULL"})
    client.put("/mode/s", json={"mode": "READWRITE"})
    assert client.delete("/subjects/s").json() == [1]
    assert client.get("/config/s").json() == {"compatibilityLevel": "FULL"}
    assert client.get("/mode/s").json() == {"mode": "READWRITE"}
    # a config written after the soft delete goes too
    client.put("/config/s", json={"compatibility": "NONE"})
    assert client.delete("/subjects/s?permanent=true").json() == [1]
    error(client.get("/config/s"), 404, 40408)
    error(client.get("/mode/s"), 404, 40409)


# ---- 6. DELETE /config in read-only mode -------------------------------------------------


def test_delete_config_in_read_only_mode_is_42205(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "FULL"})
    client.put("/config", json={"compatibility": "NONE"})
    client.put("/mode/s", json={"mode": "READONLY"})
    error(client.delete("/config/s"), 422, 42205)
    assert client.get("/config/s").json() == {"compatibilityLevel": "FULL"}
    client.put("/mode", json={"mode": "READONLY"})
    error(client.delete("/config"), 422, 42205)
    assert client.get("/config").json() == {"compatibilityLevel": "NONE"}
    # no subject config: still 40401 first, as Confluent looks the config up before the mode
    error(client.delete("/config/t"), 404, 40401)


# ---- 7. a look-up with an empty schema -----------------------------------------------------


@pytest.mark.parametrize("text", ["", "  "])
def test_lookup_of_an_empty_schema_is_40403(client: TestClient, text: str) -> None:
    register(client, "s", record("a"))
    assert error(client.post("/subjects/s", json={"schema": text}), 404, 40403) == (
        "Schema not found"
    )
    error(client.post("/subjects/none", json={"schema": text}), 404, 40401)
    # registration refuses it where no previous version stands in for it
    error(client.post("/subjects/none/versions", json={"schema": text}), 422, 42201)


# ---- 9. a soft-deleted referrer protects from a permanent delete ------------------------


def test_permanent_delete_of_a_version_with_a_soft_deleted_referrer_is_42206(
    client: TestClient,
) -> None:
    address = {"type": "record", "name": "Address", "fields": [{"name": "s", "type": "string"}]}
    register(client, "address", json.dumps(address))
    user = {"type": "record", "name": "U", "fields": [{"name": "a", "type": "Address"}]}
    ref = {"name": "Address", "subject": "address", "version": 1}
    register(client, "user", json.dumps(user), references=[ref])
    client.delete("/subjects/user/versions/1")
    assert client.delete("/subjects/address/versions/1").json() == 1
    message = error(client.delete("/subjects/address/versions/1?permanent=true"), 422, 42206)
    assert "subject=address,version=1" in message
    error(client.delete("/subjects/address?permanent=true"), 422, 42206)
    assert client.delete("/subjects/user/versions/1?permanent=true").json() == 1
    assert client.delete("/subjects/address/versions/1?permanent=true").json() == 1


# ---- 8. metadata in look-ups and registrations ------------------------------------------------
# AbstractSchemaRegistry.lookUpSchemaUnderSubject: the identity hash (MD5.ofSchema: a non-null
# Metadata, even an empty one, adds a byte), then ParsedSchema.canLookup (equivalent:
# Objects.equals of the metadata), then once more with maybeSetMetadataRuleSet's metadata of
# the latest version; KafkaSchemaRegistry.register does the same before making a version.


def test_a_lookup_without_metadata_misses_an_older_version_that_has_metadata(
    client: TestClient,
) -> None:
    a = record("a")
    assert client.put("/config/md", json={"compatibility": "NONE"}).status_code == 200
    register(client, "md", a, metadata={"properties": {"owner": "x"}})
    # the latest version has other metadata (without any it would inherit version 1's)
    register(client, "md", record("a", "b"), metadata={"properties": {"owner": "y"}})
    error(client.post("/subjects/md", json={"schema": a}), 404, 40403)
    found = client.post(
        "/subjects/md", json={"schema": a, "metadata": {"properties": {"owner": "x"}}}
    )
    assert found.status_code == 200 and found.json()["version"] == 1


def test_a_lookup_without_metadata_takes_the_latest_versions_metadata(client: TestClient) -> None:
    register(client, "md", record("a"), metadata={"properties": {"owner": "x"}})
    found = client.post("/subjects/md", json={"schema": record("a")})
    assert found.status_code == 200, found.text
    assert found.json()["metadata"] == {"properties": {"owner": "x"}}


def test_empty_metadata_is_echoed_and_is_not_missing_metadata(client: TestClient) -> None:
    a = record("a")
    made = register(client, "empty", a, metadata={})
    assert made["metadata"] == {}
    assert client.get("/subjects/empty/versions/1").json()["metadata"] == {}
    assert client.get(f"/schemas/ids/{made['id']}").json()["metadata"] == {}
    # a look-up without metadata finds it (the latest version's metadata is taken)
    assert client.post("/subjects/empty", json={"schema": a}).json()["version"] == 1
    # the same text without metadata elsewhere is another schema (another id)
    plain = register(client, "plain", a)
    assert plain["id"] != made["id"]
    assert "metadata" not in client.get("/subjects/plain/versions/1").json()
    # `{}` looks up nothing in a subject whose versions have no metadata (the second look-up
    # with the latest version's metadata changes nothing, so it is not made)
    error(client.post("/subjects/plain", json={"schema": a, "metadata": {}}), 404, 40403)
    # registering it there makes a new version, with the id `{}` already has in the context
    again = register(client, "plain", a, metadata={})
    assert (again["version"], again["id"], again["metadata"]) == (2, made["id"], {})


# ---- 15. JSON Schema's 42201 in 8.x's words ------------------------------------------------
# JsonSchema's constructor: a text Jackson cannot read is "Invalid JSON schema", wrapped by
# JsonSchemaProvider.parseSchemaOrElseThrow and AbstractSchemaRegistry.loadSchema; one that
# reads but does not load fails in JsonSchema.rawSchema ("Invalid JSON" for every loader
# failure), called by validate() in maybeValidateAndNormalizeSchema, which prints the request.


def _validation_message(subject: str, text: str, reason: str) -> str:
    from registry.identity import guid_of, schema_hash

    return (
        f"Invalid schema {{subject={subject},version=0,id=-1,guid={guid_of(schema_hash(text))},"
        f"schemaType=JSON,references=[],metadata=null,ruleSet=null,schema={text},"
        f"schemaTags=null,ts=null,deleted=null}}, details: {reason}"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"type": 5}',  # a keyword of the wrong type
        '{"properties": 5}',
        '{"minLength": "x"}',
        '{"$ref": "#/definitions/nope"}',  # a $ref to nothing in the document
        '{"$ref": "other.json"}',  # a $ref no reference provides
        '{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": 5}',
    ],
)
def test_a_json_schema_that_does_not_load_is_invalid_json(client: TestClient, text: str) -> None:
    for path in ("/subjects/j/versions", "/compatibility/subjects/j/versions/latest"):
        body = {"schema": text, "schemaType": "JSON"}
        assert error(client.post(path, json=body), 422, 42201) == _validation_message(
            "j", text, "Invalid JSON"
        )
    assert client.get("/subjects").json() == []


def test_json_schema_messages_of_unreadable_text_and_a_wrong_root(client: TestClient) -> None:
    body = {"schema": "{nope", "schemaType": "JSON"}
    assert error(client.post("/subjects/j/versions", json=body), 422, 42201) == (
        "Invalid schema of type JSON, details: Invalid schema of type JSON, details: "
        "Invalid JSON schema"
    )
    body = {"schema": "[1]", "schemaType": "JSON"}
    assert error(client.post("/subjects/j/versions", json=body), 422, 42201) == (
        _validation_message(
            "j",
            "[1]",
            "Invalid JSON schema: expected an object or boolean at the root, found ARRAY",
        )
    )
    # an unknown $schema is read as draft 7 (SpecificationVersion.getFromUrl gives null)
    text = '{"$schema": "http://example.com/nope", "type": "object"}'
    made = client.post("/subjects/j/versions", json={"schema": text, "schemaType": "JSON"})
    assert made.status_code == 200, made.text
