"""The HTTP/1.1 connection protocol: uvicorn's httptools protocol with the limits a server facing
hostile clients needs, and Confluent-shaped errors for what is refused before the app sees it.

* **Read timeout** (``read_timeout``): a connection gets that many seconds to send a whole
  request, headers and body, from its first byte (and an idle new connection that long to start
  one); a slow or stalled sender is answered 408 and closed. The clock is not reset by each
  byte, so trickling data does not keep a connection open.
* **URL and header size** (``max_url_bytes``, ``max_header_bytes``): 414 and 431, as Jetty
  answers Confluent's clients.
* **Malformed requests** (``Content-Length: -1``, a bad request line, ...): 400 with
  ``{"error_code": 400, "message": ...}`` instead of uvicorn's plain-text answer.
* **The client going away**: every request's scope carries its connection's :class:`ClientGone`
  (key :data:`CLIENT_GONE`), which runs the callbacks registered on it when the connection
  closes; the schema limits middleware cancels a request's work allowance that way, without a
  task per request waiting on ``receive`` for the disconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from registry.api.responses import PREFERRED

REASONS = {
    400: "Bad Request",
    408: "Request Timeout",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
}

#: the scope key of the request's :class:`ClientGone`
CLIENT_GONE = "registry.client_gone"


class ClientGone:
    """Callbacks run once, when the connection that carries the request closes (the client
    went away, or the read deadline closed it); one registered after that runs at once."""

    __slots__ = ("_callbacks", "gone")

    def __init__(self) -> None:
        self.gone = False
        self._callbacks: list[Callable[[], Any]] = []

    def add(self, callback: Callable[[], Any]) -> None:
        if self.gone:
            callback()
        else:
            self._callbacks.append(callback)

    def discard(self, callback: Callable[[], Any]) -> None:
        with contextlib.suppress(ValueError):
            self._callbacks.remove(callback)

    def close(self) -> None:
        self.gone = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


class CoalescingTransport:
    """The connection's transport, sending a response's head with its first body bytes: uvicorn
    writes the status line and headers, then the body, each a ``send`` of its own (two TCP
    segments and two wake-ups of the client for a small answer, a tenth of a registration's
    CPU). A head is held until the next write, or until the event loop's next turn, whichever
    comes first, so nothing waits longer than the callback that wrote it."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif data.startswith(b"HTTP/") and data.endswith(b"\r\n\r\n"):
            self._held = data
            self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return int(self._transport.get_write_buffer_size()) + len(self._held or b"")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedHttpProtocol(HttpToolsProtocol):
    """Configured by :func:`protocol_for` (class attributes, one subclass per server)."""

    read_timeout: float = 30.0
    max_url_bytes: int = 8192
    max_header_bytes: int = 16384

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: when the request being read must be complete (None: not reading one)
        self._deadline: float | None = None
        #: at most one timer a connection, moved on lazily: a request read in time costs no
        #: timer of its own (scheduling and cancelling one per request cost more than the rest
        #: of this class)
        self._read_timer: asyncio.TimerHandle | None = None
        self._header_bytes = 0
        self._refused = False
        self._client_gone = ClientGone()

    # ---- the read deadline ----------------------------------------------------------------

    def _arm(self) -> None:
        if self._deadline is None and self.read_timeout > 0:
            self._deadline = self.loop.time() + self.read_timeout
            if self._read_timer is None:
                self._read_timer = self.loop.call_at(self._deadline, self._timed_out)

    def _disarm(self) -> None:
        self._deadline = None

    def _timed_out(self) -> None:
        self._read_timer = None
        deadline = self._deadline
        if deadline is None:  # read in time (the next request will arm again)
            return
        if self.loop.time() < deadline:  # a later request's deadline: wait for it
            self._read_timer = self.loop.call_at(deadline, self._timed_out)
            return
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = getattr(self, "cycle", None)
        if cycle is not None and cycle.response_complete and cycle.scope is not self.scope:
            cycle = None  # the previous request's, answered: the one being read has none yet
        if cycle is not None and cycle.response_started:
            self.transport.close()
            return
        if cycle is not None:
            cycle.disconnected = True
            cycle.message_event.set()
        self._refuse(408, "Request Timeout: the request was not received in time")

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(CoalescingTransport(transport, self.loop))
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline = None
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None
        super().connection_lost(exc)
        self._client_gone.close()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        try:
            super().data_received(data)
        except _Refused:
            return  # the answer is sent already

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.scope[CLIENT_GONE] = self._client_gone  # type: ignore[literal-required]
        self._header_bytes = 0
        self._arm()

    def on_message_complete(self) -> None:
        self._deadline = None
        super().on_message_complete()

    # keep-alive: the idle connection is uvicorn's (timeout_keep_alive); a next request arms
    # the deadline again when it begins

    # ---- sizes and malformed requests -----------------------------------------------------

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        if len(self.url) > self.max_url_bytes:
            self._refuse(414, f"URI Too Long: the limit is {self.max_url_bytes} bytes")
            raise _Refused

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_bytes += len(name) + len(value) + 4
        if self._header_bytes > self.max_header_bytes:
            self._refuse(
                431,
                f"Request Header Fields Too Large: the limit is {self.max_header_bytes} bytes",
            )
            raise _Refused
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        if self._refused:
            return
        self._refuse(400, f"Bad Request: {msg}")

    def _refuse(self, status: int, message: str) -> None:
        if self._refused or self.transport.is_closing():
            return
        self._refused = True
        self._disarm()
        body = orjson.dumps({"error_code": status, "message": message})
        head = (
            f"HTTP/1.1 {status} {REASONS[status]}\r\n"
            f"content-type: {PREFERRED}\r\n"
            f"content-length: {len(body)}\r\n"
            "connection: close\r\n\r\n"
        ).encode("latin-1")
        self.transport.write(head + body)
        self.transport.close()


class _Refused(Exception):
    """Stops the parser after an answer was sent (raised from a parser callback)."""


def protocol_for(read_timeout: float, max_url_bytes: int, max_header_bytes: int) -> type:
    """A protocol class with these limits (uvicorn takes a class for ``http``)."""
    return type(
        "RegistryHttpProtocol",
        (GuardedHttpProtocol,),
        {
            "read_timeout": read_timeout,
            "max_url_bytes": max_url_bytes,
            "max_header_bytes": max_header_bytes,
        },
    )
