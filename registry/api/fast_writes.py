"""The registration route without FastAPI's routing: ``POST /subjects/{subject}/versions``,
the write every producer's serializer makes, goes straight to its handler.

:class:`FastWrites` sits in the ASGI stack just inside the schema limits middleware, so
everything outside it runs for a registration as for any other request (metrics and the request
id, authentication, readiness and forwarding, negotiation, the body limit, the schema size and
nesting limits and the work allowance). What it skips is what FastAPI does between the
application's middleware and the handler: matching the path against every route, solving the
handler's parameters, its exception middleware and the async exit stack. The handler is the
route's own function (``registry.api.subjects.register``), given the request, the path's
subject and the query's ``normalize`` and ``format`` (a repeated one already cut to its first
value, as Jersey reads it, by ``registry.api.paths.first_values``); its errors are rendered by
the application's own handlers, so the answer is the route's, byte for byte
(tests/test_fast_writes.py compares them). Any other request, or a path the route would not
match, is passed on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.routing import Route

from registry import errors
from registry.api import subjects

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

ROUTE_PATH = "/subjects/{subject}/versions"
_PREFIX = "/subjects/"
_SUFFIX = "/versions"


def registration_subject(method: str, path: str) -> str | None:
    """The subject of a registration request's (rewritten) path, None for any other request:
    what the route's ``{subject}`` (one non-empty path segment) would match."""
    if method != "POST" or not path.startswith(_PREFIX) or not path.endswith(_SUFFIX):
        return None
    subject = path[len(_PREFIX) : -len(_SUFFIX)]
    if not subject or "/" in subject:
        return None
    return subject


class Handled:
    """How many registrations the middleware answered (``app.state.fast_writes``)."""

    def __init__(self) -> None:
        self.count = 0


class FastWrites:
    """The ASGI middleware (see the module docstring)."""

    def __init__(self, app: Any, handled: Handled) -> None:
        self.app = app
        self.handled = handled
        self._route = _find_route()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        subject = None
        if scope["type"] == "http" and scope.get("root_path", "") == "":
            subject = registration_subject(scope["method"], scope["path"])
        application = scope.get("app")
        route = self._route
        if subject is None or route is None or application is None:
            await self.app(scope, receive, send)
            return
        scope["route"] = route
        scope["endpoint"] = route.endpoint
        scope["path_params"] = {"subject": subject}
        self.handled.count += 1
        request = Request(scope, receive)
        normalize = format_ = None
        if scope.get("query_string"):  # most registrations have none: no parse for them
            query = request.query_params
            normalize, format_ = query.get("normalize"), query.get("format")
        try:
            response = await subjects.register(
                request, subject, normalize=normalize, format=format_
            )
        except (errors.RegistryError, StarletteHTTPException) as exc:
            handler = _handler_of(application, exc)
            if handler is None:
                raise
            response = await handler(request, exc)
        await response(scope, receive, send)


def _find_route() -> Route | None:
    """The route FastAPI selects for a registration (what the metrics label it by)."""
    for route in subjects.router.routes:
        if getattr(route, "path", None) == ROUTE_PATH and "POST" in (route.methods or ()):
            return route  # type: ignore[no-any-return]
    return None


def _handler_of(application: Any, exc: Exception) -> Any:
    """The application's handler of ``exc`` (by its class's method resolution order, as
    Starlette's exception middleware looks it up)."""
    handlers = application.exception_handlers
    for cls in type(exc).__mro__:
        if cls is Exception:
            return None  # the server error middleware's, outside this one
        if cls in handlers:
            return handlers[cls]
    return None


def install(app: Any) -> None:
    """Add the middleware (call before adding the limits middleware, so this one runs inside
    it); its count of answered registrations is ``app.state.fast_writes``."""
    handled = Handled()
    app.state.fast_writes = handled
    app.add_middleware(FastWrites, handled=handled)
