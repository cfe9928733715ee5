"""Schema work stops when its client goes away: a compatibility check that would run for many
seconds is abandoned as soon as the connection closes (the server's CPU time stops growing).
The HTTP layer marks the request's allowance cancelled on disconnect (whatever the format);
every walker of every format, parsing and checking, looks at it as it goes (a large Protobuf
text compiles in a child process that is killed: ``test_hostile_protoc.py``)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from registry import budget
from registry.formats.avro.format import AvroFormat
from registry.formats.base import SchemaFormat
from registry.formats.json_schema import JsonSchemaFormat
from registry.formats.protobuf.format import ProtobufFormat
from tests.conftest import LiveServer, sqlite_live_server


def _one_of(count: int, suffix: str) -> str:
    branches = [
        {"type": "object", "properties": {f"p{i}{suffix}": {"type": "string"}}}
        for i in range(count)
    ]
    return json.dumps({"schemaType": "JSON", "schema": json.dumps({"oneOf": branches})})


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("disconnect")
    yield from sqlite_live_server(tmp, env={"SCHEMA_REGISTRY_MAX_SCHEMA_WORK_SECONDS": "120"})


@pytest.mark.timeout(60)
def test_work_stops_when_the_client_disconnects(server: LiveServer) -> None:
    assert server.proc is not None
    registered = httpx.post(
        server.url + "/subjects/t/versions",
        content=_one_of(700, ""),
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert registered.status_code == 200
    body = _one_of(700, "x").encode()  # no identical branch: every pair is compared
    sock = socket.create_connection(("127.0.0.1", server.port))
    sock.sendall(
        b"POST /compatibility/subjects/t/versions/latest HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    )
    time.sleep(1.0)  # the check is running
    sock.close()
    time.sleep(0.5)  # the walker notices within a few dozen pairs
    before = _cpu_seconds(server.proc.pid)
    time.sleep(2.0)
    spent = _cpu_seconds(server.proc.pid) - before
    assert spent < 0.5, f"the server kept working after the client left: {spent:.2f} s of CPU"
    assert httpx.get(server.url + "/live").status_code == 200


# ---- each format's walkers, parsing and checking, stop when the client is gone -----------------


def _avro(count: int, suffix: str) -> str:
    fields = [
        {"name": f"f{i}{suffix}", "type": ["null", "string"], "default": None} for i in range(count)
    ]
    return json.dumps({"type": "record", "name": "R", "fields": fields})


def _json_schema(count: int, suffix: str) -> str:
    properties = {f"p{i}{suffix}": {"type": "string"} for i in range(count)}
    return json.dumps({"type": "object", "properties": properties})


def _proto(count: int, suffix: str) -> str:
    fields = "".join(f"  int32 f{i}{suffix} = {i + 1};\n" for i in range(count))
    return 'syntax = "proto3";\nmessage A {\n' + fields + "}\n"


FORMATS: list[tuple[SchemaFormat, Callable[[int, str], str]]] = [
    (AvroFormat(), _avro),
    (JsonSchemaFormat(), _json_schema),
    (ProtobufFormat(), _proto),
]


def _gone() -> budget.Allowance:
    left = threading.Event()
    left.set()
    return budget.Allowance(0, left)


@pytest.mark.parametrize(("fmt", "text"), FORMATS, ids=lambda v: getattr(v, "schema_type", ""))
def test_parsing_stops_when_the_client_is_gone(
    fmt: SchemaFormat, text: Callable[[int, str], str]
) -> None:
    with budget.allowed(_gone()), pytest.raises(budget.WorkLimitExceeded):
        fmt.parse(text(2000, ""), ()).canonical()


@pytest.mark.parametrize(("fmt", "text"), FORMATS, ids=lambda v: getattr(v, "schema_type", ""))
def test_checking_stops_when_the_client_is_gone(
    fmt: SchemaFormat, text: Callable[[int, str], str]
) -> None:
    # every field renamed: nothing is compared pairwise, the walk is over fields only
    old = fmt.parse(text(2000, ""), ())
    new = fmt.parse(text(2000, "x"), ())
    with budget.allowed(_gone()), pytest.raises(budget.WorkLimitExceeded):
        fmt.compatibility_errors(new, old)
