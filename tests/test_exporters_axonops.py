"""An exporter into another Confluent-compatible registry: AxonOps Schema Registry (Go; IMPORT
mode and registration with a given id), built by ``scripts/axonops build`` into
``.cache/axonops``. Opt-in: without the binary the module is skipped (say so in a report;
it never counts as passing)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import LiveServer, free_port
from tests.test_exporters import Api, _avro, _exporter, _state, eventually

BINARY = Path(__file__).resolve().parents[1] / ".cache" / "axonops" / "schema-registry"

pytestmark = pytest.mark.skipif(
    not BINARY.exists(), reason="AxonOps Schema Registry not built: scripts/axonops build"
)


@pytest.fixture(scope="module")
def axonops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    tmp = tmp_path_factory.mktemp("axonops")
    port = free_port()
    env = {**os.environ, "SCHEMA_REGISTRY_HOST": "127.0.0.1", "SCHEMA_REGISTRY_PORT": str(port)}
    with (tmp / "axonops.log").open("wb") as log:
        proc = subprocess.Popen([str(BINARY)], stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp / "axonops.log").read_text()
            try:
                if httpx.get(url + "/subjects", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, (tmp / "axonops.log").read_text()
            time.sleep(0.2)
        yield Api(url)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    tmp = tmp_path_factory.mktemp("axonops-source")
    server = LiveServer(f"sqlite:///{tmp / 'source.db'}", tmp)
    server.start()
    try:
        yield Api(server.url)
    finally:
        server.stop()


def test_export_into_axonops_keeps_ids_versions_references_configs_and_deletes(
    source: Api, axonops: Api
) -> None:
    src, dst = source, axonops
    base = src.ok("POST", "/subjects/ax-base/versions", {"schema": _avro("Base")})["id"]
    field = [{"name": "a", "type": "int", "default": 0}]
    two = src.ok("POST", "/subjects/ax-base/versions", {"schema": _avro("Base", field)})["id"]
    ref = [{"name": "Base", "subject": "ax-base", "version": 1}]
    top_schema = _avro("Top", [{"name": "b", "type": "Base"}])
    top = src.ok("POST", "/subjects/ax-top/versions", {"schema": top_schema, "references": ref})
    src.ok("PUT", "/config/ax-top", {"compatibility": "FULL"})
    # ids the destination would not give itself: its own counter is at 1
    src.ok("POST", "/exporters", _exporter("ax", dst.url, contextType="NONE", subjects=["ax-*"]))

    def copied() -> None:
        got = dst.ok("GET", "/subjects/ax-top/versions/1")
        assert got["id"] == top["id"] and got["references"] == ref

    eventually(copied, timeout=30)
    assert dst.ok("GET", "/subjects/ax-base/versions") == [1, 2]
    assert dst.ok("GET", "/subjects/ax-base/versions/2")["id"] == two
    assert json.loads(dst.ok("GET", f"/schemas/ids/{base}")["schema"])["name"] == "Base"
    assert dst.ok("GET", "/mode/ax-top")["mode"] == "IMPORT"
    eventually(lambda: dst.ok("GET", "/config/ax-top")["compatibilityLevel"] == "FULL")
    # the live tail: a new version, then a soft delete
    new = src.ok(
        "POST",
        "/subjects/ax-base/versions",
        {"schema": _avro("Base", [*field, {"name": "c", "type": "int", "default": 1}])},
    )
    eventually(lambda: dst.ok("GET", "/subjects/ax-base/versions/3")["id"] == new["id"])
    src.ok("DELETE", "/subjects/ax-base/versions/2")
    eventually(lambda: dst.ok("GET", "/subjects/ax-base/versions") == [1, 3])
    eventually(lambda: _state(src, "ax") == "RUNNING")
    assert src.ok("GET", "/exporters/ax/status").get("trace") is None
