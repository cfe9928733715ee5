"""Confluent 8.x answers the 7.x-era registry gave differently: ``guid`` for clients that ask
for 8.0's fields, IMPORT rewriting a version, the 42206 wording, 40402 from a compatibility
check against a version that does not exist."""

from __future__ import annotations

import json

from confluent_kafka.schema_registry import (
    SchemaRegistryClient,
    dual_schema_id_deserializer,
    header_schema_id_serializer,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from fastapi.testclient import TestClient

from registry.identity import guid_of, schema_hash
from tests.api_helpers import error, record
from tests.conftest import LiveServer

V8 = {"Confluent-Accept-Unknown-Properties": "true"}


# ---- guid -----------------------------------------------------------------------------------


def test_guid_in_every_schema_answer_for_8x_clients(client: TestClient) -> None:
    guid = guid_of(schema_hash(record("a")))
    first = client.post("/subjects/s/versions", json={"schema": record("a")}, headers=V8)
    assert first.json() == {"id": 1, "version": 1, "guid": guid}
    # registering it again finds the same version and says so the same way
    again = client.post("/subjects/s/versions", json={"schema": record("a")}, headers=V8)
    assert again.json() == first.json()
    version = client.get("/subjects/s/versions/1", headers=V8).json()
    assert version["guid"] == guid and version["deleted"] is False and version["ts"] > 0
    assert version["schemaType"] == "AVRO"
    found = client.post("/subjects/s", json={"schema": record("a")}, headers=V8).json()
    assert found["guid"] == guid
    by_id = client.get("/schemas/ids/1", headers=V8).json()
    assert by_id["guid"] == guid and by_id["schemaType"] == "AVRO"
    assert client.get(f"/schemas/guids/{guid}", headers=V8).json()["guid"] == guid
    assert [s["guid"] for s in client.get("/schemas", headers=V8).json()] == [guid]
    assert client.get("/subjects/s/metadata", headers=V8).json()["guid"] == guid


def test_without_the_header_the_7x_shapes_stay(client: TestClient) -> None:
    assert client.post("/subjects/s/versions", json={"schema": record("a")}).json() == {"id": 1}
    assert "guid" not in client.get("/subjects/s/versions/1").json()
    assert client.get("/schemas/ids/1").json() == {"schema": record("a")}


def test_confluent_client_frames_records_with_the_guid_header(live_server: LiveServer) -> None:
    sr = SchemaRegistryClient({"url": live_server.url})
    schema = json.dumps(
        {"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"}]}
    )
    serializer = AvroSerializer(
        sr, schema, conf={"schema.id.serializer": header_schema_id_serializer}
    )
    ctx = SerializationContext("users", MessageField.VALUE, headers=[])
    payload = serializer({"name": "Ada Lovelace"}, ctx)
    header = dict(ctx.headers)["__value_schema_id"]
    assert header[0] == 1  # GUID framing: magic byte 1, then the 16 GUID bytes
    guid = str(__import__("uuid").UUID(bytes=header[1:17]))
    assert guid == sr.get_latest_version("users-value").guid
    fresh = SchemaRegistryClient({"url": live_server.url})
    deserializer = AvroDeserializer(
        fresh, conf={"schema.id.deserializer": dual_schema_id_deserializer}
    )
    assert deserializer(payload, ctx) == {"name": "Ada Lovelace"}


# ---- IMPORT mode ----------------------------------------------------------------------------


def test_import_may_rewrite_an_existing_version(client: TestClient) -> None:
    client.put("/mode/s", json={"mode": "IMPORT"})
    first = client.post("/subjects/s/versions", json={"schema": record("a"), "id": 5, "version": 5})
    assert first.json() == {"id": 5}
    # Confluent puts the key whatever it held: version 5 now names schema id 6
    again = client.post("/subjects/s/versions", json={"schema": record("b"), "id": 6, "version": 5})
    assert (again.status_code, again.json()) == (200, {"id": 6})
    body = client.get("/subjects/s/versions/5").json()
    assert (body["id"], body["schema"]) == (6, record("b"))
    # an id already naming other content is still refused
    error(
        client.post("/subjects/s/versions", json={"schema": record("c"), "id": 6, "version": 7}),
        422,
        42205,
    )


def test_explicit_id_outside_import_is_refused_unless_it_is_the_registered_one(
    client: TestClient,
) -> None:
    # Confluent's registerOrForward answers an already registered schema before checking the
    # mode, so its own id is accepted; any other id is "not in import mode"
    client.post("/subjects/s/versions", json={"schema": record("a")})
    same = client.post("/subjects/s/versions", json={"schema": record("a"), "id": 1})
    assert same.json() == {"id": 1}
    other = client.post("/subjects/s/versions", json={"schema": record("a"), "id": 2})
    assert error(other, 422, 42205) == "Subject s is not in import mode"
    fresh = client.post("/subjects/s/versions", json={"schema": record("b"), "id": 9})
    error(fresh, 422, 42205)


# ---- wording and codes ----------------------------------------------------------------------


def test_42206_names_the_referenced_schema(client: TestClient) -> None:
    client.post("/subjects/ref/versions", json={"schema": record("a")})
    referrer = {
        "type": "record",
        "name": "Outer",
        "fields": [{"name": "r", "type": "R"}],
    }
    refs = [{"name": "R", "subject": "ref", "version": 1}]
    client.post(
        "/subjects/outer/versions", json={"schema": json.dumps(referrer), "references": refs}
    )
    message = error(client.delete("/subjects/ref/versions/1"), 422, 42206)
    assert message.startswith("One or more references exist to the schema ")
    assert message == (
        "One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=ref,version=1}."
    )


def test_compatibility_against_a_missing_version_is_40402(client: TestClient) -> None:
    body = {"schema": record("a")}
    message = error(client.post("/compatibility/subjects/never/versions/1", json=body), 404, 40402)
    assert message == "Version 1 not found."
    client.post("/subjects/gone/versions", json=body)
    client.delete("/subjects/gone")
    client.delete("/subjects/gone?permanent=true")
    error(client.post("/compatibility/subjects/gone/versions/1", json=body), 404, 40402)
    # "latest" of a subject without versions is compatible, as in Confluent
    latest = client.post("/compatibility/subjects/never/versions/latest", json=body)
    assert latest.json() == {"is_compatible": True}


# ---- lookups --------------------------------------------------------------------------------


def test_lookup_metadata_must_match_the_version(client: TestClient) -> None:
    client.put("/config/s", json={"compatibility": "NONE"})
    a, b = record("a"), record("b")
    first = {"schema": a, "metadata": {"properties": {"owner": "x"}}}
    client.post("/subjects/s/versions", json=first)
    client.post(
        "/subjects/s/versions", json={"schema": b, "metadata": {"properties": {"owner": "y"}}}
    )
    assert client.post("/subjects/s", json=first).json()["version"] == 1
    other = {"schema": a, "metadata": {"properties": {"owner": "y"}}}
    error(client.post("/subjects/s", json=other), 404, 40403)
    # without metadata Confluent tries the request as registration would fill it in: with the
    # latest version's metadata, which version 1 does not carry
    error(client.post("/subjects/s", json={"schema": a}), 404, 40403)
    assert client.post("/subjects/s", json={"schema": b}).json()["version"] == 2


def test_schemas_filtered_by_rule_type(client: TestClient) -> None:
    rule = {"name": "r", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "true"}
    client.post("/subjects/plain/versions", json={"schema": record("a")})
    client.post(
        "/subjects/ruled/versions",
        json={"schema": record("b"), "ruleSet": {"domainRules": [rule]}},
    )
    assert [s["subject"] for s in client.get("/schemas?ruleType=CEL").json()] == ["ruled"]
    assert client.get("/schemas?ruleType=JSONATA").json() == []
    assert len(client.get("/schemas").json()) == 2


def test_normalized_json_schema_only_finds_a_normalized_one(client: TestClient) -> None:
    written = '{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"}}}'
    body = {"schemaType": "JSON", "schema": written}
    assert client.post("/subjects/j/versions", json=body).json() == {"id": 1}
    # the same text normalised differs from the stored (unnormalised) text: a new id
    again = client.post("/subjects/j/versions?normalize=true", json=body)
    assert again.json() == {"id": 2}
    assert client.get("/subjects/j/versions").json() == [1, 2]
    # and from then on the normalised registration is found
    assert client.post("/subjects/j/versions?normalize=true", json=body).json() == {"id": 2}


# ---- references -----------------------------------------------------------------------------


def test_avro_reference_names_are_not_checked(client: TestClient) -> None:
    # Confluent refuses only a missing name; Avro resolves referenced types by their own names
    client.post("/subjects/ref/versions", json={"schema": record("a")})
    outer = json.dumps({"type": "record", "name": "Outer", "fields": [{"name": "r", "type": "R"}]})
    for name in ("", "not-the-type-name"):
        refs = [{"name": name, "subject": "ref", "version": 1}]
        reply = client.post(
            f"/subjects/o{len(name)}/versions", json={"schema": outer, "references": refs}
        )
        assert reply.status_code == 200, reply.text
    missing = [{"subject": "ref", "version": 1}]
    message = error(
        client.post("/subjects/x/versions", json={"schema": outer, "references": missing}),
        422,
        42201,
    )
    assert message.endswith("details: Invalid reference: {name='null', subject='ref', version=1}")


def test_missing_reference_message_is_wrapped(client: TestClient) -> None:
    outer = json.dumps({"type": "record", "name": "Outer", "fields": [{"name": "r", "type": "R"}]})
    refs = [{"name": "R", "subject": "x", "version": 1}]
    message = error(
        client.post("/subjects/o/versions", json={"schema": outer, "references": refs}), 422, 42201
    )
    guid = guid_of(schema_hash(outer, refs))
    assert message == (  # 8.5: loadSchema wraps AvroSchemaProvider's message
        "Invalid schema of type AVRO, details: Invalid schema {subject=o,version=null,id=null,"
        f"guid={guid},schemaType=AVRO,references=[{{name='R', subject='x', version=1}}],"
        f"metadata=null,ruleSet=null,schema={outer},schemaTags=null,ts=null,deleted=null}} "
        "with refs [{name='R', subject='x', version=1}] of type AVRO, details: "
        'No schema reference found for subject "x" and version 1'
    )
