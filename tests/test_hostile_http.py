"""Hostile HTTP, over real sockets against a live server: connections that never finish their
request are answered 408 and closed after ``read_timeout`` (trickling bytes does not extend it);
what the HTTP layer refuses (a malformed ``Content-Length``, a 200 KB URL, huge headers) is
answered in Confluent's error format with the right status."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import LiveServer, sqlite_live_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("hostile-http")
    yield from sqlite_live_server(tmp, env={"SCHEMA_REGISTRY_READ_TIMEOUT": "1"})


def _connect(server: LiveServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    return sock


def _answer(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            data = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def _status_and_body(raw: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def test_unfinished_headers_are_closed_after_the_read_timeout(server: LiveServer) -> None:
    socks = [_connect(server) for _ in range(50)]
    for sock in socks:
        sock.sendall(b"GET /subjects HTTP/1.1\r\nHost: x\r\n")  # no blank line: never ends
    started = time.monotonic()
    answers = [_answer(sock) for sock in socks]
    assert time.monotonic() - started < 8
    for raw in answers:
        assert _status_and_body(raw) == (
            408,
            {"error_code": 408, "message": "Request Timeout: the request was not received in time"},
        )
    # the server still answers
    assert httpx.get(server.url + "/subjects").json() == []


def test_unfinished_body_is_closed(server: LiveServer) -> None:
    sock = _connect(server)
    sock.sendall(
        b"POST /subjects/s/versions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"schema":'
    )
    started = time.monotonic()
    status, body = _status_and_body(_answer(sock))
    assert status == 408 and body["error_code"] == 408
    assert time.monotonic() - started < 8


def test_trickling_does_not_extend_the_deadline(server: LiveServer) -> None:
    sock = _connect(server)
    started = time.monotonic()
    closed = False
    for byte in b"GET /subjects HTTP/1.1\r\nHost: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx":
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
        time.sleep(0.1)
        if time.monotonic() - started > 6:
            break
    closed = closed or _answer(sock).startswith(b"HTTP/1.1 408")
    assert closed and time.monotonic() - started < 6


def test_idle_connection_is_closed(server: LiveServer) -> None:
    sock = _connect(server)
    started = time.monotonic()
    raw = _answer(sock)  # nothing sent: answered 408 (or just closed) at the deadline
    assert raw == b"" or raw.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 8


def _one_answer(sock: socket.socket) -> bytes:
    """One response on a kept-alive connection (read up to its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


GET = b"GET /subjects HTTP/1.1\r\nHost: x\r\n\r\n"


def test_requests_read_in_time_on_a_kept_alive_connection_are_answered(
    server: LiveServer,
) -> None:
    """The deadline of each request is disarmed when it is read: a connection used for longer
    than the read timeout by requests sent whole is never refused."""
    sock = _connect(server)
    for _ in range(5):
        sock.sendall(GET)
        assert _one_answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(0.4)


def test_a_later_request_on_a_kept_alive_connection_gets_its_own_deadline(
    server: LiveServer,
) -> None:
    sock = _connect(server)
    sock.sendall(GET)
    assert _one_answer(sock).startswith(b"HTTP/1.1 200")
    time.sleep(0.6)  # the connection's first deadline (1 s after it opened) is near
    sock.sendall(b"GET /subjects HTTP/1.1\r\nHost: x\r\n")  # unfinished
    started = time.monotonic()
    sock.settimeout(0.7)
    with pytest.raises(TimeoutError):  # not refused at the connection's first deadline
        sock.recv(65536)
    sock.settimeout(10)
    status, body = _status_and_body(_answer(sock))
    assert status == 408 and body["error_code"] == 408
    assert 0.9 < time.monotonic() - started < 8


def _raw(server: LiveServer, request: bytes) -> tuple[int, dict[str, object]]:
    sock = _connect(server)
    sock.sendall(request)
    return _status_and_body(_answer(sock))


def test_negative_content_length_is_400_in_confluent_format(server: LiveServer) -> None:
    status, body = _raw(
        server,
        b"POST /subjects/s/versions HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n{}",
    )
    assert status == 400
    assert body["error_code"] == 400 and str(body["message"]).startswith("Bad Request")


def test_huge_url_is_414(server: LiveServer) -> None:
    status, body = _raw(
        server, b"GET /subjects/" + b"a" * 200_000 + b"/versions HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    assert status == 414
    assert body == {"error_code": 414, "message": "URI Too Long: the limit is 8192 bytes"}


def test_many_query_parameters_are_414(server: LiveServer) -> None:
    query = "&".join(f"p{i}=1" for i in range(10_000))
    status, body = _raw(server, f"GET /subjects?{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert status == 414 and body["error_code"] == 414


def test_huge_headers_are_431(server: LiveServer) -> None:
    headers = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 1000) for i in range(40))
    status, body = _raw(server, b"GET /subjects HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n")
    assert status == 431 and body["error_code"] == 431


@pytest.mark.parametrize("spelling", [b"%FF", b"%FE", b"%E2%82", b"%C0%AF", b"%ED%A0%80", b"\xff"])
def test_path_that_is_not_utf8_is_400_not_a_subject(server: LiveServer, spelling: bytes) -> None:
    # the ASGI server decodes each of these to U+FFFD: two requests would name one subject
    status, body = _raw(
        server,
        b"POST /subjects/x" + spelling + b"/versions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b'Content-Type: application/json\r\nContent-Length: 20\r\n\r\n{"schema":"\\"int\\""}',
    )
    assert status == 400, body
    assert body["error_code"] == 400
    if b"%" in spelling:  # a raw 0xFF is refused by the HTTP parser already
        assert str(body["message"]).startswith("Bad UTF-8 encoding in the request path")
    assert httpx.get(server.url + "/subjects").json() == []
