"""The async face's HTTP: httpx.AsyncClient behind the urllib3-shaped calls of the sync transport.

``serdes.transport.Transport`` keeps its URL failover, retries, back-off, auth headers and error
mapping; only its connection pool is swapped for ``AsyncPool`` (each request awaited on the
event loop through ``await_only``) and its back-off sleep for an ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import inspect
import ssl
from typing import Any

import httpx
import urllib3

from serdes._async.bridge import LoopLock, await_only
from serdes.transport import Transport

__all__ = ["AsyncPool", "make_async"]


class _Response:
    """The two fields of a urllib3 response the sync transport reads."""

    __slots__ = ("data", "status")

    def __init__(self, status: int, data: bytes) -> None:
        self.status = status
        self.data = data


def _ssl_context(tls: dict[str, Any]) -> ssl.SSLContext | bool:
    """The sync transport's urllib3 TLS options as an ``SSLContext`` (True: httpx's default)."""
    if not tls:
        return True
    ctx = ssl.create_default_context(cafile=tls.get("ca_certs"), capath=tls.get("ca_cert_dir"))
    if tls.get("cert_reqs") == ssl.CERT_NONE:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if tls.get("cert_file") is not None:
        ctx.load_cert_chain(tls["cert_file"], tls.get("key_file"), tls.get("key_password"))
    return ctx


class AsyncPool:
    """``request(method, url, body=, headers=)`` as urllib3's pool, awaited on the event loop."""

    def __init__(self, transport: Transport) -> None:
        timeout = transport.timeout.total if transport.timeout is not None else None
        self.client = httpx.AsyncClient(
            verify=_ssl_context(transport.tls),
            proxy=transport.proxy,
            timeout=timeout,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=8),
        )

    def request(
        self,
        method: str,
        url: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        **_urllib3_options: Any,
    ) -> _Response:
        try:
            resp = await_only(self.client.request(method, url, content=body, headers=headers))
        except httpx.TransportError as exc:
            # The sync transport retries urllib3's transport errors: same treatment here.
            raise urllib3.exceptions.ProtocolError(f"{type(exc).__name__}: {exc}") from exc
        return _Response(resp.status_code, resp.content)

    def clear(self) -> None:
        """Connections are closed by ``aclose`` (it must be awaited)."""

    async def aclose(self) -> None:
        await self.client.aclose()


def _async_sleep(seconds: float) -> None:
    await_only(asyncio.sleep(seconds))


def make_async(transport: Transport) -> AsyncPool:
    """Switch ``transport``'s I/O to the event loop; returns the pool to ``aclose``."""
    transport.pool.clear()
    pool = AsyncPool(transport)
    transport.pool = pool  # type: ignore[assignment]
    transport.sleep = _async_sleep
    bearer = transport.bearer
    if bearer is not None:
        # Its lock is held across the token request: a thread lock would block the event loop
        # when another call on this thread wants it.
        bearer._lock = LoopLock()  # type: ignore[assignment]
        fn = getattr(bearer, "_fn", None)  # only a custom provider has one
        if fn is not None:
            # confluent-kafka's async client takes an async custom provider function.
            def fields(conf: dict[str, Any], _fn: Any = fn) -> dict[str, Any]:
                out = _fn(conf)
                return await_only(out) if inspect.isawaitable(out) else out

            bearer._fn = fields
    return pool
