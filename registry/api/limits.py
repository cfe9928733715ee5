"""Limits on the schemas of register, lookup and compatibility requests: the size of the schema
text (42209, Confluent's "schema too large") and how deeply its brackets nest (42201, an invalid
schema), checked before any parser sees the text, so a hostile schema cannot exhaust the stack;
then the CPU time parsing and checking may take (:mod:`registry.budget`), abandoned as soon as
the client goes away (told by the connection's :class:`~registry.api.http_protocol.ClientGone`;
under another ASGI server, by a task waiting on ``receive``).

The body limit itself (413) is the protocol middleware's.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import MutableMapping
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from registry import budget
from registry.api.bodies import charset_of, parse_json
from registry.api.http_protocol import CLIENT_GONE, ClientGone
from registry.api.responses import PREFERRED
from registry.errors import RegistryError
from registry.formats.protobuf.scan import comment_end

Scope = MutableMapping[str, Any]

#: where a bracket, a string literal or (Protobuf) a comment may start
_JSON_START = re.compile(r'[\[\]{}"]')
_PROTO_START = re.compile(r"[\[\]{}\"'/]")
#: a whole literal, its runs matched in C (``\\.`` escapes anything)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_PROTO_STRING = {
    q: re.compile(q + r"[^" + q + r"\\\n]*(?:\\.[^" + q + r"\\\n]*)*" + q, re.S) for q in "\"'"
}
_STEP = {"{": 1, "[": 1, "}": -1, "]": -1}
#: schema texts from this many bytes are inspected in a worker thread, off the event loop
_OFF_LOOP_BYTES = 65536


def nesting_depth(text: str, schema_type: str = "AVRO") -> int:
    """The deepest nesting of ``{}``/``[]`` outside string literals (and Protobuf comments).
    A loop over tokens found with short regex calls, so a large text never holds the GIL for
    long (a whole-text ``re.sub`` held it 0.1-0.2 s per MB); run off the event loop."""
    proto = schema_type.upper() == "PROTOBUF"
    start = _PROTO_START if proto else _JSON_START
    depth = deepest = 0
    pos = 0
    while (found := start.search(text, pos)) is not None:
        at = found.start()
        char = text[at]
        step = _STEP.get(char)
        if step is not None:
            depth += step
            deepest = max(deepest, depth)
            pos = at + 1
        elif char == "/":  # Protobuf only: past a comment, or past a lone slash
            pos = max(comment_end(text, at), at + 1)
        else:
            literal = (_PROTO_STRING[char] if proto else _JSON_STRING).match(text, at)
            pos = literal.end() if literal is not None else at + 1
    return deepest


def check(body: Any, max_bytes: int, max_depth: int) -> tuple[int, str] | None:
    """``(error_code, message)`` when the request's schema breaks a limit, else None."""
    if not isinstance(body, dict):
        return None
    text = body.get("schema")
    if not isinstance(text, str):
        return None
    size = len(text) if len(text) * 4 <= max_bytes else len(text.encode("utf-8", "replace"))
    if size > max_bytes:
        return 42209, (
            f"Schema too large: {size} bytes, the limit is {max_bytes} "
            "(SCHEMA_REGISTRY_MAX_SCHEMA_BYTES)"
        )
    # a schema cannot nest deeper than it has opening brackets: most need no scan at all
    if text.count("{") + text.count("[") <= max_depth:
        return None
    schema_type = body.get("schemaType")
    depth = nesting_depth(text, schema_type if isinstance(schema_type, str) else "AVRO")
    if depth > max_depth:
        return 42201, (
            f"Invalid schema: nested {depth} levels deep, the limit is {max_depth} "
            "(SCHEMA_REGISTRY_MAX_SCHEMA_DEPTH)"
        )
    return None


def carries_schema(method: str, path: str) -> bool:
    """Register, lookup and compatibility requests (paths already rewritten)."""
    if method != "POST":
        return False
    segs = path.split("/")
    if len(segs) >= 3 and segs[1] == "subjects":
        return len(segs) == 3 or (len(segs) == 4 and segs[3] == "versions")
    return len(segs) >= 5 and segs[1] == "compatibility" and segs[2] == "subjects"


class LimitsMiddleware:
    """Runs inside the protocol middleware (paths rewritten, body size already bounded)."""

    def __init__(self, app: Any, max_bytes: int, max_depth: int, max_seconds: float = 0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.max_seconds = max_seconds

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not carries_schema(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            try:
                message = await receive()
            except RegistryError as exc:  # the protocol middleware's body limit (413)
                await _send(scope, send, exc.http_status, exc.body())
                return
            if message["type"] == "http.disconnect":
                return  # the client went away before sending its schema: nothing to answer
            if message["type"] != "http.request":
                await self.app(scope, _ReplayFirst(message, receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if len(body) < _OFF_LOOP_BYTES:
            problem = self._inspect(body, scope["headers"])
        else:
            problem = await run_in_threadpool(self._inspect, body, scope["headers"])
        if problem is not None:
            code, text = problem
            await _send(scope, send, 422, {"error_code": code, "message": text})
            return
        await self._bounded(scope, body, receive, send)

    def _inspect(self, body: bytes, headers: Any) -> tuple[int, str] | None:
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            # not UTF-8 JSON: read it as the route will (a declared charset, UTF-16/32)
            content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"")
            try:
                parsed = parse_json(body, charset_of(content_type.decode("latin-1")))
            except RegistryError:
                return None  # the route answers the malformed body
        return check(parsed, self.max_bytes, self.max_depth)

    async def _bounded(self, scope: Scope, body: bytes, receive: Any, send: Any) -> None:
        """Run the route under a work allowance; a disconnect cancels the work."""
        allowance = budget.Allowance(self.max_seconds)
        gone: ClientGone | None = scope.get(CLIENT_GONE)
        if gone is None:  # not served by our HTTP protocol: watch ``receive``
            await self._watching(scope, body, receive, send, allowance)
            return
        cancel = allowance.cancelled.set
        gone.add(cancel)
        try:
            with budget.allowed(allowance):
                await self.app(scope, _Replay(body, receive), send)
        finally:
            gone.discard(cancel)

    async def _watching(
        self, scope: Scope, body: bytes, receive: Any, send: Any, allowance: budget.Allowance
    ) -> None:
        """The route under ``allowance``, a task waiting on ``receive`` for the disconnect
        (the message it gets is the route's, should it ask for one)."""
        gone: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def watch() -> None:
            message = await receive()
            if message["type"] == "http.disconnect":
                allowance.cancelled.set()
            if not gone.done():
                gone.set_result(message)

        async def later() -> Any:
            return await asyncio.shield(gone)

        watcher = asyncio.create_task(watch())
        try:
            with budget.allowed(allowance):
                await self.app(scope, _Replay(body, later), send)
        finally:
            watcher.cancel()


async def _send(scope: Scope, send: Any, status: int, body: dict[str, Any]) -> None:
    media = scope.get("state", {}).get("media_type", PREFERRED)
    payload = orjson.dumps(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", media.encode()),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class _Replay:
    """A ``receive`` answering the body already read, then what ``receive`` answers."""

    __slots__ = ("_body", "_receive")

    def __init__(self, body: bytes | None, receive: Any) -> None:
        self._body = body
        self._receive = receive

    async def __call__(self) -> Any:
        body = self._body
        if body is None:
            return await self._receive()
        self._body = None
        return {"type": "http.request", "body": body, "more_body": False}


class _ReplayFirst(_Replay):
    """A ``receive`` answering one message already read, then what ``receive`` answers."""

    __slots__ = ("_message",)

    def __init__(self, message: Any, receive: Any) -> None:
        super().__init__(None, receive)
        self._message: Any = message

    async def __call__(self) -> Any:
        message = self._message
        if message is None:
            return await self._receive()
        self._message = None
        return message


def install(app: Any, max_bytes: int, max_depth: int, max_seconds: float = 0) -> None:
    """Call before adding the protocol middleware (so this one runs inside it)."""
    app.add_middleware(
        LimitsMiddleware, max_bytes=max_bytes, max_depth=max_depth, max_seconds=max_seconds
    )
