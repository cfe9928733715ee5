"""Canonical and normalised Protobuf texts (Confluent's ``ProtobufSchemaUtils`` printer)."""

from __future__ import annotations

import base64

import pytest
from google.protobuf import descriptor_pb2

from registry.formats.base import Dependency
from registry.formats.protobuf import ProtobufFormat

PB = ProtobufFormat()

ORDER = """
// an order
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
option java_multiple_files = true;
option java_package = "com.shop";
message Order {
  reserved 9, 11 to 13;
  reserved "legacy";
  option deprecated = true;
  string id = 1 [json_name = "ID", deprecated = true];
  google.protobuf.Timestamp at = 2;
  map<string, Line> lines = 3;
  optional int32 priority = 4;
  repeated Status history = 5;
  oneof pay { string card = 7; Line voucher = 6; }
  message Line { string sku = 1; }
  enum Status { option allow_alias = true; UNKNOWN = 0; PAID = 1; SETTLED = 1; }
}
enum Kind { reserved 7; KIND_UNKNOWN = 0; }
service Shop {
  rpc Get (Order) returns (Order.Line);
  rpc Stream (stream .shop.Order) returns (stream Order) { option deprecated = true; }
}
"""

ORDER_CANONICAL = """syntax = "proto3";
package shop;

import "google/protobuf/timestamp.proto";

option java_multiple_files = true;
option java_package = "com.shop";

message Order {
  reserved 9, 11 to 13;
  reserved "legacy";

  option deprecated = true;

  string id = 1 [
    deprecated = true,
    json_name = "ID"
  ];
  google.protobuf.Timestamp at = 2;
  map<string, Line> lines = 3;
  optional int32 priority = 4;
  repeated Status history = 5;

  oneof pay {
    string card = 7;
    Line voucher = 6;
  }

  message Line {
    string sku = 1;
  }
  enum Status {
    option allow_alias = true;
    UNKNOWN = 0;
    PAID = 1;
    SETTLED = 1;
  }
}
enum Kind {
  reserved 7;
  KIND_UNKNOWN = 0;
}

service Shop {
  rpc Get (Order) returns (Order.Line);
  rpc Stream (stream .shop.Order) returns (stream Order) {
    option deprecated = true;
  };
}
"""

ORDER_NORMALIZED = """syntax = "proto3";
package shop;

import "google/protobuf/timestamp.proto";

option java_multiple_files = true;
option java_package = "com.shop";

message Order {
  reserved 9;
  reserved 11 to 13;
  reserved "legacy";

  option deprecated = true;

  string id = 1 [
    deprecated = true,
    json_name = "ID"
  ];
  .google.protobuf.Timestamp at = 2;
  map<string, .shop.Order.Line> lines = 3;
  optional int32 priority = 4;
  repeated .shop.Order.Status history = 5;

  oneof pay {
    .shop.Order.Line voucher = 6;
    string card = 7;
  }

  message Line {
    string sku = 1;
  }
  enum Status {
    option allow_alias = true;
    UNKNOWN = 0;
    PAID = 1;
    SETTLED = 1;
  }
}
enum Kind {
  reserved 7;
  KIND_UNKNOWN = 0;
}

service Shop {
  rpc Get (.shop.Order) returns (.shop.Order.Line);
  rpc Stream (stream .shop.Order) returns (stream .shop.Order) {
    option deprecated = true;
  };
}
"""


def test_canonical_text() -> None:
    assert PB.parse(ORDER).canonical() == ORDER_CANONICAL


def test_normalized_text() -> None:
    assert PB.parse(ORDER).normalized() == ORDER_NORMALIZED


@pytest.mark.parametrize("text", [ORDER, ORDER_CANONICAL, ORDER_NORMALIZED])
def test_printing_is_idempotent(text: str) -> None:
    once = PB.parse(text)
    assert PB.parse(once.canonical()).canonical() == once.canonical()
    assert PB.parse(once.normalized()).normalized() == once.normalized()


def test_normalized_sorts_fields_oneofs_enum_constants_imports() -> None:
    text = (
        'syntax = "proto3";\nimport "b.proto";\nimport "a.proto";\n'
        "message M {\n  int32 z = 3;\n  int32 a = 1;\n"
        "  oneof late { int32 q = 9; int32 p = 8; }\n  oneof early { int32 e = 5; }\n}\n"
        "enum E { ZERO = 0; B = 2; A = 1; }\n"
    )
    deps = [
        Dependency("a.proto", 'syntax = "proto3";'),
        Dependency("b.proto", 'syntax = "proto3";'),
    ]
    assert PB.parse(text, deps).normalized() == (
        'syntax = "proto3";\n\nimport "a.proto";\nimport "b.proto";\n\n'
        "message M {\n  int32 a = 1;\n  int32 z = 3;\n\n"
        "  oneof early {\n    int32 e = 5;\n  }\n"
        "  oneof late {\n    int32 p = 8;\n    int32 q = 9;\n  }\n}\n"
        "enum E {\n  ZERO = 0;\n  A = 1;\n  B = 2;\n}\n"
    )


def test_proto2_syntax_line_kept_in_canonical_dropped_in_normalized() -> None:
    schema = PB.parse(
        'syntax = "proto2";\npackage p;\n'
        'message A {\n  required string s = 1 [default = "a\\"b"];\n'
        "  optional double d = 2 [default = 1.5];\n  optional E e = 3 [default = Y];\n"
        "  extensions 100 to max;\n}\nenum E { X = 0; Y = 1; }\n"
        "extend A { optional int32 ext = 100; }\n"
    )
    assert schema.canonical() == (
        'syntax = "proto2";\npackage p;\n\n'
        "message A {\n"
        '  required string s = 1 [default = "a\\"b"];\n'
        "  optional double d = 2 [default = 1.5];\n"
        "  optional E e = 3 [default = Y];\n\n"
        "  extensions 100 to max;\n}\n"
        "enum E {\n  X = 0;\n  Y = 1;\n}\n\n"
        "extend A {\n  optional int32 ext = 100;\n}\n"
    )
    normalized = schema.normalized()
    assert normalized.startswith("package p;\n\nmessage A {\n")
    assert "  optional .p.E e = 3 [default = Y];\n" in normalized
    assert "extend .p.A {\n" in normalized


def test_group_fields_print_as_groups() -> None:
    text = "message M {\n  optional group G = 1 {\n    optional int32 x = 2;\n  }\n}\n"
    assert PB.parse(text).canonical() == "\n" + text


def test_type_names_keep_their_spelling() -> None:
    text = (
        'syntax = "proto3";\npackage a.b;\n'
        "message M {\n  .a.b.M.N n1 = 1;\n  M.N n2 = 2;\n  N n3 = 3;\n  b.M.N n4 = 4;\n"
        "  message N {}\n}\n"
    )
    body = PB.parse(text).canonical()
    assert "  .a.b.M.N n1 = 1;\n  M.N n2 = 2;\n  N n3 = 3;\n  b.M.N n4 = 4;\n" in body


def test_custom_options_and_ignore_extensions() -> None:
    text = (
        'syntax = "proto3";\nimport "google/protobuf/descriptor.proto";\n'
        'import "confluent/meta.proto";\n'
        "extend google.protobuf.MessageOptions { int32 level = 50001; }\n"
        "message M {\n  option (level) = 3;\n"
        '  option (confluent.message_meta) = { doc: "a message", tags: ["PII"] };\n'
        "  string a = 1;\n}\n"
    )
    schema = PB.parse(text)
    assert schema.canonical() == (
        'syntax = "proto3";\n\n'
        'import "google/protobuf/descriptor.proto";\nimport "confluent/meta.proto";\n\n'
        "message M {\n"
        "  option (level) = 3;\n"  # as written (Confluent prints the parsed options)
        "  option (confluent.message_meta) = {\n"
        '    doc: "a message",\n'
        "    tags: [\n"
        '      "PII"\n'
        "    ]\n"
        "  };\n\n"
        "  string a = 1;\n}\n\n"
        "extend google.protobuf.MessageOptions {\n  int32 level = 50001;\n}\n"
    )
    assert schema.formatted("ignore_extensions") == (
        'syntax = "proto3";\n\n'
        'import "google/protobuf/descriptor.proto";\nimport "confluent/meta.proto";\n\n'
        "message M {\n"
        "  option (confluent.message_meta) = {\n"
        '    doc: "a message",\n'
        "    tags: [\n"
        '      "PII"\n'
        "    ]\n"
        "  };\n\n"
        "  string a = 1;\n}\n"
    )
    assert '    tags: "PII"\n' in schema.normalized()
    assert "  option (level) = 3;\n" in schema.normalized()


def test_descriptor_input_prints_fully_qualified_names() -> None:
    """As Confluent prints a schema registered as a descriptor (confluent-kafka Python)."""
    text = PB.parse(ORDER)
    fd = descriptor_pb2.FileDescriptorProto()
    fd.CopyFrom(text.descriptor)
    fd.name = "shop.proto"
    schema = PB.parse(base64.b64encode(fd.SerializeToString()).decode())
    canonical = schema.canonical()
    assert "  .google.protobuf.Timestamp at = 2;\n" in canonical
    assert "  map<string, .shop.Order.Line> lines = 3;\n" in canonical
    assert '  reserved 9;\n  reserved 11 to 13;\n  reserved "legacy";\n' in canonical
    assert "  rpc Get (.shop.Order) returns (.shop.Order.Line);\n" in canonical
    assert schema.normalized() == text.normalized()


def test_unknown_format_is_canonical() -> None:
    schema = PB.parse(ORDER)
    assert schema.formatted("whatever") == schema.canonical()
    assert schema.formatted(None) == schema.canonical()


def test_message_order_is_kept_for_message_indexes() -> None:
    text = 'syntax = "proto3";\nmessage B {}\nenum E { Z = 0; }\nmessage A {}\n'
    schema = PB.parse(text)
    assert schema.canonical() == (
        'syntax = "proto3";\n\nmessage B {}\nmessage A {}\nenum E {\n  Z = 0;\n}\n'
    )
    assert schema.normalized() == schema.canonical()
    assert schema.message_names() == ["B", "A"]


def test_custom_options_known_to_the_default_pool_are_still_printed() -> None:
    """Importing confluent-kafka's ``meta_pb2`` registers ``confluent.field_meta`` in protobuf's
    default pool, so the option is no longer an unknown field of ``FieldOptions``."""
    from confluent_kafka.schema_registry.confluent import meta_pb2

    assert meta_pb2.DESCRIPTOR.package == "confluent"
    text = (
        'syntax = "proto3";\nimport "confluent/meta.proto";\n'
        'message M {\n  string a = 1 [(confluent.field_meta) = { doc: "d" }];\n}\n'
    )
    assert '(confluent.field_meta) = {\n    doc: "d"\n  }' in PB.parse(text).canonical()
