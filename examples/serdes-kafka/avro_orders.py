"""Avro orders with a data contract: a CEL rule refuses orders without a quantity.

python avro_orders.py [--bootstrap 127.0.0.1:9092] [--registry http://127.0.0.1:8081]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from common import arguments, consume, fresh_topic, produce
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import RuleSet, Schema, SchemaRegistryClient
from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.errors import SerializationError
from serdes.rules.cel import CelExecutor

ORDER = """{
  "type": "record", "name": "Order", "namespace": "shop",
  "fields": [
    {"name": "id", "type": "long"},
    {"name": "item", "type": "string"},
    {"name": "qty", "type": "int"}
  ]
}"""

POSITIVE_QTY = {
    "name": "positive_qty",
    "kind": "CONDITION",
    "mode": "WRITE",
    "type": "CEL",
    "expr": "message.qty > 0",
}


def main(argv: Sequence[str] | None = None) -> list[dict]:
    args = arguments(__doc__.splitlines()[0], argv)
    topic = args.topic or fresh_topic(args.bootstrap, "orders-avro")
    print(f"topic: {topic}")
    CelExecutor.register()
    client = SchemaRegistryClient({"url": args.registry})
    subject = f"{topic}-value"
    # the schema and its rule are registered once, by the team that owns the topic
    client.register_schema(
        subject, Schema(ORDER, "AVRO", rule_set=RuleSet(domain_rules=[POSITIVE_QTY]))
    )
    # producers serialize with the latest version of the subject, and run its rules
    serializer = AvroSerializer(
        client, None, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    ctx = SerializationContext(topic, MessageField.VALUE)
    orders = [{"id": n, "item": f"item-{n}", "qty": n} for n in range(1, 4)]
    produce(args.bootstrap, topic, [serializer(order, ctx) for order in orders])
    try:
        serializer({"id": 99, "item": "nothing", "qty": 0}, ctx)
    except SerializationError as exc:
        print(f"refused by the data contract: {exc}")
    else:
        raise SystemExit("an order with qty 0 was not refused")
    deserializer = AvroDeserializer(client)
    read = [deserializer(value, ctx) for value in consume(args.bootstrap, topic, len(orders))]
    for order in read:
        print(order)
    return read


if __name__ == "__main__":
    main(sys.argv[1:])
