"""``format=serialized`` for Protobuf answers the ``FileDescriptorProto`` Confluent builds
(issue #25, item 11).

Each expected descriptor below is worked out by hand from Confluent's source
(``protobuf-provider``, ``ProtobufSchema.formattedString`` -> ``toDynamicSchema`` ->
``dynamic.DynamicSchema.Builder``, ``MessageDefinition``, ``FieldDefinition``,
``EnumDefinition``, ``ServiceDefinition``) applied to the canonical text Wire parses:

- ``type_name`` as the text spells it, ``type`` when the name is a type Wire parsed
  (``FieldDefinition.Builder.setType``); a map's entry is not one, so Confluent's map field has
  no ``type``: ours has ``TYPE_MESSAGE`` (a deliberate difference: without it Confluent's
  JavaScript client, through ``@bufbuild/protobuf``, reads the map as a list of entries);
- the label written (none for proto3 singular fields), ``LABEL_OPTIONAL`` on oneof members,
  ``LABEL_REPEATED`` on maps (``toDynamicMessage``);
- the map entry named by ``toMapEntry`` (camel case only for names with ``_``), appended after
  the declared nested messages, ``key`` / ``value`` without labels;
- oneof members first, then the other fields; proto3 ``optional`` adds ``_name`` oneofs after
  the real ones; every oneof and extension range has an empty ``options`` (``mergeOptions``);
- rpc streaming flags always set (Wire's ``RpcElement`` booleans);
- only the options ``toDynamicSchema`` copies; imports nothing provides are not dependencies.
"""

from __future__ import annotations

import base64
from typing import Any

from fastapi.testclient import TestClient
from google.protobuf import descriptor_pb2, descriptor_pool, text_format
from google.protobuf.message_factory import GetMessageClass

from registry.formats.base import Dependency
from registry.formats.protobuf.format import ProtobufFormat
from registry.formats.protobuf.serialized import to_map_entry

PB = ProtobufFormat()
FD = descriptor_pb2.FileDescriptorProto

COMMON = 'syntax = "proto3";\npackage common;\n\nmessage Money {\n  int64 cents = 1;\n}\n'
ORDERS = """syntax = "proto3";
package shop.v1;

import "common.proto";
import "google/protobuf/timestamp.proto";
import "missing/nothing.proto";
import public "google/protobuf/wrappers.proto";

option java_package = "com.shop";
option java_multiple_files = true;
option (vendor_flag) = true;

message Order {
  reserved 9, 20 to 22;
  reserved "legacy";

  string id = 1 [json_name = "ID"];
  common.Money total = 2;
  repeated Line lines = 3;
  map<string, Line> byid = 4;
  map<int32, common.Money> price_by_qty = 5;
  optional int32 priority = 6;
  repeated Status history = 7 [packed = true, deprecated = true];
  google.protobuf.Timestamp created = 8;
  repeated AttrEntry attrs = 10;

  oneof payment {
    option (oneof_flag) = true;
    string card = 11;
    Voucher voucher = 12;
  }

  message Line {
    option (message_flag) = 1;
    string sku = 1 [(field_flag) = true];
  }
  message AttrEntry {
    option map_entry = true;
    string key = 1;
    string value = 2;
  }
  message Voucher {
    bytes code = 1;
  }
  enum Status {
    option allow_alias = true;
    UNKNOWN = 0;
    PAID = 1;
    SETTLED = 1 [deprecated = true];
  }
}

service Orders {
  option deprecated = true;
  rpc Get (Order) returns (Order.Line) {
    option idempotency_level = NO_SIDE_EFFECTS;
  };
  rpc Watch (stream Order) returns (stream Order);
}
"""
ORDERS_EXPECTED = """
name: "default"
package: "shop.v1"
dependency: "common.proto"
dependency: "google/protobuf/timestamp.proto"
dependency: "google/protobuf/wrappers.proto"
public_dependency: 2
message_type {
  name: "Order"
  field { name: "card" number: 11 label: LABEL_OPTIONAL type: TYPE_STRING oneof_index: 0 }
  field {
    name: "voucher" number: 12 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: "Voucher"
    oneof_index: 0
  }
  field { name: "id" number: 1 type: TYPE_STRING json_name: "ID" }
  field { name: "total" number: 2 type: TYPE_MESSAGE type_name: "common.Money" }
  field { name: "lines" number: 3 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: "Line" }
  field { name: "byid" number: 4 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: "byidEntry" }
  field {
    name: "price_by_qty" number: 5 label: LABEL_REPEATED type: TYPE_MESSAGE
    type_name: "PriceByQtyEntry"
  }
  field {
    name: "priority" number: 6 label: LABEL_OPTIONAL type: TYPE_INT32 oneof_index: 1
    proto3_optional: true
  }
  field {
    name: "history" number: 7 label: LABEL_REPEATED type: TYPE_ENUM type_name: "Status"
    options { packed: true deprecated: true }
  }
  field { name: "created" number: 8 type: TYPE_MESSAGE type_name: "google.protobuf.Timestamp" }
  field {
    name: "attrs" number: 10 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: "AttrEntry"
  }
  nested_type { name: "Line" field { name: "sku" number: 1 type: TYPE_STRING } }
  nested_type {
    name: "AttrEntry"
    field { name: "key" number: 1 type: TYPE_STRING }
    field { name: "value" number: 2 type: TYPE_STRING }
    options { map_entry: true }
  }
  nested_type { name: "Voucher" field { name: "code" number: 1 type: TYPE_BYTES } }
  nested_type {
    name: "byidEntry"
    field { name: "key" number: 1 type: TYPE_STRING }
    field { name: "value" number: 2 type: TYPE_MESSAGE type_name: "Line" }
    options { map_entry: true }
  }
  nested_type {
    name: "PriceByQtyEntry"
    field { name: "key" number: 1 type: TYPE_INT32 }
    field { name: "value" number: 2 type: TYPE_MESSAGE type_name: "common.Money" }
    options { map_entry: true }
  }
  enum_type {
    name: "Status"
    value { name: "UNKNOWN" number: 0 }
    value { name: "PAID" number: 1 }
    value { name: "SETTLED" number: 1 options { deprecated: true } }
    options { allow_alias: true }
  }
  oneof_decl { name: "payment" options {} }
  oneof_decl { name: "_priority" options {} }
  reserved_range { start: 9 end: 10 }
  reserved_range { start: 20 end: 23 }
  reserved_name: "legacy"
}
service {
  name: "Orders"
  method {
    name: "Get" input_type: "Order" output_type: "Order.Line"
    client_streaming: false server_streaming: false
    options { idempotency_level: NO_SIDE_EFFECTS }
  }
  method {
    name: "Watch" input_type: "Order" output_type: "Order"
    client_streaming: true server_streaming: true
  }
  options { deprecated: true }
}
options { java_package: "com.shop" java_multiple_files: true }
syntax: "proto3"
"""

LEGACY = """syntax = "proto2";
package legacy;

import "confluent/meta.proto";

message Record {
  required string id = 1 [(confluent.field_meta).doc = "the key"];
  optional int64 size = 2 [default = 42];
  repeated string tags = 3;
  optional Kind kind = 4 [default = B];
  optional group Extra = 5 {
    optional int32 x = 1;
  }

  extensions 100 to 199;

  enum Kind {
    A = 0;
    B = 1;
  }
}

extend Record {
  optional string note = 100;
}
"""
LEGACY_EXPECTED = """
name: "default"
package: "legacy"
dependency: "confluent/meta.proto"
message_type {
  name: "Record"
  field { name: "id" number: 1 label: LABEL_REQUIRED type: TYPE_STRING }
  field { name: "size" number: 2 label: LABEL_OPTIONAL type: TYPE_INT64 default_value: "42" }
  field { name: "tags" number: 3 label: LABEL_REPEATED type: TYPE_STRING }
  field {
    name: "kind" number: 4 label: LABEL_OPTIONAL type: TYPE_ENUM type_name: "Kind"
    default_value: "B"
  }
  enum_type { name: "Kind" value { name: "A" number: 0 } value { name: "B" number: 1 } }
  extension_range { start: 100 end: 200 options {} }
}
extension {
  name: "note" number: 100 label: LABEL_OPTIONAL type: TYPE_STRING extendee: "Record"
}
syntax: "proto2"
"""
#: ``confluent.field_meta`` (1088, length-delimited: key 0x82 0x44) holding ``Meta{doc}``
#: (``DynamicSchema.toMeta``; field 1, length-delimited: key 0x0a)
FIELD_META = b"\x82\x44\x09\x0a\x07the key"


def _serialized(text: str, deps: list[Dependency] | None = None) -> Any:
    encoded = PB.parse(text, deps or []).formatted("serialized")
    return FD.FromString(base64.b64decode(encoded))


def _expected(text: str) -> Any:
    return text_format.Parse(text, FD())


def _assert_field_by_field(got: Any, expected: Any, path: str = "") -> None:
    """Every field of ``expected`` equal in ``got`` and nothing more, with the path of the
    first that differs (``message_type[0].field[5].type_name``)."""
    assert [f.name for f, _ in got.ListFields()] == [f.name for f, _ in expected.ListFields()], path
    for field, value in expected.ListFields():
        other = getattr(got, field.name)
        if field.message_type is None:
            assert other == value, f"{path}{field.name}"
        elif hasattr(value, "ListFields"):
            _assert_field_by_field(other, value, f"{path}{field.name}.")
        else:
            assert len(other) == len(value), f"{path}{field.name}"
            for i, (a, b) in enumerate(zip(other, value, strict=True)):
                _assert_field_by_field(a, b, f"{path}{field.name}[{i}].")


def test_proto3_descriptor_is_confluents_field_by_field() -> None:
    got = _serialized(ORDERS, [Dependency("common.proto", COMMON)])
    _assert_field_by_field(got, _expected(ORDERS_EXPECTED))
    assert got == _expected(ORDERS_EXPECTED)


def test_empty_options_are_encoded_as_confluent_encodes_them() -> None:
    got = _serialized(ORDERS, [Dependency("common.proto", COMMON)])
    # an empty ``options`` (field 2) on each oneof; both streaming flags on an rpc, false too
    assert got.message_type[0].oneof_decl[0].SerializeToString() == b"\n\x07payment\x12\x00"
    method = got.service[0].method[0].SerializeToString()
    assert b"\x28\x00\x30\x00" in method  # client_streaming (5) = 0, server_streaming (6) = 0


def test_proto2_descriptor_is_confluents_field_by_field() -> None:
    got = _serialized(LEGACY)
    options = got.message_type[0].field[0].options.SerializeToString()
    assert options == FIELD_META
    got.message_type[0].field[0].ClearField("options")
    _assert_field_by_field(got, _expected(LEGACY_EXPECTED))
    assert got == _expected(LEGACY_EXPECTED)


def test_syntax_is_left_out_when_the_text_declares_none() -> None:
    got = _serialized("message M { optional int32 a = 1; }")
    assert not got.HasField("syntax")
    assert got.message_type[0].field[0].label == descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL


def test_map_entry_names_follow_guava_lower_underscore_to_upper_camel() -> None:
    assert to_map_entry("mymap") == "mymapEntry"
    assert to_map_entry("myMap") == "myMapEntry"
    assert to_map_entry("my_map") == "MyMapEntry"
    assert to_map_entry("my_MAP_x") == "MyMapXEntry"
    assert to_map_entry("a__b") == "ABEntry"


def test_confluents_descriptor_builds_and_round_trips() -> None:
    """protobuf's own pool accepts it (relative names), and sent
    back to the registry it parses to a schema whose descriptor is the same (Confluent's
    ``testFileDescriptorProto``)."""
    deps = [Dependency("common.proto", COMMON)]
    got = _serialized(ORDERS, deps)
    pool = descriptor_pool.DescriptorPool()
    common = PB.parse(COMMON).descriptor
    common.name = "common.proto"
    pool.Add(common)
    from google.protobuf import timestamp_pb2, wrappers_pb2

    for module in (timestamp_pb2, wrappers_pb2):
        pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
    pool.Add(got)
    order = GetMessageClass(pool.FindMessageTypeByName("shop.v1.Order"))()
    order.byid["k"].sku = "s"
    order.price_by_qty[3].cents = 7
    assert order.DESCRIPTOR.fields_by_name["byid"].message_type.name == "byidEntry"
    again = type(order).FromString(order.SerializeToString())
    assert again.byid["k"].sku == "s" and again.price_by_qty[3].cents == 7

    encoded = base64.b64encode(got.SerializeToString()).decode()
    reparsed = PB.parse(encoded, deps)
    assert PB.compatibility_errors(reparsed, PB.parse(ORDERS, deps)) == []
    assert FD.FromString(base64.b64decode(reparsed.formatted("serialized"))) == FD.FromString(
        base64.b64decode(PB.parse(encoded, deps).formatted("serialized"))
    )


def test_rest_routes_answer_confluents_descriptor(client: TestClient) -> None:
    common = {"schema": COMMON, "schemaType": "PROTOBUF"}
    assert client.post("/subjects/common/versions", json=common).status_code == 200
    refs = [{"name": "common.proto", "subject": "common", "version": 1}]
    body = {"schema": ORDERS, "schemaType": "PROTOBUF", "references": refs}
    registered = client.post("/subjects/orders/versions", json=body)
    assert registered.status_code == 200, registered.text
    schema_id = registered.json()["id"]
    expected = _expected(ORDERS_EXPECTED)
    by_id = client.get(f"/schemas/ids/{schema_id}", params={"format": "serialized"}).json()
    assert FD.FromString(base64.b64decode(by_id["schema"])) == expected
    version = client.get("/subjects/orders/versions/1", params={"format": "serialized"}).json()
    assert FD.FromString(base64.b64decode(version["schema"])) == expected
    raw = client.get(f"/schemas/ids/{schema_id}/schema", params={"format": "serialized"})
    assert FD.FromString(base64.b64decode(raw.text)) == expected
    lookup = client.post("/subjects/orders", json=body, params={"format": "serialized"}).json()
    assert FD.FromString(base64.b64decode(lookup["schema"])) == expected
    # the referenced schema too: its own file, named "default"
    ref = client.get("/subjects/common/versions/1", params={"format": "serialized"}).json()
    assert FD.FromString(base64.b64decode(ref["schema"])).name == "default"


def test_map_fields_are_maps_to_confluents_javascript_client() -> None:
    """``@bufbuild/protobuf`` (under ``@confluentinc/schemaregistry``) makes a map field only of
    a repeated field of ``type`` ``TYPE_MESSAGE`` whose entry is a ``map_entry`` message; a map
    field without ``type`` (Confluent's) it reads as a list (tests/test_js_interop.py)."""
    got = _serialized(ORDERS, [Dependency("common.proto", COMMON)])
    order = got.message_type[0]
    entries = {m.name for m in order.nested_type if m.options.map_entry}
    maps = [f for f in order.field if f.type_name in entries]
    assert {f.name for f in maps} == {"byid", "price_by_qty", "attrs"}
    for f in maps:
        assert f.label == f.LABEL_REPEATED and f.type == f.TYPE_MESSAGE, f.name
