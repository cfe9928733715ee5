"""An exporter on the Kafka store survives its leader's ``kill -9``: the new leader takes the
export over from the stored offset, and the destination ends with every version exactly once,
with the source's ids."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import CONTENT_TYPE, LiveServer
from tests.production_helpers import settled_leader
from tests.test_kafka_cluster import SESSION, wait_ready

HEADERS = {"Content-Type": CONTENT_TYPE}
# failover within seconds: one fault drill at a time (tests/fixtures/parallel.py)
pytestmark = pytest.mark.timing_sensitive
BEFORE, DURING = 200, 30


def _avro(name: str) -> str:
    return json.dumps({"type": "record", "name": name, "fields": []})


@pytest.fixture
def cluster(
    kafka_bootstrap: str, kafka_topic: str, tmp_path: Path
) -> Iterator[tuple[list[LiveServer], LiveServer]]:
    url = f"kafka://{kafka_bootstrap}/?topic={kafka_topic}&{SESSION}"
    started: list[LiveServer] = []
    destination = LiveServer(f"sqlite:///{tmp_path / 'destination.db'}", tmp_path)
    try:
        destination.start()
        for _ in range(2):
            server = LiveServer(url, tmp_path)
            server.start()
            started.append(server)
        for server in started:
            wait_ready(server)
        yield started, destination
    finally:
        for server in [*started, destination]:
            if server.proc is not None and server.proc.poll() is None:
                server.stop()


HTTP = httpx.Client(headers=HEADERS, timeout=30)


def _post(url: str, path: str, body: object) -> httpx.Response:
    return HTTP.post(url + path, json=body)


@pytest.mark.timeout(900)  # three servers start on a machine other suites load too
def test_leader_killed_during_an_export_loses_and_duplicates_nothing(
    cluster: tuple[list[LiveServer], LiveServer],
) -> None:
    sources, destination = cluster
    leader = settled_leader(sources, wait_ready, timeout=60)
    survivor = next(s for s in sources if s is not leader)
    ids: dict[str, int] = {}
    for i in range(BEFORE):
        answer = _post(leader.url, f"/subjects/k-{i}/versions", {"schema": _avro(f"K{i}")})
        ids[f"k-{i}"] = answer.json()["id"]
    body = {
        "name": "failover",
        "contextType": "NONE",
        "subjects": ["k-*"],
        "config": {"schema.registry.url": destination.url},
    }
    assert _post(survivor.url, "/exporters", body).json() == {"name": "failover"}  # forwarded
    # kill the leader once the export is under way, not finished
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        copied = HTTP.get(destination.url + "/subjects", timeout=10).json()
        if copied:
            break
        time.sleep(0.05)
    assert 0 < len(copied) < BEFORE, len(copied)
    assert leader.proc is not None
    os.kill(leader.proc.pid, signal.SIGKILL)
    leader.proc.wait(timeout=10)
    # producers go on writing through the survivor while it takes over
    for i in range(BEFORE, BEFORE + DURING):
        while True:
            answer = _post(survivor.url, f"/subjects/k-{i}/versions", {"schema": _avro(f"K{i}")})
            if answer.status_code == 200:
                ids[f"k-{i}"] = answer.json()["id"]
                break
            assert answer.json()["error_code"] in (50002, 50003, 50004), answer.text
            time.sleep(0.2)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        copied = HTTP.get(destination.url + "/subjects", timeout=10).json()
        if len(copied) == len(ids):
            break
        time.sleep(0.2)
    assert sorted(copied) == sorted(ids)
    for subject, schema_id in ids.items():
        versions = HTTP.get(f"{destination.url}/subjects/{subject}/versions", timeout=10)
        assert versions.json() == [1], (subject, versions.text)
        got = HTTP.get(f"{destination.url}/subjects/{subject}/versions/1", timeout=10).json()
        assert got["id"] == schema_id
    status = HTTP.get(f"{survivor.url}/exporters/failover/status", timeout=10).json()
    assert status["state"] == "RUNNING", status
