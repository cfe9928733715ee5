"""The HTTP side of the audit trail: one ASGI middleware, outside authentication, that gives
every request changing state, and every request refused by authentication or authorisation,
exactly one event.

Which requests change state is not a list of routes: a PUT, POST, DELETE or PATCH matching a
route is a change unless its route says it only reads (``openapi_extra={"x-read-only": True}``:
look-ups, compatibility checks, batch reads), so a new route is audited without anyone
remembering to; and whatever request makes the write path draft records is audited whatever
its route (the write path's note, :mod:`registry.audit.changes`). Refusals are the 401, 403 and
429 answers of the authentication middleware (it marks them, ``AUDIT_REFUSED``) and any other
401 or 403.

A change's event is written before its answer is sent; a failure's answer is held until its
event is written (its ``error_code`` and message go in the event).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from starlette.routing import Match

from registry import errors
from registry.api.deps import AUDIT_RELAYED, ENCODED_SLASH
from registry.api.paths import rewrite_paths
from registry.audit.changes import CURRENT, ChangeNote
from registry.audit.events import Happened, build_event
from registry.audit.hub import Auditor

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Send = Callable[[Any], Awaitable[None]]

MUTATING = frozenset({"POST", "PUT", "DELETE", "PATCH"})
#: the scope state key the authentication middleware sets on a request it refuses
AUDIT_REFUSED = "audit_refused"
#: the OpenAPI extension marking a PUT/POST/DELETE route that changes nothing
READ_ONLY = "x-read-only"
#: largest error answer read for its code and message
MAX_ERROR_BODY = 64 * 1024


def is_read_only(route: Any) -> bool:
    extra = getattr(route, "openapi_extra", None) or {}
    return bool(extra.get(READ_ONLY))


def changes_state(method: str, route: Any) -> bool:
    """Whether a request of ``method`` to ``route`` is audited as a change."""
    return method in MUTATING and route is not None and not is_read_only(route)


def operation_of(route: Any) -> str | None:
    endpoint = getattr(route, "endpoint", None)
    if endpoint is None:
        return None
    module = getattr(endpoint, "__module__", "").rsplit(".", 1)[-1]
    return f"{module}.{endpoint.__name__}"


class AuditMiddleware:
    def __init__(self, app: Any, auditor: Auditor) -> None:
        self.app = app
        self.auditor = auditor
        self._routes: list[Any] | None = None

    def routes(self, application: Any) -> list[Any]:
        """The application's routes, those of included routers in their place (FastAPI keeps
        an included router as one entry that matches without naming the route)."""
        if self._routes is None:
            self._routes = list(_flat(application.router.routes))
        return self._routes

    async def __call__(self, scope: Scope, receive: Any, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        auditor = self.auditor
        if method not in MUTATING and not auditor.reads:
            await self._watch_refusals(scope, receive, send)
            return
        original = (scope["path"], scope.get("raw_path"), scope.get("query_string", b""))
        note = ChangeNote()
        token = CURRENT.set(note)
        request = _Request(self, scope, method, original, note)
        try:
            if auditor.fail_closed and not auditor.healthy() and request.is_change():
                auditor.refused += 1
                await request.refuse_unaudited(send)
                return
            await self.app(scope, receive, request.wrap(send))
        except Exception as exc:
            if not request.started and request.wanted(500):
                await request.emit(500, 500, f"Internal Server Error: {exc}")
            raise
        finally:
            CURRENT.reset(token)

    async def _watch_refusals(self, scope: Scope, receive: Any, send: Send) -> None:
        """A read (reads not audited): only its refusal (401/403) is."""
        original = (scope["path"], scope.get("raw_path"), scope.get("query_string", b""))
        wrapped: list[Send] = []

        async def watching(message: Any) -> None:
            if not wrapped and message["type"] == "http.response.start":
                state = scope.get("state") or {}
                if message["status"] in (401, 403) or state.get(AUDIT_REFUSED):
                    request = _Request(self, scope, scope["method"], original, None)
                    wrapped.append(request.wrap(send))
            if wrapped:
                await wrapped[0](message)
            else:
                await send(message)

        await self.app(scope, receive, watching)


class _Request:
    """One audited request: its send wrapper and its event."""

    def __init__(
        self,
        middleware: AuditMiddleware,
        scope: Scope,
        method: str,
        original: tuple[str, Any, bytes],
        note: ChangeNote | None,
    ) -> None:
        self.m = middleware
        self.scope = scope
        self.method = method
        self.note = note
        #: the path, raw path and query as the client sent them
        self.original = original
        self.started = False
        self._route: Any = None
        self._params: dict[str, Any] | None = None

    # ---- which route -----------------------------------------------------------------------

    def _match(self) -> None:
        if self._params is not None:
            return
        route = self.scope.get("route")
        if route is not None and "path_params" in self.scope:
            self._route, self._params = route, _decoded(self.scope["path_params"])
            return
        self._route, self._params = None, {}
        app = self.scope.get("app")
        if app is None:
            return
        path, raw_path, query = self.original
        view: dict[str, Any] = {
            "type": "http",
            "method": self.method,
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "root_path": "",
            "headers": [],
        }
        try:
            rewrite_paths(view)
        except errors.RegistryError:
            return
        for candidate in self.m.routes(app):
            match, child = candidate.matches(view)
            if match == Match.FULL:
                self._route = candidate
                self._params = _decoded(child.get("path_params", {}))
                return

    def is_change(self) -> bool:
        self._match()
        return changes_state(self.method, self._route)

    def wanted(self, status: int) -> bool:
        state = self.scope.get("state") or {}
        if state.get(AUDIT_RELAYED):
            return False
        if status in (401, 403) or state.get(AUDIT_REFUSED):
            return True
        if self.note is not None and self.note.changed:
            return True
        if self.m.auditor.reads:
            return True
        return self.is_change()

    # ---- the answer ------------------------------------------------------------------------

    def wrap(self, send: Send) -> Send:
        held: dict[str, Any] = {}
        chunks: list[bytes] = []
        size = 0
        mode = ""  # "", "pass", "hold", "swallow"

        async def audited(message: Any) -> None:
            nonlocal mode, size
            kind = message["type"]
            if kind == "http.response.start":
                self.started = True
                status = message["status"]
                if not self.wanted(status):
                    mode = "pass"
                    await send(message)
                    return
                if status >= 400:
                    mode = "hold"
                    held.update(message)
                    return
                ok = await self.emit(status, None, None)
                if not ok and self.m.auditor.fail_closed:
                    mode = "swallow"
                    await _send_error(
                        send,
                        500,
                        50001,
                        "The change was applied but its audit event could not be written "
                        "(SCHEMA_REGISTRY_AUDIT_FAIL_CLOSED)",
                    )
                    return
                mode = "pass"
                await send(message)
                return
            if mode == "swallow":
                return
            if mode != "hold" or kind != "http.response.body":
                await send(message)
                return
            body = message.get("body", b"")
            chunks.append(body)
            size += len(body)
            if message.get("more_body", False):
                return
            whole = b"".join(chunks)
            code, text = _error_of(whole) if size <= MAX_ERROR_BODY else (None, None)
            await self.emit(held["status"], code, text)
            mode = "pass"
            await send(held)
            await send({"type": "http.response.body", "body": whole})

        return audited

    async def emit(self, status: int, code: int | None, message: str | None) -> bool:
        self._match()
        scope = self.scope
        state = scope.get("state") or {}
        principal = state.get("principal")
        authorization = request_id = user_agent = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value
            elif name == b"x-request-id":
                request_id = value.decode("latin-1")
            elif name == b"user-agent":
                user_agent = value.decode("latin-1")[:200]
        client = scope.get("client")
        path, raw_path, _ = self.original
        happened = Happened(
            method=self.method,
            # as sent: an encoded slash in a subject stays encoded
            path=raw_path.decode("latin-1") if raw_path else path,
            request_id=request_id,
            client_address=client[0] if client else None,
            user_agent=user_agent,
            principal=principal,
            auth_method=_auth_method(authorization, principal),
            operation=operation_of(self._route),
            params=self._params or {},
            status=status,
            error_code=code,
            message=message,
            refused=bool(state.get(AUDIT_REFUSED)) or status in (401, 403),
            change=self.note,
        )
        try:
            event = build_event(happened, self.m.auditor.source)
        except Exception:
            log.exception("building an audit event failed")
            return False
        return await self.m.auditor.emit(event)

    async def refuse_unaudited(self, send: Send) -> None:
        message = (
            "An audit sink is unavailable: changes are refused (SCHEMA_REGISTRY_AUDIT_FAIL_CLOSED)"
        )
        await self.emit(503, 50301, message)
        await _send_error(send, 503, 50301, message)


def _flat(routes: Any) -> Any:
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from _flat(included.routes)
        else:
            yield route


def _decoded(params: dict[str, Any]) -> dict[str, Any]:
    """Path parameters with the protocol layer's stand-in for ``%2F`` turned back into ``/``."""
    return {
        k: v.replace(ENCODED_SLASH, "/") if isinstance(v, str) else v for k, v in params.items()
    }


def _auth_method(authorization: bytes | None, principal: str | None) -> str:
    if authorization:
        scheme = authorization.split(b" ", 1)[0].strip().lower()
        if scheme in (b"basic", b"bearer"):
            return scheme.decode()
        return "other"
    return "mtls" if principal else "none"


def _error_of(body: bytes) -> tuple[int | None, str | None]:
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, None
    if not isinstance(parsed, dict):
        return None, None
    code = parsed.get("error_code")
    text = parsed.get("message")
    return (code if isinstance(code, int) else None), (str(text) if text is not None else None)


async def _send_error(send: Send, status: int, code: int, message: str) -> None:
    body = orjson.dumps({"error_code": code, "message": message})
    headers = [
        (b"content-type", b"application/vnd.schemaregistry.v1+json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def install(app: Any, auditor: Auditor) -> None:
    """Add the middleware (after authentication's ``install``, so this one runs outside it)."""
    app.add_middleware(AuditMiddleware, auditor=auditor)
