"""Parsing Protobuf schemas with protoc: language features, imports, descriptors, errors."""

from __future__ import annotations

import base64

import pytest
from google.protobuf import descriptor_pb2, timestamp_pb2

from registry.formats.base import Dependency, InvalidSchemaError
from registry.formats.protobuf import ProtobufFormat, ProtobufSchema

PB = ProtobufFormat()

EVERYTHING_PROTO3 = """
syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";
import public "google/protobuf/wrappers.proto";

option java_package = "com.shop.v1";

message Order {
  reserved 8, 10 to 12;
  reserved "legacy";
  string id = 1;
  google.protobuf.Timestamp created = 2;
  map<string, Line> lines = 3;
  optional int32 priority = 4;
  repeated Status history = 5;
  oneof payment {
    string card = 6;
    Voucher voucher = 7;
  }
  message Line { string sku = 1; uint32 qty = 2; }
  message Voucher { bytes code = 1; }
  enum Status { STATUS_UNKNOWN = 0; STATUS_PAID = 1; }
}

service Orders {
  rpc Get (Order) returns (Order);
  rpc Watch (stream Order) returns (stream Order.Line);
}
"""

EVERYTHING_PROTO2 = """
syntax = "proto2";
package legacy;

message Record {
  required string id = 1;
  optional int64 size = 2 [default = 42];
  repeated string tags = 3;
  optional group Extra = 4 { optional int32 x = 1; }
  extensions 100 to 199;
}

extend Record {
  optional string note = 100;
}
"""


def test_parses_every_proto3_feature() -> None:
    schema = PB.parse(EVERYTHING_PROTO3)
    assert isinstance(schema, ProtobufSchema)
    fd = schema.descriptor
    assert fd.syntax == "proto3"
    assert fd.package == "shop.v1"
    assert list(fd.dependency) == [
        "google/protobuf/timestamp.proto",
        "google/protobuf/wrappers.proto",
    ]
    order = fd.message_type[0]
    assert [f.name for f in order.field] == [
        "id",
        "created",
        "lines",
        "priority",
        "history",
        "card",
        "voucher",
    ]
    assert [r.start for r in order.reserved_range] == [8, 10]
    assert list(order.reserved_name) == ["legacy"]
    assert [o.name for o in order.oneof_decl] == ["payment", "_priority"]
    assert order.field[3].proto3_optional
    assert [m.name for m in order.nested_type] == ["LinesEntry", "Line", "Voucher"]
    assert fd.service[0].method[1].client_streaming
    assert schema.message_names() == ["shop.v1.Order"]
    assert schema.name() == "shop.v1.Order"


def test_parses_every_proto2_feature() -> None:
    fd = PB.parse(EVERYTHING_PROTO2).descriptor
    record = fd.message_type[0]
    assert record.field[0].label == descriptor_pb2.FieldDescriptorProto.LABEL_REQUIRED
    assert record.field[1].default_value == "42"
    assert record.field[3].type == descriptor_pb2.FieldDescriptorProto.TYPE_GROUP
    assert record.extension_range[0].start == 100
    assert fd.extension[0].extendee == ".legacy.Record"


@pytest.mark.parametrize(
    "path",
    [
        "google/protobuf/any.proto",
        "google/protobuf/duration.proto",
        "google/protobuf/empty.proto",
        "google/protobuf/struct.proto",
        "google/protobuf/timestamp.proto",
        "google/protobuf/wrappers.proto",
        "google/protobuf/descriptor.proto",
        "google/type/date.proto",
        "google/type/money.proto",
        "google/type/decimal.proto",
        "confluent/meta.proto",
        "confluent/type/decimal.proto",
    ],
)
def test_known_imports_resolve_without_references(path: str) -> None:
    schema = PB.parse(f'syntax = "proto3";\nimport "{path}";\nmessage M {{ string a = 1; }}\n')
    assert list(schema.descriptor.dependency) == [path]


def test_confluent_meta_option_and_decimal_type() -> None:
    schema = PB.parse(
        'syntax = "proto3";\n'
        'import "confluent/meta.proto";\n'
        'import "confluent/type/decimal.proto";\n'
        "message Price {\n"
        "  confluent.type.Decimal amount = 1 [(confluent.field_meta) = {"
        ' params: [{key: "precision", value: "8"}] }];\n'
        "}\n"
    )
    assert schema.descriptor.message_type[0].field[0].type_name == ".confluent.type.Decimal"
    assert "(confluent.field_meta) = {\n" in schema.canonical()


def test_imports_resolve_through_references_by_import_path() -> None:
    common = Dependency(
        "acme/common.proto",
        'syntax = "proto3";\npackage acme.common;\nmessage Money { int64 units = 1; }\n',
    )
    schema = PB.parse(
        'syntax = "proto3";\nimport "acme/common.proto";\n'
        "message Invoice { acme.common.Money total = 1; }\n",
        [common],
    )
    assert schema.descriptor.message_type[0].field[0].type_name == ".acme.common.Money"


def test_transitive_references() -> None:
    base = Dependency("base.proto", 'syntax = "proto3";\npackage b;\nmessage B { int32 x = 1; }\n')
    middle = Dependency(
        "middle.proto",
        'syntax = "proto3";\npackage m;\nimport public "base.proto";\nmessage Mid { b.B b = 1; }\n',
    )
    schema = PB.parse(
        'syntax = "proto3";\nimport "middle.proto";\nmessage Top { m.Mid mid = 1; b.B b = 2; }\n',
        [base, middle],
    )
    assert [f.type_name for f in schema.descriptor.message_type[0].field] == [".m.Mid", ".b.B"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('syntax = "proto3";\nmessage M { strin a = 1; }\n', '2:13: "strin" is not defined.'),
        ('syntax = "proto3";\nmessage M { string a = 1 }\n', '2:26: Expected ";".'),
        ('syntax = "proto4";\n', 'Unrecognized syntax identifier "proto4"'),
        ('syntax = "proto3";\nmessage M { required int32 a = 1; }\n', "Required fields"),
        # (a proto3 enum starting at 1 is accepted, as Confluent does: tests/test_confluent8_*)
        ('syntax = "proto3";\nenum E { }\n', "Enums must contain at least one value"),
        ("this is not protobuf", "Expected top-level statement"),
        ('syntax = "proto3";\nmessage M { map<float, string> m = 1; }\n', "Key in map fields"),
    ],
)
def test_invalid_text_reports_protoc_error(text: str, message: str) -> None:
    with pytest.raises(InvalidSchemaError) as info:
        PB.parse(text)
    assert message in str(info.value)


def test_error_in_a_dependency_names_the_file() -> None:
    bad = Dependency("bad.proto", 'syntax = "proto3";\nmessage B { nope x = 1; }\n')
    with pytest.raises(InvalidSchemaError, match=r"bad\.proto:2:13: \"nope\" is not defined"):
        PB.parse('syntax = "proto3";\nimport "bad.proto";\nmessage M {}\n', [bad])


@pytest.mark.parametrize("name", ["../evil.proto", "/etc/x.proto", "a/../../b.proto", ""])
def test_reference_names_cannot_escape_the_work_directory(name: str) -> None:
    with pytest.raises(InvalidSchemaError, match="Invalid reference name"):
        PB.parse('syntax = "proto3";\nmessage M {}\n', [Dependency(name, "")])


def test_base64_file_descriptor_is_accepted() -> None:
    """confluent-kafka's Python serializer registers ``base64(FileDescriptorProto)``."""
    encoded = base64.b64encode(timestamp_pb2.DESCRIPTOR.serialized_pb).decode()
    schema = PB.parse(encoded)
    assert schema.descriptor.package == "google.protobuf"
    assert schema.descriptor.message_type[0].name == "Timestamp"
    assert schema.canonical().startswith('syntax = "proto3";\npackage google.protobuf;\n')


def test_base64_descriptor_with_a_reference() -> None:
    dep = Dependency("dep.proto", 'syntax = "proto3";\npackage d;\nmessage D { int32 x = 1; }\n')
    text_schema = PB.parse(
        'syntax = "proto3";\npackage m;\nimport "dep.proto";\nmessage M { d.D d = 1; }\n', [dep]
    )
    fd = descriptor_pb2.FileDescriptorProto()
    fd.CopyFrom(text_schema.descriptor)
    fd.name = "m.proto"
    schema = PB.parse(base64.b64encode(fd.SerializeToString()).decode(), [dep])
    assert schema.descriptor.message_type[0].field[0].type_name == ".d.D"
    assert "  .d.D d = 1;\n" in schema.canonical()


def test_serialized_format_round_trips() -> None:
    schema = PB.parse(EVERYTHING_PROTO3)
    serialized = schema.formatted("serialized")
    fd = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized))
    assert fd.name == "default"
    assert fd.message_type[0].name == "Order"
    again = PB.parse(serialized)
    assert again.descriptor.message_type == schema.descriptor.message_type


def test_invalid_base64_like_text_reports_the_text_error() -> None:
    with pytest.raises(InvalidSchemaError, match="Expected top-level statement"):
        PB.parse("AAAA")


def test_a_proto_without_syntax_is_proto2() -> None:
    schema = PB.parse("message M { optional int32 a = 1; }")
    assert schema.descriptor.syntax in ("", "proto2")
    assert schema.canonical() == "\nmessage M {\n  optional int32 a = 1;\n}\n"


def test_large_message_parses() -> None:
    fields = "\n".join(f"  string f{i} = {i};" for i in range(1, 501))
    schema = PB.parse(f'syntax = "proto3";\nmessage Big {{\n{fields}\n}}\n')
    assert len(schema.descriptor.message_type[0].field) == 500
