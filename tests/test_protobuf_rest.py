"""PROTOBUF through the REST API, and the real confluent-kafka Protobuf serdes against a live
registry, including a message that imports another registered file."""

from __future__ import annotations

import base64
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from fastapi.testclient import TestClient
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from tests.conftest import LiveServer

ADDRESS = 'syntax = "proto3";\npackage acme.common;\n\nmessage Address {\n  string city = 1;\n}\n'
USER_V1 = (
    'syntax = "proto3";\npackage acme;\n\nimport "acme/common/address.proto";\n\n'
    "message User {\n  string name = 1;\n  acme.common.Address address = 2;\n}\n"
)
SIMPLE_V1 = 'syntax = "proto3";\npackage s;\n\nmessage Simple {\n  string a = 1;\n}\n'
SIMPLE_V2 = (
    'syntax = "proto3";\npackage s;\n\nmessage Simple {\n  string a = 1;\n  int32 b = 2;\n}\n'
)
SIMPLE_BAD = 'syntax = "proto3";\npackage s;\n\nmessage Simple {\n  int32 a = 1;\n}\n'


def register(client: TestClient, subject: str, schema: str, **extra: object) -> dict:
    body = {"schemaType": "PROTOBUF", "schema": schema, **extra}
    response = client.post(f"/subjects/{subject}/versions", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_register_get_and_lookup(client: TestClient) -> None:
    first = register(client, "simple-value", "message Simple {  optional string a = 1; }")
    got = client.get(f"/schemas/ids/{first['id']}").json()
    assert got["schemaType"] == "PROTOBUF"
    assert got["schema"] == "\nmessage Simple {\n  optional string a = 1;\n}\n"
    # the same schema written differently is the same schema
    again = register(client, "simple-value", "message Simple {\n  optional string a = 1;\n}")
    assert again["id"] == first["id"]
    lookup = client.post(
        "/subjects/simple-value",
        json={"schemaType": "PROTOBUF", "schema": "message Simple { optional string a=1; }"},
    )
    assert lookup.status_code == 200
    assert lookup.json()["version"] == 1
    assert client.get("/schemas/types").json().count("PROTOBUF") == 1


def test_invalid_schema_is_42201(client: TestClient) -> None:
    response = client.post(
        "/subjects/bad-value/versions",
        json={"schemaType": "PROTOBUF", "schema": 'syntax = "proto3";\nmessage M { foo a = 1; }'},
    )
    assert response.status_code == 422
    assert response.json()["error_code"] == 42201
    assert '"foo" is not defined' in response.json()["message"]


def test_compatibility_and_409(client: TestClient) -> None:
    register(client, "s-value", SIMPLE_V1)
    ok = client.post(
        "/compatibility/subjects/s-value/versions/latest",
        json={"schemaType": "PROTOBUF", "schema": SIMPLE_V2},
    )
    assert ok.json() == {"is_compatible": True}
    bad = client.post(
        "/compatibility/subjects/s-value/versions/latest?verbose=true",
        json={"schemaType": "PROTOBUF", "schema": SIMPLE_BAD},
    ).json()
    assert bad["is_compatible"] is False
    assert bad["messages"][0] == (
        '{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at path '
        "'#/Simple/1' in the new schema does not match its kind in the old schema\"}"
    )
    conflict = client.post(
        "/subjects/s-value/versions", json={"schemaType": "PROTOBUF", "schema": SIMPLE_BAD}
    )
    assert conflict.status_code == 409
    assert "FIELD_SCALAR_KIND_CHANGED" in conflict.json()["message"]
    client.put("/config/s-value", json={"compatibility": "FORWARD"})
    forward = client.post(
        "/compatibility/subjects/s-value/versions/latest?verbose=true",
        json={"schemaType": "PROTOBUF", "schema": SIMPLE_V1 + "message Extra {}\n"},
    ).json()
    assert forward["is_compatible"] is False
    assert "The old schema is missing a MESSAGE type at path '#/Extra'" in forward["messages"][0]


def test_references_and_referenced_by(client: TestClient) -> None:
    register(client, "address", ADDRESS)
    refs = [{"name": "acme/common/address.proto", "subject": "address", "version": 1}]
    user = register(client, "user-value", USER_V1, references=refs)
    got = client.get("/subjects/user-value/versions/1").json()
    assert got["references"] == refs
    assert "  acme.common.Address address = 2;\n" in got["schema"]
    assert client.get("/subjects/address/versions/1/referencedby").json() == [user["id"]]
    missing = client.post(
        "/subjects/user2-value/versions", json={"schemaType": "PROTOBUF", "schema": USER_V1}
    )
    assert missing.status_code == 422
    assert "acme.common.Address" in missing.json()["message"]


def test_formats_serialized_and_ignore_extensions(client: TestClient) -> None:
    schema = (
        'syntax = "proto3";\nimport "google/protobuf/descriptor.proto";\n'
        "extend google.protobuf.FieldOptions { string label = 50000; }\n"
        'message M { string a = 1 [(label) = "x"]; }\n'
    )
    sid = register(client, "fmt-value", schema)["id"]
    serialized = client.get(f"/schemas/ids/{sid}?format=serialized").json()["schema"]
    fd = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert fd.message_type[0].name == "M"
    plain = client.get(f"/schemas/ids/{sid}").json()["schema"]
    assert '[(label) = "x"]' in plain and "extend google.protobuf.FieldOptions" in plain
    stripped = client.get(f"/schemas/ids/{sid}?format=ignore_extensions").json()["schema"]
    assert "(label)" not in stripped and "extend" not in stripped


def test_normalize_makes_equivalent_schemas_one(client: TestClient) -> None:
    head = 'syntax = "proto3";\n'
    a = head + 'import "b.proto";\nimport "a.proto";\nmessage M { int32 y = 2; int32 x = 1; }\n'
    b = head + 'import "a.proto";\nimport "b.proto";\nmessage M { int32 x = 1; int32 y = 2; }\n'
    register(client, "a.proto", 'syntax = "proto3";\npackage a;\n')
    register(client, "b.proto", 'syntax = "proto3";\npackage b;\n')
    refs = [
        {"name": "a.proto", "subject": "a.proto", "version": 1},
        {"name": "b.proto", "subject": "b.proto", "version": 1},
    ]
    first = client.post(
        "/subjects/n-value/versions?normalize=true",
        json={"schemaType": "PROTOBUF", "schema": a, "references": refs[::-1]},
    ).json()
    second = client.post(
        "/subjects/n-value/versions?normalize=true",
        json={"schemaType": "PROTOBUF", "schema": b, "references": refs},
    ).json()
    assert second["id"] == first["id"]
    stored = client.get(f"/schemas/ids/{first['id']}").json()["schema"]
    assert stored.startswith('syntax = "proto3";\n\nimport "a.proto";\nimport "b.proto";\n')
    assert "  int32 x = 1;\n  int32 y = 2;\n" in stored


# ---- the real confluent-kafka serdes against a live server -------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """``user_pb2`` and its import, generated with grpcio-tools into a temporary package."""
    root = tmp_path_factory.mktemp("protos")
    src = root / "src"
    (src / "acme" / "common").mkdir(parents=True)
    (src / "acme" / "common" / "address.proto").write_text(ADDRESS)
    (src / "acme" / "user.proto").write_text(USER_V1)
    out = root / "out"
    out.mkdir()
    include = str(Path(protoc.__file__).parent / "_proto")
    code = protoc.main(
        [
            "protoc",
            f"-I{src}",
            f"-I{include}",
            f"--python_out={out}",
            "acme/common/address.proto",
            "acme/user.proto",
        ]
    )
    assert code == 0
    for package in (out / "acme", out / "acme" / "common"):
        (package / "__init__.py").write_text("")
    sys.path.insert(0, str(out))
    saved = {k: v for k, v in sys.modules.items() if k == "acme" or k.startswith("acme.")}
    for key in saved:
        del sys.modules[key]
    try:
        yield importlib.import_module("acme.user_pb2")
    finally:
        sys.path.remove(str(out))
        for key in [k for k in sys.modules if k == "acme" or k.startswith("acme.")]:
            del sys.modules[key]
        sys.modules.update(saved)


def test_confluent_serializer_round_trip_with_a_reference(
    live_server: LiveServer, generated: ModuleType
) -> None:
    sr = SchemaRegistryClient({"url": live_server.url})
    serializer = ProtobufSerializer(
        generated.User, sr, {"use.deprecated.format": False, "auto.register.schemas": True}
    )
    deserializer = ProtobufDeserializer(generated.User, {"use.deprecated.format": False})
    ctx = SerializationContext("users", MessageField.VALUE)
    user = generated.User(name="Ada", address={"city": "London"})
    data = serializer(user, ctx)
    assert data[0] == 0
    assert deserializer(data, ctx) == user

    # the serializer registered the import under its path and the message with a reference
    latest = sr.get_latest_version("users-value")
    assert latest.schema.schema_type == "PROTOBUF"
    assert [r.name for r in latest.schema.references] == ["acme/common/address.proto"]
    assert latest.schema.references[0].subject == "acme/common/address.proto"
    assert "message User {" in latest.schema.schema_str
    assert sr.get_latest_version("acme/common/address.proto").version == 1

    # a second serializer finds the same schema (lookup) rather than registering a new version
    again = ProtobufSerializer(
        generated.User,
        sr,
        {
            "use.deprecated.format": False,
            "auto.register.schemas": False,
            "use.latest.version": False,
        },
    )
    assert again(user, ctx) == data
    assert sr.get_versions("users-value") == [1]
