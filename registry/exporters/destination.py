"""The destination registry's REST API, as an exporter uses it (httpx, keep-alive).

Config keys (Confluent's client names): ``schema.registry.url`` (several: comma separated,
the next one tried when one cannot be reached), ``basic.auth.credentials.source``
(``USER_INFO``) with ``basic.auth.user.info`` (``user:password``), ``bearer.auth.token``
(``bearer.auth.credentials.source`` ``STATIC_TOKEN``), and TLS: ``schema.registry.ssl.ca.location``,
``schema.registry.ssl.certificate.location``, ``schema.registry.ssl.key.location``,
``schema.registry.ssl.endpoint.identification.algorithm`` (empty or ``none``: no host name
check). Credentials never appear in an error message.
"""

from __future__ import annotations

import ssl
from typing import Any

import httpx
import orjson

from registry.exporters.actions import Request

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
TIMEOUT = 10.0


class DestinationError(Exception):
    """The destination could not be reached, or refused a request (the message is the trace)."""


def _get(config: dict[str, str], name: str) -> str:
    return config.get(name) or config.get("schema.registry." + name) or ""


def _tls(config: dict[str, str]) -> ssl.SSLContext | bool:
    ca = _get(config, "ssl.ca.location")
    cert = _get(config, "ssl.certificate.location")
    key = _get(config, "ssl.key.location")
    check = _get(config, "ssl.endpoint.identification.algorithm").lower()
    if not (ca or cert or check in ("none",)):
        return True
    context = ssl.create_default_context(cafile=ca or None)
    if cert:
        context.load_cert_chain(cert, key or None)
    if check == "none":
        context.check_hostname = False
    return context


class Destination:
    """One exporter's client of its destination."""

    def __init__(self, config: dict[str, str]) -> None:
        self.urls = [u.strip().rstrip("/") for u in config["schema.registry.url"].split(",")]
        self.urls = [u for u in self.urls if u]
        headers = {"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE}
        auth: httpx.Auth | None = None
        user_info = _get(config, "basic.auth.user.info")
        source = _get(config, "basic.auth.credentials.source").upper()
        if user_info and source in ("", "USER_INFO"):
            user, _, password = user_info.partition(":")
            auth = httpx.BasicAuth(user, password)
        token = _get(config, "bearer.auth.token")
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(
            headers=headers, auth=auth, verify=_tls(config), timeout=TIMEOUT
        )
        self._current = 0

    def close(self) -> None:
        self._client.close()

    def send(self, request: Request) -> Any:
        """Send ``request`` (and its ``before`` when the answer asks for it); the answer's JSON,
        or None for an accepted error. Raises :class:`DestinationError`."""
        status, body = self._call(request.method, request.path, request.body)
        code = body.get("error_code") if isinstance(body, dict) else None
        if status >= 400 and request.before is not None and code in request.retry_after:
            self.send(request.before)
            status, body = self._call(request.method, request.path, request.body)
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

    def _call(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        content = orjson.dumps(body) if body is not None else None
        last = ""
        for attempt in range(len(self.urls)):
            url = self.urls[(self._current + attempt) % len(self.urls)]
            try:
                answer = self._client.request(method, url + path, content=content)
            except httpx.HTTPError as exc:
                last = f"{method} {url}{path} failed: {type(exc).__name__}: {exc}"
                continue
            self._current = (self._current + attempt) % len(self.urls)
            try:
                parsed = answer.json() if answer.content else None
            except ValueError:
                parsed = answer.text[:300]
            return answer.status_code, parsed
        raise DestinationError(last or "no destination URL")
