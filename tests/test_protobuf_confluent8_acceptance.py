"""Protobuf texts Confluent 8.x registers (Wire parses them; protoc refuses them) and how it
prints them back (issue #25, item 10). Each text is what Confluent's canonical string
(``ProtobufSchemaUtils.toString``) prints for itself, so it reads back unchanged."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

#: a nested message that declares ``option map_entry = true``: Wire does not check it
#: (protoc does), and Confluent prints the message and the field of its type as written
NESTED_MAP_ENTRY = (
    'syntax = "proto3";\npackage p;\n\nmessage Outer {\n  repeated BarEntry bar = 1;\n'
    "  map<string, string> m = 2;\n\n  message BarEntry {\n    option map_entry = true;\n"
    "  \n    string key = 1;\n    int32 value = 2;\n  }\n}\n"
)
#: the normalized text (``toNormalizedString``): the field's type resolves to a map entry, so
#: it prints as a map (``toString(FormatContext, FieldElement)``) and ``filterTypes`` drops
#: the message
NESTED_MAP_ENTRY_NORMALIZED = (
    'syntax = "proto3";\npackage p;\n\nmessage Outer {\n  map<string, int32> bar = 1;\n'
    "  map<string, string> m = 2;\n}\n"
)
#: custom options named without a package on the file, a message, a field and a oneof
UNDOTTED_OPTIONS = (
    'syntax = "proto3";\npackage p;\n\noption (my_option) = true;\n\nmessage M {\n'
    '  option (my_message_option) = "x";\n\n  string a = 1 [(my_field_option) = 5];\n\n'
    "  oneof choice {\n    option (my_oneof_option) = true;\n  \n    string b = 2;\n"
    "    int32 c = 3;\n  }\n}\n"
)
#: a oneof option that is declared (``extend google.protobuf.OneofOptions``)
DECLARED_ONEOF_OPTION = (
    'syntax = "proto3";\npackage p;\n\nimport "google/protobuf/descriptor.proto";\n\n'
    "message M {\n  oneof choice {\n    option (flag) = true;\n  \n    string b = 2;\n"
    "    int32 c = 3;\n  }\n}\n\nextend google.protobuf.OneofOptions {\n"
    "  bool flag = 50001;\n}\n"
)


def _register(client: TestClient, subject: str, text: str, **params: str) -> int:
    body = {"schema": text, "schemaType": "PROTOBUF"}
    response = client.post(f"/subjects/{subject}/versions", json=body, params=params)
    assert response.status_code == 200, response.text
    schema_id: int = response.json()["id"]
    return schema_id


@pytest.mark.parametrize(
    "text",
    [NESTED_MAP_ENTRY, UNDOTTED_OPTIONS, DECLARED_ONEOF_OPTION],
    ids=["nested_map_entry", "undotted_custom_options", "declared_oneof_option"],
)
def test_registered_and_printed_as_written(client: TestClient, text: str) -> None:
    schema_id = _register(client, "s", text)
    assert client.get("/subjects/s/versions/1/schema").text == text
    assert client.get(f"/schemas/ids/{schema_id}/schema").text == text
    # the printed text parses to itself: a look-up with it finds the version
    lookup = client.post("/subjects/s", json={"schema": text, "schemaType": "PROTOBUF"})
    assert lookup.status_code == 200, lookup.text
    assert lookup.json()["version"] == 1


def test_nested_map_entry_normalizes_to_a_map(client: TestClient) -> None:
    _register(client, "s", NESTED_MAP_ENTRY, normalize="true")
    assert client.get("/subjects/s/versions/1/schema").text == NESTED_MAP_ENTRY_NORMALIZED


def test_undotted_option_with_an_aggregate_value_is_printed_as_written(
    client: TestClient,
) -> None:
    text = (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  option (limits) = {\n    max: 5\n'
        "  };\n\n  string a = 1;\n}\n"
    )
    _register(client, "s", text)
    assert client.get("/subjects/s/versions/1/schema").text == text


def test_import_no_reference_resolves_is_accepted_when_unused(client: TestClient) -> None:
    """Confluent 8.x parses without resolving imports; ``validate`` normalizes, which only
    resolves the types fields use (``ProtobufSchemaUtils.resolve``: "Could not resolve
    type"), and ``toDynamicSchema`` leaves an import no dependency provides out of the
    descriptor. So an unused import nothing provides is registered, and printed."""
    text = (
        'syntax = "proto3";\npackage p;\n\nimport "nowhere/missing.proto";\n\n'
        "message M {\n  string a = 1;\n}\n"
    )
    _register(client, "s", text)
    assert client.get("/subjects/s/versions/1/schema").text == text
    used = text.replace("string a = 1;", "nowhere.T a = 1;")
    response = client.post("/subjects/s2/versions", json={"schema": used, "schemaType": "PROTOBUF"})
    assert response.status_code == 422, response.text
    assert response.json()["error_code"] == 42201


def test_top_level_map_entry_is_left_out_of_the_normalized_text(client: TestClient) -> None:
    """``filterTypes`` drops every message that resolves to a map entry, top-level too; the
    field of its type prints as a map."""
    text = (
        'syntax = "proto3";\npackage p;\n\nmessage FooEntry {\n  option map_entry = true;\n\n'
        "  string key = 1;\n  int32 value = 2;\n}\nmessage M {\n  repeated FooEntry foo = 1;\n}\n"
    )
    _register(client, "s", text)
    assert client.get("/subjects/s/versions/1/schema").text == text
    _register(client, "n", text, normalize="true")
    assert client.get("/subjects/n/versions/1/schema").text == (
        'syntax = "proto3";\npackage p;\n\nmessage M {\n  map<string, int32> foo = 1;\n}\n'
    )
