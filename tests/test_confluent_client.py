"""An unmodified confluent-kafka SchemaRegistryClient and its Avro serdes against a live
registry process: the client must not notice it is not talking to Confluent."""

from __future__ import annotations

import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.conftest import LiveServer

USER_V1 = {
    "type": "record",
    "name": "User",
    "namespace": "com.example",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "age", "type": "int"},
    ],
}
USER_V2 = {
    **USER_V1,
    "fields": [*USER_V1["fields"], {"name": "email", "type": ["null", "string"], "default": None}],
}
USER_BAD = {**USER_V1, "fields": [*USER_V1["fields"], {"name": "x", "type": "long"}]}


@pytest.fixture
def sr(live_server: LiveServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": live_server.url})


def avro(doc: dict) -> Schema:
    return Schema(json.dumps(doc), "AVRO")


def test_register_get_lookup_versions(sr: SchemaRegistryClient) -> None:
    first = sr.register_schema("users-value", avro(USER_V1))
    assert first == 1
    assert sr.register_schema("users-value", avro(USER_V1)) == first
    second = sr.register_schema("users-value", avro(USER_V2))
    assert second == 2
    assert sr.register_schema("other-value", avro(USER_V1)) == first

    fetched = sr.get_schema(first)
    assert json.loads(fetched.schema_str) == USER_V1
    assert fetched.schema_type == "AVRO"

    latest = sr.get_latest_version("users-value")
    assert (latest.schema_id, latest.version, latest.subject) == (2, 2, "users-value")
    assert sr.get_version("users-value", 1).schema_id == 1
    assert sr.get_versions("users-value") == [1, 2]
    assert sorted(sr.get_subjects()) == ["other-value", "users-value"]

    found = sr.lookup_schema("users-value", avro(USER_V1))
    assert (found.schema_id, found.version) == (1, 1)
    assert sorted(sr.get_subjects_by_schema_id(1)) == ["other-value", "users-value"]
    assert sr.get_schema_types()


def test_compatibility_config_and_errors(sr: SchemaRegistryClient) -> None:
    sr.register_schema("c-value", avro(USER_V1))
    assert sr.get_compatibility() == "BACKWARD"
    assert sr.test_compatibility("c-value", avro(USER_V2)) is True
    assert sr.test_compatibility("c-value", avro(USER_BAD)) is False

    with pytest.raises(SchemaRegistryError) as err:
        sr.register_schema("c-value", avro(USER_BAD))
    assert err.value.http_status_code == 409
    assert err.value.error_code == 409

    assert sr.set_compatibility("c-value", "NONE") == {"compatibility": "NONE"}
    assert sr.get_compatibility("c-value") == "NONE"
    assert sr.register_schema("c-value", avro(USER_BAD)) == 2

    with pytest.raises(SchemaRegistryError) as err:
        sr.get_version("c-value", 99)
    assert (err.value.http_status_code, err.value.error_code) == (404, 40402)
    with pytest.raises(SchemaRegistryError) as err:
        sr.get_latest_version("missing")
    assert err.value.error_code == 40401
    with pytest.raises(SchemaRegistryError) as err:
        sr.register_schema("c-value", Schema('{"type": "nope"}', "AVRO"))
    assert err.value.error_code == 42201


def test_deletes(sr: SchemaRegistryClient) -> None:
    sr.register_schema("d-value", avro(USER_V1))
    sr.register_schema("d-value", avro(USER_V2))
    assert sr.delete_version("d-value", 1) == 1
    assert sr.get_versions("d-value") == [2]
    assert sr.delete_subject("d-value") == [2]
    assert sr.delete_subject("d-value", permanent=True) == [1, 2]
    with pytest.raises(SchemaRegistryError) as err:
        sr.get_versions("d-value")
    assert err.value.error_code == 40401


def test_avro_serializer_and_deserializer_round_trip(
    sr: SchemaRegistryClient, live_server: LiveServer
) -> None:
    ctx = SerializationContext("users", MessageField.VALUE)
    serializer = AvroSerializer(sr, json.dumps(USER_V1))
    payload = serializer({"name": "Ada", "age": 36}, ctx)
    assert payload is not None
    assert payload[0] == 0
    schema_id = int.from_bytes(payload[1:5], "big")
    assert schema_id == sr.get_latest_version("users-value").schema_id

    fresh = SchemaRegistryClient({"url": live_server.url})  # no cached schemas
    deserializer = AvroDeserializer(fresh)
    assert deserializer(payload, ctx) == {"name": "Ada", "age": 36}

    # evolve the writer schema and read old data with the new reader schema
    sr.register_schema("users-value", avro(USER_V2))
    reader = AvroDeserializer(fresh, json.dumps(USER_V2))
    assert reader(payload, ctx) == {"name": "Ada", "age": 36, "email": None}

    # a new client: `sr` cached the latest version before v2 existed
    latest = AvroSerializer(
        SchemaRegistryClient({"url": live_server.url}),
        None,
        conf={"auto.register.schemas": False, "use.latest.version": True},
    )
    payload2 = latest({"name": "Bob", "age": 1, "email": "b@x"}, ctx)
    assert int.from_bytes(payload2[1:5], "big") == 2
    assert deserializer(payload2, ctx) == {"name": "Bob", "age": 1, "email": "b@x"}
