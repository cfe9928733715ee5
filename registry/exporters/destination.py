"""The destination registry's REST API, as an exporter uses it (``http_client``: keep-alive
connections, several requests in flight).

Config keys (Confluent's client names): ``schema.registry.url`` (several: comma separated,
the next one tried when one cannot be reached), ``basic.auth.credentials.source``
(``USER_INFO``) with ``basic.auth.user.info`` (``user:password``), ``bearer.auth.token``
(``bearer.auth.credentials.source`` ``STATIC_TOKEN``), and TLS: ``schema.registry.ssl.ca.location``,
``schema.registry.ssl.certificate.location``, ``schema.registry.ssl.key.location``,
``schema.registry.ssl.endpoint.identification.algorithm`` (empty or ``none``: no host name
check). Credentials never appear in an error message.
"""

from __future__ import annotations

import base64
import ssl
from typing import Any

import orjson

from registry.exporters.actions import Request
from registry.exporters.http_client import AsyncHttp, HttpError, Origin

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
TIMEOUT = 10.0
#: connections to the destination (and so requests in flight) at most, per URL
CONNECTIONS = 32


class DestinationError(Exception):
    """The destination could not be reached, or refused a request (the message is the trace)."""


def _get(config: dict[str, str], name: str) -> str:
    return config.get(name) or config.get("schema.registry." + name) or ""


def _tls(config: dict[str, str]) -> ssl.SSLContext:
    ca = _get(config, "ssl.ca.location")
    cert = _get(config, "ssl.certificate.location")
    key = _get(config, "ssl.key.location")
    check = _get(config, "ssl.endpoint.identification.algorithm").lower()
    context = ssl.create_default_context(cafile=ca or None)
    if cert:
        context.load_cert_chain(cert, key or None)
    if check == "none":
        context.check_hostname = False
    return context


class Destination:
    """One exporter's client of its destination. Its methods are coroutines of the worker's
    event loop; ``send`` may be awaited by many tasks at once (up to ``CONNECTIONS`` in
    flight)."""

    def __init__(self, config: dict[str, str], connections: int = CONNECTIONS) -> None:
        urls = [u.strip().rstrip("/") for u in config["schema.registry.url"].split(",")]
        self.urls = [u for u in urls if u]
        origins = [Origin.parse(u) for u in self.urls]
        headers = {"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE}
        user_info = _get(config, "basic.auth.user.info")
        source = _get(config, "basic.auth.credentials.source").upper()
        if user_info and source in ("", "USER_INFO"):
            encoded = base64.b64encode(user_info.encode()).decode("ascii")
            headers["Authorization"] = f"Basic {encoded}"
        token = _get(config, "bearer.auth.token")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        tls = _tls(config) if any(o.scheme == "https" for o in origins) else None
        self._clients = [AsyncHttp(o, headers, tls, TIMEOUT, connections) for o in origins]
        self._current = 0

    def close(self) -> None:
        for client in self._clients:
            client.close()

    async def send(self, request: Request) -> Any:
        """Send ``request`` (and its ``before`` when the answer asks for it); the answer's JSON,
        or None for an accepted error. Raises :class:`DestinationError`."""
        status, body = await self._call(request.method, request.path, request.body)
        code = body.get("error_code") if isinstance(body, dict) else None
        if status >= 400 and request.before is not None and code in request.retry_after:
            await self.send(request.before)
            status, body = await self._call(request.method, request.path, request.body)
            code = body.get("error_code") if isinstance(body, dict) else None
        if status < 400:
            return body
        if code in request.accept:
            return None
        message = body.get("message") if isinstance(body, dict) else str(body)[:300]
        raise DestinationError(
            f"{request.method} {request.path} answered {status}"
            f"{f' (error_code {code})' if code else ''}: {message}"
        )

    async def _call(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        content = orjson.dumps(body) if body is not None else None
        last = ""
        for attempt in range(len(self._clients)):
            index = (self._current + attempt) % len(self._clients)
            client = self._clients[index]
            try:
                status, data = await client.request(method, path, content)
            except HttpError as exc:
                last = f"{method} {self.urls[index]}{path} failed: {exc}"
                continue
            self._current = index
            try:
                parsed = orjson.loads(data) if data else None
            except orjson.JSONDecodeError:
                parsed = data[:300].decode("utf-8", "replace")
            return status, parsed
        raise DestinationError(last or "no destination URL")
