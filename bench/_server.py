"""What the benches share to run our registry: a free local port, and the server on SQLite."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Our registry on a fresh SQLite file in ``tmp``; returns the process and its URL."""
    import urllib3

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "registry.cli", "serve", "--port", str(port),
         "--store", f"sqlite:///{tmp / 'bench.db'}"],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if urllib3.request("GET", url + "/", timeout=1, retries=False).status == 200:
                return proc, url
        except urllib3.exceptions.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start: " + (tmp / "server.log").read_text())


@contextmanager
def registry_url(url: str | None) -> Iterator[str]:
    """``url`` when one is given (an existing registry), else ours started on a temporary
    SQLite file for the ``with`` block and stopped (SIGTERM) after it."""
    if url is not None:
        yield url
        return
    with tempfile.TemporaryDirectory() as tmp:
        proc, started = start_server(Path(tmp))
        try:
            yield started
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
