"""A response's head goes out with its first body bytes (``CoalescingTransport``): one write
for a small answer instead of two, and a head is never held past the event loop's next turn."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

from registry.api.http_protocol import CoalescingTransport
from tests.conftest import LiveServer

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


class Recording:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False
        self.eof = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def close(self) -> None:
        self.closed = True

    def write_eof(self) -> None:
        self.eof = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


def test_a_head_and_its_body_are_one_write() -> None:
    async def main() -> Recording:
        raw = Recording()
        transport = CoalescingTransport(raw, asyncio.get_running_loop())
        transport.write(HEAD)
        assert raw.writes == []
        assert transport.get_write_buffer_size() == len(HEAD)
        transport.write(b"{}")
        transport.write(b"more")  # not a head: passed on as it comes
        await asyncio.sleep(0)
        return raw

    raw = asyncio.run(main())
    assert raw.writes == [HEAD + b"{}", b"more"]


def test_a_head_alone_goes_out_on_the_loops_next_turn() -> None:
    async def main() -> Recording:
        raw = Recording()
        transport = CoalescingTransport(raw, asyncio.get_running_loop())
        transport.write(HEAD)
        await asyncio.sleep(0)
        assert raw.writes == [HEAD]
        return raw

    asyncio.run(main())


def test_closing_or_ending_sends_a_held_head_first() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        for end in ("close", "write_eof"):
            raw = Recording()
            transport = CoalescingTransport(raw, loop)
            transport.write(HEAD)
            getattr(transport, end)()
            assert raw.writes == [HEAD]
            assert raw.closed or raw.eof
        raw = Recording()
        assert CoalescingTransport(raw, loop).get_extra_info("peername") == ("127.0.0.1", 1)

    asyncio.run(main())


def test_answers_on_a_kept_alive_connection_arrive_whole(live_server: LiveServer) -> None:
    """Through the real server: each answer's head and body, in order, on one connection."""
    with socket.create_connection(("127.0.0.1", live_server.port), timeout=10) as sock:
        for _ in range(3):
            sock.sendall(b"GET /schemas/types HTTP/1.1\r\nHost: x\r\n\r\n")
            data = b""
            while not data.endswith(b"]"):
                chunk = sock.recv(65536)
                assert chunk, data
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 ")
            assert sorted(json.loads(body)) == ["AVRO", "JSON", "PROTOBUF"]
