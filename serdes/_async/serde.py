"""The async serializers' and deserializers' one shell around the sync ones.

``AsyncAvroSerializer(...)`` and its siblings take the sync class's arguments, build the sync
serde (inside ``run_sync``: it may fetch references), and run its ``__call__`` per message the
same way. The codec, the schema caches, the subject strategies and the rules are the sync
class's; what differs is that their registry calls are awaited on the event loop.

As in confluent-kafka, construction is awaited: ``ser = await AsyncAvroSerializer(client, s)``;
calling the serde returns a coroutine: ``data = await ser(value, ctx)``. A serde, like its
client, belongs to one event loop: the thread locks of the sync serde are replaced by
``LoopLock``s, so concurrent first calls wait for each other's registration on the loop.
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar

from confluent_kafka.serialization import SerializationContext

from serdes._async.bridge import LoopLock, await_only, run_sync
from serdes._async.client import WRAPPED, AsyncSchemaRegistryClient
from serdes.client import SchemaRegistryClient
from serdes.errors import SchemaRegistryError
from serdes.strategies import AssociatedNameStrategy

__all__ = ["AsyncDeserializer", "AsyncSerializer"]

_CLIENT_ARG = "schema_registry_client"
_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))


def _confluent_error_type() -> type[BaseException] | None:
    """confluent-kafka's ``SchemaRegistryError`` if its client is loaded (a client of it raised
    the error, so it is), else ``None``: serdes does not import confluent's ``schema_registry``
    package, which needs confluent-kafka's ``[schemaregistry]`` extra."""
    module = sys.modules.get("confluent_kafka.schema_registry.error")
    found = getattr(module, "SchemaRegistryError", None)
    return found if isinstance(found, type) else None


class _SyncView:
    """Any async registry client (confluent-kafka's too) as the sync client the serdes call.

    Each method call awaits the client's coroutine through ``await_only``; attributes the
    client lacks are missing here too, so the serdes' ``hasattr`` checks see the truth; its
    ``SchemaRegistryError`` becomes ours (same status and code), which the serdes handle.
    """

    def __init__(self, client: Any) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._client, name)
        if not callable(target):
            return target

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                out = target(*args, **kwargs)
                return await_only(out) if inspect.isawaitable(out) else out
            except Exception as exc:  # the serdes catch their own error type
                foreign = _confluent_error_type()
                if foreign is None or not isinstance(exc, foreign):
                    raise
                raise SchemaRegistryError(
                    exc.http_status_code, exc.error_code, exc.error_message
                ) from exc

        return call


# methods serdes' client has beyond confluent-kafka's, which the serdes use when present
_SERDES_EXTRAS = frozenset(("get_schema_full_response",))


class _OwnClientView(_SyncView):
    """An ``AsyncSchemaRegistryClient`` (or a subclass, or one with patched methods) as the
    sync client: each call goes to the async client's method as it is now, as confluent-kafka's
    async serdes call it; a method that is still serdes' own wrapper is called on the client's
    ``sync_client`` directly (the same code, its cached answers without a greenlet switch)."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self._own = client.sync_client
        self._customized = any(
            getattr(getattr(client, name, None), "__func__", None) is not wrapper
            for name, wrapper in WRAPPED.items()
        )

    def __getattr__(self, name: str) -> Any:
        wrapper = WRAPPED.get(name)
        if wrapper is not None:
            method = getattr(self._client, name)
            if getattr(method, "__func__", None) is wrapper:
                if self._customized and name in _SERDES_EXTRAS:
                    # the serdes then call confluent's method (``get_schema``), which the
                    # subclass or patch may be about
                    raise AttributeError(name)
                return getattr(self._own, name)
        return super().__getattr__(name)


def sync_client(client: Any) -> Any:
    """The sync face of ``client`` for the sync serdes to call inside ``run_sync``."""
    if client is None:
        return None
    own = getattr(client, "sync_client", None)
    if isinstance(client, AsyncSchemaRegistryClient) and isinstance(own, SchemaRegistryClient):
        return _OwnClientView(client)
    if inspect.iscoroutinefunction(getattr(client, "get_schema", None)):
        return _SyncView(client)
    return client  # a sync client works too (its calls block the loop)


def _sync_strategy(fn: Any) -> Any:
    """A subject name strategy that may be a coroutine function, callable from sync code."""
    if not callable(fn):
        return fn

    def strategy(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        return await_only(out) if inspect.isawaitable(out) else out

    return strategy


class _AsyncSerde:
    """Shared by both directions: awaited construction of the wrapped sync serde."""

    sync_class: ClassVar[type]

    def __new__(cls, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:  # type: ignore[misc]
        return cls._create(args, kwargs)

    @classmethod
    async def _create(cls, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self = object.__new__(cls)
        bound = inspect.signature(cls.sync_class).bind(*args, **kwargs)
        if _CLIENT_ARG in bound.arguments:
            bound.arguments[_CLIENT_ARG] = sync_client(bound.arguments[_CLIENT_ARG])
        conf = bound.arguments.get("conf")
        if conf and conf.get("subject.name.strategy") is not None:
            bound.arguments["conf"] = {
                **conf,
                "subject.name.strategy": _sync_strategy(conf["subject.name.strategy"]),
            }
        serde = await run_sync(cls.sync_class, *bound.args, **bound.kwargs)
        # A thread lock held across a registry call would block the event loop when another
        # call on this thread wants it: the serde's locks wait on the loop instead.
        for name, value in vars(serde).items():
            if isinstance(value, _LOCK_TYPES):
                setattr(serde, name, LoopLock())
        self._sync = serde
        return self

    def set_async_cluster_id_resolver(self, resolver: Callable[[], Any]) -> None:
        """As confluent-kafka's: where the associated subject name strategy gets the Kafka
        cluster id (the namespace of its lookups), asked lazily; other strategies drop it."""
        conf = getattr(self._sync, "_conf", None)
        strategy = getattr(getattr(conf, "subject_name", None), "strategy", None)
        if isinstance(strategy, AssociatedNameStrategy):

            def cluster_id() -> str:
                out = resolver()
                return await_only(out) if inspect.isawaitable(out) else out

            strategy.set_cluster_id_resolver(cluster_id)

    @property
    def sync(self) -> Any:
        """The wrapped sync serde (its registry calls need an awaited call around them)."""
        return self._sync


class AsyncSerializer(_AsyncSerde):
    """``await ser(obj, ctx)``: the sync serializer's bytes, registry calls awaited."""

    def __call__(
        self, obj: object, ctx: SerializationContext | None = None
    ) -> Coroutine[Any, Any, bytes | None]:
        return run_sync(self._sync, obj, ctx)


class AsyncDeserializer(_AsyncSerde):
    """``await de(data, ctx)``: the sync deserializer's value, registry calls awaited."""

    def __call__(
        self, data: bytes | None, ctx: SerializationContext | None = None
    ) -> Coroutine[Any, Any, Any]:
        return run_sync(self._sync, data, ctx)
