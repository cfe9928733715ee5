"""The two most used JavaScript Schema Registry clients against our registry and ``serdes``.

``@confluentinc/schemaregistry`` (Confluent's client, pinned in ``tests/js/package.json``) and
``@kafkajs/confluent-schema-registry`` run in one Node process per module
(``tests/js/worker.js``, one JSON request/answer per line); ``scripts/node-deps`` installs them
from ``tests/js/package-lock.json`` once. Each test: register with references, serialize in
JavaScript and read with ``serdes`` and back, for Avro, Protobuf (nested messages, a nested
message declared after a map field) and JSON Schema, with the schema id prefix, the GUID prefix
(magic byte 1) and the GUID in a Kafka header; and the admin calls the clients make (config,
compatibility, lookup, deletes, associations). Payloads travel as hex.
"""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
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
from tests.serdes_helpers import ours, registry_server  # noqa: F401

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
    resp = httpx.get(f"{server.url}/subjects/{subject}/versions/latest")
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


# --- registration with references ------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_confluent_js_registers_with_references(
    js: NodeWorker, referenced: dict[str, Any], registry_server: LiveServer, fmt: str
) -> None:
    subject = f"jsreg-{fmt.lower()}-value"
    registered = register(js, fmt, subject)
    assert registered["id"] > referenced[fmt]["id"]
    again = js.cf("register", subject, schema_info(fmt), False, fresh=True)
    assert again == registered["id"]  # idempotent
    stored = js.cf("getSchemaMetadata", subject, 1, False, fresh=True)
    assert stored["id"] == registered["id"]
    assert stored["references"] == schema_info(fmt)["references"]
    assert (stored.get("schemaType") or "AVRO") == fmt
    by_id = js.cf("getBySubjectAndId", subject, registered["id"], fresh=True)
    assert by_id["references"] == schema_info(fmt)["references"]
    assert latest(registry_server, subject)["id"] == registered["id"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_register_lookup_and_version_answers_carry_the_guid(
    js: NodeWorker, referenced: dict[str, Any], fmt: str
) -> None:
    """Confluent 8.x: every answer with a schema id has its ``guid``; clients frame with it."""
    subject = f"jsguid-{fmt.lower()}-value"
    registered = js.cf("registerFullResponse", subject, schema_info(fmt), False, fresh=True)
    # 8.x answers a registration with the whole version (RegisterSchemaResponse(Schema))
    assert registered.get("version") == 1 and "guid" in registered, registered
    guid = registered["guid"]
    version = js.cf("getSchemaMetadata", subject, 1, False, fresh=True)
    assert version["guid"] == guid
    looked_up = js.cf("getIdFullResponse", subject, schema_info(fmt), False, fresh=True)
    assert (looked_up["id"], looked_up["guid"]) == (registered["id"], guid)
    by_guid = js.cf("getByGuid", guid, fresh=True)
    assert by_guid["schema"] == version["schema"]
    assert by_guid["references"] == schema_info(fmt)["references"]


# --- Confluent's JavaScript client writes, serdes reads, and back ----------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_confluent_js_writes_serdes_reads(
    js: NodeWorker,
    referenced: dict[str, Any],
    registry_server: LiveServer,
    proto_classes: dict[str, Any],
    fmt: str,
    framing: str,
) -> None:
    topic = f"jsw-{fmt.lower()}-{framing}"
    register(js, fmt, f"{topic}-value")
    data, headers = js_serialize(js, fmt, topic, order_value(fmt), framing)
    check_frame(fmt, framing, data, headers, latest(registry_server, f"{topic}-value"))
    got = py_deserialize(fmt, registry_server.url, topic, data, headers, proto_classes.get("Order"))
    assert got == expected_order(fmt, proto_classes)


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_serdes_writes_confluent_js_reads(
    js: NodeWorker,
    referenced: dict[str, Any],
    registry_server: LiveServer,
    proto_classes: dict[str, Any],
    fmt: str,
    framing: str,
) -> None:
    topic = f"pyw-{fmt.lower()}-{framing}"
    register(js, fmt, f"{topic}-value")
    data, headers = py_serialize(
        fmt, registry_server.url, topic, order_value(fmt), framing, proto_classes.get("Order")
    )
    check_frame(fmt, framing, data, headers, latest(registry_server, f"{topic}-value"))
    got = js_deserialize(js, fmt, topic, data, headers)
    if fmt == "PROTOBUF":
        assert got["type"] == "interop.shop.Order"
    assert from_wire(got["value"]) == expected_order(fmt, proto_classes)


@pytest.mark.parametrize("framing", FRAMINGS)
def test_keys_both_ways(
    js: NodeWorker, referenced: dict[str, Any], registry_server: LiveServer, framing: str
) -> None:
    """Keys: ``<topic>-key`` subjects, the GUID in a ``__key_schema_id`` header."""
    topic = f"keys-{framing}"
    register(js, "AVRO", f"{topic}-key")
    version = latest(registry_server, f"{topic}-key")
    data, headers = js_serialize(js, "AVRO", topic, AVRO_ORDER, framing, key=True)
    check_frame("AVRO", framing, data, headers, version, key=True)
    got = py_deserialize("AVRO", registry_server.url, topic, data, headers, key=True)
    assert got == AVRO_ORDER
    data, headers = py_serialize("AVRO", registry_server.url, topic, AVRO_ORDER, framing, key=True)
    check_frame("AVRO", framing, data, headers, version, key=True)
    got = js_deserialize(js, "AVRO", topic, data, headers, key=True)
    assert from_wire(got["value"]) == AVRO_ORDER


def test_confluent_js_protobuf_serializer_registers_and_finds_its_derived_schema(
    js: NodeWorker,
    referenced: dict[str, Any],
    registry_server: LiveServer,
    proto_classes: dict[str, Any],
) -> None:
    """Without ``useLatestVersion`` the client sends the descriptor it holds (base64
    ``FileDescriptorProto``, imports as references named by file): it registers it
    (``autoRegisterSchemas``) and then finds it by lookup. The printed form of a descriptor has
    fully qualified type names, so (in Confluent too) only a normalized lookup finds a schema
    that was registered as text."""
    source = "jsderived-source-value"
    register(js, "PROTOBUF", source)
    topic = "jsderived-protobuf"
    data, _ = js_serialize(
        js,
        "PROTOBUF",
        topic,
        PROTO_ORDER,
        "id",
        {"autoRegisterSchemas": True},
        schema_subject=source,
    )
    version = latest(registry_server, f"{topic}-value")
    assert version["references"] == schema_info("PROTOBUF")["references"]
    assert data[:7] == b"\x00" + version["id"].to_bytes(4, "big") + b"\x02\x02"
    looked_up, _ = js_serialize(js, "PROTOBUF", topic, PROTO_ORDER, "id", {}, schema_subject=source)
    assert looked_up[:7] == data[:7]
    # (the client's getAllVersions does not URL-encode the subject: asked directly)
    ref_versions = httpx.get(
        f"{registry_server.url}/subjects/interop%2Fcommon%2Faddress.proto/versions"
    )
    assert ref_versions.json() == [1]
    got = py_deserialize("PROTOBUF", registry_server.url, topic, data, [], proto_classes["Order"])
    assert got == canonical_proto(proto_classes, "Order", PROTO_ORDER)

    topic = "jsderivednorm-protobuf"
    registered = js.cf("registerFullResponse", f"{topic}-value", schema_info("PROTOBUF"), True)
    data, _ = js_serialize(
        js, "PROTOBUF", topic, PROTO_ORDER, "id", {"normalizeSchemas": True}, schema_subject=source
    )
    assert data[:7] == b"\x00" + registered["id"].to_bytes(4, "big") + b"\x02\x02"


# --- Protobuf: a nested message declared after a map field -----------------------------------

NESTED = [
    ("interop.shop.Order.Line", "Order.Line", PROTO_LINE, b"\x04\x02\x00"),  # [1, 0]
    (
        "interop.shop.Order.Line.Discount",
        "Order.Line.Discount",
        PROTO_DISCOUNT,
        b"\x06\x02\x00\x00",
    ),
]


@pytest.mark.parametrize(
    ("full_name", "name", "value", "indexes"), NESTED, ids=["Line", "Discount"]
)
def test_nested_message_after_a_map_field_confluent_js_to_serdes(
    js: NodeWorker,
    referenced: dict[str, Any],
    registry_server: LiveServer,
    proto_classes: dict[str, Any],
    full_name: str,
    name: str,
    value: dict[str, Any],
    indexes: bytes,
) -> None:
    """The map's synthetic entry message is not counted: Line is [1, 0] (as Java writes it)."""
    topic = f"jsnested-{name.lower().replace('.', '-')}"
    registered = register(js, "PROTOBUF", f"{topic}-value")
    data, headers = js_serialize(js, "PROTOBUF", topic, value, "id", message_type=full_name)
    assert data[: 5 + len(indexes)] == b"\x00" + registered["id"].to_bytes(4, "big") + indexes
    expected = canonical_proto(proto_classes, name, value)
    got = py_deserialize("PROTOBUF", registry_server.url, topic, data, headers, proto_classes[name])
    assert got == expected
    # without a message class serdes picks the type from the registry's descriptor
    as_dict = ProtobufDeserializer(
        None, schema_registry_client=SchemaRegistryClient({"url": registry_server.url})
    )(data, SerializationContext(topic, MessageField.VALUE, []))
    assert proto_json(json_format.ParseDict(as_dict, proto_classes[name]())) == expected


@pytest.mark.parametrize(
    ("full_name", "name", "value", "indexes"), NESTED, ids=["Line", "Discount"]
)
def test_nested_message_after_a_map_field_serdes_to_confluent_js(
    js: NodeWorker,
    referenced: dict[str, Any],
    registry_server: LiveServer,
    proto_classes: dict[str, Any],
    full_name: str,
    name: str,
    value: dict[str, Any],
    indexes: bytes,
) -> None:
    topic = f"pynested-{name.lower().replace('.', '-')}"
    register(js, "PROTOBUF", f"{topic}-value")
    data, headers = py_serialize(
        "PROTOBUF", registry_server.url, topic, value, "id", proto_classes[name]
    )
    js_data, _ = js_serialize(js, "PROTOBUF", topic, value, "id", message_type=full_name)
    assert data == js_data  # same bytes as Confluent's client: indexes included
    got = js_deserialize(js, "PROTOBUF", topic, data, headers)
    assert got["type"] == full_name
    assert got["value"] == canonical_proto(proto_classes, name, value)


# --- kafkajs ---------------------------------------------------------------------------------


def kafkajs_schema(fmt: str) -> dict[str, Any]:
    info = schema_info(fmt)
    return {"type": fmt, "schema": info["schema"], "references": info["references"]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_kafkajs_writes_serdes_reads(
    js: NodeWorker,
    referenced: dict[str, Any],
    registry_server: LiveServer,
    proto_classes: dict[str, Any],
    fmt: str,
) -> None:
    if fmt == "PROTOBUF":
        pytest.skip(KAFKAJS_PROTOBUF_ISSUE)
    topic = f"kjw-{fmt.lower()}"
    registered = js.kj("register", kafkajs_schema(fmt), {"subject": f"{topic}-value"})
    assert registered["id"] == latest(registry_server, f"{topic}-value")["id"]
    data = bytes.fromhex(
        js.call("kj.encode", id=registered["id"], value=to_wire(order_value(fmt)))["hex"]
    )
    check_frame(fmt, "id", data, [], registered)
    assert py_deserialize(fmt, registry_server.url, topic, data) == order_value(fmt)


@pytest.mark.parametrize(
    ("fmt", "message"),
    [("AVRO", None), ("JSON", None), ("PROTOBUF", "Customer"), ("PROTOBUF", "Order")],
    ids=["AVRO", "JSON", "PROTOBUF-first-message", "PROTOBUF-second-message"],
)
def test_serdes_writes_kafkajs_reads(
    js: NodeWorker,
    referenced: dict[str, Any],
    registry_server: LiveServer,
    proto_classes: dict[str, Any],
    fmt: str,
    message: str | None,
) -> None:
    """kafkajs reads a Protobuf frame right only for the file's first message (index [0],
    written as one 0 byte that it skips)."""
    if message == "Order":
        pytest.skip(KAFKAJS_PROTOBUF_ISSUE)
    topic = f"kjr-{fmt.lower()}"
    register(js, fmt, f"{topic}-value")
    value = PROTO_CUSTOMER if message == "Customer" else order_value(fmt)
    cls = proto_classes.get(message or "")
    data, _ = py_serialize(fmt, registry_server.url, topic, value, "id", cls)
    got = js.call("kj.decode", hex=data.hex())
    if fmt == "PROTOBUF":
        assert data[5:6] == b"\x00"
        assert got["type"] == "interop.shop.Customer"
        assert got["value"] == canonical_proto(proto_classes, "Customer", value)
    else:
        assert from_wire(got["value"]) == value


def test_kafkajs_admin_calls(js: NodeWorker, registry_server: LiveServer) -> None:
    """kafkajs' register sets the subject's compatibility on first use (it reads
    ``GET /config/{subject}`` and expects 404 for an unconfigured subject), then looks up."""
    subject = "kjadmin-value"
    v1 = {"type": "record", "name": "K", "fields": [{"name": "a", "type": "int"}]}
    v2 = {**v1, "fields": [*v1["fields"], {"name": "b", "type": "string", "default": ""}]}
    bad = {**v1, "fields": [{"name": "a", "type": "string"}]}
    schema = {"type": "AVRO", "schema": json.dumps(v1)}
    first = js.kj("register", schema, {"subject": subject})
    config = httpx.get(f"{registry_server.url}/config/{subject}")
    assert config.json() == {"compatibilityLevel": "BACKWARD"}
    assert js.kj("register", schema, {"subject": subject}) == first
    second = js.kj("register", {"type": "AVRO", "schema": json.dumps(v2)}, {"subject": subject})
    assert second["id"] != first["id"]
    assert js.kj("getRegistryIdBySchema", subject, schema) == first["id"]
    assert js.kj("getLatestSchemaId", subject) == second["id"]
    assert js.kj("getRegistryId", subject, 1) == first["id"]
    assert js.kj("getRegistryId", subject, "latest") == second["id"]
    answer = js.answer(
        "kj.call",
        method="register",
        args=[{"type": "AVRO", "schema": json.dumps(bad)}, {"subject": subject}],
    )
    assert not answer["ok"] and answer.get("status") == 409, answer
    answer = js.answer("kj.call", method="getRegistryIdBySchema", args=["kjadmin-none", schema])
    assert not answer["ok"] and "Subject 'kjadmin-none' not found" in answer["error"], answer


# --- Confluent's JavaScript client: admin calls ----------------------------------------------

RECORD_V1 = {"type": "record", "name": "Adm", "fields": [{"name": "a", "type": "int"}]}
RECORD_V2 = {
    **RECORD_V1,
    "fields": [*RECORD_V1["fields"], {"name": "b", "type": "string", "default": "x"}],
}
RECORD_BAD = {**RECORD_V1, "fields": [*RECORD_V1["fields"], {"name": "c", "type": "string"}]}


def avro_info(doc: dict[str, Any]) -> dict[str, Any]:
    return {"schemaType": "AVRO", "schema": json.dumps(doc)}


def test_confluent_js_config_calls(js: NodeWorker) -> None:
    subject = "cfconfig-value"
    js.cf("register", subject, avro_info(RECORD_V1), False)
    try:
        assert js.cf("updateDefaultCompatibility", "FULL") == "FULL"
        assert js.cf("getDefaultCompatibility", fresh=True) == "FULL"
        assert js.cf("getDefaultConfig", fresh=True)["compatibilityLevel"] == "FULL"
        updated = js.cf("updateDefaultConfig", {"compatibility": "FORWARD", "normalize": False})
        assert updated["compatibility"] == "FORWARD"
        assert js.cf("getDefaultConfig", fresh=True) == {
            "compatibilityLevel": "FORWARD",
            "normalize": False,
        }
    finally:
        js.cf("updateDefaultCompatibility", "BACKWARD")
    error = js.cf_error("getCompatibility", subject)
    assert (error.status, error.error_code) == (404, 40408), error.answer
    assert js.cf("updateCompatibility", subject, "NONE") == "NONE"
    assert js.cf("getCompatibility", subject, fresh=True) == "NONE"
    updated = js.cf(
        "updateConfig", subject, {"compatibility": "FULL_TRANSITIVE", "normalize": True}
    )
    assert updated == {"compatibility": "FULL_TRANSITIVE", "normalize": True}
    assert js.cf("getConfig", subject, fresh=True) == {
        "compatibilityLevel": "FULL_TRANSITIVE",
        "normalize": True,
    }
    error = js.cf_error("updateCompatibility", subject, "SIDEWAYS")
    assert (error.status, error.error_code) == (422, 42203), error.answer


def test_confluent_js_compatibility_checks(js: NodeWorker) -> None:
    subject = "cfcompat-value"
    js.cf("updateCompatibility", subject, "BACKWARD")
    first = js.cf("register", subject, avro_info(RECORD_V1), False)
    assert js.cf("testCompatibility", subject, 1, avro_info(RECORD_V2), fresh=True) is True
    assert js.cf("testCompatibility", subject, 1, avro_info(RECORD_BAD), fresh=True) is False
    assert js.cf("testSubjectCompatibility", subject, avro_info(RECORD_V2), fresh=True) is True
    assert js.cf("testSubjectCompatibility", subject, avro_info(RECORD_BAD), fresh=True) is False
    error = js.cf_error("register", subject, avro_info(RECORD_BAD), False)
    assert error.status == 409 and error.error_code in (409, 40901), error.answer
    error = js.cf_error("testCompatibility", subject, 7, avro_info(RECORD_V2))
    assert (error.status, error.error_code) == (404, 40402), error.answer
    error = js.cf_error("register", subject, {"schemaType": "AVRO", "schema": "{"}, False)
    assert (error.status, error.error_code) == (422, 42201), error.answer
    assert js.cf("getAllVersions", subject, fresh=True) == [1]
    assert js.cf("getId", subject, avro_info(RECORD_V1), False, fresh=True) == first


def test_confluent_js_lookup_calls(js: NodeWorker) -> None:
    subject = "cflookup-value"
    first = js.cf("registerFullResponse", subject, avro_info(RECORD_V1), False)
    second = js.cf("registerFullResponse", subject, avro_info(RECORD_V2), False)
    found = js.cf("getIdFullResponse", subject, avro_info(RECORD_V1), False, fresh=True)
    assert (found["subject"], found["version"], found["id"]) == (subject, 1, first["id"])
    assert js.cf("getVersion", subject, avro_info(RECORD_V2), False, False, fresh=True) == 2
    assert js.cf("getAllVersions", subject, fresh=True) == [1, 2]
    assert js.cf("getLatestSchemaMetadata", subject, fresh=True)["id"] == second["id"]
    meta = js.cf("getSchemaMetadata", subject, 1, False, fresh=True)
    assert (meta["id"], json.loads(meta["schema"])) == (first["id"], RECORD_V1)
    assert subject in js.cf("getAllSubjects", fresh=True)
    unknown = {**RECORD_V1, "name": "Nope"}
    error = js.cf_error("getId", subject, avro_info(unknown), False)
    assert (error.status, error.error_code) == (404, 40403), error.answer
    error = js.cf_error("getSchemaMetadata", subject, 9, False)
    assert (error.status, error.error_code) == (404, 40402), error.answer
    error = js.cf_error("getLatestSchemaMetadata", "cflookup-missing")
    assert (error.status, error.error_code) == (404, 40401), error.answer
    error = js.cf_error("getBySubjectAndId", subject, 987654)
    assert (error.status, error.error_code) == (404, 40403), error.answer


def test_confluent_js_delete_calls(js: NodeWorker) -> None:
    subject = "cfdelete-value"
    js.cf("register", subject, avro_info(RECORD_V1), False)
    js.cf("register", subject, avro_info(RECORD_V2), False)
    assert js.cf("deleteSubjectVersion", subject, 2, False, fresh=True) == 2
    assert js.cf("getAllVersions", subject, fresh=True) == [1]
    error = js.cf_error("deleteSubject", subject, True)  # soft delete must come first
    assert (error.status, error.error_code) == (404, 40405), error.answer
    assert js.cf("deleteSubject", subject, False, fresh=True) == [1]
    assert subject not in js.cf("getAllSubjects", fresh=True)
    error = js.cf_error("getAllVersions", subject)
    assert (error.status, error.error_code) == (404, 40401), error.answer
    # soft-deleted versions are still readable with deleted=true
    assert js.cf("getSchemaMetadata", subject, 1, True, fresh=True)["version"] == 1
    assert js.cf("deleteSubject", subject, True, fresh=True) == [1, 2]
    error = js.cf_error("getSchemaMetadata", subject, 1, True)
    assert (error.status, error.error_code) == (404, 40401), error.answer


def test_confluent_js_associated_subject_name_strategy(
    js: NodeWorker, registry_server: LiveServer
) -> None:
    """The client's default subject name strategy asks ``/associations`` for the topic first
    (Confluent Platform 8.x) and uses the associated subject, not ``<topic>-value``."""
    subject, topic = "assoc-orders-custom", "assoc-orders"
    registered = js.cf("registerFullResponse", subject, avro_info(RECORD_V1), False)
    created = js.cf(
        "createAssociation",
        {
            "resourceName": topic,
            "resourceNamespace": "default",
            "resourceId": "assoc-orders-id",
            "resourceType": "topic",
            "associations": [
                {
                    "subject": subject,
                    "associationType": "value",
                    "lifecycle": "WEAK",
                    "frozen": False,
                }
            ],
        },
    )
    assert created["resourceId"] == "assoc-orders-id", created
    found = js.cf("getAssociationsByResourceName", topic, "-", "topic", ["value"], None, 0, -1)
    assert [(a["subject"], a["associationType"]) for a in found] == [(subject, "value")]
    out = js.call(
        "cf.serialize",
        format="AVRO",
        topic=topic,
        framing="id",
        conf={"useLatestVersion": True},
        value={"a": 5},
        fresh=True,
    )
    data = bytes.fromhex(out["hex"])
    assert data[:5] == b"\x00" + registered["id"].to_bytes(4, "big")
    got = js.call("cf.deserialize", format="AVRO", topic=topic, hex=out["hex"], fresh=True)
    assert got["value"] == {"a": 5}
