"""from_confluent_protobuf: Spark's from_protobuf type mapping (one test per rule, from
SchemaConverters.scala / ProtobufDeserializer.scala of Spark 4.1 with default options), and
decoding Confluent-framed records written by our ProtobufSerializer (and confluent-kafka's) on a
live registry: every field kind, references, message indexes, several writer versions, writer
ids unknown when the query was planned, malformed input in both modes, bad arguments."""

from __future__ import annotations

import base64
import datetime
import re
from typing import Any

import httpx
import pyarrow as pa
import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pool
from google.protobuf.descriptor import Descriptor
from google.protobuf.message_factory import GetMessageClass
from pyspark.sql import functions as F
from pyspark.sql import types as T

from registry.formats.base import Dependency
from registry.formats.protobuf.compiler import MAIN_FILE, compile_proto
from serdes import SchemaRegistryClient, SchemaRegistryError, SerializationError, wire
from serdes.protobuf import ProtobufSerializer
from spark_serdes import from_confluent_protobuf
from spark_serdes.protobuf_decoder import compile_converter
from spark_serdes.protobuf_types import RecursiveProtobufSchemaError, message_to_spark
from tests.fixtures.spark import CountingProxy, register

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
    assert empty == (None,) * 6 + ([],) + (None,) * 6 + ([],)  # a map as its (key, value) pairs
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
    assert got[13] == [(-(2**31), (3,))]


# -- decoding in Spark, records from our ProtobufSerializer on the live registry ------------------

ALL = """
syntax = "proto3";
package sp.all;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";
message Everything {
  enum Color { COLOR_UNSET = 0; RED = 1; GREEN = 2; }
  message Point { int32 x = 1; int32 y = 2; }
  int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3; uint32 u32 = 4; fixed32 f32 = 5;
  int64 i64 = 6; sint64 s64 = 7; sfixed64 sf64 = 8; uint64 u64 = 9; fixed64 f64 = 10;
  float fl = 11; double db = 12; bool flag = 13; string text = 14; bytes blob = 15;
  Color color = 16; Point point = 17; repeated int32 nums = 18; repeated Point points = 19;
  map<string, int64> counts = 20; map<int32, Point> by_id = 21;
  google.protobuf.Timestamp at = 22; google.protobuf.Duration took = 23;
  oneof choice { string name = 24; int32 code = 25; }
  optional int32 maybe = 26; google.protobuf.Int32Value wrapped = 27;
  google.protobuf.Any extra = 28; repeated Color colors = 29;
}
message Holder { message Inner { string label = 1; Everything.Point at = 2; } Inner inner = 1; }
"""
ALL_TYPE = (
    "struct<name:string,code:int,"
    "i32:int,s32:int,sf32:int,u32:int,f32:int,i64:bigint,s64:bigint,sf64:bigint,"
    "u64:bigint,f64:bigint,fl:float,db:double,flag:boolean,text:string,blob:binary,"
    "color:string,point:struct<x:int,y:int>,nums:array<int>,points:array<struct<x:int,y:int>>,"
    "counts:map<string,bigint>,by_id:map<int,struct<x:int,y:int>>,at:timestamp,"
    "took:interval day to second,maybe:int,wrapped:struct<value:int>,"
    "extra:struct<type_url:string,value:binary>,colors:array<string>>"
)  # the field order of the descriptor the registry serves (format=serialized), as Confluent
# builds it (ProtobufSchema.toDynamicMessage): oneof members first, then the other fields
EVO = {
    1: "message User { int64 id = 1; string name = 2; }",
    2: "message User { int64 id = 1; string name = 2; string email = 3; }",
    3: "message User { int64 id = 1; reserved 2; string email = 3; int32 age = 4; }",
    4: "message User { int64 id = 1; string email = 3; int32 age = 4; bool vip = 5; }",
}


def _classes(text: str, file: str, names: list[str], deps: dict[str, str] | None = None) -> Any:
    pool = _pool(text, file, deps)
    return [GetMessageClass(pool.FindMessageTypeByName(n)) for n in names]


def _serialize(url: str, topic: str, messages: list[Any]) -> list[bytes]:
    with SchemaRegistryClient({"url": url}) as client:
        ser = ProtobufSerializer(type(messages[0]), client)
        ctx = SerializationContext(topic, MessageField.VALUE)
        return [ser(m, ctx) for m in messages]


def _frame_id(data: bytes) -> int:
    return int.from_bytes(data[1:5], "big")


def _rows(df: Any, column: Any) -> dict[int, Any]:
    return {r.n: r.v for r in df.select("n", column.alias("v")).collect()}


def _plain(value: Any) -> Any:
    return value.asDict(recursive=True) if value is not None else None


def _ts(micros: int) -> datetime.datetime:
    """As PySpark's TimestampType.fromInternal gives it."""
    return datetime.datetime.fromtimestamp(micros // 1_000_000).replace(
        microsecond=micros % 1_000_000
    )


@pytest.fixture(scope="module")
def everything(spark_registry: Any) -> Any:
    everything_cls, inner_cls = _classes(
        ALL, "sp_all.proto", ["sp.all.Everything", "sp.all.Holder.Inner"]
    )
    full = everything_cls(
        i32=-5, s32=-6, sf32=-7, u32=2**32 - 1, f32=2**31, i64=-(2**40), s64=-8, sf64=-9,
        u64=2**64 - 1, f64=2**63, fl=1.5, db=-0.0, flag=True, text="tëxt", blob=b"\x00\xff",
        color=2, nums=[1, 0, 3], counts={"a": 0, "b": 2}, name="nm", maybe=0, colors=[1, 7],
    )  # fmt: skip
    full.point.y = 5
    full.points.add()
    full.points.add(x=1)
    full.by_id[7].y = 1
    full.at.seconds, full.at.nanos = 1_700_000_000, 123_456_789
    full.took.seconds, full.took.nanos = -1, -500
    full.wrapped.value = 0
    full.extra.type_url, full.extra.value = "type.googleapis.com/x", b"\x01"
    coded = everything_cls(code=0, fl=0.25)
    url = spark_registry.url
    values = _serialize(url, "pb-all", [everything_cls(), full, coded])
    inner = inner_cls(label="in")
    inner.at.x = 4
    values += _serialize(url, "pb-all", [inner])
    return values, (everything_cls, inner_cls, full, inner)


def test_every_field_kind_decodes_as_spark_from_protobuf(
    everything: Any, spark: Any, spark_registry: Any
) -> None:
    values, (everything_cls, inner_cls, full, inner) = everything
    # confluent-kafka's serializer writes the same bytes (same id, index path, payload)
    theirs = ConfluentClient({"url": spark_registry.url})
    ctx = SerializationContext("pb-all", MessageField.VALUE)
    cser = CProtoSerializer(everything_cls, theirs, {"use.deprecated.format": False})
    assert cser(full, ctx) == values[1]
    cinner = CProtoSerializer(inner_cls, theirs, {"use.deprecated.format": False})
    assert cinner(inner, ctx) == values[3] and values[3][5:8] == b"\x04\x02\x00"  # path [1, 0]
    df = spark.createDataFrame(list(enumerate(values[:3])), "n int, value binary")
    column = from_confluent_protobuf("value", spark_registry.url, subject="pb-all-value")
    out = df.select("n", column.alias("v"))
    assert out.schema["v"].dataType.simpleString() == ALL_TYPE
    local = message_to_spark(everything_cls.DESCRIPTOR)
    assert sorted(out.schema["v"].dataType, key=str) == sorted(local, key=str)
    rows = {r.n: _plain(r.v) for r in out.collect()}
    empty = dict.fromkeys(T._parse_datatype_string(ALL_TYPE).fieldNames())
    empty.update(nums=[], points=[], counts={}, by_id={}, colors=[])
    assert rows[0] == empty  # proto3: nothing on the wire, every singular field null
    assert rows[1] == {
        "i32": -5, "s32": -6, "sf32": -7, "u32": -1, "f32": -(2**31), "i64": -(2**40),
        "s64": -8, "sf64": -9, "u64": -1, "f64": -(2**63), "fl": 1.5, "db": -0.0, "flag": True,
        "text": "tëxt", "blob": bytearray(b"\x00\xff"), "color": "GREEN",
        "point": {"x": None, "y": 5}, "nums": [1, 0, 3],
        "points": [{"x": None, "y": None}, {"x": 1, "y": None}],
        "counts": {"a": 0, "b": 2}, "by_id": {7: {"x": None, "y": 1}},
        "at": _ts(1_700_000_000_123_456), "took": datetime.timedelta(seconds=-1),
        "name": "nm", "code": None, "maybe": 0, "wrapped": {"value": None},
        "extra": {"type_url": "type.googleapis.com/x", "value": bytearray(b"\x01")},
        "colors": ["RED", "UNKNOWN_ENUM_VALUE_Color_7"],
    }  # fmt: skip
    assert {k: v for k, v in rows[2].items() if v not in (None, [], {})} == {"fl": 0.25, "code": 0}


def test_nested_message_by_index_path_and_wrong_message(
    everything: Any, spark: Any, spark_registry: Any
) -> None:
    values, _ = everything
    df = spark.createDataFrame(list(enumerate(values)), "n int, value binary")
    url = spark_registry.url
    for name in ("Inner", "sp.all.Holder.Inner"):
        column = from_confluent_protobuf(
            "value", url, subject="pb-all-value", message=name,
            options={"mode": "PERMISSIVE", "errorField": "error"},
        )  # fmt: skip
        rows = _rows(df, column)
        assert _plain(rows[3]) == {
            "value": {"label": "in", "at": {"x": 4, "y": None}},
            "error": None,
        }
        schema_id = _frame_id(values[0])
        for n in (0, 1, 2):
            assert rows[n].value is None
            assert rows[n].error == (
                f"schema id {schema_id}: the record is a sp.all.Everything (message indexes [0]), "
                "not the reader's message sp.all.Holder.Inner"
            )
    strict = from_confluent_protobuf("value", url, subject="pb-all-value", message="Inner")
    with pytest.raises(Exception, match=r"the record is a sp\.all\.Everything.*not the reader's"):
        df.select(strict).collect()


def _user(version: int) -> Any:
    text = f'syntax = "proto3";\npackage sp.evo;\n{EVO[version]}\n'
    return _classes(text, f"sp_evo_v{version}.proto", ["sp.evo.User"])[0]


@pytest.fixture(scope="module")
def evolved(spark_registry: Any) -> Any:
    url = spark_registry.url
    httpx.put(f"{url}/config/pb-evo-value", json={"compatibility": "NONE"}).raise_for_status()
    users = {v: _user(v) for v in (1, 2, 3)}
    values = _serialize(url, "pb-evo", [users[1](id=1, name="a")])
    values += _serialize(url, "pb-evo", [users[2](id=2, name="b", email="b@x")])
    values += _serialize(url, "pb-evo", [users[3](id=3, email="c@x", age=30)])
    return values


def test_several_writer_versions_decode_with_the_latest_reader(
    evolved: Any, spark: Any, spark_registry: Any
) -> None:
    df = spark.createDataFrame(list(enumerate(evolved)), "n int, value binary")
    assert len({_frame_id(v) for v in evolved}) == 3
    rows = _rows(df, from_confluent_protobuf("value", spark_registry.url, subject="pb-evo-value"))
    # fields by number: v1/v2's name (2) is unknown to the reader and ignored, email/age absent
    assert {n: _plain(v) for n, v in rows.items()} == {
        0: {"id": 1, "email": None, "age": None},
        1: {"id": 2, "email": "b@x", "age": None},
        2: {"id": 3, "email": "c@x", "age": 30},
    }
    old = from_confluent_protobuf("value", spark_registry.url, subject="pb-evo-value", version=2)
    rows = _rows(df, old)
    assert [_plain(rows[n]) for n in range(3)] == [
        {"id": 1, "name": "a", "email": None},
        {"id": 2, "name": "b", "email": "b@x"},
        {"id": 3, "name": None, "email": "c@x"},
    ]


def test_id_registered_after_planning_is_fetched_once_per_worker(
    evolved: Any, spark: Any, spark_registry: Any
) -> None:
    proxy = CountingProxy(spark_registry.url)
    try:
        column = from_confluent_protobuf("value", proxy.url, subject="pb-evo-value")
        # registered after the column was planned, under another subject: unknown to the driver
        user4 = _user(4)
        late = _serialize(
            spark_registry.url, "pb-evo-late", [user4(id=n, vip=True, age=n) for n in range(40)]
        )
        late_id = _frame_id(late[0])
        assert late_id not in {_frame_id(v) for v in evolved}
        df = spark.createDataFrame(list(enumerate(late + evolved)), "n int, value binary")
        rows = _rows(df.repartition(4, "n"), column)
    finally:
        proxy.close()
    assert _plain(rows[7]) == {"id": 7, "email": None, "age": 7}
    assert _plain(rows[40]) == {"id": 1, "email": None, "age": None}
    assert len(rows) == 43
    by_id = {
        int(m.group(1)): count
        for path, count in proxy.counts.items()
        if (m := re.fullmatch(r"GET /schemas/ids/(\d+)", path))
    }
    # the driver asked once for each of the subject's ids (serialized form); the late id is
    # fetched by the workers, at most once per Python worker process (local[2]), not per row
    assert {schema_id: by_id[schema_id] for schema_id in {_frame_id(v) for v in evolved}} == {
        _frame_id(v): 1 for v in evolved
    }
    assert 1 <= by_id[late_id] <= 2, proxy.counts


REF_COMMON = (
    'syntax = "proto3";\npackage sp.common;\n'
    "message Money { int64 units = 1; string currency = 2; }"
)
REF_MAIN = """syntax = "proto3";
package sp.ref;
import "sp_common.proto";
message Payment { string id = 1; sp.common.Money amount = 2; repeated sp.common.Money fees = 3; }
"""


def test_reader_schema_with_a_reference_to_another_subject(spark: Any, spark_registry: Any) -> None:
    url = spark_registry.url
    (payment,) = _classes(
        REF_MAIN, "sp_ref.proto", ["sp.ref.Payment"], {"sp_common.proto": REF_COMMON}
    )
    msg = payment(id="p1")
    msg.amount.units, msg.amount.currency = 12, "EUR"
    msg.fees.add(units=1)
    values = _serialize(url, "pb-ref", [msg, payment()])
    with SchemaRegistryClient({"url": url}) as client:
        refs = client.get_latest_version("pb-ref-value").schema.references
    assert [(r.name, r.subject) for r in refs] == [("sp_common.proto", "sp_common.proto")]
    df = spark.createDataFrame(list(enumerate(values)), "n int, value binary")
    rows = _rows(df, from_confluent_protobuf("value", url, subject="pb-ref-value"))
    assert _plain(rows[0]) == {
        "id": "p1",
        "amount": {"units": 12, "currency": "EUR"},
        "fees": [{"units": 1, "currency": None}],
    }
    assert _plain(rows[1]) == {"id": None, "amount": None, "fees": []}


def _bad_rows(spark: Any, evolved: Any, spark_registry: Any) -> Any:
    good = evolved[2]
    frame = good[:6]  # magic, id of v3, index path [0]
    avro_id = register(
        spark_registry.url, "pb-avro-value", {"type": "record", "name": "A", "fields": []}
    )
    rows = [
        (0, good),
        (1, b"\x07\x00\x00\x00\x01abc"),  # unknown magic byte
        (2, b"\x00\x00"),  # truncated frame
        (3, b"\x00" + (987654).to_bytes(4, "big") + b"\x00\x08\x01"),  # unknown schema id
        (4, frame + b"\x0a\xff\xff"),  # field 1 length-delimited with a runaway length
        (5, None),  # tombstone
        (6, good[:5] + wire.encode_message_indexes([3]) + good[6:]),  # no message [3]
        (7, frame + b"\x08\x01\x18\x05"),  # field 3 (email, a string) written as a varint
        (8, b"\x00" + avro_id.to_bytes(4, "big") + b"\x00"),  # an Avro schema's id
        (9, b"\x01" + bytes(range(16)) + b"\x00\x08\x01"),  # a schema GUID frame
    ]
    return spark.createDataFrame(rows, "n int, value binary"), _frame_id(good), avro_id


def test_permissive_gives_null_and_the_reason(
    evolved: Any, spark: Any, spark_registry: Any
) -> None:
    df, good_id, avro_id = _bad_rows(spark, evolved, spark_registry)
    column = from_confluent_protobuf(
        "value", spark_registry.url, subject="pb-evo-value",
        options={"mode": "PERMISSIVE", "errorField": "error"},
    )  # fmt: skip
    out = df.select("n", column.alias("v"))
    value_type = out.schema["v"].dataType["value"].dataType
    assert all(f.nullable for f in value_type.fields)
    rows = {r.n: r.v for r in out.collect()}
    assert _plain(rows[0]) == {"value": {"id": 3, "email": "c@x", "age": 30}, "error": None}
    assert all(rows[n].value is None for n in range(1, 10))
    assert rows[5].error is None
    assert "magic byte 7" in rows[1].error
    assert "truncated" in rows[2].error
    assert "schema id 987654: not found in the registry" in rows[3].error
    assert rows[4].error.startswith(
        f"schema id {good_id}: payload does not decode as Protobuf message sp.evo.User"
    )
    assert (
        rows[6].error == f"schema id {good_id}: message index path [3] does not exist in the schema"
    )
    assert rows[7].error.startswith(
        f"schema id {good_id}: field number 3 of sp.evo.User has another wire type"
    )
    assert rows[8].error == f"schema id {avro_id}: is a AVRO schema, not Protobuf"
    # a GUID frame is looked up by its GUID (tests/test_spark_framing.py decodes known ones)
    assert rows[9].error.startswith(
        "schema GUID 00010203-0405-0607-0809-0a0b0c0d0e0f: not found in the registry"
    )
    plain = from_confluent_protobuf(
        "value", spark_registry.url, subject="pb-evo-value", options={"mode": "permissive"}
    )
    rows = _rows(df, plain)
    assert _plain(rows[0]) == {"id": 3, "email": "c@x", "age": 30}
    assert all(rows[n] is None for n in range(1, 10))


@pytest.mark.parametrize(
    ("n", "message"),
    [
        (1, "magic byte 7"),
        (4, "payload does not decode as Protobuf"),
        (7, "field number 3 of sp.evo.User"),
    ],
)
def test_failfast_names_the_schema_id_and_reason(
    evolved: Any, spark: Any, spark_registry: Any, n: int, message: str
) -> None:
    df, _, _ = _bad_rows(spark, evolved, spark_registry)
    column = from_confluent_protobuf("value", spark_registry.url, subject="pb-evo-value")
    with pytest.raises(Exception, match=message):
        df.where(F.col("n").isin(0, n)).select(column).collect()


RECURSIVE = (
    'syntax = "proto3";\npackage sp.rec;\nmessage Node { string name = 1; repeated Node kids = 2; }'
)


def test_bad_arguments_fail_when_called(spark: Any, evolved: Any, spark_registry: Any) -> None:
    url = spark_registry.url
    with pytest.raises(ValueError, match=r"native engine is Avro-only.*spark-protobuf"):
        from_confluent_protobuf("value", url, subject="pb-evo-value", options={"engine": "native"})
    with pytest.raises(ValueError, match="unknownIds is for native engines"):
        from_confluent_protobuf(
            "value", url, subject="pb-evo-value", options={"unknownIds": "error"}
        )
    with pytest.raises(ValueError, match="needs a subject"):
        from_confluent_protobuf("value", url)
    with pytest.raises(ValueError, match=r"has no message 'Nope'; its messages: sp\.evo\.User"):
        from_confluent_protobuf("value", url, subject="pb-evo-value", message="Nope")
    with pytest.raises(ValueError, match="message must be a message name"):
        from_confluent_protobuf("value", url, subject="pb-evo-value", message="")
    with pytest.raises(ValueError, match="has no version 99"):
        from_confluent_protobuf("value", url, subject="pb-evo-value", version=99)
    with pytest.raises(ValueError, match="version must be"):
        from_confluent_protobuf("value", url, subject="pb-evo-value", version="first")
    with pytest.raises(ValueError, match="options mode must be one of"):
        from_confluent_protobuf("value", url, subject="pb-evo-value", options={"mode": "DROP"})
    with pytest.raises(ValueError, match="errorField needs mode PERMISSIVE"):
        from_confluent_protobuf("value", url, subject="pb-evo-value", options={"errorField": "e"})
    with pytest.raises(ValueError, match="unknown options"):
        from_confluent_protobuf(
            "value", url, subject="pb-evo-value", options={"emit.default.values": "true"}
        )
    with pytest.raises(TypeError, match="registry must be"):
        from_confluent_protobuf("value", 8081, subject="pb-evo-value")  # type: ignore[arg-type]
    with pytest.raises(SchemaRegistryError, match="not found"):
        from_confluent_protobuf("value", url, subject="pb-missing-value")
    register(url, "pb-avro-only-value", {"type": "record", "name": "B", "fields": []})
    with pytest.raises(ValueError, match="is AVRO, not Protobuf"):
        from_confluent_protobuf("value", url, subject="pb-avro-only-value")
    (node,) = _classes(RECURSIVE, "sp_rec.proto", ["sp.rec.Node"])
    _serialize(url, "pb-rec", [node(name="root")])
    with pytest.raises(RecursiveProtobufSchemaError, match=r"sp\.rec\.Node\.kids"):
        from_confluent_protobuf("value", url, subject="pb-rec-value")


PROTO2 = """
syntax = "proto2";
package t2;
message M {
  message P { required int32 x = 1; optional string s = 2 [default = "d"]; }
  required int64 id = 1; optional P p = 2; optional int32 n = 3 [default = 7]; optional int32 o = 4;
}
"""


def test_batch_decoder_proto2_required_defaults_and_null_parents() -> None:
    from pyspark.sql.pandas.types import to_arrow_type

    from spark_serdes.protobuf_decoder import ProtobufBatchDecoder

    pool = _pool(PROTO2, "p2.proto")
    cls = GetMessageClass(pool.FindMessageTypeByName("t2.M"))
    st = message_to_spark(cls.DESCRIPTOR)
    # required -> not nullable, also inside the nested struct
    assert st.simpleString() == "struct<id:bigint,p:struct<x:int,s:string>,n:int,o:int>"
    assert [f.nullable for f in st] == [False, True, True, True]
    assert not st["p"].dataType["x"].nullable
    files = [
        (
            "default",
            base64.standard_b64encode(pool.FindFileByName("p2.proto").serialized_pb).decode(),
        )
    ]
    decoder = ProtobufBatchDecoder(
        None,
        files,
        "t2.M",
        {5: {(0,): "t2.M"}},
        to_arrow_type(st),
        permissive=True,
        with_error=False,
    )
    frame = wire.id_prefix(5) + b"\x00"
    present = cls(id=1, o=0)
    present.p.x = 2
    values = [frame + present.SerializeToString(), frame + cls(id=2).SerializeToString()]
    values.append(frame + b"\x18\x01")  # n = 1 but the required id is missing
    out = decoder.decode(pa.array(values, pa.binary()))
    assert out.to_pylist() == [
        # proto2: a field with an explicit default reads its default when unset
        {"id": 1, "p": {"x": 2, "s": "d"}, "n": 7, "o": 0},
        {"id": 2, "p": None, "n": 7, "o": None},
        None,  # Spark's from_protobuf fails a message missing a required field
    ]
    assert out.type == to_arrow_type(st)
    strict = ProtobufBatchDecoder(
        None,
        files,
        "t2.M",
        {5: {(0,): "t2.M"}},
        to_arrow_type(st),
        permissive=False,
        with_error=False,
    )
    with pytest.raises(
        SerializationError, match=r"schema id 5: message t2\.M misses required fields: id"
    ):
        strict.decode(pa.array(values, pa.binary()))
    with pytest.raises(SerializationError, match="schema id 6: unknown, and no registry"):
        strict.decode(pa.array([wire.id_prefix(6) + b"\x00"], pa.binary()))


def test_reader_message_lookup_errors() -> None:
    from spark_serdes.protobuf_decoder import find_message

    text = (
        'syntax = "proto3";\npackage t;\nmessage A { message X {} }\nmessage B { message X {} }\n'
    )
    file = _pool(text, "f.proto").FindFileByName("f.proto")
    assert find_message(file, None, "s").full_name == "t.A"  # Confluent's index [0]
    assert find_message(file, ".t.B.X", "s").full_name == "t.B.X"
    with pytest.raises(ValueError, match=r"'X' is ambiguous in schema s: t\.A\.X, t\.B\.X"):
        find_message(file, "X", "s")
    empty = _pool('syntax = "proto3";\npackage t;\n', "e.proto").FindFileByName("e.proto")
    with pytest.raises(ValueError, match="schema s declares no message"):
        find_message(empty, None, "s")


def test_timestamp_beyond_a_long_of_microseconds_fails_the_record(values_class: Any) -> None:
    convert = compile_converter(values_class.DESCRIPTOR)
    msg = values_class()
    msg.t.seconds = 2**62  # Spark's Math.multiplyExact overflows too
    with pytest.raises(SerializationError, match=r"Timestamp of 4611686018427387904 seconds"):
        convert(msg)
