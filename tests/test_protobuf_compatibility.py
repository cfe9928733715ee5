"""Protobuf compatibility: Confluent 7.9's schema diff rules, difference order and messages.

Each table case names the rule it checks and gives the original (old, writer) schema, the update
(new, reader) schema, every difference Confluent's ``SchemaDiff.compare(original, update)`` lists
(``"TYPE #/path"``, in Confluent's order) and whether the update is backward compatible.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from registry import compatibility
from registry.compatibility import PreviousSchema
from registry.formats.base import Dependency
from registry.formats.protobuf import ProtobufFormat, ProtobufSchema

PB = ProtobufFormat()


def p3(body: str, head: str = "", tail: str = "") -> str:
    """A proto3 file with one message ``M`` holding ``body``."""
    return f'syntax = "proto3";\n{head}\nmessage M {{\n{body}\n}}\n{tail}'


def p2(body: str, head: str = "", tail: str = "") -> str:
    return f'syntax = "proto2";\n{head}\nmessage M {{\n{body}\n}}\n{tail}'


@dataclass(frozen=True)
class Case:
    rule: str
    original: str
    update: str
    changes: tuple[str, ...]
    compatible: bool
    original_deps: tuple[Dependency, ...] = ()
    update_deps: tuple[Dependency, ...] = ()


def case(
    rule: str,
    original: str,
    update: str,
    changes: list[str],
    compatible: bool,
    original_deps: tuple[Dependency, ...] = (),
    update_deps: tuple[Dependency, ...] = (),
) -> Case:
    return Case(rule, original, update, tuple(changes), compatible, original_deps, update_deps)


STATUS = "enum Status { UNKNOWN = 0; ACTIVE = 1; }"
DEP_V1 = Dependency("dep.proto", 'syntax = "proto3";\npackage dep;\nmessage D { int32 a = 1; }\n')
DEP_V2_COMPATIBLE = Dependency(
    "dep.proto", 'syntax = "proto3";\npackage dep;\nmessage D { int32 a = 1; string b = 2; }\n'
)
DEP_V2_BROKEN = Dependency(
    "dep.proto", 'syntax = "proto3";\npackage dep;\nmessage D { string a = 1; }\n'
)
DEP_OTHER_PACKAGE = Dependency(
    "dep2.proto", 'syntax = "proto3";\npackage other;\nmessage D { int32 a = 1; }\n'
)

CASES = [
    # ---- no change and cosmetic changes ----
    case("identical schemas", p3("string a = 1;"), p3("string a = 1;"), [], True),
    case(
        "comments and whitespace are no change",
        p3("string a = 1;"),
        p3("  // the a\n  string   a=1 ;"),
        [],
        True,
    ),
    case(
        "relative vs fully qualified type name is no change",
        p3("Status s = 1;", tail=STATUS),
        p3(".Status s = 1;", tail=STATUS),
        [],
        True,
    ),
    case(
        "qualification with package is no change",
        p3("N n = 1; message N { int32 x = 1; }", head="package pk;"),
        p3(".pk.M.N n = 1; message N { int32 x = 1; }", head="package pk;"),
        [],
        True,
    ),
    case(
        "qualification inside map values is no change",
        p3("map<string, N> m = 1; message N { int32 x = 1; }", head="package pk;"),
        p3("map<string, .pk.M.N> m = 1; message N { int32 x = 1; }", head="package pk;"),
        [],
        True,
    ),
    case(
        "options changes are no change",
        p3("string a = 1;"),
        p3("option deprecated = true; string a = 1 [deprecated = true];"),
        [],
        True,
    ),
    case(
        "reserved ranges are no change",
        p3("string a = 1;"),
        p3('reserved 5 to 9; reserved "b"; string a = 1;'),
        [],
        True,
    ),
    case(
        "services are not compared",
        p3("string a = 1;"),
        p3("string a = 1;", tail="service S { rpc Call (M) returns (M); }"),
        [],
        True,
    ),
    case(
        "field order within a message is no change",
        p3("string a = 1; int32 b = 2;"),
        p3("int32 b = 2; string a = 1;"),
        [],
        True,
    ),
    # ---- package and syntax ----
    case(
        "PACKAGE_CHANGED",
        p3("string a = 1;", head="package a.b;"),
        p3("string a = 1;", head="package a.c;"),
        ["PACKAGE_CHANGED #/"],
        False,
    ),
    case(
        "PACKAGE_CHANGED when a package is added",
        p3("string a = 1;"),
        p3("string a = 1;", head="package a;"),
        ["PACKAGE_CHANGED #/"],
        False,
    ),
    case(
        "PACKAGE_CHANGED when the package is removed",
        p3("string a = 1;", head="package a;"),
        p3("string a = 1;"),
        ["PACKAGE_CHANGED #/"],
        False,
    ),
    case(
        "syntax change proto2 to proto3 with optional scalars is compatible",
        p2("optional string a = 1;"),
        p3("string a = 1;"),
        [],
        True,
    ),
    case(
        "syntax change proto3 to proto2 keeps numeric label checks off for unlabelled fields",
        p3("int32 a = 1;"),
        p2("optional int32 a = 1;"),
        [],
        True,
    ),
    # ---- fields ----
    case(
        "FIELD_ADDED",
        p3("string a = 1;"),
        p3("string a = 1; int32 b = 2;"),
        ["FIELD_ADDED #/M/2"],
        True,
    ),
    case(
        "FIELD_ADDED for several fields, in tag order",
        p3("string a = 1;"),
        p3("string a = 1; int32 b = 2; int32 c = 3;"),
        ["FIELD_ADDED #/M/2", "FIELD_ADDED #/M/3"],
        True,
    ),
    case(
        "FIELD_REMOVED",
        p3("string a = 1; int32 b = 2;"),
        p3("string a = 1;"),
        ["FIELD_REMOVED #/M/2"],
        True,
    ),
    case(
        "FIELD_REMOVED with the tag reserved",
        p3("string a = 1; int32 b = 2;"),
        p3("reserved 2; string a = 1;"),
        ["FIELD_REMOVED #/M/2"],
        True,
    ),
    case(
        "FIELD_NAME_CHANGED",
        p3("string a = 1;"),
        p3("string b = 1;"),
        ["FIELD_NAME_CHANGED #/M/1"],
        True,
    ),
    case(
        "changed field number is a removal plus an addition",
        p3("string a = 1;"),
        p3("string a = 2;"),
        ["FIELD_REMOVED #/M/1", "FIELD_ADDED #/M/2"],
        True,
    ),
    case(
        "FIELD_ADDED in a nested message",
        p3("N n = 1; message N { int32 x = 1; }"),
        p3("N n = 1; message N { int32 x = 1; int32 y = 2; }"),
        ["FIELD_ADDED #/M/N/2"],
        True,
    ),
    case(
        "FIELD_REMOVED in a doubly nested message",
        p3("message N { message O { int32 x = 1; int32 y = 2; } }"),
        p3("message N { message O { int32 x = 1; } }"),
        ["FIELD_REMOVED #/M/N/O/2"],
        True,
    ),
    case(
        "tag order of differences follows Java's HashSet (17 before 2 with 16 buckets)",
        p3("int32 a = 1;"),
        p3("int32 a = 1; int32 b = 2; int32 c = 17;"),
        ["FIELD_ADDED #/M/17", "FIELD_ADDED #/M/2"],
        True,
    ),
    # ---- required fields (proto2) ----
    case(
        "REQUIRED_FIELD_ADDED",
        p2("optional string a = 1;"),
        p2("optional string a = 1; required int32 b = 2;"),
        ["REQUIRED_FIELD_ADDED #/M/2"],
        False,
    ),
    case(
        "REQUIRED_FIELD_REMOVED",
        p2("optional string a = 1; required int32 b = 2;"),
        p2("optional string a = 1;"),
        ["REQUIRED_FIELD_REMOVED #/M/2"],
        False,
    ),
    case(
        "optional proto2 field added is FIELD_ADDED",
        p2("optional string a = 1;"),
        p2("optional string a = 1; optional int32 b = 2;"),
        ["FIELD_ADDED #/M/2"],
        True,
    ),
    case(
        "required to optional on a number is FIELD_NUMERIC_LABEL_CHANGED",
        p2("required int32 a = 1;"),
        p2("optional int32 a = 1;"),
        ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"],
        False,
    ),
    case(
        "required to optional on a string is FIELD_STRING_OR_BYTES_LABEL_CHANGED",
        p2("required string a = 1;"),
        p2("optional string a = 1;"),
        ["FIELD_STRING_OR_BYTES_LABEL_CHANGED #/M/1"],
        True,
    ),
    case(
        "required to optional on a message field is not compared",
        p2("required N n = 1; message N { optional int32 x = 1; }"),
        p2("optional N n = 1; message N { optional int32 x = 1; }"),
        [],
        True,
    ),
    # ---- labels ----
    case(
        "FIELD_NUMERIC_LABEL_CHANGED optional to repeated",
        p3("optional int32 a = 1;"),
        p3("repeated int32 a = 1;"),
        ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"],
        False,
    ),
    case(
        "FIELD_NUMERIC_LABEL_CHANGED repeated to optional double",
        p3("repeated double a = 1;"),
        p3("optional double a = 1;"),
        ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"],
        False,
    ),
    case(
        "FIELD_NUMERIC_LABEL_CHANGED on an enum field",
        p3("optional Status s = 1;", tail=STATUS),
        p3("repeated Status s = 1;", tail=STATUS),
        ["FIELD_NUMERIC_LABEL_CHANGED #/M/1"],
        False,
    ),
    case(
        "FIELD_STRING_OR_BYTES_LABEL_CHANGED for string",
        p3("optional string a = 1;"),
        p3("repeated string a = 1;"),
        ["FIELD_STRING_OR_BYTES_LABEL_CHANGED #/M/1"],
        True,
    ),
    case(
        "FIELD_STRING_OR_BYTES_LABEL_CHANGED for bytes",
        p3("repeated bytes a = 1;"),
        p3("optional bytes a = 1;"),
        ["FIELD_STRING_OR_BYTES_LABEL_CHANGED #/M/1"],
        True,
    ),
    case(
        "label change from no label to repeated is not compared (label not explicit)",
        p3("int32 a = 1;"),
        p3("repeated int32 a = 1;"),
        [],
        True,
    ),
    case(
        "proto3 optional added to an implicit field is not compared",
        p3("int32 a = 1;"),
        p3("optional int32 a = 1;"),
        [],
        True,
    ),
    case(
        "label change on a message field is not compared",
        p3("N n = 1; message N { int32 x = 1; }"),
        p3("repeated N n = 1; message N { int32 x = 1; }"),
        [],
        True,
    ),
    # ---- kinds ----
    case(
        "FIELD_KIND_CHANGED scalar to message",
        p3("int32 a = 1;"),
        p3("N a = 1; message N { int32 x = 1; }"),
        ["FIELD_KIND_CHANGED #/M/1", "MESSAGE_ADDED #/M/N"],
        False,
    ),
    case(
        "FIELD_KIND_CHANGED message to scalar",
        p3("N a = 1; message N { int32 x = 1; }"),
        p3("int32 a = 1; message N { int32 x = 1; }"),
        ["FIELD_KIND_CHANGED #/M/1"],
        False,
    ),
    case(
        "FIELD_KIND_CHANGED scalar to map",
        p3("string a = 1;"),
        p3("map<string, string> a = 1;"),
        ["FIELD_KIND_CHANGED #/M/1"],
        False,
    ),
    case(
        "FIELD_KIND_CHANGED map to message",
        p3("map<string, string> a = 1;"),
        p3("N a = 1; message N { string key = 1; string value = 2; }"),
        ["FIELD_KIND_CHANGED #/M/1", "MESSAGE_ADDED #/M/N"],
        False,
    ),
    case(
        "FIELD_KIND_CHANGED with MESSAGE_ADDED for a new top-level message",
        p3("int32 a = 1;"),
        p3("N a = 1;", tail="message N { int32 x = 1; }"),
        ["FIELD_KIND_CHANGED #/M/1", "MESSAGE_ADDED #/N"],
        False,
    ),
    case(
        "enum is a scalar: int32 to enum is compatible",
        p3("int32 s = 1;"),
        p3("Status s = 1;", tail=STATUS),
        ["ENUM_ADDED #/Status"],
        True,
    ),
    case(
        "enum is a scalar: enum to uint64 is compatible",
        p3("Status s = 1;", tail=STATUS),
        p3("uint64 s = 1;"),
        ["ENUM_REMOVED #/Status"],
        True,
    ),
    case(
        "enum to another enum is compatible",
        p3("Status s = 1;", tail=STATUS),
        p3("Other s = 1;", tail="enum Other { X = 0; }"),
        ["ENUM_REMOVED #/Status", "ENUM_ADDED #/Other"],
        True,
    ),
    case(
        "enum to string is FIELD_SCALAR_KIND_CHANGED",
        p3("Status s = 1;", tail=STATUS),
        p3("string s = 1;"),
        ["FIELD_SCALAR_KIND_CHANGED #/M/1", "ENUM_REMOVED #/Status"],
        False,
    ),
    case(
        "enum replaced by a nested message of the same name",
        p3("Status s = 1;", tail=STATUS),
        p3("Status s = 1; message Status { int32 x = 1; }"),
        ["FIELD_KIND_CHANGED #/M/1", "MESSAGE_ADDED #/M/Status", "ENUM_REMOVED #/Status"],
        False,
    ),
    case(
        "FIELD_NAME_CHANGED and FIELD_SCALAR_KIND_CHANGED together",
        p3("string a = 1;"),
        p3("int32 b = 1;"),
        ["FIELD_NAME_CHANGED #/M/1", "FIELD_SCALAR_KIND_CHANGED #/M/1"],
        False,
    ),
    # ---- message-typed fields ----
    case(
        "FIELD_NAMED_TYPE_CHANGED to another message",
        p3("A f = 1;", tail="message A { int32 x = 1; }"),
        p3("B f = 1;", tail="message B { int32 x = 1; }"),
        ["MESSAGE_REMOVED #/A", "MESSAGE_ADDED #/B", "FIELD_NAMED_TYPE_CHANGED #/M/1"],
        False,
    ),
    case(
        "FIELD_NAMED_TYPE_CHANGED between two existing messages",
        p3("A f = 1;", tail="message A { int32 x = 1; }\nmessage B { int32 x = 1; }"),
        p3("B f = 1;", tail="message A { int32 x = 1; }\nmessage B { int32 x = 1; }"),
        ["FIELD_NAMED_TYPE_CHANGED #/M/1"],
        False,
    ),
    case(
        "FIELD_NAMED_TYPE_CHANGED when a nested type is renamed",
        p3("N f = 1; message N { int32 x = 1; }"),
        p3("O f = 1; message O { int32 x = 1; }"),
        ["FIELD_NAMED_TYPE_CHANGED #/M/1", "MESSAGE_REMOVED #/M/N", "MESSAGE_ADDED #/M/O"],
        False,
    ),
    case(
        "same local message type: not compared again at the field",
        p3("N f = 1; message N { int32 x = 1; }"),
        p3("N f = 1; message N { string x = 1; }"),
        ["FIELD_SCALAR_KIND_CHANGED #/M/N/1"],
        False,
    ),
    case(
        "well-known type field unchanged",
        p3("google.protobuf.Timestamp t = 1;", head='import "google/protobuf/timestamp.proto";'),
        p3(".google.protobuf.Timestamp t = 1;", head='import "google/protobuf/timestamp.proto";'),
        [],
        True,
    ),
    case(
        "well-known type replaced by another is FIELD_NAMED_TYPE_CHANGED",
        p3("google.protobuf.Timestamp t = 1;", head='import "google/protobuf/timestamp.proto";'),
        p3("google.protobuf.Duration t = 1;", head='import "google/protobuf/duration.proto";'),
        ["FIELD_NAMED_TYPE_CHANGED #/M/1"],
        False,
    ),
    case(
        "google/type and confluent/type resolve without references",
        p3("google.type.Money m = 1;", head='import "google/type/money.proto";'),
        p3("confluent.type.Decimal m = 1;", head='import "confluent/type/decimal.proto";'),
        ["FIELD_NAMED_TYPE_CHANGED #/M/1"],
        False,
    ),
    # ---- maps ----
    case(
        "map value scalar change within a group",
        p3("map<string, int32> m = 1;"),
        p3("map<string, int64> m = 1;"),
        [],
        True,
    ),
    case(
        "map value scalar kind change",
        p3("map<string, int32> m = 1;"),
        p3("map<string, string> m = 1;"),
        ["FIELD_SCALAR_KIND_CHANGED #/M/1"],
        False,
    ),
    case(
        "map key scalar kind change",
        p3("map<string, int32> m = 1;"),
        p3("map<int32, int32> m = 1;"),
        ["FIELD_SCALAR_KIND_CHANGED #/M/1"],
        False,
    ),
    case(
        "map key and value kind change give two differences",
        p3("map<string, int32> m = 1;"),
        p3("map<int32, string> m = 1;"),
        ["FIELD_SCALAR_KIND_CHANGED #/M/1", "FIELD_SCALAR_KIND_CHANGED #/M/1"],
        False,
    ),
    case(
        "map value scalar to message",
        p3("map<string, int32> m = 1; message N { int32 x = 1; }"),
        p3("map<string, N> m = 1; message N { int32 x = 1; }"),
        ["FIELD_KIND_CHANGED #/M/1"],
        False,
    ),
    case(
        "map value message renamed",
        p3("map<string, N> m = 1; message N { int32 x = 1; } message O { int32 x = 1; }"),
        p3("map<string, O> m = 1; message N { int32 x = 1; } message O { int32 x = 1; }"),
        ["FIELD_NAMED_TYPE_CHANGED #/M/1"],
        False,
    ),
    case(
        "map entry messages are not MESSAGE_ADDED",
        p3("string a = 1;"),
        p3("string a = 1; map<string, string> m = 2;"),
        ["FIELD_ADDED #/M/2"],
        True,
    ),
    case(
        "map to repeated scalar is FIELD_KIND_CHANGED",
        p3("map<string, string> m = 1;"),
        p3("repeated string m = 1;"),
        ["FIELD_KIND_CHANGED #/M/1"],
        False,
    ),
    # ---- oneofs ----
    case(
        "ONEOF_ADDED when one field moves into a new oneof",
        p3("string a = 1; int32 b = 2;"),
        p3("int32 b = 2; oneof o { string a = 1; }"),
        ["ONEOF_ADDED #/M/o"],
        True,
    ),
    case(
        "ONEOF_ADDED with new fields",
        p3("string a = 1;"),
        p3("string a = 1; oneof o { int32 x = 2; int32 y = 3; }"),
        ["ONEOF_ADDED #/M/o"],
        True,
    ),
    case(
        "MULTIPLE_FIELDS_MOVED_TO_ONEOF",
        p3("string a = 1; int32 b = 2;"),
        p3("oneof o { string a = 1; int32 b = 2; }"),
        ["MULTIPLE_FIELDS_MOVED_TO_ONEOF #/M/o", "ONEOF_ADDED #/M/o"],
        False,
    ),
    case(
        "ONEOF_FIELD_ADDED",
        p3("oneof o { string a = 1; int32 b = 2; }"),
        p3("oneof o { string a = 1; int32 b = 2; bool c = 3; }"),
        ["ONEOF_FIELD_ADDED #/M/o/3"],
        True,
    ),
    case(
        "ONEOF_FIELD_REMOVED",
        p3("oneof o { string a = 1; int32 b = 2; bool c = 3; }"),
        p3("oneof o { string a = 1; int32 b = 2; }"),
        ["ONEOF_FIELD_REMOVED #/M/o/3"],
        False,
    ),
    case(
        "ONEOF_REMOVED with all its members is compatible",
        p3("string a = 1; oneof o { int32 b = 2; bool c = 3; }"),
        p3("string a = 1;"),
        ["ONEOF_REMOVED #/M/o"],
        True,
    ),
    case(
        "FIELD_MOVED_TO_EXISTING_ONEOF",
        p3("string a = 1; oneof o { int32 b = 2; }"),
        p3("oneof o { string a = 1; int32 b = 2; }"),
        ["FIELD_MOVED_TO_EXISTING_ONEOF #/M/o", "ONEOF_FIELD_ADDED #/M/o/1"],
        False,
    ),
    case(
        "FIELD_MOVED_TO_EXISTING_ONEOF into a renamed oneof",
        p3("string a = 1; oneof o { int32 b = 2; }"),
        p3("oneof o2 { string a = 1; int32 b = 2; }"),
        ["FIELD_MOVED_TO_EXISTING_ONEOF #/M/o2", "ONEOF_ADDED #/M/o2", "ONEOF_REMOVED #/M/o"],
        False,
    ),
    case(
        "oneof renamed (members kept) is a removal plus an addition",
        p3("oneof o { int32 b = 2; }"),
        p3("oneof p { int32 b = 2; }"),
        ["ONEOF_ADDED #/M/p", "ONEOF_REMOVED #/M/o"],
        True,
    ),
    case(
        "field leaving its oneof (oneof kept) is ONEOF_FIELD_REMOVED in 7.9",
        p3("oneof o { int32 a = 1; int32 b = 2; }"),
        p3("int32 a = 1; oneof o { int32 b = 2; }"),
        ["ONEOF_FIELD_REMOVED #/M/o/1", "FIELD_ADDED #/M/1"],
        False,
    ),
    case(
        "oneof member type change inside a group",
        p3("oneof o { int32 a = 1; }"),
        p3("oneof o { int64 a = 1; }"),
        [],
        True,
    ),
    case(
        "oneof member type change across groups",
        p3("oneof o { int32 a = 1; }"),
        p3("oneof o { string a = 1; }"),
        ["FIELD_SCALAR_KIND_CHANGED #/M/o/1"],
        False,
    ),
    case(
        "oneof member renamed",
        p3("oneof o { int32 a = 1; }"),
        p3("oneof o { int32 z = 1; }"),
        ["FIELD_NAME_CHANGED #/M/o/1"],
        True,
    ),
    case(
        "proto3 optional is not a oneof",
        p3("optional string a = 1;"),
        p3("optional string a = 1; optional int32 b = 2;"),
        ["FIELD_ADDED #/M/2"],
        True,
    ),
    case(
        "oneof member labels are not compared (no label)",
        p3("oneof o { int32 a = 1; }"),
        p3("oneof o { int32 a = 1; } int32 x = 5;"),
        ["FIELD_ADDED #/M/5"],
        True,
    ),
    # ---- messages ----
    case(
        "MESSAGE_ADDED",
        p3("string a = 1;"),
        p3("string a = 1;", tail="message N {}"),
        ["MESSAGE_ADDED #/N"],
        True,
    ),
    case(
        "MESSAGE_REMOVED",
        p3("string a = 1;", tail="message N {}"),
        p3("string a = 1;"),
        ["MESSAGE_REMOVED #/N"],
        False,
    ),
    case(
        "MESSAGE_REMOVED nested",
        p3("message N {}"),
        p3(""),
        ["MESSAGE_REMOVED #/M/N"],
        False,
    ),
    case(
        "MESSAGE_ADDED before moves the others (MESSAGE_MOVED)",
        p3("string a = 1;"),
        'syntax = "proto3";\nmessage N {}\nmessage M { string a = 1; }\n',
        ["MESSAGE_MOVED #/M", "MESSAGE_ADDED #/N"],
        True,
    ),
    case(
        "MESSAGE_MOVED when two messages swap",
        'syntax = "proto3";\nmessage A {}\nmessage B {}\n',
        'syntax = "proto3";\nmessage B {}\nmessage A {}\n',
        ["MESSAGE_MOVED #/A", "MESSAGE_MOVED #/B"],
        True,
    ),
    case(
        "enums between messages do not change message indexes",
        'syntax = "proto3";\nmessage A {}\nmessage B {}\n',
        'syntax = "proto3";\nmessage A {}\nenum E { X = 0; }\nmessage B {}\n',
        ["ENUM_ADDED #/E"],
        True,
    ),
    case(
        "MESSAGE_MOVED for nested messages",
        p3("message A {} message B {}"),
        p3("message B {} message A {}"),
        ["MESSAGE_MOVED #/M/A", "MESSAGE_MOVED #/M/B"],
        True,
    ),
    case(
        "message renamed is MESSAGE_REMOVED plus MESSAGE_ADDED",
        'syntax = "proto3";\nmessage A { int32 x = 1; }\n',
        'syntax = "proto3";\nmessage B { int32 x = 1; }\n',
        ["MESSAGE_REMOVED #/A", "MESSAGE_ADDED #/B"],
        False,
    ),
    # ---- enums ----
    case(
        "ENUM_ADDED",
        p3("int32 a = 1;"),
        p3("int32 a = 1;", tail=STATUS),
        ["ENUM_ADDED #/Status"],
        True,
    ),
    case(
        "ENUM_REMOVED",
        p3("int32 a = 1;", tail=STATUS),
        p3("int32 a = 1;"),
        ["ENUM_REMOVED #/Status"],
        True,
    ),
    case(
        "ENUM_CONST_ADDED",
        p3("", tail=STATUS),
        p3("", tail="enum Status { UNKNOWN = 0; ACTIVE = 1; GONE = 2; }"),
        ["ENUM_CONST_ADDED #/Status/2"],
        True,
    ),
    case(
        "ENUM_CONST_REMOVED",
        p3("", tail=STATUS),
        p3("", tail="enum Status { UNKNOWN = 0; }"),
        ["ENUM_CONST_REMOVED #/Status/1"],
        True,
    ),
    case(
        "ENUM_CONST_CHANGED",
        p3("", tail=STATUS),
        p3("", tail="enum Status { UNKNOWN = 0; ENABLED = 1; }"),
        ["ENUM_CONST_CHANGED #/Status/1"],
        True,
    ),
    case(
        "ENUM_CONST_CHANGED in a nested enum",
        p3("enum E { A = 0; B = 1; }"),
        p3("enum E { A = 0; C = 1; }"),
        ["ENUM_CONST_CHANGED #/M/E/1"],
        True,
    ),
    case(
        "enum constants with negative numbers",
        p2("", tail="enum E { A = -1; B = 0; }"),
        p2("", tail="enum E { A = -1; }"),
        ["ENUM_CONST_REMOVED #/E/0"],
        True,
    ),
    case(
        "enum aliases: the last constant of a number is compared",
        p3("", tail="enum E { option allow_alias = true; A = 0; B = 0; }"),
        p3("", tail="enum E { A = 0; }"),
        ["ENUM_CONST_CHANGED #/E/0"],
        True,
    ),
    # ---- references ----
    case(
        "referenced type unchanged",
        p3("dep.D d = 1;", head='import "dep.proto";'),
        p3(".dep.D d = 1;", head='import "dep.proto";'),
        [],
        True,
        (DEP_V1,),
        (DEP_V1,),
    ),
    case(
        "referenced type changed compatibly is compared recursively",
        p3("dep.D d = 1;", head='import "dep.proto";'),
        p3("dep.D d = 1;", head='import "dep.proto";'),
        ["FIELD_ADDED #/D/2"],
        True,
        (DEP_V1,),
        (DEP_V2_COMPATIBLE,),
    ),
    case(
        "referenced type changed incompatibly is FIELD_NAMED_TYPE_CHANGED",
        p3("dep.D d = 1;", head='import "dep.proto";'),
        p3("dep.D d = 1;", head='import "dep.proto";'),
        ["FIELD_SCALAR_KIND_CHANGED #/D/1", "FIELD_NAMED_TYPE_CHANGED #/M/1"],
        False,
        (DEP_V1,),
        (DEP_V2_BROKEN,),
    ),
    case(
        "referenced type from another package with the same local name",
        p3("dep.D d = 1;", head='import "dep.proto";'),
        p3("other.D d = 1;", head='import "dep2.proto";'),
        [],
        True,
        (DEP_V1,),
        (DEP_OTHER_PACKAGE,),
    ),
    case(
        "moving a message to an import is MESSAGE_REMOVED",
        p3("D d = 1;", tail="message D { int32 a = 1; }"),
        p3("dep.D d = 1;", head='import "dep.proto";'),
        ["MESSAGE_REMOVED #/D"],
        False,
        (),
        (DEP_V1,),
    ),
    case(
        "moving a message from an import is MESSAGE_ADDED",
        p3("dep.D d = 1;", head='import "dep.proto";'),
        p3("D d = 1;", tail="message D { int32 a = 1; }"),
        ["MESSAGE_ADDED #/D"],
        True,
        (DEP_V1,),
        (),
    ),
    case(
        "an import added without use is no change",
        p3("string a = 1;"),
        p3("string a = 1;", head='import "dep.proto";'),
        [],
        True,
        (),
        (DEP_V1,),
    ),
    # ---- several rules at once ----
    case(
        "messages before enums, each in Java hash order",
        'syntax = "proto3";\nmessage A {}\nenum E { X = 0; }\n',
        'syntax = "proto3";\nmessage B {}\nenum F { X = 0; }\n',
        ["MESSAGE_REMOVED #/A", "MESSAGE_ADDED #/B", "ENUM_REMOVED #/E", "ENUM_ADDED #/F"],
        False,
    ),
    case(
        "oneof differences come before field differences",
        p3("int32 a = 1; oneof o { int32 b = 2; }"),
        p3("int32 c = 3; oneof o { int32 b = 2; int32 d = 4; }"),
        ["ONEOF_FIELD_ADDED #/M/o/4", "FIELD_REMOVED #/M/1", "FIELD_ADDED #/M/3"],
        True,
    ),
]

#: Confluent's scalar compatibility groups (changes within one group are compatible)
SCALAR_GROUPS = [
    ["int32", "int64", "uint32", "uint64", "bool"],
    ["sint32", "sint64"],
    ["string", "bytes"],
    ["fixed32", "sfixed32"],
    ["fixed64", "sfixed64"],
    ["float"],
    ["double"],
]
GROUP_OF = {t: i for i, group in enumerate(SCALAR_GROUPS) for t in group}


def _scalar_cases() -> list[Case]:
    """Every pair inside a group, and each group against one member of every other group."""
    result = []
    for a, b in itertools.permutations(GROUP_OF, 2):
        same = GROUP_OF[a] == GROUP_OF[b]
        if not same and b != SCALAR_GROUPS[GROUP_OF[b]][0]:
            continue
        result.append(
            case(
                f"scalar {a} -> {b}: "
                + ("same group, compatible" if same else "FIELD_SCALAR_KIND_CHANGED"),
                p3(f"{a} f = 1;"),
                p3(f"{b} f = 1;"),
                [] if same else ["FIELD_SCALAR_KIND_CHANGED #/M/1"],
                same,
            )
        )
    return result


ALL_CASES = CASES + _scalar_cases()


def parse(text: str, deps: tuple[Dependency, ...]) -> ProtobufSchema:
    return PB.parse(text, deps)


def test_the_table_is_large() -> None:
    assert len(ALL_CASES) > 150
    assert len({c.rule for c in ALL_CASES}) == len(ALL_CASES)


@pytest.mark.parametrize("c", ALL_CASES, ids=[c.rule for c in ALL_CASES])
def test_differences(c: Case) -> None:
    original = parse(c.original, c.original_deps)
    update = parse(c.update, c.update_deps)
    assert [str(d) for d in PB.differences(original, update)] == list(c.changes)
    errors = PB.compatibility_errors(update, original)
    assert (errors == []) is c.compatible
    incompatible = [d for d in c.changes if d.split()[0] not in _COMPATIBLE]
    assert [e.split('"')[1] for e in errors] == [d.split()[0] for d in incompatible]


_COMPATIBLE = {
    "MESSAGE_ADDED",
    "MESSAGE_MOVED",
    "ENUM_ADDED",
    "ENUM_REMOVED",
    "ENUM_CONST_ADDED",
    "ENUM_CONST_CHANGED",
    "ENUM_CONST_REMOVED",
    "FIELD_ADDED",
    "FIELD_REMOVED",
    "FIELD_NAME_CHANGED",
    "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
    "ONEOF_ADDED",
    "ONEOF_REMOVED",
    "ONEOF_FIELD_ADDED",
}


# ---- exact difference strings -----------------------------------------------------------------

MESSAGES = [
    (
        "PACKAGE_CHANGED",
        p3("", head="package a;"),
        p3("", head="package b;"),
        '{errorType:"PACKAGE_CHANGED", description:"The package at \'#/\' in the new schema does '
        'not match the package in the old schema"}',
    ),
    (
        "MESSAGE_REMOVED",
        p3("", tail="message N {}"),
        p3(""),
        '{errorType:"MESSAGE_REMOVED", description:"The new schema is missing a MESSAGE type at '
        "path '#/N' in the old schema\"}",
    ),
    (
        "FIELD_KIND_CHANGED",
        p3("int32 a = 1;"),
        p3("map<int32, int32> a = 1;"),
        '{errorType:"FIELD_KIND_CHANGED", description:"The type of a field at path \'#/M/1\' in '
        'the new schema does not match the old schema"}',
    ),
    (
        "FIELD_SCALAR_KIND_CHANGED",
        p3("int32 a = 1;"),
        p3("string a = 1;"),
        '{errorType:"FIELD_SCALAR_KIND_CHANGED", description:"The kind of a SCALAR field at path '
        "'#/M/1' in the new schema does not match its kind in the old schema\"}",
    ),
    (
        "FIELD_NAMED_TYPE_CHANGED",
        p3("A a = 1;", tail="message A {}\nmessage B {}"),
        p3("B a = 1;", tail="message A {}\nmessage B {}"),
        '{errorType:"FIELD_NAMED_TYPE_CHANGED", description:"The type of a MESSAGE field at path '
        "'#/M/1' in the new schema does not match its type in the old schema\"}",
    ),
    (
        "FIELD_NUMERIC_LABEL_CHANGED",
        p3("optional int32 a = 1;"),
        p3("repeated int32 a = 1;"),
        '{errorType:"FIELD_NUMERIC_LABEL_CHANGED", description:"The label for a NUMERIC field at '
        "path '#/M/1' in the new schema does not match its label in the old schema\"}",
    ),
    (
        "REQUIRED_FIELD_ADDED",
        p2(""),
        p2("required int32 a = 1;"),
        '{errorType:"REQUIRED_FIELD_ADDED", description:"A required field  at path \'#/M/1\' in '
        'the new schema is missing in the old schema"}',
    ),
    (
        "REQUIRED_FIELD_REMOVED",
        p2("required int32 a = 1;"),
        p2(""),
        '{errorType:"REQUIRED_FIELD_REMOVED", description:"The new schema is missing a required '
        "field at path: '#/M/1' in the old schema\"}",
    ),
    (
        "ONEOF_FIELD_REMOVED",
        p3("oneof o { int32 a = 1; int32 b = 2; }"),
        p3("oneof o { int32 a = 1; }"),
        '{errorType:"ONEOF_FIELD_REMOVED", description:"The new schema is missing a oneof field '
        "at path '#/M/o/2' in the old schema\"}",
    ),
    (
        "MULTIPLE_FIELDS_MOVED_TO_ONEOF",
        p3("int32 a = 1; int32 b = 2;"),
        p3("oneof o { int32 a = 1; int32 b = 2; }"),
        '{errorType:"MULTIPLE_FIELDS_MOVED_TO_ONEOF", description:"Multiple fields in the oneof '
        "at path '#/M/o' in the new schema are outside a oneof in the old schema\"}",
    ),
    (
        "FIELD_MOVED_TO_EXISTING_ONEOF",
        p3("int32 a = 1; oneof o { int32 b = 2; }"),
        p3("oneof o { int32 a = 1; int32 b = 2; }"),
        '{errorType:"FIELD_MOVED_TO_EXISTING_ONEOF", description:"A field in the oneof at path '
        "'#/M/o' in the new schema is outside an existing oneof in the old schema\"}",
    ),
]


@pytest.mark.parametrize(("rule", "old", "new", "message"), MESSAGES, ids=[m[0] for m in MESSAGES])
def test_difference_messages(rule: str, old: str, new: str, message: str) -> None:
    errors = PB.compatibility_errors(PB.parse(new), PB.parse(old))
    assert errors == [message]


def test_forward_labels_swap_the_slots() -> None:
    old, new = PB.parse(p3("", tail="message N {}")), PB.parse(p3(""))
    assert PB.compatibility_errors(old, new, reader_label="old", writer_label="new") == []
    errors = PB.compatibility_errors(new, old, reader_label="old", writer_label="new")
    assert errors == [
        '{errorType:"MESSAGE_REMOVED", description:"The old schema is missing a MESSAGE type at '
        "path '#/N' in the new schema\"}"
    ]


# ---- the seven levels through registry.compatibility.check --------------------------------------

V1 = p3("string a = 1;")
V2_ADDS_MESSAGE = p3("string a = 1;", tail="message N {}")  # backward yes, forward no
V3_ADDS_FIELD = p3("string a = 1; int32 b = 2;", tail="message N {}")
INCOMPATIBLE = p3("int32 a = 1;", tail="message N {}")  # string -> int32 both ways


def previous(*texts: str) -> list[PreviousSchema]:
    return [
        PreviousSchema(PB.parse(t), i + 1, PB.parse(t).canonical()) for i, t in enumerate(texts)
    ]


@pytest.mark.parametrize(
    ("rule", "level", "history", "new", "compatible"),
    [
        ("NONE accepts anything", "NONE", [V1], INCOMPATIBLE, True),
        ("BACKWARD accepts an added message", "BACKWARD", [V1], V2_ADDS_MESSAGE, True),
        ("BACKWARD rejects a removed message", "BACKWARD", [V2_ADDS_MESSAGE], V1, False),
        ("FORWARD rejects an added message", "FORWARD", [V1], V2_ADDS_MESSAGE, False),
        ("FORWARD accepts a removed message", "FORWARD", [V2_ADDS_MESSAGE], V1, True),
        ("FULL rejects an added message", "FULL", [V1], V2_ADDS_MESSAGE, False),
        ("FULL accepts an added field", "FULL", [V2_ADDS_MESSAGE], V3_ADDS_FIELD, True),
        (
            "BACKWARD checks only the latest",
            "BACKWARD",
            [INCOMPATIBLE, V2_ADDS_MESSAGE],
            V3_ADDS_FIELD,
            True,
        ),
        (
            "BACKWARD_TRANSITIVE checks every version",
            "BACKWARD_TRANSITIVE",
            [INCOMPATIBLE, V2_ADDS_MESSAGE],
            V3_ADDS_FIELD,
            False,
        ),
        (
            "FORWARD_TRANSITIVE accepts compatible history",
            "FORWARD_TRANSITIVE",
            [V2_ADDS_MESSAGE],
            V3_ADDS_FIELD,
            True,
        ),
        (
            "FORWARD_TRANSITIVE rejects an older incompatible version",
            "FORWARD_TRANSITIVE",
            [V1, V2_ADDS_MESSAGE],
            V3_ADDS_FIELD,
            False,
        ),
        (
            "FULL_TRANSITIVE accepts compatible history",
            "FULL_TRANSITIVE",
            [V2_ADDS_MESSAGE],
            V3_ADDS_FIELD,
            True,
        ),
        (
            "FULL_TRANSITIVE rejects an older incompatible version",
            "FULL_TRANSITIVE",
            [INCOMPATIBLE, V2_ADDS_MESSAGE],
            V3_ADDS_FIELD,
            False,
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and " " in v else None,
)
def test_levels(rule: str, level: str, history: list[str], new: str, compatible: bool) -> None:
    messages = compatibility.check(PB, level, PB.parse(new), previous(*history))
    assert (messages == []) is compatible
    if not compatible:
        assert messages[-1] == f"{{validateFields: 'false', compatibility: '{level}'}}"
        assert any(m.startswith("{errorType:") for m in messages)


def test_full_lists_forward_then_backward_messages() -> None:
    old = p3("int32 a = 1;", tail="message Gone {}")
    new = p3("string a = 1;", tail="message Added {}")
    messages = compatibility.check(PB, "FULL", PB.parse(new), previous(old))
    # old reads new (forward) first, then new reads old (backward)
    assert [m.split('"')[1] for m in messages[:4]] == [
        "MESSAGE_REMOVED",
        "FIELD_SCALAR_KIND_CHANGED",
        "FIELD_SCALAR_KIND_CHANGED",
        "MESSAGE_REMOVED",
    ]
    assert "The old schema is missing a MESSAGE type at path '#/Added' in the new" in messages[0]
    assert "'#/M/1' in the new schema does not match its kind in the old schema" in messages[2]
    assert "The new schema is missing a MESSAGE type at path '#/Gone' in the old" in messages[3]
    assert messages[4] == "{oldSchemaVersion: 1}"
    assert messages[5].startswith('{oldSchema: \'syntax = "proto3";')


def test_different_schema_type_is_incompatible() -> None:
    from registry.formats.avro import AvroFormat

    avro = AvroFormat().parse('"string"')
    messages = compatibility.check(
        PB, "BACKWARD", PB.parse(V1), [PreviousSchema(avro, 1, '"string"')]
    )
    assert messages[0] == "Incompatible because of different schema type"
