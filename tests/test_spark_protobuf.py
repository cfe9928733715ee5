"""from_confluent_protobuf: Spark's from_protobuf type mapping (one test per rule, from
SchemaConverters.scala / ProtobufDeserializer.scala of Spark 4.1 with default options), and
decoding Confluent-framed records written by our ProtobufSerializer (and confluent-kafka's) on a
live registry: every field kind, references, message indexes, several writer versions, writer
ids unknown when the query was planned, malformed input in both modes, bad arguments."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor
from google.protobuf.message_factory import GetMessageClass
from pyspark.sql import types as T

from registry.formats.base import Dependency
from registry.formats.protobuf.compiler import MAIN_FILE, compile_proto
from spark_serdes.protobuf_decoder import compile_converter
from spark_serdes.protobuf_types import RecursiveProtobufSchemaError, message_to_spark

# -- building descriptors and message classes from .proto text ------------------------------------


def _pool(text: str, name: str, deps: dict[str, str] | None = None) -> Any:
    deps = deps or {}
    compiled = compile_proto(text, [Dependency(n, t) for n, t in deps.items()])
    pool = descriptor_pool.DescriptorPool()
    for file in compiled.files:
        if file.name == MAIN_FILE:
            file.name = name
        pool.Add(file)
    return pool


def _desc(text: str, message: str = "t.M") -> Descriptor:
    return _pool(text, "t.proto").FindMessageTypeByName(message)


def _spark(body: str, syntax: str = "proto3", imports: str = "") -> T.StructType:
    return message_to_spark(_desc(f'syntax = "{syntax}";\npackage t;\n{imports}\n{body}'))


def _field(body: str, name: str = "f", **kw: str) -> T.StructField:
    return _spark(body, **kw)[name]


# -- the type mapping, rule by rule ----------------------------------------------------------------


def test_int32_kinds_and_unsigned32_are_int() -> None:
    # JavaType INT -> IntegerType; uint32 too unless upcast.unsigned.ints (default false)
    st = _spark(
        "message M { int32 a = 1; sint32 b = 2; sfixed32 c = 3; uint32 d = 4; fixed32 e = 5; }"
    )
    assert [f.dataType for f in st] == [T.IntegerType()] * 5
    assert all(f.nullable for f in st)


def test_int64_kinds_and_unsigned64_are_long() -> None:
    # JavaType LONG -> LongType; uint64 is Decimal(20,0) only with upcast.unsigned.ints
    st = _spark(
        "message M { int64 a = 1; sint64 b = 2; sfixed64 c = 3; uint64 d = 4; fixed64 e = 5; }"
    )
    assert [f.dataType for f in st] == [T.LongType()] * 5


def test_float_double_bool_string_bytes() -> None:
    st = _spark("message M { float a = 1; double b = 2; bool c = 3; string d = 4; bytes e = 5; }")
    assert [f.dataType for f in st] == [
        T.FloatType(),
        T.DoubleType(),
        T.BooleanType(),
        T.StringType(),
        T.BinaryType(),  # BYTE_STRING -> BinaryType
    ]


def test_enum_is_string() -> None:
    # ENUM -> StringType (IntegerType only with enums.as.ints)
    assert _field("enum E { Z = 0; A = 1; }\nmessage M { E f = 1; }").dataType == T.StringType()


def test_message_is_struct_of_its_fields() -> None:
    f = _field("message P { int32 x = 1; string y = 2; }\nmessage M { P f = 1; }")
    assert f.dataType == T.StructType(
        [T.StructField("x", T.IntegerType()), T.StructField("y", T.StringType())]
    )
    assert f.nullable


def test_repeated_is_array_without_null_elements() -> None:
    # StructField(name, ArrayType(dt, containsNull = false)), nullable
    f = _field("message P { int32 x = 1; }\nmessage M { repeated P f = 1; }")
    assert f.dataType == T.ArrayType(T.StructType([T.StructField("x", T.IntegerType())]), False)
    assert f.nullable


def test_map_is_map_type_without_null_values() -> None:
    f = _field("message M { map<string, int64> f = 1; }")
    assert f.dataType == T.MapType(T.StringType(), T.LongType(), valueContainsNull=False)
    assert f.nullable


def test_timestamp_and_duration_by_simple_name_and_seconds_nanos() -> None:
    imports = 'import "google/protobuf/timestamp.proto";\nimport "google/protobuf/duration.proto";'
    st = _spark(
        "message Timestamp { int64 seconds = 1; int32 nanos = 2; }\n"
        "message Duration { int64 seconds = 1; int32 other = 2; }\n"
        "message M { google.protobuf.Timestamp a = 1; google.protobuf.Duration b = 2;\n"
        "  Timestamp own = 3; Duration not_one = 4; }",
        imports=imports,
    )
    assert st["a"].dataType == T.TimestampType()
    assert st["b"].dataType == T.DayTimeIntervalType(0, 3)  # defaultConcreteType
    # Spark matches the message's simple name and its two fields, not the package
    assert st["own"].dataType == T.TimestampType()
    assert st["not_one"].dataType == T.StructType(
        [T.StructField("seconds", T.LongType()), T.StructField("other", T.IntegerType())]
    )


def test_wrappers_and_any_stay_structs_by_default() -> None:
    # unwrap.primitive.wrapper.types and convert.any.fields.to.json default to false
    st = _spark(
        "message M { google.protobuf.Int32Value w = 1; google.protobuf.StringValue s = 2;\n"
        "  google.protobuf.Any a = 3; }",
        imports='import "google/protobuf/wrappers.proto";\nimport "google/protobuf/any.proto";',
    )
    assert st["w"].dataType == T.StructType([T.StructField("value", T.IntegerType())])
    assert st["s"].dataType == T.StructType([T.StructField("value", T.StringType())])
    assert st["a"].dataType == T.StructType(
        [T.StructField("type_url", T.StringType()), T.StructField("value", T.BinaryType())]
    )


def test_recursive_message_is_an_error() -> None:
    # recursive.fields.max.depth unset: foundRecursionInProtobufSchema
    with pytest.raises(
        RecursiveProtobufSchemaError, match=r"recursive reference.*t\.N\.back.*t\.M -> t\.N -> t\.M"
    ):
        _spark("message M { int32 a = 1; N next = 2; }\nmessage N { M back = 1; }")


def test_same_message_in_two_sibling_fields_is_not_recursion() -> None:
    st = _spark("message P { int32 x = 1; }\nmessage M { P a = 1; P b = 2; repeated P c = 3; }")
    assert st["a"].dataType == st["b"].dataType == st["c"].dataType.elementType


def test_fields_of_empty_messages_are_dropped() -> None:
    # retain.empty.message.types false: a struct with no fields is not kept, nor arrays/maps of it
    st = _spark(
        "message E {}\nmessage M { E a = 1; repeated E b = 2; map<string, E> c = 3; int32 d = 4; }"
    )
    assert st.fieldNames() == ["d"]


def test_required_is_not_nullable_everything_else_is() -> None:
    st = _spark(
        "message M { required int32 a = 1; optional int32 b = 2; repeated int32 c = 3; }",
        syntax="proto2",
    )
    assert [(f.name, f.nullable) for f in st] == [("a", False), ("b", True), ("c", True)]


def test_oneof_members_are_plain_fields() -> None:
    st = _spark("message M { oneof kind { string a = 1; int32 b = 2; } bool c = 3; }")
    assert [(f.name, f.dataType) for f in st] == [
        ("a", T.StringType()),
        ("b", T.IntegerType()),
        ("c", T.BooleanType()),
    ]


# -- values: presence and conversions (ProtobufDeserializer.getFieldValue and writers) -------------

VALUES = """
syntax = "proto3";
package t;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
message M {
  enum E { Z = 0; A = 1; }
  message P { int32 x = 1; }
  int32 i = 1; optional int32 oi = 2; double d = 3; uint32 u = 4; uint64 ul = 5;
  E e = 6; repeated E es = 7; P p = 8; oneof o { int32 oa = 9; string ob = 10; }
  google.protobuf.Timestamp t = 11; google.protobuf.Duration du = 12; string s = 13;
  map<uint32, P> m = 14;
}
"""


@pytest.fixture(scope="module")
def values_class() -> Any:
    return GetMessageClass(_pool(VALUES, "v.proto").FindMessageTypeByName("t.M"))


def test_proto3_zero_values_are_null_explicit_presence_keeps_them(values_class: Any) -> None:
    convert = compile_converter(values_class.DESCRIPTOR)
    empty = convert(values_class())
    # no presence, zero (not on the wire) -> null; repeated/map -> empty; messages unset -> null
    assert empty == (None,) * 6 + ([],) + (None,) * 6 + ({},)
    msg = values_class(oi=0, d=-0.0, oa=0, p={}, t={}, s="")
    got = convert(msg)
    assert got[1] == 0  # proto3 optional set to 0: present
    assert got[2] == -0.0 and str(got[2]) == "-0.0"  # -0.0 is not the default: written
    assert got[7] == (None,)  # a present empty message is a struct of nulls
    assert got[8] == 0  # oneof member set to 0: present
    assert got[10] == 0  # Timestamp present: 0 micros
    assert got[12] is None  # "" not present


def test_unsigned_enum_time_and_map_conversions(values_class: Any) -> None:
    convert = compile_converter(values_class.DESCRIPTOR)
    msg = values_class(u=2**32 - 1, ul=2**63, e=1, es=[0, 1, 7], ob="x")
    msg.t.seconds, msg.t.nanos = -2, 999_999
    msg.du.seconds, msg.du.nanos = -1, -1500
    msg.m[2**31].x = 3
    got = convert(msg)
    assert got[3] == -1 and got[4] == -(2**63)  # Java's signed int/long of the same bits
    assert got[5] == "A"
    assert got[6] == ["Z", "A", "UNKNOWN_ENUM_VALUE_E_7"]  # protobuf-java's unknown name
    assert got[9] == "x"
    assert got[10] == -2_000_000 + 999  # seconds * 10^6 + nanos / 1000
    assert got[11] == -1_000_001  # nanos / 1000 truncated toward zero, as TimeUnit.toMicros
    assert got[13] == {-(2**31): (3,)}
