"""serdes.protobuf against confluent-kafka's Protobuf serdes on one live registry: the same
bytes (message indexes, imports registered as references), each library reading the other's
output, dicts from registry descriptors when no message class is given, precise errors."""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer as CProtoDeserializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer as CProtoSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

from serdes import SerializationError, UnknownSchemaError
from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer
from tests.serdes_helpers import ours, registry_server, theirs  # noqa: F401

PROTOS = Path(__file__).parent / "data" / "serdes"
NO_AUTO = {"use.deprecated.format": False}


def _compile(tmp: Path) -> descriptor_pool.DescriptorPool:
    out = tmp / "set.pb"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTOS}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            "shop/order.proto",
        ],
        check=True,
        capture_output=True,
    )
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return pool


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pool = _compile(tmp_path_factory.mktemp("protos"))
    return {
        name: GetMessageClass(pool.FindMessageTypeByName(f"shop.{name}"))
        for name in ("Order", "Order.Line", "Refund")
    }


def make_order(classes: dict[str, Any], i: int) -> Any:
    order = classes["Order"](
        id=2**40 + i,
        customer=f"cüstomer {i}",
        tags=["a", "b"][: i % 3],
        price=i * 1.5,
        paid=i % 2 == 0,
        blob=b"\x00\xff" * i,
        status=i % 2,
        delta=-i,
    )
    order.attrs["x"] = -i
    order.ship_to.street = f"{i} Main"
    order.ship_to.zip = 1000 + i
    order.created.seconds = 1_700_000_000 + i
    if i % 2:
        order.card = "4242"
    else:
        order.cash = i
    line = order.lines.add()
    line.sku, line.qty = "sku-1", i
    return order


def ctx(topic: str, field: str = MessageField.VALUE, headers: Any = None) -> SerializationContext:
    return SerializationContext(topic, field, headers)


def test_values_are_byte_identical_with_imports_registered_as_references(
    ours, theirs, classes
) -> None:
    Order = classes["Order"]
    c = ctx("porders")
    mine = ProtobufSerializer(Order, ours)
    confluents = CProtoSerializer(Order, theirs, NO_AUTO)
    orders = [make_order(classes, i) for i in range(8)]
    data = [mine(o, c) for o in orders]
    assert data == [confluents(o, c) for o in orders]
    assert data[0][0] == 0 and data[0][5] == 0  # magic byte, then index path [0] as one 0 byte
    latest = ours.get_latest_version("porders-value")
    assert [(r.name, r.subject) for r in latest.schema.references] == [
        ("common/address.proto", "common/address.proto")
    ]
    their_de = CProtoDeserializer(Order, NO_AUTO, theirs)
    mine_de = ProtobufDeserializer(Order, schema_registry_client=ours)
    for order, payload in zip(orders, data, strict=True):
        assert mine_de(payload, c) == their_de(payload, c) == order
        assert isinstance(mine_de(payload, c), Order)


def test_nested_and_second_messages_carry_their_index_paths(ours, theirs, classes) -> None:
    Line, Refund = classes["Order.Line"], classes["Refund"]
    line, refund = Line(sku="s", qty=3), Refund(order_id=9, reason="late")
    c = ctx("plines")
    nested = ProtobufSerializer(Line, ours)(line, c)
    assert nested == CProtoSerializer(Line, theirs, NO_AUTO)(line, c)
    assert nested[5:8] == b"\x04\x00\x00"  # count 2, [0, 0] as zig-zag varints
    c2 = ctx("prefunds", MessageField.KEY)
    second = ProtobufSerializer(Refund, ours)(refund, c2)
    assert second == CProtoSerializer(Refund, theirs, NO_AUTO)(refund, c2)
    assert second[5:7] == b"\x02\x02"  # count 1, [1]
    assert ProtobufDeserializer(Refund, schema_registry_client=ours)(second, c2) == refund
    assert ProtobufDeserializer(None, schema_registry_client=ours)(nested, c) == {
        "sku": "s",
        "qty": 3,
    }
    assert CProtoDeserializer(Refund, NO_AUTO, theirs)(second, c2) == refund


def test_without_a_message_class_dicts_come_from_registry_descriptors(ours, classes) -> None:
    order = make_order(classes, 3)
    c = ctx("pdicts")
    payload = ProtobufSerializer(classes["Order"], ours)(order, c)
    fresh = type(ours)({"url": ours._rest.base_urls[0]})  # nothing cached: all from the registry
    value = ProtobufDeserializer(None, schema_registry_client=fresh)(payload, c)
    assert value == {
        "id": 2**40 + 3,
        "customer": "cüstomer 3",
        "tags": [],
        "attrs": {"x": -3},
        "ship_to": {"street": "3 Main", "zip": 1003},
        "created": {"seconds": 1_700_000_003, "nanos": 0},
        "status": "PAID",
        "price": 4.5,
        "paid": False,
        "blob": b"\x00\xff" * 3,
        "card": "4242",
        "cash": 0,
        "lines": [{"sku": "sku-1", "qty": 3}],
        "delta": -3,
    }


def test_confluent_bytes_are_read_by_ours(ours, theirs, classes) -> None:
    order = make_order(classes, 5)
    c = ctx("pinterop")
    payload = CProtoSerializer(classes["Order"], theirs, NO_AUTO)(order, c)
    assert ProtobufDeserializer(classes["Order"], schema_registry_client=ours)(payload, c) == order
    assert ProtobufDeserializer(classes["Order"])(payload, c) == order  # no registry needed


def test_bad_frames_and_payloads_say_what_is_wrong(ours, classes) -> None:
    c = ctx("porders")
    good = ProtobufSerializer(classes["Order"], ours)(make_order(classes, 1), c)
    de = ProtobufDeserializer(classes["Order"], schema_registry_client=ours)
    cases = [
        (b"\x07" + good[1:], "Unknown magic byte 7"),
        (good[:5], "truncated frame: the payload ends at byte 5 inside the Protobuf message index"),
        (good[:5] + b"\x01", "Invalid msgidx array length -1"),
        (good[:5] + b"\x02\x08", "message index path [4] does not exist in schema id"),
        (b"\x00\x00\x00\x7f\xf0\x00", "unknown schema id 32752"),
        (good[:6] + b"\x0a\xff", "payload does not decode as Protobuf message of schema id"),
    ]
    for data, message in cases:
        with pytest.raises(SerializationError) as raised:
            de(data, c)
        assert message in str(raised.value), (data, str(raised.value))
    with pytest.raises(UnknownSchemaError):
        de(b"\x00\x00\x00\x7f\xf0\x00", c)
    with pytest.raises(ValueError, match="message must be of type"):
        ProtobufSerializer(classes["Order"], ours)(classes["Refund"](), c)
    with pytest.raises(ValueError, match="no longer supported"):
        ProtobufSerializer(classes["Order"], ours, {"use.deprecated.format": True})


def test_tombstones_pass_through(ours, classes) -> None:
    assert ProtobufSerializer(classes["Refund"], ours)(None, ctx("t")) is None
    assert ProtobufDeserializer(classes["Refund"])(None, ctx("t")) is None
