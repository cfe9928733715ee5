"""The FastAPI application: routers, Confluent-shaped errors for everything, media types, the
``/contexts/{ctx}/...`` URL form and encoded slashes in subject names."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from registry import __version__, errors
from registry.api import (
    associations,
    audit_history,
    compatibility,
    config,
    contexts,
    dek_registry,
    docs,
    exporters,
    metadata_deployment,
    mode,
    schemas,
    server,
    subjects,
    tags,
    ui,
)
from registry.api.alias_paths import rewrite_aliases
from registry.api.metrics import new_request_id
from registry.api.paths import rewrite_paths
from registry.api.responses import PREFERRED, SRResponse, negotiate
from registry.core import Registry
from registry.exporters.engine import Engine

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
ASGIApp = Callable[
    [Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]
]

HTTP_REASONS = {
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    415: "Unsupported Media Type",
    413: "Request Entity Too Large",
}


def create_app(registry: Registry, *, manage_lifecycle: bool = True) -> FastAPI:
    """The ASGI app serving ``registry``; with ``manage_lifecycle`` it starts and stops it."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if manage_lifecycle:
            registry.start()
            engine.start()
        try:
            # the first run_in_threadpool imports anyio's asyncio backend (0.04-0.3 s): do it
            # before the server accepts connections, not on the event loop under the first requests
            await run_in_threadpool(lambda: None)
            auditor = getattr(app.state, "auditor", None)
            if auditor is not None:
                await run_in_threadpool(auditor.start)
            yield
        finally:
            auditor = getattr(app.state, "auditor", None)
            if auditor is not None:
                await run_in_threadpool(auditor.close)
            if manage_lifecycle:
                engine.stop()
                registry.stop()

    app = FastAPI(
        telemetry=_fastapi_telemetry(),
        title="Schema Registry",
        version=__version__,
        description="A Confluent-compatible Schema Registry (Confluent Platform 8.x REST API).",
        lifespan=lifespan,
        default_response_class=SRResponse,
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.registry = registry
    #: runs the exporters where the leader runs (started with the registry's lifecycle)
    engine = Engine(registry)
    app.state.exporter_engine = engine
    # the deserializers' hot route (/schemas/ids) is matched first
    for module in (schemas, subjects, compatibility, config, mode, contexts, server):
        app.include_router(module.router)
    app.include_router(dek_registry.router)
    app.include_router(exporters.router)
    for module in (associations, tags, metadata_deployment):  # Confluent 8.x additions
        app.include_router(module.router)
    app.include_router(audit_history.router)  # a subject's changes from the audit file
    if registry.settings.ui:
        app.include_router(ui.router)

    @app.exception_handler(errors.RegistryError)
    async def registry_error(request: Request, exc: errors.RegistryError) -> Response:
        return _error(request, exc.http_status, exc.body())

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        reason = HTTP_REASONS.get(exc.status_code, str(exc.detail))
        return _error(
            request,
            exc.status_code,
            {"error_code": exc.status_code, "message": f"HTTP {exc.status_code} {reason}"},
        )

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return _error(request, 400, {"error_code": 400, "message": str(exc.errors()[:1])})

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _error(request, 500, {"error_code": 500, "message": f"Internal Server Error: {exc}"})

    # registrations straight to their handler, inside the schema limits
    from registry.api import fast_writes, limits

    fast_writes.install(app)
    # schema size and nesting limits, inside the protocol middleware (rewritten paths)

    limits.install(
        app,
        registry.settings.max_schema_bytes,
        registry.settings.max_schema_depth,
        registry.settings.max_schema_work_seconds,
    )
    try:  # Protobuf texts from this size are compiled in a child process (killable)
        from registry.formats.protobuf.compiler import configure as configure_protoc

        configure_protoc(registry.settings.protoc_subprocess_bytes)
    except ImportError:  # the Protobuf plug-in is not installed
        pass
    # the hot reads answered from cached bytes, inside the protocol middleware (everything
    # outside it still applies: metrics, request ids, authentication, readiness, negotiation)
    from registry.api import fast_reads

    fast_reads.install(app, registry)
    app.add_middleware(ProtocolMiddleware, max_body=registry.settings.max_request_bytes)
    # GET /ready; with a Kafka store, forwarding writes to the leader (outermost middleware)
    from registry.api.forwarding import install as install_forwarding

    install_forwarding(app, registry)
    # authentication and subject rules run before forwarding (a follower checks the caller;
    # the leader checks the forwarded Authorization again); outermost: /live, /metrics,
    # request ids and request metrics
    from registry.api import metrics
    from registry.auth import middleware as auth

    authenticator = auth.install(app, registry)
    # the audit trail: outside authentication (it sees refusals), inside the request ids
    from registry import audit

    auditor = audit.install(app, registry)
    observability = metrics.install(app, registry, authenticator.counts if authenticator else None)
    if auditor is not None:
        observability.prometheus.register(audit.AuditCollector(auditor))

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = docs.install(
                get_openapi(
                    title=app.title,
                    version=app.version,
                    description=app.description,
                    routes=app.routes,
                )
            )
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


#: FastAPI's OpenTelemetry instrumentation switched off
TELEMETRY_OFF = {"tracing": False, "metrics": False, "logs": False}


def _fastapi_telemetry() -> Any:
    """FastAPI's own OpenTelemetry instrumentation, kept when a provider is configured by the
    time the app is made (``opentelemetry-instrument`` configures them at start-up), off
    otherwise: its check whether one has been configured since cost 3 us on every request."""
    try:
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider
    except ImportError:
        return TELEMETRY_OFF
    providers = (trace.get_tracer_provider(), metrics.get_meter_provider(), get_logger_provider())
    if any(not type(p).__name__.lstrip("_").startswith(("Proxy", "NoOp")) for p in providers):
        return None  # FastAPI's defaults
    return TELEMETRY_OFF


def _error(request: Request, status: int, body: dict[str, Any]) -> Response:
    media = getattr(request.state, "media_type", PREFERRED)
    return SRResponse(body, status_code=status, media_type=media)


#: the security headers every answer carries (after ``X-Request-ID``)
_SECURITY_HEADERS = (
    (b"x-xss-protection", b"1; mode=block"),
    (b"cache-control", b"no-cache, no-store, must-revalidate"),
)
#: distinct ``Accept`` values whose negotiation is remembered (clients send a handful)
_MEDIA_CACHE_SIZE = 256


class ProtocolMiddleware:
    """Pure ASGI middleware doing what Confluent's filters do before routing: content
    negotiation (406), body size limit (413), ``X-Request-ID``, security headers, rewriting
    ``/contexts/{ctx}/...`` paths, and keeping ``%2F`` inside subject names."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body
        self._media: dict[bytes | None, str | None] = {}
        #: the app whose registry :attr:`_registry` is (``scope["app"]``, set by Starlette)
        self._app: Any = None
        self._registry: Any = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # the last value of each header counts; names compared lower-cased
        request_id = accept = length = None
        chunked = False
        for name, value in scope["headers"]:
            if not name.islower():
                name = name.lower()
            if name == b"accept":
                accept = value
            elif name == b"x-request-id":
                request_id = value
            elif name == b"content-length":
                length = value
            elif name == b"transfer-encoding":
                chunked = True
        request_id = request_id or new_request_id().encode()

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", ()),
                    (b"x-request-id", request_id),
                    *_SECURITY_HEADERS,
                ]
            await send(message)

        media = self._negotiate(accept)
        if media is None:
            await _send_error(send_with_headers, 406, "HTTP 406 Not Acceptable", PREFERRED)
            return
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await _send_error(send_with_headers, 413, "HTTP 413 Request Entity Too Large", media)
            return
        scope.setdefault("state", {})["media_type"] = media
        try:
            rewrite_paths(scope)
        except errors.RegistryError as exc:
            await _send_error(send_with_headers, exc.http_status, exc.message, media)
            return
        app = scope.get("app")
        if app is not None:
            if app is not self._app:
                self._registry = app.state.registry
                self._app = app
            rewrite_aliases(scope, self._registry.state)
        if chunked or (length is not None and not length.isdigit()):
            receive = self._limited(receive)
        # else the body is framed by a Content-Length within the limit (or there is none)
        await self.app(scope, receive, send_with_headers)

    def _negotiate(self, accept: bytes | None) -> str | None:
        """:func:`negotiate` of a raw ``Accept`` value, remembered."""
        try:
            return self._media[accept]
        except KeyError:
            pass
        media = negotiate(None if accept is None else accept.decode("latin-1"))
        if len(self._media) < _MEDIA_CACHE_SIZE:
            self._media[accept] = media
        return media

    def _limited(self, receive: Any) -> Any:
        seen = 0
        limit = self.max_body

        async def wrapped() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise errors.RegistryError(413, "HTTP 413 Request Entity Too Large")
            return message

        return wrapped


async def _send_error(send: Any, status: int, message: str, media: str) -> None:
    body = SRResponse({"error_code": status, "message": message}).body
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", media.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
