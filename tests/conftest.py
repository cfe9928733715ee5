"""Shared fixtures: an in-process registry on a fresh SQLite file, and a live server process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store

pytest_plugins = [
    "tests.fixtures.postgres",
    "tests.fixtures.kafka",
    "tests.fixtures.spark",
    "tests.fixtures.parallel",
]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'registry.db'}"


@pytest.fixture
def registry(sqlite_url: str) -> Iterator[Registry]:
    """A registry answering Confluent Cloud's shapes (``v8_fields_by_header``: 8.0's ``guid``,
    ``ts``, ``deleted`` and Avro's ``schemaType`` only to requests with Confluent's client
    headers), the 7.x shapes most API tests were written against; the default, Confluent
    Platform 8.x's shapes for every request, is tested in ``test_api_response_shapes.py`` and
    by the live servers the client tests run against."""
    reg = Registry(open_store(sqlite_url), Settings(poll_interval=0, v8_fields_by_header=True))
    reg.start()
    try:
        yield reg
    finally:
        reg.stop()


@pytest.fixture
def client(registry: Registry) -> Iterator[TestClient]:
    """An HTTP client for a registry on a fresh SQLite file, sending Confluent's media type."""
    app = create_app(registry, manage_lifecycle=False)
    with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as test_client:
        yield test_client


class LiveServer:
    """A ``schema-registry serve`` process on a free port."""

    def __init__(self, store: str, tmp: Path, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp / f"server-{self.port}.log"
        self.store = store
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120) -> None:
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "registry.cli",
                "serve",
                "--port",
                str(self.port),
                "--store",
                self.store,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()}")
            try:
                if httpx.get(self.url + "/", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError(f"server did not start: {self.log_path.read_text()}")

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -9

    def log(self) -> str:
        return self.log_path.read_text()


def sqlite_live_server(tmp: Path, env: dict[str, str] | None = None) -> Iterator[LiveServer]:
    """A running server on a SQLite store in ``tmp`` (``env`` added to its environment),
    stopped (if still up) when the generator is closed: the body of every fixture that gives
    one (``yield from sqlite_live_server(...)``)."""
    server = LiveServer(f"sqlite:///{tmp / 'live.db'}", tmp, env)
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None and server.proc.poll() is None:
            server.stop()


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    yield from sqlite_live_server(tmp_path)
