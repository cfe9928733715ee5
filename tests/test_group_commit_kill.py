"""``kill -9`` of the writing instance while 16 clients keep batches of registrations in flight
(group commit): every acknowledged registration is present afterwards with the id it was
acknowledged with, and no registration is half-stored. Each registration goes to a subject in a
context of its own, so it is two records (CONTEXT, SCHEMA) in the batch's transaction: a context
without its schema would be a half-applied write."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from pathlib import Path

import httpx

from tests.conftest import LiveServer
from tests.kafka_helpers import CONTENT_TYPE, read_topic

HEADERS = {"Content-Type": CONTENT_TYPE}
CLIENTS = 16


def avro(name: str) -> str:
    return json.dumps({"type": "record", "name": name, "fields": [{"name": "a", "type": "long"}]})


def load_then_kill(server: LiveServer) -> dict[str, tuple[int, str]]:
    """Register from 16 clients; kill -9 the server once ~100 writes were answered."""
    acked: dict[str, tuple[int, str]] = {}
    lock = threading.Lock()
    stop = threading.Event()
    unexpected: list[str] = []

    def client(worker: int) -> None:
        n = 0
        with httpx.Client(timeout=30) as http:
            while not stop.is_set():
                n += 1
                subject = f":.w{worker}n{n}:s"
                schema = avro(f"W{worker}N{n}")
                try:
                    reply = http.post(
                        f"{server.url}/subjects/{subject}/versions",
                        json={"schema": schema},
                        headers=HEADERS,
                    )
                except httpx.HTTPError:
                    return  # killed mid-request: not acknowledged
                if reply.status_code == 200:
                    with lock:
                        acked[subject] = (reply.json()["id"], schema)
                else:
                    unexpected.append(reply.text)

    workers = [threading.Thread(target=client, args=(w,)) for w in range(CLIENTS)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + 60
    while len(acked) < 100 and time.monotonic() < deadline and not unexpected:
        time.sleep(0.01)
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(timeout=10)
    stop.set()
    for w in workers:
        w.join(timeout=60)
    assert not unexpected, unexpected[:3]
    assert len(acked) >= 100, len(acked)
    return acked


def check_log(entries: list[tuple[bytes, bytes | None]], acked: dict[str, tuple[int, str]]) -> None:
    contexts: set[str] = set()
    schemas: dict[str, int] = {}
    for key, value in entries:
        k = json.loads(key)
        if value is None:
            continue
        v = json.loads(value)
        if k["keytype"] == "CONTEXT":
            contexts.add(v["context"])
        elif k["keytype"] == "SCHEMA":
            schemas[v["subject"]] = v["id"]
    # nothing half-applied: every context record came with its registration's schema record
    assert {c for c in contexts if f":{c}:s" not in schemas} == set()
    # every acknowledged registration is stored with the id it was acknowledged with
    assert {s: a for s, a in acked.items() if schemas.get(s) != a[0]} == {}


def check_served(server: LiveServer, acked: dict[str, tuple[int, str]]) -> None:
    """A restarted instance replays the log and serves every acknowledged registration."""
    with httpx.Client(timeout=30) as http:
        for subject, (schema_id, schema) in acked.items():
            found = http.post(
                f"{server.url}/subjects/{subject}", json={"schema": schema}, headers=HEADERS
            )
            assert found.status_code == 200, (subject, found.text)
            assert found.json()["id"] == schema_id


def wait_ready(server: LiveServer, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(server.url + "/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(server.log()[-3000:])


def test_kill_9_in_a_batch_on_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    server = LiveServer(f"sqlite:///{db}", tmp_path)
    server.start()
    acked = load_then_kill(server)
    with sqlite3.connect(db) as conn:
        entries = [
            (bytes(k), None if v is None else bytes(v))
            for k, v in conn.execute('SELECT key, value FROM registry_log ORDER BY "offset"')
        ]
    check_log(entries, acked)
    again = LiveServer(f"sqlite:///{db}", tmp_path)
    again.start()
    try:
        check_served(again, acked)
    finally:
        again.stop()


def test_kill_9_in_a_batch_on_kafka(kafka_bootstrap: str, kafka_topic: str, tmp_path: Path) -> None:
    url = f"kafka://{kafka_bootstrap}/?topic={kafka_topic}&election.session.timeout.ms=2000"
    server = LiveServer(url, tmp_path)
    server.start()
    wait_ready(server)
    acked = load_then_kill(server)
    check_log(read_topic(kafka_bootstrap, kafka_topic), acked)
    again = LiveServer(url, tmp_path)
    again.start()
    try:
        wait_ready(again)
        check_served(again, acked)
    finally:
        again.stop()
