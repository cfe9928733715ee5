"""Start-up does the one-off work the first requests would otherwise do on the event loop:
Starlette's ``run_in_threadpool`` imports anyio's asyncio backend the first time it runs
(0.04-0.3 s on this machine), stalling every connection while it does. The app's lifespan does it
instead, before the server accepts a connection."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# A fresh interpreter drives the ASGI lifespan protocol the way uvicorn does (no TestClient:
# its portal would import the backend itself) and reports which modules are loaded once the
# start-up is complete, before any request.
PROBE = """
import asyncio, sys
from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store

BACKEND = "anyio._backends._asyncio"
before = BACKEND in sys.modules
app = create_app(Registry(open_store(sys.argv[1]), Settings(poll_interval=0)))

async def main() -> None:
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    started = asyncio.Event()
    stop = asyncio.Event()
    sent = []

    async def receive():
        if messages[0]["type"] == "lifespan.shutdown":
            await stop.wait()
        return messages.pop(0)

    async def send(message):
        sent.append(message["type"])
        if message["type"] == "lifespan.startup.complete":
            started.set()

    task = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send))
    await started.wait()
    print("before-import", before)
    print("after-startup", BACKEND in sys.modules)
    stop.set()
    await task
    print("sent", ",".join(sent))

asyncio.run(main())
"""


def test_lifespan_imports_the_thread_pool_backend_before_the_first_request(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, f"sqlite:///{tmp_path / 'registry.db'}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    # importing the app does not load it (else this test would prove nothing) ...
    assert "before-import False" in done.stdout, done.stdout
    # ... the start-up does
    assert "after-startup True" in done.stdout, done.stdout
    assert lines[-1] == "lifespan.startup.complete,lifespan.shutdown.complete", lines
