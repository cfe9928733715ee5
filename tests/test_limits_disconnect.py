"""The schema limits middleware's work allowance is cancelled when the client goes away: told by
the connection (our HTTP protocol's ``ClientGone`` in the scope), or, under another ASGI server,
by a task waiting on ``receive``. The route still reads the body the middleware read first.
(The live-server test is ``test_hostile_disconnect.py``.)"""

from __future__ import annotations

import asyncio
from typing import Any

from registry import budget
from registry.api.http_protocol import CLIENT_GONE, ClientGone
from registry.api.limits import LimitsMiddleware

BODY = b'{"schema": "\\"string\\""}'


class Route:
    """An inner app recording what it received and whether its allowance got cancelled."""

    def __init__(self, then_receive: bool = False, patience: int = 400) -> None:
        self.patience = patience
        self.allowance: budget.Allowance | None = None
        self.messages: list[Any] = []
        self.cancelled = False
        self.then_receive = then_receive
        self.started = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.messages.append(await receive())
        allowance = budget.current()
        assert allowance is not None
        self.allowance = allowance
        self.started.set()
        if self.then_receive:
            self.messages.append(await receive())
        for _ in range(self.patience):
            if allowance.cancelled.is_set():
                self.cancelled = True
                break
            await asyncio.sleep(0.005)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def _scope(gone: ClientGone | None = None) -> dict[str, Any]:
    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/subjects/s/versions",
        "headers": [(b"content-type", b"application/json")],
        "state": {},
    }
    if gone is not None:
        scope[CLIENT_GONE] = gone
    return scope


def _client(disconnect: asyncio.Event) -> Any:
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": BODY, "more_body": False}
        await disconnect.wait()
        return {"type": "http.disconnect"}

    return receive


async def _sink(message: Any) -> None:
    pass


def test_connection_closing_cancels_the_allowance() -> None:
    async def run() -> Route:
        route = Route()
        gone = ClientGone()
        app = LimitsMiddleware(route, 1000, 10, 0)
        task = asyncio.create_task(app(_scope(gone), _client(asyncio.Event()), _sink))
        await route.started.wait()
        gone.close()
        await task
        return route

    route = asyncio.run(run())
    assert route.cancelled
    assert route.messages == [{"type": "http.request", "body": BODY, "more_body": False}]


def test_a_connection_closed_before_the_route_runs_cancels_at_once() -> None:
    async def run() -> Route:
        route = Route()
        gone = ClientGone()
        gone.close()
        await LimitsMiddleware(route, 1000, 10, 0)(_scope(gone), _client(asyncio.Event()), _sink)
        return route

    assert asyncio.run(run()).cancelled


def test_a_finished_request_leaves_nothing_on_the_connection() -> None:
    """Keep-alive: the next request's close must not touch this one's allowance (nor keep it)."""

    async def run() -> tuple[Route, ClientGone]:
        route = Route(patience=4)
        gone = ClientGone()
        await LimitsMiddleware(route, 1000, 10, 0)(_scope(gone), _client(asyncio.Event()), _sink)
        return route, gone

    route, gone = asyncio.run(run())
    assert not route.cancelled
    seen: list[int] = []
    gone.add(lambda: seen.append(1))
    gone.close()
    assert seen == [1]  # only the callback registered since ran
    assert route.allowance is not None and not route.allowance.cancelled.is_set()
    gone.add(lambda: seen.append(2))  # after the close: at once
    assert seen == [1, 2]


def _disconnect_during(route: Route) -> Route:
    """Run ``route`` behind the limits middleware without our protocol; the client sends its
    disconnect once the route has started."""

    async def run() -> Route:
        disconnect = asyncio.Event()
        app = LimitsMiddleware(route, 1000, 10, 0)
        task = asyncio.create_task(app(_scope(), _client(disconnect), _sink))
        await route.started.wait()
        disconnect.set()
        await task
        return route

    return asyncio.run(run())


def test_without_our_protocol_a_disconnect_message_cancels_the_allowance() -> None:
    route = _disconnect_during(Route())
    assert route.cancelled


def test_without_our_protocol_the_route_gets_the_message_after_the_body() -> None:
    route = _disconnect_during(Route(then_receive=True))
    assert route.messages == [
        {"type": "http.request", "body": BODY, "more_body": False},
        {"type": "http.disconnect"},
    ]
    assert route.cancelled


def test_with_our_protocol_the_route_reads_the_connection_after_the_body() -> None:
    async def run() -> Route:
        route = Route(then_receive=True)
        disconnect = asyncio.Event()
        gone = ClientGone()
        app = LimitsMiddleware(route, 1000, 10, 0)
        task = asyncio.create_task(app(_scope(gone), _client(disconnect), _sink))
        await route.started.wait()
        disconnect.set()
        gone.close()
        await task
        return route

    route = asyncio.run(run())
    assert route.messages[1] == {"type": "http.disconnect"}
    assert route.cancelled
