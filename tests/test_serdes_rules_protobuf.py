"""Data-contract rules in serdes.protobuf against confluent-kafka 2.16's Protobuf serdes on
one live registry: fields tagged with ``(confluent.field_meta)``, the same verdicts and
transformed bytes on write, the same verdicts reading either library's frames."""

# ruff: noqa: F811  (fixtures imported from tests.rules_helpers)
from __future__ import annotations

import base64
from typing import Any

import pytest
from confluent_kafka.schema_registry.confluent import meta_pb2
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSerializer
from google.protobuf import descriptor_pb2, descriptor_pool, json_format
from google.protobuf.message_factory import GetMessageClass

from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer
from tests.rules_helpers import (  # noqa: F401
    both,
    ours,
    register,
    register_executors,
    rule,
    rules_server,
    theirs,
    topic,
    value_ctx,
)

register_executors()

F = descriptor_pb2.FieldDescriptorProto
LATEST = {"auto.register.schemas": False, "use.latest.version": True}


def _field(message: Any, name: str, number: int, kind: int, tags: tuple[str, ...] = (), **kw: Any):
    field = message.field.add(name=name, number=number, type=kind, label=F.LABEL_OPTIONAL)
    for key, value in kw.items():
        setattr(field, key, value)
    if tags:
        field.options.Extensions[meta_pb2.field_meta].tags.extend(tags)


@pytest.fixture(scope="module")
def classes() -> dict[str, Any]:
    """rules.User {name (PII), age, ssn, address: Address {city (PII)}, emails (PII, repeated)}."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="rules/user.proto",
        package="rules",
        syntax="proto3",
        dependency=["confluent/meta.proto"],
    )
    address = proto.message_type.add(name="Address")
    _field(address, "city", 1, F.TYPE_STRING, ("PII",))
    user = proto.message_type.add(name="User")
    _field(user, "name", 1, F.TYPE_STRING, ("PII",))
    _field(user, "age", 2, F.TYPE_INT32)
    _field(user, "ssn", 3, F.TYPE_STRING)
    _field(user, "address", 4, F.TYPE_MESSAGE, type_name=".rules.Address")
    _field(user, "emails", 5, F.TYPE_STRING, ("PII",), label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(descriptor_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(meta_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(proto)
    return {"User": GetMessageClass(pool.FindMessageTypeByName("rules.User"))}


def make(classes: dict[str, Any], **over: Any) -> Any:
    values = {"name": "alice", "age": 30, "ssn": "123", "emails": ["a@x.io", "b@y.io"]}
    values.update(over)
    msg = classes["User"](**{k: v for k, v in values.items() if k != "city"})
    msg.address.city = over.get("city", "Rome")
    return msg


def setup(ours, classes, prefix: str, **rules: Any) -> str:
    name = topic(prefix)
    text = base64.standard_b64encode(classes["User"].DESCRIPTOR.file.serialized_pb).decode()
    register(ours, f"{name}-value", text, "PROTOBUF", **rules)
    return name


def write_both(ours, theirs, classes, name: str, **over: Any) -> tuple[Any, Any]:
    User = classes["User"]
    c_ser = CProtoSerializer(User, theirs, conf={**LATEST, "use.deprecated.format": False})
    s_ser = ProtobufSerializer(User, ours, conf=dict(LATEST))
    ctx = value_ctx(name)
    return both(
        lambda: c_ser(make(classes, **over), ctx), lambda: s_ser(make(classes, **over), ctx)
    )


@pytest.mark.parametrize(
    ("expr", "over", "verdict"),
    [
        ("message.age >= 18", {}, "ok"),
        ("message.age >= 18", {"age": 3}, "failed"),
        ("message.address.city == 'Rome' && size(message.emails) == 2", {}, "ok"),
        ("message.address.city == 'Rome' && size(message.emails) == 2", {"city": "Oslo"}, "failed"),
    ],
)
def test_cel_condition_on_write(ours, theirs, classes, expr, over, verdict) -> None:
    name = setup(ours, classes, "pb-cel", domain=[rule("check", "CONDITION", "WRITE", "CEL", expr)])
    c, s = write_both(ours, theirs, classes, name, **over)
    assert s[0] == verdict
    assert c == s


def test_cel_field_transform_by_field_meta_tags(ours, theirs, classes) -> None:
    rules = [
        rule("mark", "TRANSFORM", "WRITE", "CEL_FIELD", "value + '|' + fullName", tags=["PII"])
    ]
    name = setup(ours, classes, "pb-celf", domain=rules)
    c, s = write_both(ours, theirs, classes, name)
    assert c == s and s[0] == "ok"
    got = ProtobufDeserializer(classes["User"], schema_registry_client=ours)(s[1], value_ctx(name))
    assert got.name == "alice|rules.User.name"
    assert got.address.city == "Rome|rules.Address.city"
    assert list(got.emails) == ["a@x.io|rules.User.emails", "b@y.io|rules.User.emails"]
    assert got.ssn == "123"


@pytest.mark.parametrize("city", ["Rome", "Oslo"])
def test_cel_field_condition_on_read(ours, theirs, classes, city) -> None:
    rules = [rule("city", "CONDITION", "READ", "CEL_FIELD", "!value.startsWith('O')", tags=["PII"])]
    name = setup(ours, classes, "pb-celf-read", domain=rules)
    ctx = value_ctx(name)
    data = ProtobufSerializer(classes["User"], ours, conf=dict(LATEST))(
        make(classes, city=city), ctx
    )
    User = classes["User"]
    c_de = CProtoDeserializer(User, {"use.deprecated.format": False}, theirs)
    s_de = ProtobufDeserializer(User, schema_registry_client=ours)
    c, s = both(lambda: c_de(data, ctx), lambda: s_de(data, ctx))
    assert c == s
    assert s[0] == ("ok" if city == "Rome" else "failed")


def _widget(version: int) -> Any:
    proto = descriptor_pb2.FileDescriptorProto(
        name=f"rules/widget_v{version}.proto", package="rules", syntax="proto3"
    )
    widget = proto.message_type.add(name="Widget")
    _field(widget, "name", 1, F.TYPE_STRING)
    if version == 1:
        _field(widget, "size", 2, F.TYPE_INT32)
    else:
        _field(widget, "height", 3, F.TYPE_INT32)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return GetMessageClass(pool.FindMessageTypeByName("rules.Widget"))


UPGRADE = "$merge([$sift($, function($v, $k) {$k != 'size'}), {'height': $.'size'}])"


def test_jsonata_upgrade_on_read(ours, theirs) -> None:
    """A v1 frame read with use.latest.version (v2): v2's UPGRADE rule renames the field, on
    the message as JSON, and the result is a v2 message, in both libraries."""
    V1, V2 = _widget(1), _widget(2)
    name = topic("pb-jsonata")
    subject = f"{name}-value"
    ours.set_compatibility(subject, "NONE")
    for cls, version, rules in (
        (V1, "1", {}),
        (
            V2,
            "2",
            {
                "migration": [
                    rule("up", "TRANSFORM", "UPGRADE", "JSONATA", UPGRADE)
                ]
            },
        ),
    ):  # fmt: skip
        text = base64.standard_b64encode(cls.DESCRIPTOR.file.serialized_pb).decode()
        register(ours, subject, text, "PROTOBUF", metadata={"properties": {"v": version}}, **rules)
    ctx = value_ctx(name)
    v1_conf = {"auto.register.schemas": False, "use.latest.with.metadata": {"v": "1"}}
    data = ProtobufSerializer(V1, ours, conf=v1_conf)(V1(name="w", size=7), ctx)
    c_de = CProtoDeserializer(
        V2, {"use.latest.version": True, "use.deprecated.format": False}, theirs
    )
    s_de = ProtobufDeserializer(V2, conf={"use.latest.version": True}, schema_registry_client=ours)
    c, s = both(lambda: c_de(data, ctx), lambda: s_de(data, ctx))
    assert c[0] == s[0] == "ok"
    assert json_format.MessageToDict(c[1]) == json_format.MessageToDict(s[1])
    assert json_format.MessageToDict(s[1]) == {"name": "w", "height": 7}
