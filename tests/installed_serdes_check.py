"""Run by tests/test_packaging_install.py with the Python of a virtualenv holding
``pip install pyschemaregistry`` (no extras): every public serializer and deserializer of
serdes, sync and async, against the registry at ``sys.argv[1]``; a CEL rule; then that nothing
of the server and nothing of ``confluent_kafka.schema_registry`` was importable or imported.

Not a test module (no ``test_`` prefix): it runs outside the project's environment. Prints
``OK`` and exits 0, or fails with a traceback.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import uuid
from decimal import Decimal

from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

import serdes
from serdes import (
    AsyncSchemaRegistryClient,
    Rule,
    RuleKind,
    RuleMode,
    RuleSet,
    Schema,
    SchemaRegistryClient,
)
from serdes.avro import (
    AsyncAvroDeserializer,
    AsyncAvroSerializer,
    AvroDeserializer,
    AvroSerializer,
)
from serdes.errors import SerializationError
from serdes.json_schema import (
    AsyncJSONDeserializer,
    AsyncJSONSerializer,
    JSONDeserializer,
    JSONSerializer,
)
from serdes.protobuf import (
    AsyncProtobufDeserializer,
    AsyncProtobufSerializer,
    ProtobufDeserializer,
    ProtobufSerializer,
    decimal_to_protobuf,
    protobuf_to_decimal,
)
from serdes.rules.cel import CelExecutor
from serdes.rules.jsonata import JsonataExecutor

SERVER_MODULES = ("fastapi", "sqlalchemy", "uvicorn", "alembic", "psycopg", "grpc_tools")

URL = sys.argv[1]
RUN = uuid.uuid4().hex[:8]
AVRO = json.dumps(
    {
        "type": "record",
        "name": "Order",
        "namespace": "pkgcheck",
        "fields": [{"name": "id", "type": "long"}, {"name": "qty", "type": "int"}],
    }
)
JSON_SCHEMA = json.dumps(
    {
        "title": "Order",
        "type": "object",
        "properties": {"id": {"type": "integer"}, "qty": {"type": "integer"}},
        "required": ["id", "qty"],
    }
)
ORDER = {"id": 7, "qty": 3}


def proto_order_class() -> type:
    """``pkgcheck.Order`` (id, qty) and a Timestamp field: a well-known import to resolve."""
    fdp = descriptor_pb2.FileDescriptorProto(
        name="pkgcheck/order.proto",
        package="pkgcheck",
        syntax="proto3",
        dependency=["google/protobuf/timestamp.proto"],
    )
    msg = fdp.message_type.add(name="Order")
    fd = descriptor_pb2.FieldDescriptorProto
    msg.field.add(name="id", number=1, type=fd.TYPE_INT64, label=fd.LABEL_OPTIONAL)
    msg.field.add(name="qty", number=2, type=fd.TYPE_INT32, label=fd.LABEL_OPTIONAL)
    msg.field.add(
        name="at",
        number=3,
        type=fd.TYPE_MESSAGE,
        label=fd.LABEL_OPTIONAL,
        type_name=".google.protobuf.Timestamp",
    )
    from google.protobuf import timestamp_pb2  # noqa: F401  (registers its file)

    pool = descriptor_pool.Default()
    pool.Add(fdp)
    return GetMessageClass(pool.FindMessageTypeByName("pkgcheck.Order"))


def ctx(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


def check_sync(client: SchemaRegistryClient, order_cls: type) -> None:
    topic = f"avro-{RUN}"
    data = AvroSerializer(client, AVRO)(ORDER, ctx(topic))
    assert AvroDeserializer(client)(data, ctx(topic)) == ORDER

    topic = f"json-{RUN}"
    data = JSONSerializer(JSON_SCHEMA, client)(ORDER, ctx(topic))
    assert JSONDeserializer(None, schema_registry_client=client)(data, ctx(topic)) == ORDER

    topic = f"proto-{RUN}"
    msg = order_cls(id=7, qty=3)
    msg.at.seconds = 1_700_000_000
    data = ProtobufSerializer(order_cls, client)(msg, ctx(topic))
    back = ProtobufDeserializer(order_cls, schema_registry_client=client)(data, ctx(topic))
    assert back == msg, back


async def check_async(url: str, order_cls: type) -> None:
    async with AsyncSchemaRegistryClient({"url": url}) as client:
        topic = f"aavro-{RUN}"
        ser = await AsyncAvroSerializer(client, AVRO)
        data = await ser(ORDER, ctx(topic))
        de = await AsyncAvroDeserializer(client)
        assert await de(data, ctx(topic)) == ORDER

        topic = f"ajson-{RUN}"
        ser = await AsyncJSONSerializer(JSON_SCHEMA, client)
        data = await ser(ORDER, ctx(topic))
        de = await AsyncJSONDeserializer(None, schema_registry_client=client)
        assert await de(data, ctx(topic)) == ORDER

        topic = f"aproto-{RUN}"
        ser = await AsyncProtobufSerializer(order_cls, client)
        data = await ser(order_cls(id=7, qty=3), ctx(topic))
        de = await AsyncProtobufDeserializer(order_cls, schema_registry_client=client)
        assert (await de(data, ctx(topic))).qty == 3


def check_cel_rule(client: SchemaRegistryClient) -> None:
    """A CEL condition runs (the rule engines are plain dependencies) and its error names it."""
    CelExecutor.register()
    JsonataExecutor.register()
    subject = f"rules-{RUN}-value"
    rule = Rule(
        name="qty_positive",
        doc=None,
        kind=RuleKind.CONDITION,
        mode=RuleMode.WRITE,
        type="CEL",
        expr="message.qty > 0",
    )
    client.register_schema(subject, Schema(AVRO, "AVRO", rule_set=RuleSet(domain_rules=[rule])))
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    ser = AvroSerializer(client, None, conf=conf)
    assert ser(ORDER, ctx(f"rules-{RUN}"))
    try:
        ser({"id": 1, "qty": 0}, ctx(f"rules-{RUN}"))
    except SerializationError as exc:
        assert "qty_positive" in str(exc), str(exc)
    else:
        raise AssertionError("the CEL rule did not fail")


def main() -> None:
    order_cls = proto_order_class()
    client = SchemaRegistryClient({"url": URL})
    check_sync(client, order_cls)
    asyncio.run(check_async(URL, order_cls))
    check_cel_rule(client)
    # confluent.type.Decimal without confluent-kafka's schema_registry package
    assert protobuf_to_decimal(decimal_to_protobuf(Decimal("12.34"), 2)) == Decimal("12.34")

    present = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is not None]
    assert not present, f"server modules installed with serdes alone: {present}"
    loaded = sorted(m for m in sys.modules if m.startswith("confluent_kafka.schema_registry"))
    assert not loaded, f"serdes imported {loaded}"
    assert not any(m == "registry" or m.startswith("registry.") for m in sys.modules)
    assert serdes.__file__ is not None and "site-packages" in serdes.__file__, serdes.__file__
    print("OK")


if __name__ == "__main__":
    main()
