"""serdes' asyncio faces on a live registry: ``AsyncSchemaRegistryClient`` answers as the sync
client does (caches included), and the async serializers write the very bytes of the sync ones
and of confluent-kafka's async serializers, each reading the others' output. Their I/O really
runs on the event loop: a registry served by the same loop answers them."""

# ruff: noqa: F811  (module-scoped fixtures imported from tests.serdes_helpers)
from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import fastavro
import pytest
from confluent_kafka.schema_registry import AsyncSchemaRegistryClient as CAsyncClient
from confluent_kafka.schema_registry._async.avro import (
    AsyncAvroDeserializer as CAsyncAvroDeserializer,
)
from confluent_kafka.schema_registry._async.avro import AsyncAvroSerializer as CAsyncAvroSerializer
from confluent_kafka.schema_registry._async.json_schema import (
    AsyncJSONDeserializer as CAsyncJSONDeserializer,
)
from confluent_kafka.schema_registry._async.json_schema import (
    AsyncJSONSerializer as CAsyncJSONSerializer,
)
from confluent_kafka.schema_registry._async.protobuf import (
    AsyncProtobufDeserializer as CAsyncProtoDeserializer,
)
from confluent_kafka.schema_registry._async.protobuf import (
    AsyncProtobufSerializer as CAsyncProtoSerializer,
)
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

from serdes import (
    AsyncSchemaRegistryClient,
    RuleSet,
    Schema,
    SchemaRegistryClient,
    SchemaRegistryError,
    SerializationError,
    UnknownSchemaError,
)
from serdes._async.avro import AsyncAvroDeserializer as MirroredAsyncAvroDeserializer
from serdes._async.bridge import MissingGreenletError
from serdes._async.schema_registry_client import (
    AsyncSchemaRegistryClient as MirroredAsyncClient,
)
from serdes.avro import AsyncAvroDeserializer, AsyncAvroSerializer, AvroSerializer
from serdes.json_schema import AsyncJSONDeserializer, AsyncJSONSerializer, JSONSerializer
from serdes.protobuf import AsyncProtobufDeserializer, AsyncProtobufSerializer, ProtobufSerializer
from tests.serdes_helpers import ours, registry_server, theirs  # noqa: F401

USER = {
    "type": "record",
    "name": "User",
    "namespace": "async.test",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "age", "type": "int"},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
VIP = {"name": "vip", "type": "boolean", "default": False}
USER_V2 = {**USER, "fields": [*USER["fields"], VIP]}
USERS = [
    {"name": f"user-{i}", "age": 20 + i, "email": None if i % 2 else f"u{i}@x", "tags": ["a"] * i}
    for i in range(5)
]
ORDER_JSON = {
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "item": {"type": "string"},
        "qty": {"type": "integer", "minimum": 1},
    },
    "required": ["id", "item", "qty"],
}


def run(coro_fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return asyncio.run(coro_fn(*args))


def topic() -> str:
    return f"async-{uuid.uuid4().hex[:10]}"


def value_ctx(name: str) -> SerializationContext:
    return SerializationContext(name, MessageField.VALUE)


def count_requests(client: AsyncSchemaRegistryClient) -> list[str]:
    """The HTTP requests ``client`` sends from now on (method and path)."""
    seen: list[str] = []

    async def hook(request: Any) -> None:
        seen.append(f"{request.method} {request.url.path}")

    client._pool.client.event_hooks["request"].append(hook)
    return seen


@pytest.fixture(scope="module")
def ping_class() -> Any:
    """A Protobuf message class built from a descriptor (no protoc needed)."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="async_ping.proto", package="asynctest", syntax="proto3"
    )
    msg = proto.message_type.add(name="Ping")
    kinds = descriptor_pb2.FieldDescriptorProto
    msg.field.add(name="id", number=1, type=kinds.TYPE_INT64, label=kinds.LABEL_OPTIONAL)
    msg.field.add(name="text", number=2, type=kinds.TYPE_STRING, label=kinds.LABEL_OPTIONAL)
    msg.field.add(name="ok", number=3, type=kinds.TYPE_BOOL, label=kinds.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return GetMessageClass(pool.FindMessageTypeByName("asynctest.Ping"))


# -- the client ---------------------------------------------------------------------------------


def test_async_client_answers_as_the_sync_client(
    registry_server: Any, ours: SchemaRegistryClient
) -> None:
    subject = f"{topic()}-value"
    v1 = Schema(json.dumps(USER), "AVRO")
    v2 = Schema(json.dumps(USER_V2), "AVRO")

    async def scenario() -> None:
        async with AsyncSchemaRegistryClient({"url": registry_server.url}) as client:
            first = await client.register_schema(subject, v1)
            second = await client.register_schema_full_response(subject, v2)
            assert first == ours.register_schema(subject, v1)
            assert second.schema_id == ours.lookup_schema(subject, v2).schema_id
            assert (await client.get_schema(first)).schema_str == ours.get_schema(first).schema_str
            assert await client.get_versions(subject) == [1, 2]
            latest = await client.get_latest_version(subject)
            assert (latest.schema_id, latest.version) == (second.schema_id, 2)
            found = await client.lookup_schema(subject, v1)
            assert (found.schema_id, found.version) == (first, 1)
            assert await client.get_version(subject, 1) == ours.get_version(subject, 1)
            assert subject in await client.get_subjects()
            assert await client.get_subjects_by_schema_id(first) == [subject]
            assert await client.test_compatibility(subject, v2, version=1)
            await client.set_compatibility(subject, "FORWARD")
            assert await client.get_compatibility(subject) == "FORWARD"
            assert (await client.get_config(subject)).compatibility == ours.get_config(
                subject
            ).compatibility
            assert "AVRO" in await client.get_schema_types()
            assert await client.delete_version(subject, 2) == 2
            assert await client.get_versions(subject) == [1]
            assert await client.delete_subject(subject) == [1]
            assert client.config() == {"url": registry_server.url}

    run(scenario)


def test_async_client_serves_repeats_from_its_caches(registry_server: Any) -> None:
    subject = f"{topic()}-value"
    schema = Schema(json.dumps(USER), "AVRO")

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        sent = count_requests(client)
        schema_id = await client.register_schema(subject, schema)
        assert sent == [f"POST /subjects/{subject}/versions"]
        calls = [
            lambda: client.register_schema(subject, schema),
            lambda: client.get_schema(schema_id, subject),
            lambda: client.get_latest_version(subject),
            lambda: client.lookup_schema(subject, schema),
            lambda: client.get_version(subject, 1),
        ]
        for call in calls:
            first = await call()
            count = len(sent)
            assert await call() == first
            assert len(sent) == count  # the repeat came from the cache
        assert f"GET /subjects/{subject}/versions/latest" in sent
        await client.clear_caches()
        assert json.loads((await client.get_schema(schema_id, subject)).schema_str) == USER
        assert sent[-1] == f"GET /schemas/ids/{schema_id}"
        await client.aclose()

    run(scenario)


def test_async_client_errors_carry_the_registry_codes(registry_server: Any) -> None:
    async def scenario() -> None:
        async with AsyncSchemaRegistryClient({"url": registry_server.url}) as client:
            with pytest.raises(SchemaRegistryError) as missing:
                await client.get_schema(987654)
            assert (missing.value.http_status_code, missing.value.error_code) == (404, 40403)
            with pytest.raises(SchemaRegistryError) as no_subject:
                await client.get_latest_version(f"{topic()}-value")
            assert no_subject.value.error_code == 40401
            with pytest.raises(SchemaRegistryError) as invalid:
                await client.register_schema(f"{topic()}-value", Schema("{not avro", "AVRO"))
            assert (invalid.value.http_status_code, invalid.value.error_code) == (422, 42201)
        unreachable = AsyncSchemaRegistryClient(
            {"url": "http://127.0.0.1:9", "max.retries": 2, "retries.wait.ms": 1}
        )
        with pytest.raises(SchemaRegistryError, match="could not reach") as down:
            await unreachable.get_subjects()
        assert down.value.http_status_code == -1
        await unreachable.aclose()

    run(scenario)
    with pytest.raises(ValueError, match="Unrecognized properties: bogus"):
        AsyncSchemaRegistryClient({"url": registry_server.url, "bogus": 1})
    assert MirroredAsyncClient is AsyncSchemaRegistryClient


def test_async_client_io_runs_on_the_event_loop() -> None:
    """A registry answered by the same event loop: a client that blocked the loop would time
    out (it could never be answered); the async one gets its answer, and the loop keeps running
    other tasks while the request is in flight."""
    body = json.dumps({"schema": json.dumps(USER), "schemaType": "AVRO", "guid": None}).encode()
    ticks: list[int] = []
    served: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(await reader.readline())
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        await asyncio.sleep(0.2)  # the loop must serve the ticker meanwhile
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    async def ticker() -> None:
        for i in range(10):
            ticks.append(i)
            await asyncio.sleep(0.01)

    async def scenario() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        client = AsyncSchemaRegistryClient(
            {"url": f"http://127.0.0.1:{port}", "timeout": 5, "max.retries": 0}
        )
        background = asyncio.create_task(ticker())
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(USER), USERS[3])
        frame = b"\x00" + (7).to_bytes(4, "big") + out.getvalue()
        de = await AsyncAvroDeserializer(client)
        assert await de(frame) == USERS[3]  # writer schema id 7 fetched from the loop's server
        assert len(ticks) >= 5  # the ticker ran while the request was pending
        schema = await client.get_schema(7)  # now from the cache
        assert json.loads(schema.schema_str)["name"] == "User"
        assert served == [b"GET /schemas/ids/7 HTTP/1.1\r\n"]
        await background
        await client.aclose()
        server.close()
        await server.wait_closed()

    run(scenario)


# -- serializers: the same bytes as sync serdes and confluent-kafka's async ones ----------------


def test_async_avro_same_bytes_as_sync_and_confluent(
    registry_server: Any, ours: SchemaRegistryClient
) -> None:
    name = topic()
    ctx = value_ctx(name)
    schema_str = json.dumps(USER)
    sync_bytes = [AvroSerializer(ours, schema_str)(u, ctx) for u in USERS]

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        theirs_async = CAsyncClient({"url": registry_server.url})
        ser = await AsyncAvroSerializer(client, schema_str)
        c_ser = await CAsyncAvroSerializer(theirs_async, schema_str)
        our_bytes = [await ser(u, ctx) for u in USERS]
        their_bytes = [await c_ser(u, ctx) for u in USERS]
        assert our_bytes == sync_bytes == their_bytes
        de = await AsyncAvroDeserializer(client)
        c_de = await CAsyncAvroDeserializer(theirs_async)
        assert [await de(b, ctx) for b in their_bytes] == USERS
        assert [await c_de(b, ctx) for b in our_bytes] == USERS
        # reader schema: v2 adds a defaulted field, resolved as the sync deserializer does
        reader = await AsyncAvroDeserializer(client, json.dumps(USER_V2))
        assert await reader(our_bytes[0], ctx) == {**USERS[0], "vip": False}
        assert await ser(None, ctx) is None
        assert await de(None, ctx) is None
        await client.aclose()
        await theirs_async.aclose()

    run(scenario)


def test_async_protobuf_same_bytes_as_sync_and_confluent(
    registry_server: Any, ours: SchemaRegistryClient, ping_class: Any
) -> None:
    name = topic()
    ctx = value_ctx(name)
    messages = [ping_class(id=i, text=f"t{i}", ok=bool(i % 2)) for i in range(4)]
    sync_ser = ProtobufSerializer(ping_class, ours, {"use.deprecated.format": False})
    sync_bytes = [sync_ser(m, ctx) for m in messages]

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        theirs_async = CAsyncClient({"url": registry_server.url})
        ser = await AsyncProtobufSerializer(ping_class, client, {"use.deprecated.format": False})
        c_ser = await CAsyncProtoSerializer(
            ping_class, theirs_async, {"use.deprecated.format": False}
        )
        our_bytes = [await ser(m, ctx) for m in messages]
        their_bytes = [await c_ser(m, ctx) for m in messages]
        assert our_bytes == sync_bytes == their_bytes
        de = await AsyncProtobufDeserializer(ping_class, {}, client)
        c_de = await CAsyncProtoDeserializer(ping_class, {"use.deprecated.format": False})
        assert [await de(b, ctx) for b in their_bytes] == messages
        assert [await c_de(b, ctx) for b in our_bytes] == messages
        as_dicts = await AsyncProtobufDeserializer(None, {}, client)
        assert await as_dicts(our_bytes[1], ctx) == {"id": 1, "text": "t1", "ok": True}
        with pytest.raises(ValueError, match="message must be of type"):
            await ser("not a message", ctx)
        await client.aclose()
        await theirs_async.aclose()

    run(scenario)


def test_async_json_same_bytes_as_sync_and_confluent(
    registry_server: Any, ours: SchemaRegistryClient
) -> None:
    name = topic()
    ctx = value_ctx(name)
    schema_str = json.dumps(ORDER_JSON)
    orders = [{"id": i, "item": f"item-{i}", "qty": i + 1} for i in range(4)]
    sync_bytes = [JSONSerializer(schema_str, ours)(o, ctx) for o in orders]

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        theirs_async = CAsyncClient({"url": registry_server.url})
        ser = await AsyncJSONSerializer(schema_str, client)
        c_ser = await CAsyncJSONSerializer(schema_str, theirs_async)
        our_bytes = [await ser(o, ctx) for o in orders]
        their_bytes = [await c_ser(o, ctx) for o in orders]
        assert our_bytes == sync_bytes == their_bytes
        de = await AsyncJSONDeserializer(None, schema_registry_client=client)
        c_de = await CAsyncJSONDeserializer(None, schema_registry_client=theirs_async)
        assert [await de(b, ctx) for b in their_bytes] == orders
        assert [await c_de(b, ctx) for b in our_bytes] == orders
        with pytest.raises(SerializationError, match=r"\$\.qty"):
            await ser({"id": 9, "item": "x", "qty": 0}, ctx)
        await client.aclose()
        await theirs_async.aclose()

    run(scenario)


# -- caches, concurrency, errors ----------------------------------------------------------------


def test_async_serializer_registers_once_then_makes_no_request(registry_server: Any) -> None:
    name = topic()
    ctx = value_ctx(name)

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        sent = count_requests(client)
        ser = await AsyncAvroSerializer(client, json.dumps(USER))
        de = await AsyncAvroDeserializer(client)
        # 40 concurrent first calls: all wait on the loop, all give the same frame
        frames = await asyncio.gather(*(ser(USERS[i % 5], ctx) for i in range(40)))
        assert len({f[:5] for f in frames}) == 1
        decoded = await asyncio.gather(*(de(f, ctx) for f in frames))
        assert decoded == [USERS[i % 5] for i in range(40)]
        before = len(sent)
        # one registration: the other calls waited for the first one; no schema fetch: the
        # deserializer found the id in the client cache the registration filled
        assert sent.count(f"POST /subjects/{name}-value/versions") == 1
        assert not any(s.startswith("GET /schemas/ids/") for s in sent)
        for u in USERS * 4:
            assert await de(await ser(u, ctx), ctx) == u
        assert len(sent) == before  # steady state: no HTTP at all
        await client.aclose()

    run(scenario)


def test_async_deserializer_errors(registry_server: Any) -> None:
    ctx = value_ctx(topic())

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        de = await AsyncAvroDeserializer(client)
        with pytest.raises(UnknownSchemaError, match="id 876543"):
            await de(b"\x00" + (876543).to_bytes(4, "big") + b"\x02", ctx)
        with pytest.raises(SerializationError):
            await de(b"\x07garbage", ctx)
        ser = await AsyncAvroSerializer(client, json.dumps(USER))
        with pytest.raises(SerializationError, match="age"):
            await ser({**USERS[0], "age": 1.5}, ctx)
        # a failed call leaves the serde usable
        assert await de(await ser(USERS[2], ctx), ctx) == USERS[2]
        # the sync face of an async client cannot be used outside an awaited call
        with pytest.raises(MissingGreenletError, match="await"):
            client.sync_client.get_subjects()
        with pytest.raises(MissingGreenletError):
            ser.sync(USERS[0], value_ctx(topic()))
        await client.aclose()

    run(scenario)


def test_async_serde_with_confluent_client_and_async_strategy(
    registry_server: Any, ours: SchemaRegistryClient
) -> None:
    """confluent-kafka's AsyncSchemaRegistryClient works under our async serdes too, and a
    subject name strategy may be a coroutine function (as confluent-kafka's async API allows)."""
    name = topic()
    ctx = value_ctx(name)
    strategy_calls: list[str] = []

    async def strategy(ctx: SerializationContext | None, record_name: str | None) -> str:
        await asyncio.sleep(0)
        strategy_calls.append(str(record_name))
        return f"{ctx.topic}-custom" if ctx is not None else "none"

    async def scenario() -> None:
        theirs_async = CAsyncClient({"url": registry_server.url})
        ser = await AsyncAvroSerializer(
            theirs_async, json.dumps(USER), conf={"subject.name.strategy": strategy}
        )
        frame = await ser(USERS[1], ctx)
        assert strategy_calls and strategy_calls[0] == "async.test.User"
        assert ours.get_latest_version(f"{name}-custom").schema_id == int.from_bytes(
            frame[1:5], "big"
        )
        de = await MirroredAsyncAvroDeserializer(theirs_async)
        assert await de(frame, ctx) == USERS[1]
        await theirs_async.aclose()

    run(scenario)


def test_cancelled_call_leaves_the_serializer_usable(registry_server: Any) -> None:
    name = topic()
    ctx = value_ctx(name)

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        ser = await AsyncAvroSerializer(client, json.dumps(USER))
        pending = asyncio.create_task(ser(USERS[0], ctx))
        await asyncio.sleep(0)  # it is waiting for the registration now
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        frame = await ser(USERS[0], ctx)
        de = await AsyncAvroDeserializer(client)
        assert await de(frame, ctx) == USERS[0]
        await client.aclose()

    run(scenario)


def test_async_cluster_id_resolver_and_async_bearer_provider(registry_server: Any) -> None:
    """``set_async_cluster_id_resolver`` (as confluent-kafka's) names the namespace of the
    associated strategy's lookups; a CUSTOM bearer provider may be a coroutine function."""
    name = topic()
    ctx = value_ctx(name)
    asked: list[str] = []

    async def cluster_id() -> str:
        await asyncio.sleep(0)
        asked.append("asked")
        return "lkc-async"

    async def provider(conf: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"bearer.auth.token": conf["token"], "bearer.auth.logical.cluster": "lsrc-1"}

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient(
            {
                "url": registry_server.url,
                "bearer.auth.credentials.source": "CUSTOM",
                "bearer.auth.custom.provider.function": provider,
                "bearer.auth.custom.provider.config": {"token": "tok-123"},
            }
        )
        headers: list[tuple[str, str]] = []

        async def hook(request: Any) -> None:
            headers.append((request.headers["authorization"], request.url.path))

        client._pool.client.event_hooks["request"].append(hook)
        ser = await AsyncAvroSerializer(client, json.dumps(USER))
        ser.set_async_cluster_id_resolver(cluster_id)
        assert asked == []  # lazily, on the first lookup
        frame = await ser(USERS[0], ctx)
        assert asked == ["asked"]
        assert ("Bearer tok-123", f"/associations/resources/lkc-async/{name}") in headers
        assert all(auth == "Bearer tok-123" for auth, _ in headers)
        de = await AsyncAvroDeserializer(client)
        assert await de(frame, ctx) == USERS[0]
        await client.aclose()

    run(scenario)


def test_async_client_retries_with_backoff_on_the_loop_then_fails_over() -> None:
    """The sync transport's retry and failover rules through the async transport: a refused
    first URL falls to the next, a 503 is retried after an (awaited) back-off, and a 503 that
    outlasts the retries is the registry's error."""
    statuses = [503, 200]
    ticks: list[float] = []
    body = json.dumps(["subject-a"]).encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        status = statuses.pop(0) if statuses else 200
        payload = body if status == 200 else b'{"error_code": 50003, "message": "busy"}'
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n".encode()
            + f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
            + payload
        )
        await writer.drain()
        writer.close()

    async def ticker() -> None:
        loop = asyncio.get_running_loop()
        for _ in range(40):
            ticks.append(loop.time())
            await asyncio.sleep(0.005)

    async def scenario() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conf = {"max.retries": 1, "retries.wait.ms": 400, "retries.max.wait.ms": 400}
        client = AsyncSchemaRegistryClient(
            {**conf, "url": f"http://127.0.0.1:9,http://127.0.0.1:{port}"}
        )
        background = asyncio.create_task(ticker())
        assert await client.get_subjects() == ["subject-a"]  # URL 1 refused, 503, then 200
        assert statuses == []
        assert len(ticks) >= 2  # the loop kept running meanwhile
        statuses.extend([503, 503])
        with pytest.raises(SchemaRegistryError) as busy:
            await client.get_subjects()
        assert (busy.value.http_status_code, busy.value.error_code) == (503, 50003)
        await background
        await client.aclose()
        server.close()
        await server.wait_closed()

    run(scenario)


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("value", fn())
    except Exception as exc:
        return (type(exc).__name__, str(exc))


async def async_outcome(fn: Callable[[], Awaitable[Any]]) -> tuple[str, Any]:
    try:
        return ("value", await fn())
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def test_async_serdes_take_the_sync_path_for_schemas_with_rules(
    registry_server: Any, ours: SchemaRegistryClient
) -> None:
    """A schema carrying a data-contract rule (a CEL condition) gives the async serdes exactly
    the sync serdes' outcome, passing or failing record alike: whatever the sync serdes do with
    rules, the async ones do (they run the same code)."""
    name = topic()
    ctx = value_ctx(name)
    rule = {
        "name": "adult",
        "kind": "CONDITION",
        "mode": "WRITE",
        "type": "CEL",
        "expr": "message.age >= 18",
    }
    ruled = Schema(json.dumps(USER), "AVRO", rule_set=RuleSet(domain_rules=[rule]))
    ours.register_schema(f"{name}-value", ruled)
    conf = {"auto.register.schemas": False, "use.latest.version": True}
    adult, minor = USERS[1], {**USERS[1], "age": 12}
    sync_ser = AvroSerializer(ours, json.dumps(USER), conf=conf)
    expected = [outcome(lambda r=r: sync_ser(r, ctx)) for r in (adult, minor)]

    async def scenario() -> None:
        client = AsyncSchemaRegistryClient({"url": registry_server.url})
        ser = await AsyncAvroSerializer(client, json.dumps(USER), conf=conf)
        got = [await async_outcome(lambda r=r: ser(r, ctx)) for r in (adult, minor)]
        assert got == expected
        await client.aclose()

    run(scenario)


def test_async_json_serializer_with_a_spec_mock_client() -> None:
    """Users' unit tests pass ``Mock(spec=AsyncSchemaRegistryClient)`` (as confluent-kafka's own
    tests do): the serializer must not reach for attributes outside the class, like our
    ``sync_client``, at construction; registry calls go to the mock's methods."""
    from unittest.mock import Mock

    from serdes import AsyncSchemaRegistryClient, RegisteredSchema, Schema
    from serdes.json_schema import AsyncJSONDeserializer, AsyncJSONSerializer

    schema_str = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}})
    client = Mock(spec=AsyncSchemaRegistryClient)
    client.register_schema_full_response.return_value = RegisteredSchema(
        schema_id=7, guid=None, schema=Schema(schema_str, "JSON"), subject="t-value", version=1
    )
    client.get_associations_by_resource_name.return_value = []
    ctx = SerializationContext("t", MessageField.VALUE)

    async def scenario() -> tuple[bytes, Any]:
        ser = await AsyncJSONSerializer(schema_str, client)
        de = await AsyncJSONDeserializer(schema_str)
        data = await ser({"a": 1}, ctx)
        return data, await de(data, ctx)

    data, back = asyncio.run(scenario())
    assert data[:5] == b"\x00\x00\x00\x00\x07"
    assert back == {"a": 1}
    client.register_schema_full_response.assert_called_once()


def test_async_serdes_call_a_subclass_or_patched_async_client(registry_server: Any) -> None:
    """As confluent-kafka's async serdes: the registry calls go through the async client's
    own methods, so an overriding subclass (a cache, a metric, an audit hook) or a method
    patched on the instance is called; untouched methods still answer from the shared caches."""
    calls: list[str] = []

    class Audited(AsyncSchemaRegistryClient):
        async def register_schema_full_response(self, *args: Any, **kwargs: Any) -> Any:
            calls.append("register")
            return await super().register_schema_full_response(*args, **kwargs)

    topic = f"audited-{uuid.uuid4().hex[:8]}"
    ctx = SerializationContext(topic, MessageField.VALUE)

    async def scenario() -> Any:
        async with Audited({"url": registry_server.url}) as client:
            ser = await AsyncAvroSerializer(client, json.dumps(USER))
            data = await ser(USERS[0], ctx)
            original = client.get_schema

            async def patched_get_schema(*args: Any, **kwargs: Any) -> Any:
                calls.append("get_schema")
                return await original(*args, **kwargs)

            client.get_schema = patched_get_schema  # type: ignore[method-assign]
            de = await AsyncAvroDeserializer(client)
            return await de(data, ctx)

    assert run(scenario) == USERS[0]
    assert calls == ["register", "get_schema"]
