"""How the protocol middleware reads request headers (one pass over the raw ``scope`` headers):
names in any case, the last of repeated headers counts, an empty ``X-Request-ID`` gets a new
one, remembered negotiation per ``Accept`` value, the headers added to every answer and their
order, and the body limit for bodies not framed by a ``Content-Length``."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from registry.api.app import ProtocolMiddleware, create_app
from registry.api.metrics import new_request_id
from registry.core import Registry
from registry.errors import RegistryError
from registry.settings import Settings
from registry.store.factory import open_store

V1 = "application/vnd.schemaregistry.v1+json"
SECURITY = [
    (b"x-xss-protection", b"1; mode=block"),
    (b"cache-control", b"no-cache, no-store, must-revalidate"),
]


class Inner:
    """The app inside the middleware: records the media type, reads the body, answers 200."""

    def __init__(self) -> None:
        self.media: str | None = None
        self.body = b""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.media = scope["state"]["media_type"]
        while True:
            message = await receive()
            self.body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        start = {"type": "http.response.start", "status": 200}
        await send({**start, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})


def _call(
    app: ProtocolMiddleware, headers: list[tuple[bytes, bytes]], chunks: tuple[bytes, ...] = (b"",)
) -> tuple[int, list[tuple[bytes, bytes]]]:
    scope = {"type": "http", "method": "POST", "path": "/x", "headers": headers}
    parts = list(chunks)
    sent: list[Any] = []

    async def receive() -> Any:
        body = parts.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(parts)}

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], list(sent[0]["headers"])


def test_header_names_in_any_case() -> None:
    inner = Inner()
    status, headers = _call(
        ProtocolMiddleware(inner, 1024),
        [(b"Accept", b"application/json"), (b"X-Request-ID", b"r-1")],
    )
    assert (status, inner.media) == (200, "application/json")
    # the route's headers first, then the request id, then the security headers
    assert headers == [(b"content-type", b"application/json"), (b"x-request-id", b"r-1"), *SECURITY]


def test_the_last_of_repeated_headers_counts() -> None:
    inner = Inner()
    status, headers = _call(
        ProtocolMiddleware(inner, 1024),
        [
            (b"accept", b"text/html"),
            (b"x-request-id", b"first"),
            (b"accept", b"application/json"),
            (b"x-request-id", b"last"),
        ],
    )
    assert (status, inner.media) == (200, "application/json")
    assert (b"x-request-id", b"last") in headers
    assert (b"x-request-id", b"first") not in headers
    status, headers = _call(
        ProtocolMiddleware(Inner(), 1024), [(b"accept", V1.encode()), (b"accept", b"text/html")]
    )
    assert status == 406


def test_an_empty_or_missing_request_id_gets_a_new_uuid() -> None:
    made = []
    empty_last = [(b"x-request-id", b"a"), (b"x-request-id", b"")]
    for headers in ([], [(b"x-request-id", b"")], empty_last):
        _, answer = _call(ProtocolMiddleware(Inner(), 1024), headers)
        ids = [v for k, v in answer if k == b"x-request-id"]
        assert len(ids) == 1
        made.append(ids[0].decode())
    for text in made:
        assert str(uuid.UUID(text)) == text and uuid.UUID(text).version == 4
    assert len(set(made)) == 3


def test_negotiation_is_remembered_per_accept_value() -> None:
    inner = Inner()
    app = ProtocolMiddleware(inner, 1024)
    answers = []
    for accept in (b"text/html", b"application/json", None, b"text/html", b"", b"*/*"):
        headers = [] if accept is None else [(b"accept", accept)]
        status, _ = _call(app, headers)
        answers.append((status, inner.media if status == 200 else None))
        inner.media = None
    assert answers == [
        (406, None),
        (200, "application/json"),
        (200, V1),
        (406, None),
        (200, V1),
        (200, V1),
    ]


def test_the_406_and_413_answers_carry_the_headers() -> None:
    status, headers = _call(ProtocolMiddleware(Inner(), 10), [(b"content-length", b"11")])
    assert status == 413
    names = [k for k, _ in headers]
    assert names == [b"content-type", b"content-length", b"x-request-id", *(k for k, _ in SECURITY)]
    status, headers = _call(
        ProtocolMiddleware(Inner(), 10), [(b"accept", b"text/html"), (b"x-request-id", b"q")]
    )
    assert (status, headers[2]) == (406, (b"x-request-id", b"q"))


@pytest.mark.parametrize(
    "framing",
    [[(b"transfer-encoding", b"chunked")], [(b"content-length", b"x")]],
    ids=["chunked", "bad-length"],
)
def test_a_body_not_framed_by_its_length_is_counted(framing: list[tuple[bytes, bytes]]) -> None:
    with pytest.raises(RegistryError) as raised:
        _call(ProtocolMiddleware(Inner(), 10), framing, (b"123456", b"789012"))
    assert raised.value.http_status == 413
    inner = Inner()
    assert _call(ProtocolMiddleware(inner, 10), framing, (b"12345", b"67890"))[0] == 200
    assert inner.body == b"1234567890"


def test_a_chunked_body_over_the_limit_is_413(sqlite_url: str) -> None:
    reg = Registry(open_store(sqlite_url), Settings(poll_interval=0, max_request_bytes=1024))
    reg.start()
    schema = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
    big = json.dumps({"schema": schema, "doc": "x" * 4096}).encode()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as client:
            response = client.post(
                "/subjects/s/versions",
                content=iter([big[:2000], big[2000:]]),  # no Content-Length: chunked
                headers={"Content-Type": V1},
            )
            assert response.status_code == 413, response.text
            assert response.json() == {
                "error_code": 413,
                "message": "HTTP 413 Request Entity Too Large",
            }
            assert response.headers["x-xss-protection"] == "1; mode=block"
            assert client.get("/subjects").json() == []
            small = json.dumps({"schema": schema}).encode()
            response = client.post(
                "/subjects/s/versions", content=iter([small]), headers={"Content-Type": V1}
            )
            assert response.status_code == 200, response.text
    finally:
        reg.stop()


def test_new_request_ids_are_version_4_uuids() -> None:
    made = [new_request_id() for _ in range(4000)]
    for text in made:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert len(set(made)) == len(made)
    # every variant nibble (8, 9, a, b) and random hex everywhere else
    assert {text[19] for text in made} == set("89ab")
    assert {text[14] for text in made} == {"4"}
    assert len({text[0] for text in made}) == 16
