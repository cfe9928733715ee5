"""FastAPI's own OpenTelemetry instrumentation: off when no provider is configured by the time
the app is made (its per-request check then costs for nothing), FastAPI's defaults when one is
(as ``opentelemetry-instrument`` configures them at start-up). Each case in a fresh interpreter:
OpenTelemetry's providers are process-wide and set once."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from opentelemetry import trace
if sys.argv[1] == "configured":
    class VendorTracerProvider(trace.NoOpTracerProvider):
        pass
    trace.set_tracer_provider(VendorTracerProvider())
from registry.api.app import create_app
from registry.core import Registry
from registry.store.factory import open_store
app = create_app(Registry(open_store(sys.argv[2])), manage_lifecycle=False)
print(app._telemetry["tracing"], app._telemetry["metrics"])
"""


def run(case: str, url: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, case, url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_fastapi_telemetry_is_off_without_a_provider_and_on_with_one(sqlite_url: str) -> None:
    assert run("plain", sqlite_url) == "False False"
    assert run("configured", sqlite_url) == "True True"
