"""What tests/test_js_interop.py drives the JavaScript clients with.

* ``node_modules`` (session): ``tests/js/node_modules``, installed by ``scripts/node-deps``.
* ``NodeWorker`` / ``js`` (module): ``node tests/js/worker.js``, one JSON request and answer per
  line; ``cf.*`` requests go to ``@confluentinc/schemaregistry``, ``kj.*`` to
  ``@kafkajs/confluent-schema-registry``.
* The schemas under ``tests/js/schemas`` (a main schema referencing another, per format), the
  values written, and the serialize/deserialize calls on both sides (``js_*``: Confluent's
  JavaScript serdes; ``py_*``: ours), each returning the frame and its Kafka headers.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool, json_format
from google.protobuf.message_factory import GetMessageClass

from serdes import (
    SchemaRegistryClient,
    header_schema_id_serializer,
    prefix_schema_id_serializer,
)
from serdes.avro import AvroDeserializer, AvroSerializer
from serdes.json_schema import JSONDeserializer, JSONSerializer
from serdes.protobuf import ProtobufDeserializer, ProtobufSerializer
from tests.conftest import LiveServer

ROOT = Path(__file__).resolve().parents[1]
JS_DIR = ROOT / "tests" / "js"
SCHEMAS = JS_DIR / "schemas"
FORMATS = ("AVRO", "JSON", "PROTOBUF")
FRAMINGS = ("id", "guid", "header")
# kafkajs ignores Protobuf message indexes: it writes frames without them and, reading, skips
# leading zero bytes and decodes the first message of the file (or a name fixed at registration)
KAFKAJS_PROTOBUF_ISSUE = (
    "@kafkajs/confluent-schema-registry 4.1.0 writes Protobuf frames without message indexes "
    "and ignores them when reading (kafkajs/confluent-schema-registry#152, open; #248)"
)


# --- the Node side ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """``tests/js/node_modules``, installed by ``scripts/node-deps`` when the lock changed."""
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "node-deps")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"scripts/node-deps failed:\n{result.stderr}", pytrace=False)
    return JS_DIR / "node_modules"


class JsError(Exception):
    """A request the Node worker answered with an error (``answer`` holds status/errorCode)."""

    def __init__(self, op: str, answer: dict[str, Any]) -> None:
        super().__init__(f"{op}: {answer.get('error')}")
        self.answer = answer
        self.status = answer.get("status")
        self.error_code = answer.get("errorCode")


class NodeWorker:
    """``node tests/js/worker.js``: requests and answers as JSON lines on stdin/stdout."""

    def __init__(self, url: str, log: Path) -> None:
        env = {
            k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy")
        }
        self._log = log
        self._stderr = log.open("wb")
        self.proc = subprocess.Popen(
            ["node", str(JS_DIR / "worker.js")],
            cwd=JS_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
            env=env,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next = 0
        self.node = self.call("init", url=url)["node"]

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def answer(self, op: str, **args: Any) -> dict[str, Any]:
        """The raw answer: ``{"ok": true, "result": ...}`` or ``{"ok": false, "error": ...}``."""
        assert self.proc.stdin is not None
        self._next += 1
        self.proc.stdin.write(json.dumps({"id": self._next, "op": op, "args": args}) + "\n")
        self.proc.stdin.flush()
        try:
            line = self._lines.get(timeout=60)
        except queue.Empty:
            raise AssertionError(f"node did not answer {op} in 60 s: {self.stderr()}") from None
        if line is None:
            raise AssertionError(f"node exited ({self.proc.poll()}): {self.stderr()}")
        answer = json.loads(line)
        assert answer["id"] == self._next, answer
        return answer

    def call(self, op: str, **args: Any) -> Any:
        answer = self.answer(op, **args)
        if not answer["ok"]:
            raise JsError(op, answer)
        return answer["result"]

    def cf(self, method: str, *args: Any, fresh: bool = False) -> Any:
        """A method of Confluent's ``SchemaRegistryClient`` (``fresh``: one with empty caches)."""
        return self.call("cf.call", method=method, args=list(args), fresh=fresh)

    def cf_error(self, method: str, *args: Any) -> JsError:
        """The error a Confluent client call fails with (fresh client: nothing cached)."""
        with pytest.raises(JsError) as raised:
            self.cf(method, *args, fresh=True)
        return raised.value

    def kj(self, method: str, *args: Any) -> Any:
        """A method of kafkajs' ``SchemaRegistry``."""
        return self.call("kj.call", method=method, args=list(args))

    def stderr(self) -> str:
        self._stderr.flush()
        return self._log.read_text(errors="replace")[-4000:]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._stderr.close()


@pytest.fixture(scope="module")
def js(
    node_modules: Path, registry_server: LiveServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[NodeWorker]:
    worker = NodeWorker(registry_server.url, tmp_path_factory.mktemp("node") / "worker.log")
    try:
        yield worker
    finally:
        worker.close()


# --- schemas and values ----------------------------------------------------------------------

REFS = {
    "AVRO": ("interop.common.Address", SCHEMAS / "address.avsc", SCHEMAS / "order.avsc"),
    # address.schema.json's "$id" is its reference name: kafkajs resolves JSON references by
    # "$id", Confluent's clients and serdes by the reference name
    "JSON": ("address.schema.json", SCHEMAS / "address.schema.json", SCHEMAS / "order.schema.json"),
    # the subject of an import is its file name: what both serdes' and the JavaScript
    # client's reference subject name strategies register it under
    "PROTOBUF": (
        "interop/common/address.proto",
        SCHEMAS / "interop/common/address.proto",
        SCHEMAS / "interop/shop/order.proto",
    ),
}


def schema_info(fmt: str, main: bool = True) -> dict[str, Any]:
    """The ``{schemaType, schema, references}`` the JavaScript client registers."""
    ref_name, ref_path, main_path = REFS[fmt]
    if not main:
        return {"schemaType": fmt, "schema": ref_path.read_text()}
    return {
        "schemaType": fmt,
        "schema": main_path.read_text(),
        "references": [{"name": ref_name, "subject": ref_name, "version": 1}],
    }


AVRO_ORDER: dict[str, Any] = {
    "id": 2**40 + 7,
    "customer": "cüstomer ✓",
    "ship_to": {"street": "1 Main", "zip": 1234},
    "bill_to": {"street": "2 Side", "zip": -5},
    "status": "PAID",
    "lines": [{"sku": "s-1", "qty": 3}, {"sku": "s-2", "qty": -1}],
    "attrs": {"a": "x", "ÿ": ""},
    "price": 12.5,
    "blob": b"\x00\xff\x10",
    "note": None,
}
JSON_ORDER: dict[str, Any] = {
    "id": 2**40 + 7,
    "customer": "cüstomer ✓",
    "ship_to": {"street": "1 Main", "zip": 1234},
    "lines": [{"sku": "s-1", "qty": 3}],
    "tags": {"a": "x"},
    "note": None,
}
# proto3 JSON mapping (int64 as strings, bytes as base64, enums by name)
PROTO_ORDER: dict[str, Any] = {
    "tags": {"a": "x", "ÿ": "y"},
    "id": str(2**40 + 7),
    "customer": {"name": "cüstomer ✓", "address": {"street": "1 Main", "zip": 1234}},
    "lines": [{"sku": "s-1", "qty": 3, "discount": {"percent": 10}}, {"sku": "s-2", "qty": 1}],
    "status": "PAID",
    "blob": base64.b64encode(b"\x00\xff\x10").decode(),
    "card": "4242",
}
PROTO_LINE: dict[str, Any] = {"sku": "s-9", "qty": 2, "discount": {"percent": 5}}
PROTO_DISCOUNT: dict[str, Any] = {"percent": 15}
PROTO_CUSTOMER: dict[str, Any] = {"name": "c", "address": {"street": "s", "zip": 1}}


def to_wire(value: Any) -> Any:
    """Bytes as ``{"$bytes": base64}``, the worker's JSON form of Avro bytes."""
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {k: to_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_wire(v) for v in value]
    return value


def from_wire(value: Any) -> Any:
    if isinstance(value, dict):
        if list(value) == ["$bytes"]:
            return base64.b64decode(value["$bytes"])
        return {k: from_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    return value


@pytest.fixture(scope="module")
def proto_classes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Python classes of ``interop/shop/order.proto``, compiled with grpc_tools' protoc."""
    out = tmp_path_factory.mktemp("protoc") / "set.pb"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{SCHEMAS}",
            "--include_imports",
            f"--descriptor_set_out={out}",
            "interop/shop/order.proto",
        ],
        check=True,
        capture_output=True,
    )
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(file)
    names = ("Customer", "Order", "Order.Line", "Order.Line.Discount")
    return {n: GetMessageClass(pool.FindMessageTypeByName(f"interop.shop.{n}")) for n in names}


def proto_json(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


def canonical_proto(classes: dict[str, Any], name: str, value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as protobuf's JSON printer writes it (what both sides are compared with)."""
    return proto_json(json_format.ParseDict(value, classes[name]()))


# --- registration ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def referenced(js: NodeWorker) -> dict[str, dict[str, Any]]:
    """The referenced schema of each format, registered by Confluent's JavaScript client."""
    return {
        fmt: js.cf("registerFullResponse", REFS[fmt][0], schema_info(fmt, main=False), False)
        for fmt in FORMATS
    }


def register(js: NodeWorker, fmt: str, subject: str) -> dict[str, Any]:
    """The main schema of ``fmt`` (with its reference) under ``subject``, by Confluent's client."""
    return js.cf("registerFullResponse", subject, schema_info(fmt), False)


def latest(server: LiveServer, subject: str) -> dict[str, Any]:
    # as Confluent's clients ask: the 8.0 fields (guid, ts) come with this header (Confluent's
    # 8.0 release notes; registry/api/responses.py)
    resp = httpx.get(
        f"{server.url}/subjects/{subject}/versions/latest",
        headers={"Confluent-Accept-Unknown-Properties": "true"},
    )
    assert resp.status_code == 200, resp.text
    return resp.json()


# --- serdes (Python) side --------------------------------------------------------------------


def field(key: bool) -> str:
    return MessageField.KEY if key else MessageField.VALUE


def guid_prefix_serializer(payload: bytes, ctx: Any, schema_id: Any) -> bytes:
    """Magic byte 1, the GUID (and message indexes) in front of the data."""
    return schema_id.guid_to_bytes() + payload


PY_ID_SERIALIZERS: dict[str, Callable[..., bytes]] = {
    "id": prefix_schema_id_serializer,
    "guid": guid_prefix_serializer,
    "header": header_schema_id_serializer,
}


def py_serialize(
    fmt: str,
    url: str,
    topic: str,
    value: Any,
    framing: str,
    proto_class: Any = None,
    key: bool = False,
) -> tuple[bytes, list[tuple[str, bytes]]]:
    """``value`` written by serdes with the subject's latest schema; the frame and headers."""
    client = SchemaRegistryClient({"url": url})
    conf = {
        "auto.register.schemas": False,
        "use.latest.version": True,
        "schema.id.serializer": PY_ID_SERIALIZERS[framing],
    }
    if fmt == "AVRO":
        ser: Any = AvroSerializer(client, None, conf=conf)
    elif fmt == "JSON":
        ser = JSONSerializer(None, client, conf=conf)
    else:
        ser = ProtobufSerializer(proto_class, client, conf)
        value = json_format.ParseDict(value, proto_class())
    headers: list[tuple[str, bytes]] = []
    data = ser(value, SerializationContext(topic, field(key), headers))
    return data, headers


def py_deserialize(
    fmt: str,
    url: str,
    topic: str,
    data: bytes,
    headers: list[tuple[str, bytes]] | None = None,
    proto_class: Any = None,
    key: bool = False,
) -> Any:
    """serdes' reading of a frame, with a client that has nothing cached."""
    client = SchemaRegistryClient({"url": url})
    ctx = SerializationContext(topic, field(key), headers or [])
    if fmt == "AVRO":
        return AvroDeserializer(client)(data, ctx)
    if fmt == "JSON":
        return JSONDeserializer(None, schema_registry_client=client)(data, ctx)
    message = ProtobufDeserializer(proto_class, schema_registry_client=client)(data, ctx)
    return proto_json(message)


def js_serialize(
    js: NodeWorker,
    fmt: str,
    topic: str,
    value: Any,
    framing: str,
    conf: dict[str, Any] | None = None,
    message_type: str = "interop.shop.Order",
    schema_subject: str | None = None,
    key: bool = False,
) -> tuple[bytes, list[tuple[str, bytes]]]:
    """``value`` written by Confluent's JavaScript serializer; the frame and headers.

    Protobuf messages are built with the descriptor the client makes of ``schema_subject``'s
    latest version (default: the topic's subject), as generated code would hold it."""
    args: dict[str, Any] = {
        "format": fmt,
        "topic": topic,
        "framing": framing,
        "conf": {"useLatestVersion": True} if conf is None else conf,
        "value": to_wire(value),
        "key": key,
        "fresh": True,
    }
    if fmt == "PROTOBUF":
        args.update(schemaSubject=schema_subject or f"{topic}-value", messageType=message_type)
    if fmt == "JSON":
        args["conf"] = {**args["conf"], "validate": True}
    out = js.call("cf.serialize", **args)
    headers = [(k, bytes.fromhex(v)) for k, v in out["headers"].items()]
    return bytes.fromhex(out["hex"]), headers


def js_deserialize(
    js: NodeWorker,
    fmt: str,
    topic: str,
    data: bytes,
    headers: list[tuple[str, bytes]],
    key: bool = False,
) -> dict[str, Any]:
    """Confluent's JavaScript deserializer's reading (fresh client): ``{value[, type]}``."""
    conf = {"validate": True} if fmt == "JSON" else {}
    return js.call(
        "cf.deserialize",
        format=fmt,
        topic=topic,
        hex=data.hex(),
        headers={k: v.hex() for k, v in headers},
        conf=conf,
        key=key,
        fresh=True,
    )


def order_value(fmt: str) -> Any:
    return {"AVRO": AVRO_ORDER, "JSON": JSON_ORDER, "PROTOBUF": PROTO_ORDER}[fmt]


def expected_order(fmt: str, classes: dict[str, Any]) -> Any:
    if fmt == "PROTOBUF":
        return canonical_proto(classes, "Order", PROTO_ORDER)
    return order_value(fmt)


ORDER_INDEXES = {"AVRO": b"", "JSON": b"", "PROTOBUF": b"\x02\x02"}  # Order is message [1]


def check_frame(
    fmt: str,
    framing: str,
    data: bytes,
    headers: list[tuple[str, bytes]],
    version: dict[str, Any],
    indexes: bytes | None = None,
    key: bool = False,
) -> None:
    """The frame carries the version's id or GUID where ``framing`` says, and the indexes."""
    indexes = ORDER_INDEXES[fmt] if indexes is None else indexes
    if framing == "id":
        assert headers == []
        assert data[: 5 + len(indexes)] == b"\x00" + version["id"].to_bytes(4, "big") + indexes
        return
    assert "guid" in version, f"the registry answered a version without its guid: {version}"
    guid = bytes.fromhex(version["guid"].replace("-", ""))
    if framing == "guid":
        assert headers == []
        assert data[: 17 + len(indexes)] == b"\x01" + guid + indexes
    else:
        name = "__key_schema_id" if key else "__value_schema_id"
        assert headers == [(name, b"\x01" + guid + indexes)]
        # the value is the bare encoding: no id, GUID or message indexes in front
        assert not data.startswith(b"\x01" + guid)
        assert not data.startswith(b"\x00" + version["id"].to_bytes(4, "big"))
