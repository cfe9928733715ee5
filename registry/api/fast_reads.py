"""The hot reads answered from ready-to-send bytes: ``GET /schemas/ids/{id}`` (what every
deserializer asks), ``GET /subjects/{subject}/versions/{version}`` and the lookup
``POST /subjects/{subject}`` (what serializers ask).

:class:`FastReads` sits in the ASGI stack just inside the protocol middleware. Everything
outside it runs for these requests as for any other: metrics and the request id (outermost),
authentication and the subject rules, readiness and forwarding, content negotiation (406) and
the body limit (413), ``/contexts/...`` and alias paths, the request-id and security headers.
What a cached request skips is the rest: the schema limits middleware, FastAPI's routing, the
handler and its JSON rendering.

An answer is cached the first time the normal path gives it (status 200), so its bytes are the
normal path's for every variant. The key holds everything those routes read from the request:
the (rewritten) path and query string, the media type the protocol middleware negotiated, the
two headers asking for Confluent 8.x's fields (``Confluent-Accept-Unknown-Properties``,
``Confluent-Client-Version``) and, for a lookup, ``Content-Type`` and the body. The cache holds
the answers of one state of the registry: :attr:`registry.state.State.changes` is odd while a
record is applied (or a tentative batch undone) and different after any change, so a new
version, a delete, a config, alias or mode change empties the cache, and an answer computed
while the state changed is passed on but not kept. The cache is bounded by
``read_cache_bytes`` (least recently used dropped first); 0 turns this path off.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from registry.core import Registry
from registry.state import State

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Key = tuple[Any, ...]

_ACCEPT_UNKNOWN = b"confluent-accept-unknown-properties"
_CLIENT_VERSION = b"confluent-client-version"
_CONTENT_TYPE = b"content-type"
_CONTENT_LENGTH = b"content-length"
#: bytes an entry costs beyond its path, query, body and answer (key tuple, entry, header tuples,
#: the ordered dict's node; measured with tracemalloc)
ENTRY_OVERHEAD = 700
#: the largest share of the cache one entry may take
MAX_ENTRY_SHARE = 16


@dataclass(slots=True)
class Entry:
    """A cached answer: the headers and body the routes sent, and the route that matched (the
    metrics label it)."""

    headers: list[tuple[bytes, bytes]]
    body: bytes
    route: Any
    size: int


class ReadCache:
    """Answers by request key, all of one state of the registry (see the module docstring)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.entries: OrderedDict[Key, Entry] = OrderedDict()
        self.size = 0
        self._state: State | None = None
        self._stamp = -1
        #: answers sent from the cache, requests passed on, answers kept, emptyings by a change
        self.hits = 0
        self.misses = 0
        self.stored = 0
        self.invalidations = 0

    def stamp_of(self, state: State) -> int | None:
        """``state``'s change count when answers computed now may be kept (None while it is
        changing); the cache is emptied first if it holds answers of an earlier state."""
        stamp: int = state.changes
        if stamp & 1:
            return None
        if stamp != self._stamp or state is not self._state:
            if self.entries:
                self.invalidations += 1
            self.entries.clear()
            self.size = 0
            self._stamp = stamp
            self._state = state
        return stamp

    def get(self, key: Key) -> Entry | None:
        entry = self.entries.get(key)
        if entry is not None:
            self.entries.move_to_end(key)
        return entry

    def put(self, key: Key, entry: Entry, state: State, stamp: int) -> None:
        """Keep ``entry`` if the state is still the one it was computed from."""
        if stamp != self._stamp or state is not self._state or state.changes != stamp:
            return
        if entry.size * MAX_ENTRY_SHARE > self.max_bytes:
            return
        old = self.entries.pop(key, None)
        if old is not None:
            self.size -= old.size
        self.entries[key] = entry
        self.size += entry.size
        self.stored += 1
        while self.size > self.max_bytes:
            _, dropped = self.entries.popitem(last=False)
            self.size -= dropped.size


def _hot(method: str, path: str) -> bool:
    """Whether ``method path`` (already rewritten) is one of the cached routes."""
    if method == "GET":
        if path.startswith("/schemas/ids/"):
            return len(path) > 13 and "/" not in path[13:]
        if path.startswith("/subjects/"):
            parts = path.split("/")
            return len(parts) == 5 and parts[3] == "versions" and bool(parts[2] and parts[4])
        return False
    if method == "POST":
        return path.startswith("/subjects/") and len(path) > 10 and "/" not in path[10:]
    return False


class FastReads:
    """The ASGI middleware (see the module docstring)."""

    def __init__(self, app: Any, registry: Registry, cache: ReadCache) -> None:
        self.app = app
        self.registry = registry
        self.cache = cache
        #: a lookup body larger than this is passed on unread and never cached
        self.max_body = min(registry.settings.max_request_bytes, cache.max_bytes // MAX_ENTRY_SHARE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _hot(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        media = scope.get("state", {}).get("media_type")
        if media is None:  # not behind the protocol middleware
            await self.app(scope, receive, send)
            return
        accept_unknown: bytes | None = None
        client_version = False
        content_type: bytes | None = None
        length: bytes | None = None
        for name, value in scope["headers"]:
            # the first value of each, as Starlette's ``headers.get`` reads them
            if name == _ACCEPT_UNKNOWN:
                if accept_unknown is None:
                    accept_unknown = value
            elif name == _CLIENT_VERSION:
                client_version = True
            elif name == _CONTENT_TYPE:
                if content_type is None:
                    content_type = value
            elif name == _CONTENT_LENGTH:
                length = value
        method = scope["method"]
        body = b""
        if method == "POST":
            if length is None or not length.isdigit() or int(length) > self.max_body:
                await self.app(scope, receive, send)
                return
            messages, complete = await _read_body(receive)
            if not complete:  # the client went away: the normal path answers that
                await self.app(scope, _replaying(messages, receive), send)
                return
            body = b"".join(m.get("body", b"") for m in messages)
            receive = _replaying(messages, receive)
        else:
            content_type = None  # not read by the GET routes
        key = (
            method,
            scope["path"],
            scope.get("query_string", b""),
            media,
            accept_unknown,
            client_version,
            content_type,
            body,
        )
        cache = self.cache
        state = self.registry.state
        stamp = cache.stamp_of(state)
        if stamp is not None:
            entry = cache.get(key)
            if entry is not None:
                cache.hits += 1
                scope["route"] = entry.route
                start = {"type": "http.response.start", "status": 200}
                await send({**start, "headers": list(entry.headers)})
                await send({"type": "http.response.body", "body": entry.body})
                return
        cache.misses += 1
        await self._answer_and_keep(scope, receive, send, key, state, stamp)

    async def _answer_and_keep(
        self, scope: Scope, receive: Receive, send: Send, key: Key, state: State, stamp: int | None
    ) -> None:
        """The normal path's answer, passed on and kept when it is a 200 of an unchanged
        state."""
        status = 0
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []
        plain = True

        async def keeping(message: Message) -> None:
            nonlocal status, headers, plain
            kind = message["type"]
            if kind == "http.response.start":
                status = message["status"]
                headers = [(bytes(k), bytes(v)) for k, v in message.get("headers", [])]
                plain = plain and not message.get("trailers", False)
            elif kind == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))
            else:
                plain = False
            await send(message)

        await self.app(scope, receive, keeping)
        route = scope.get("route")
        if stamp is None or status != 200 or not plain or route is None:
            return
        # a copy of exactly its size: orjson's buffers are larger than the JSON they hold
        body = bytes(memoryview(b"".join(chunks)))
        size = (
            len(body)
            + len(key[1])
            + len(key[2])
            + len(key[7])
            + ENTRY_OVERHEAD
            + sum(len(k) + len(v) for k, v in headers)
        )
        self.cache.put(key, Entry(headers, body, route, size), state, stamp)


async def _read_body(receive: Receive) -> tuple[list[Message], bool]:
    """The request's messages up to its last body part; False if it ended otherwise."""
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, False
        if not message.get("more_body", False):
            return messages, True


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` answering ``messages`` in order, then what ``receive`` answers."""
    pending = list(messages)

    async def wrapped() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return wrapped


def install(app: Any, registry: Registry) -> ReadCache | None:
    """Add the middleware (call just before adding the protocol middleware, so this one runs
    inside it); the cache is ``app.state.read_cache``. Nothing when ``read_cache_bytes`` is 0."""
    max_bytes = registry.settings.read_cache_bytes
    if max_bytes <= 0:
        app.state.read_cache = None
        return None
    cache = ReadCache(max_bytes)
    app.state.read_cache = cache
    app.add_middleware(FastReads, registry=registry, cache=cache)
    return cache
