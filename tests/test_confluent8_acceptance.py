"""What Confluent Platform 8.x accepts and refuses when a schema is registered, and the
``avro_7_9_validation`` setting that restores Confluent 7.9's Avro validation for registries
migrated from 7.x."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.formats.avro import AvroFormat
from registry.formats.base import InvalidSchemaError
from registry.settings import Settings
from registry.store.factory import open_store


def record(*fields: dict[str, Any], namespace: str | None = None) -> str:
    node: dict[str, Any] = {"type": "record", "name": "R", "fields": list(fields)}
    if namespace is not None:
        node["namespace"] = namespace
    return json.dumps(node)


INNER = {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "int"}]}

#: defaults Confluent 7.9 stored (without normalize) and 8.x refuses for a new schema
BAD_DEFAULTS = {
    "string_on_int": record({"name": "f", "type": "int", "default": "1"}),
    "float_on_int": record({"name": "f", "type": "int", "default": 1.5}),
    "null_on_int": record({"name": "f", "type": "int", "default": None}),
    "zero_on_boolean": record({"name": "f", "type": "boolean", "default": 0}),
    "string_null_on_union": record({"name": "f", "type": ["null", INNER], "default": "null"}),
}


def register(client: TestClient, subject: str, schema: str, **params: str) -> Any:
    return client.post(f"/subjects/{subject}/versions", json={"schema": schema}, params=params)


@pytest.fixture
def client_7_9(sqlite_url: str) -> Iterator[TestClient]:
    """A registry started with ``SCHEMA_REGISTRY_AVRO_7_9_VALIDATION=true``."""
    settings = Settings.from_env({"SCHEMA_REGISTRY_AVRO_7_9_VALIDATION": "true"}, poll_interval=0)
    reg = Registry(open_store(sqlite_url), settings)
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as test_client:
            yield test_client
    finally:
        reg.stop()


# ---- Avro defaults: 8.x validates them for every new schema --------------------------------


@pytest.mark.parametrize("name", sorted(BAD_DEFAULTS))
def test_avro_bad_default_is_refused_as_confluent_8(client: TestClient, name: str) -> None:
    response = register(client, "s", BAD_DEFAULTS[name])
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error_code"] == 42201
    assert "Invalid default for field f" in body["message"]
    assert client.get("/subjects").json() == []


@pytest.mark.parametrize("name", sorted(BAD_DEFAULTS))
def test_avro_bad_default_is_stored_with_the_7_9_setting(client_7_9: TestClient, name: str) -> None:
    response = register(client_7_9, "s", BAD_DEFAULTS[name])
    assert response.status_code == 200, response.text
    stored = json.loads(client_7_9.get("/subjects/s/versions/1/schema").text)
    assert stored == json.loads(BAD_DEFAULTS[name])
    # ... but not with normalize, which made 7.9 validate defaults
    response = register(client_7_9, "n", BAD_DEFAULTS[name], normalize="true")
    assert response.status_code == 422, response.text
    assert response.json()["error_code"] == 42201
    assert "Invalid default for field f" in response.json()["message"]


def test_avro_union_default_may_match_any_branch_in_8_only(
    client: TestClient, client_7_9: TestClient
) -> None:
    """Avro 1.12 (Confluent 8.x) checks a union's default against any branch, 1.11 (7.9)
    against the first one only."""
    schema = record({"name": "f", "type": ["null", "string"], "default": "x"})
    assert register(client, "s", schema).status_code == 200
    assert register(client_7_9, "s", schema).status_code == 200  # not validated at all
    response = register(client_7_9, "n", schema, normalize="true")
    assert response.status_code == 422, response.text
    bad = record({"name": "f", "type": ["null", "string"], "default": 1})
    assert register(client, "t", bad).status_code == 422


# ---- Avro names --------------------------------------------------------------------------------


def test_avro_namespace_part_must_be_a_name_in_8_only(
    client: TestClient, client_7_9: TestClient
) -> None:
    schema = record({"name": "f", "type": "int"}, namespace="1ns")
    response = register(client, "s", schema)
    assert response.status_code == 422, response.text
    assert (
        'Namespace part "1ns" is invalid: Illegal initial character: 1ns'
        in (response.json()["message"])
    )
    response = register(client_7_9, "s", schema)
    assert response.status_code == 200, response.text
    assert json.loads(client_7_9.get("/subjects/s/versions/1/schema").text)["namespace"] == "1ns"


def test_avro_names_use_the_unicode_validator_with_the_7_9_setting(
    client: TestClient, client_7_9: TestClient
) -> None:
    schema = json.dumps({"type": "record", "name": "Caf\u00e9", "fields": []})
    assert register(client, "s", schema).status_code == 422  # Avro 1.12 STRICT_VALIDATOR
    assert register(client_7_9, "s", schema).status_code == 200  # Avro 1.11 UTF validator
    bad = json.dumps({"type": "record", "name": "a-b", "fields": []})
    assert register(client_7_9, "t", bad).status_code == 422


# ---- Avro logical types: invalid ones are ignored, as Avro Java does ---------------------------

INVALID_LOGICAL = [
    '{"type":"bytes","logicalType":"decimal","precision":2,"scale":4}',
    '{"type":"bytes","logicalType":"decimal","precision":0}',
    '{"type":"bytes","logicalType":"decimal"}',
    '{"type":"string","logicalType":"decimal","precision":5}',
    '{"type":"fixed","name":"d","size":8,"logicalType":"decimal","precision":19}',
    '{"type":"string","logicalType":"date"}',
    '{"type":"int","logicalType":"uuid"}',
    '{"type":"fixed","name":"d","size":11,"logicalType":"duration"}',
    '{"type":"string","logicalType":"uuid","java-class":"x.Y"}',
]


@pytest.mark.parametrize("text", INVALID_LOGICAL)
def test_invalid_logical_type_is_a_plain_property(text: str) -> None:
    parsed = AvroFormat().parse(text, strict=True)
    assert parsed.root.logical is None
    assert parsed.canonical() == text


def test_decimal_scale_above_precision_is_registered(client: TestClient) -> None:
    schema = record(
        {
            "name": "d",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 4},
        }
    )
    response = register(client, "s", schema)
    assert response.status_code == 200, response.text


def test_stored_schemas_are_never_default_checked() -> None:
    text = BAD_DEFAULTS["string_on_int"]
    with pytest.raises(InvalidSchemaError):
        AvroFormat().parse(text, strict=True)
    assert AvroFormat().parse(text, strict=False).normalized()
    assert AvroFormat(legacy_7_9=True).parse(text, strict=False).normalized()


# ---- JSON Schema -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"), [("[1,2]", "ARRAY"), ("5", "NUMBER"), ('"x"', "STRING"), ("null", "NULL")]
)
def test_json_schema_root_must_be_an_object_or_boolean(
    client: TestClient, text: str, kind: str
) -> None:
    """Confluent 8.x refuses these (7.9 loaded them as the empty schema)."""
    response = client.post("/subjects/s/versions", json={"schema": text, "schemaType": "JSON"})
    assert response.status_code == 422, response.text
    assert response.json()["error_code"] == 42201
    assert response.json()["message"].endswith(
        f"details: Invalid JSON schema: expected an object or boolean at the root, found {kind}"
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"allOf": []}',
        '{"anyOf": []}',
        '{"type": "object", "properties": {"a": {"oneOf": []}}}',
    ],
)
def test_json_schema_empty_combinator_is_registered(client: TestClient, text: str) -> None:
    body = {"schema": text, "schemaType": "JSON"}
    response = client.post("/subjects/s/versions", json=body)
    assert response.status_code == 200, response.text
    assert json.loads(client.get("/subjects/s/versions/1/schema").text) == json.loads(text)
    lookup = client.post("/subjects/s", json=body)
    assert lookup.status_code == 200, lookup.text


def test_json_schema_meta_schema_errors_beside_an_empty_combinator_still_count(
    client: TestClient,
) -> None:
    body = {"schema": '{"allOf": [], "type": 5}', "schemaType": "JSON"}
    response = client.post("/subjects/s/versions", json=body)
    assert response.status_code == 422, response.text


# ---- Protobuf file options keep the order written ----------------------------------------------

PROTO_OPTIONS = """syntax = "proto3";
package p;

option java_multiple_files = true;
option java_package = "com.example";

message M {
  string a = 1;
}
"""
PROTO_OPTIONS_SWAPPED = PROTO_OPTIONS.replace(
    'option java_multiple_files = true;\noption java_package = "com.example";',
    'option java_package = "com.example";\noption java_multiple_files = true;',
)


def test_protobuf_file_options_are_printed_in_the_order_written(client: TestClient) -> None:
    body = {"schema": PROTO_OPTIONS, "schemaType": "PROTOBUF"}
    assert client.post("/subjects/s/versions", json=body).json() == {"id": 1}
    assert client.get("/subjects/s/versions/1/schema").text == PROTO_OPTIONS
    swapped = {"schema": PROTO_OPTIONS_SWAPPED, "schemaType": "PROTOBUF"}
    response = client.post("/subjects/s", json=swapped)
    assert response.status_code == 404, response.text
    assert response.json()["error_code"] == 40403
    normalized = client.post("/subjects/s", json=swapped, params={"normalize": "true"})
    assert normalized.status_code == 200, normalized.text
    assert normalized.json()["version"] == 1
    registered = client.post("/subjects/s/versions", json=swapped)
    assert registered.status_code == 200, registered.text
    assert registered.json()["id"] == 2
    assert client.get("/subjects/s/versions").json() == [1, 2]
    assert client.get("/subjects/s/versions/2/schema").text == PROTO_OPTIONS_SWAPPED


# ---- Protobuf: what Wire's parser accepts and protoc refuses -----------------------------------

PROTO_ACCEPTED = {
    "custom_field_option": (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  string a = 1 [(foo.bar) = true];\n}\n'
    ),
    "custom_file_option": (
        'syntax = "proto3";\npackage p;\n\noption (foo.limit) = 5;\n\n'
        "message M {\n  string a = 1;\n}\n"
    ),
    "field_meta_without_import": (
        'syntax = "proto3";\npackage p;\n\n'
        'message M {\n  string a = 1 [(confluent.field_meta) = {\n    doc: "x"\n  }];\n}\n'
    ),
    "unused_missing_import": (
        'syntax = "proto3";\npackage p;\n\nimport "missing.proto";\n\n'
        "message M {\n  string a = 1;\n}\n"
    ),
    "duplicate_field_number": (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  string a = 1;\n  string b = 1;\n}\n'
    ),
    "explicit_map_entry": (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  option map_entry = true;\n\n'
        "  string key = 1;\n  string value = 2;\n}\n"
    ),
    "custom_option_aggregate": (
        'syntax = "proto3";\npackage p;\n\noption (foo.limit) = {\n  max: 5,\n  unit: "s"\n};\n\n'
        'message M {\n  string a = 1 [(foo.bar) = {\n    a: 1,\n    b: "x"\n  }];\n}\n'
    ),
    "custom_option_list": (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  option (foo.names) = [\n    "a",\n'
        '    "b"\n  ];\n\n  string a = 1 [(foo.ids) = [\n    1,\n    2\n  ]];\n}\n'
    ),
    "custom_option_nested_aggregate": (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  option (foo.cfg) = {\n'
        "    inner: {\n      x: 1\n    },\n    list: [\n      1,\n      2\n    ],\n    e: RED\n"
        "  };\n\n  string a = 1 [(foo.bar).baz = {\n    x: 1\n  }];\n}\n"
        "enum E {\n  Z = 0 [(foo.v) = {\n    x: true\n  }];\n}\n\n"
        "service S {\n  option (foo.s) = {\n    x: 1.5\n  };\n\n"
        "  rpc Get (M) returns (M) {\n    option (foo.r) = [1];\n  };\n}\n"
    ),
    "plain_unknown_option": (
        'syntax = "proto3";\npackage p;\n\noption otherOption = 1;\n\nmessage M {\n'
        '  string a = 1 [\n    otherOption = "foo",\n    deprecated = true\n  ];\n}\n'
    ),
    "proto3_enum_first_value_not_zero": (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  Kind k = 1;\n\n'
        "  enum Kind {\n    APPLE = 6;\n    BANANA = 7;\n  }\n}\n"
    ),
    "rpc_named_like_message": (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  string a = 1;\n}\n\n'
        "service S {\n  rpc M (M) returns (M);\n}\n"
    ),
}


@pytest.mark.parametrize("name", sorted(PROTO_ACCEPTED))
def test_protobuf_accepted_as_confluent_and_printed_as_written(
    client: TestClient, name: str
) -> None:
    text = PROTO_ACCEPTED[name]
    body = {"schema": text, "schemaType": "PROTOBUF"}
    response = client.post("/subjects/s/versions", json=body)
    assert response.status_code == 200, response.text
    assert client.get("/subjects/s/versions/1/schema").text == text
    lookup = client.post("/subjects/s", json=body)
    assert lookup.status_code == 200, lookup.text
    assert lookup.json()["version"] == 1


@pytest.mark.parametrize(
    "text",
    [
        'syntax = "proto3";\npackage p;\nmessage M { strin a = 1; }',
        'syntax = "proto3";\npackage p;\nimport "missing.proto";\nmessage M { q.N n = 1; }',
    ],
)
def test_protobuf_unresolved_types_are_still_refused(client: TestClient, text: str) -> None:
    response = client.post("/subjects/s/versions", json={"schema": text, "schemaType": "PROTOBUF"})
    assert response.status_code == 422, response.text
    assert response.json()["error_code"] == 42201
    assert client.get("/subjects").json() == []


def test_protobuf_import_named_like_no_reference_resolves_from_all_references(
    client: TestClient,
) -> None:
    referenced = 'syntax = "proto3";\npackage q;\n\nmessage N {\n  string a = 1;\n}\n'
    body = {"schema": referenced, "schemaType": "PROTOBUF"}
    assert client.post("/subjects/ref/versions", json=body).status_code == 200
    text = (
        'syntax = "proto3";\npackage p;\n\nimport "NoReferenceNested.proto";\n\n'
        "message M {\n  q.N n = 1;\n}\n"
    )
    refs = [{"name": "NoReference.proto", "subject": "ref", "version": 1}]
    body = {"schema": text, "schemaType": "PROTOBUF", "references": refs}
    response = client.post("/subjects/s/versions", json=body)
    assert response.status_code == 200, response.text
    assert client.get("/subjects/s/versions/1/schema").text == text


# ---- Protobuf options and tags printed as written (Wire's OptionReader) ------------------------

TAGGED_SOURCE = """syntax = "proto3";
package shop.v1;
import "confluent/meta.proto";
import "vendor/options.proto";
option (confluent.file_meta).doc = 'orders';
option (confluent.file_meta).tags = ["PII", "GDPR"];
option (vendor.retention).days = 30;
option (vendor.retention).policy = DELETE;
option java_package = "shop.v1";
message Order {
  option (confluent.message_meta).tags = "ORDER";
  option (confluent.message_meta).tags = "SALES";
  string id = 1 [(confluent.field_meta).tags = "KEY"];
  string email = 2 [
    (confluent.field_meta).tags = "PII",
    (confluent.field_meta).tags = "GDPR"
  ];
  string note = 3 [(confluent.field_meta).tags = ["FREE_TEXT"], deprecated = true];
  int64 total = 4 [(confluent.field_meta) = { tags: ["MONEY"], doc: "cents" }];
}
"""
TAGGED_CANONICAL = """syntax = "proto3";
package shop.v1;

import "confluent/meta.proto";
import "vendor/options.proto";

option (confluent.file_meta).doc = "orders";
option (confluent.file_meta).tags = [
  "PII",
  "GDPR"
];
option (vendor.retention).days = 30;
option (vendor.retention).policy = DELETE;
option java_package = "shop.v1";

message Order {
  option (confluent.message_meta).tags = "ORDER";
  option (confluent.message_meta).tags = "SALES";

  string id = 1 [(confluent.field_meta).tags = "KEY"];
  string email = 2 [
    (confluent.field_meta).tags = "PII",
    (confluent.field_meta).tags = "GDPR"
  ];
  string note = 3 [
    (confluent.field_meta).tags = ["FREE_TEXT"],
    deprecated = true
  ];
  int64 total = 4 [(confluent.field_meta) = {
    tags: [
      "MONEY"
    ],
    doc: "cents"
  }];
}
"""


def test_protobuf_custom_options_and_tags_are_printed_as_written(client: TestClient) -> None:
    body = {"schema": TAGGED_SOURCE, "schemaType": "PROTOBUF"}
    response = client.post("/subjects/s/versions", json=body)
    assert response.status_code == 200, response.text
    assert client.get("/subjects/s/versions/1/schema").text == TAGGED_CANONICAL
    # the same schema in Confluent's merged (descriptor) form is the same schema once normalized
    lookup = client.post("/subjects/s", json=body, params={"normalize": "true"})
    assert lookup.status_code == 200, lookup.text
    assert client.post("/subjects/s", json=body).json()["version"] == 1


# ---- Protobuf: every element's options printed as Wire parsed them ---------------------------

WRITTEN_OPTIONS = """syntax = "proto3";
package p;

message A {
  string id = 1 [(confluent.field_meta).tags = "A_ID"];
}
message B {
  string id = 1 [(confluent.field_meta).tags = "B_ID"];
}
enum E {
  option (confluent.enum_meta).tags = "E1";
  option allow_alias = true;
  ZERO = 0 [
    (confluent.enum_value_meta).tags = "V",
    deprecated = true
  ];
  NONE = 0;
}

service S {
  option (vendor.service_level) = 3;
  option deprecated = true;

  rpc Get (A) returns (B) {
    option (vendor.method_level) = "gold";
    option deprecated = true;
  };
}
"""


def test_protobuf_enum_service_and_rpc_options_are_printed_as_written(
    client: TestClient,
) -> None:
    """Confluent prints the options of enums, enum constants, services and rpcs in the order
    and form written (as Wire parsed them), as it does for files, messages and fields; a field
    keeps its own options when another message has a field of the same name and number."""
    body = {"schema": WRITTEN_OPTIONS, "schemaType": "PROTOBUF"}
    response = client.post("/subjects/s/versions", json=body)
    assert response.status_code == 200, response.text
    assert client.get("/subjects/s/versions/1/schema").text == WRITTEN_OPTIONS
    assert client.post("/subjects/s", json=body).json()["version"] == 1


def test_protobuf_unresolved_aggregate_option_counts_in_the_normalized_schema(
    client: TestClient,
) -> None:
    """An undeclared custom option with an aggregate value is part of the schema: a schema
    that differs only in its value is another schema, with or without ``normalize``."""
    text = PROTO_ACCEPTED["custom_option_aggregate"]
    other = text.replace("max: 5", "max: 6")
    body = {"schema": text, "schemaType": "PROTOBUF"}
    assert client.post("/subjects/s/versions", json=body, params={"normalize": "true"}).json() == {
        "id": 1
    }
    lookup = client.post(
        "/subjects/s", json={**body, "schema": other}, params={"normalize": "true"}
    )
    assert lookup.status_code == 404, lookup.text
    assert lookup.json()["error_code"] == 40403
    again = client.post("/subjects/s", json=body, params={"normalize": "true"})
    assert again.status_code == 200, again.text
