"""``AsyncSchemaRegistryClient``: ``SchemaRegistryClient``'s methods as coroutines.

Each method runs the sync client's method (its caches, request building, retries, failover,
error mapping: one implementation) with HTTP awaited on the event loop through httpx.AsyncClient.
A cached answer costs a greenlet switch, no I/O. Close it with ``await client.aclose()`` or
``async with``. Like any httpx.AsyncClient it belongs to the event loop it first ran on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any

from serdes._async.bridge import run_sync
from serdes._async.transport import make_async
from serdes.client import SchemaRegistryClient

__all__ = ["WRAPPED", "AsyncSchemaRegistryClient"]

# Not wrapped: lifecycle and configuration, which the async class defines itself.
_OWN = frozenset(("close", "config", "new_client"))


def _coroutine(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    sync_method = getattr(SchemaRegistryClient, name)

    @functools.wraps(sync_method)
    async def method(self: AsyncSchemaRegistryClient, *args: Any, **kwargs: Any) -> Any:
        return await run_sync(getattr(self.sync_client, name), *args, **kwargs)

    return method


class AsyncSchemaRegistryClient:
    """A Schema Registry client for asyncio (``confluent_kafka.schema_registry``'s of that name).

    Same ``conf`` keys and methods as ``serdes.SchemaRegistryClient``, each ``await``-ed;
    ``bearer.auth.custom.provider.function`` may be a coroutine function.
    """

    def __init__(self, conf: dict[str, Any]) -> None:
        self.sync_client = SchemaRegistryClient(conf)
        """The sync face sharing this client's caches; its I/O needs an awaited serdes call."""
        self._pool = make_async(self.sync_client._rest)

    async def __aenter__(self) -> AsyncSchemaRegistryClient:
        return self

    async def __aexit__(self, *args: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._pool.aclose()

    def config(self) -> dict[str, Any]:
        return self.sync_client.config()

    @staticmethod
    def new_client(conf: dict[str, Any]) -> AsyncSchemaRegistryClient:
        return AsyncSchemaRegistryClient(conf)


# Every other public method of the sync client, as a coroutine (new ones join by themselves).
WRAPPED: dict[str, Callable[..., Coroutine[Any, Any, Any]]] = {}
"""These coroutine functions by name: a client whose method is still one of them may be called
through its ``sync_client`` directly (serdes._async.serde); an overridden or patched one not."""

for _name in dir(SchemaRegistryClient):
    if not _name.startswith("_") and _name not in _OWN:
        WRAPPED[_name] = _coroutine(_name)
        setattr(AsyncSchemaRegistryClient, _name, WRAPPED[_name])
del _name
