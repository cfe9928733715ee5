"""JSON Schema orders: the serializer validates each order against the schema.

python json_orders.py [--bootstrap 127.0.0.1:9092] [--registry http://127.0.0.1:8081]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from common import arguments, consume, fresh_topic, produce
from confluent_kafka.serialization import MessageField, SerializationContext

from serdes import SchemaRegistryClient
from serdes.errors import SerializationError
from serdes.json_schema import JSONDeserializer, JSONSerializer

ORDER = """{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Order",
  "type": "object",
  "properties": {
    "id": {"type": "integer"},
    "item": {"type": "string"},
    "qty": {"type": "integer", "minimum": 1}
  },
  "required": ["id", "item", "qty"]
}"""


def main(argv: Sequence[str] | None = None) -> list[dict]:
    args = arguments(__doc__.splitlines()[0], argv)
    topic = args.topic or fresh_topic(args.bootstrap, "orders-json")
    print(f"topic: {topic}")
    client = SchemaRegistryClient({"url": args.registry})
    serializer = JSONSerializer(ORDER, client)  # registers the schema the first time
    ctx = SerializationContext(topic, MessageField.VALUE)
    orders = [{"id": n, "item": f"item-{n}", "qty": n} for n in range(1, 4)]
    produce(args.bootstrap, topic, [serializer(order, ctx) for order in orders])
    try:
        serializer({"id": 99, "item": "nothing", "qty": 0}, ctx)
    except SerializationError as exc:
        print(f"refused by the schema: {exc}")
    else:
        raise SystemExit("an order with qty 0 was not refused")
    deserializer = JSONDeserializer(ORDER, schema_registry_client=client)
    read = [deserializer(value, ctx) for value in consume(args.bootstrap, topic, len(orders))]
    for order in read:
        print(order)
    return read


if __name__ == "__main__":
    main(sys.argv[1:])
