"""``schema-registry copy``: Kafka -> SQLite -> a new Kafka topic, with the registry's answers
identical at every step; an empty target is required and a led topic is refused."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.copy import CopyError, copy_store
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from registry.store.kafka import KafkaLogStore
from tests.kafka_helpers import CONTENT_TYPE, kafka_client

PATHS = [
    "/subjects",
    "/subjects?deleted=true",
    "/subjects/a/versions",
    "/subjects/a/versions/1",
    "/subjects/a/versions/2",
    "/subjects/b/versions?deleted=true",
    "/subjects/b/versions/1?deleted=true",
    "/subjects/c/versions",
    "/subjects/d/versions",
    "/schemas/ids/1",
    "/schemas/ids/2",
    "/schemas/ids/3",
    "/schemas/ids/2/versions",
    "/schemas?deleted=true",
    "/config",
    "/config/a",
    "/mode",
    "/mode/c",
    "/contexts",
    "/subjects/:.ctx:e/versions/1",
    "/subjects/:.ctx:e/versions/2",
]


def avro(name: str, extra: bool = False) -> str:
    fields = [{"name": "x", "type": "int"}]
    if extra:
        fields.append({"name": "y", "type": "int", "default": 0})
    return json.dumps({"type": "record", "name": name, "fields": fields}, separators=(",", ":"))


def fill(client: TestClient) -> None:
    def ok(reply: object) -> None:
        assert getattr(reply, "status_code", 0) == 200, getattr(reply, "text", reply)

    ok(client.post("/subjects/a/versions", json={"schema": avro("A")}))
    ok(client.post("/subjects/a/versions", json={"schema": avro("A", extra=True)}))
    ok(client.post("/subjects/b/versions", json={"schema": avro("B")}))
    ok(client.delete("/subjects/b"))  # soft delete
    ok(client.post("/subjects/c/versions", json={"schema": avro("A")}))  # shares id 1
    ok(client.post("/subjects/d/versions", json={"schema": avro("D")}))
    ok(client.post("/subjects/d/versions", json={"schema": avro("D", extra=True)}))
    ok(client.delete("/subjects/d/versions/1"))
    ok(client.delete("/subjects/d/versions/1?permanent=true"))  # a tombstone
    ok(client.put("/config", json={"compatibility": "FORWARD"}))
    ok(client.put("/config/a", json={"compatibility": "FULL"}))
    ok(client.put("/mode/c", json={"mode": "READONLY"}))
    ok(client.post("/subjects/:.ctx:e/versions", json={"schema": avro("E")}))
    ok(client.post("/subjects/:.ctx:e/versions", json={"schema": avro("E", extra=True)}))


def answers(client: TestClient) -> dict[str, tuple[int, object]]:
    return {p: (client.get(p).status_code, client.get(p).json()) for p in PATHS}


def sql_answers(url: str) -> dict[str, tuple[int, object]]:
    registry = Registry(open_store(url), Settings(poll_interval=0, v8_fields_by_header=True))
    with TestClient(create_app(registry), headers={"Content-Type": CONTENT_TYPE}) as client:
        return answers(client)


def run_copy(source: str, target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "registry.cli", "copy", "--from", source, "--to", target],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_round_trip_kafka_sqlite_new_kafka_topic(
    kafka_bootstrap: str, kafka_url: str, tmp_path: Path
) -> None:
    with kafka_client(kafka_url) as client:
        fill(client)
        before = answers(client)
    assert before["/subjects/a/versions"] == (200, [1, 2])
    assert before["/subjects/d/versions"] == (200, [2])
    assert before["/mode/c"] == (200, {"mode": "READONLY"})

    backup = f"sqlite:///{tmp_path / 'backup.db'}"
    done = run_copy(kafka_url, backup)
    assert done.returncode == 0, done.stderr
    assert "copied" in done.stdout
    assert sql_answers(backup) == before

    restored = f"kafka://{kafka_bootstrap}/?topic=_schemas_restored_{uuid.uuid4().hex[:8]}"
    done = run_copy(backup, restored)
    assert done.returncode == 0, done.stderr
    with kafka_client(restored) as client:
        assert answers(client) == before
        # the restored topic goes on where the original stopped
        new = client.post("/subjects/f/versions", json={"schema": avro("F")})
        assert new.json()["id"] == 6


def test_copy_refuses_a_non_empty_target(kafka_url: str, tmp_path: Path) -> None:
    with kafka_client(kafka_url) as client:
        assert client.post("/subjects/a/versions", json={"schema": avro("A")}).status_code == 200
    target = f"sqlite:///{tmp_path / 'target.db'}"
    assert copy_store(kafka_url, target).records > 0
    with pytest.raises(CopyError, match="is not empty"):
        copy_store(kafka_url, target)
    failed = run_copy(kafka_url, target)
    assert failed.returncode == 1
    assert "is not empty" in failed.stderr


def test_copy_refuses_a_topic_led_by_running_instances(kafka_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    store = open_store(source)
    store.open()
    store.close()
    leader = KafkaLogStore(kafka_url, advertised_url="http://127.0.0.1:1")
    leader.open()
    try:
        assert leader.wait_leader(30)
        with pytest.raises(CopyError, match="has another writer"):
            copy_store(source, kafka_url, timeout=3)
    finally:
        leader.close()


def test_copy_rejects_bad_urls(tmp_path: Path) -> None:
    failed = run_copy("mysql://x/y", f"sqlite:///{tmp_path / 't.db'}")
    assert failed.returncode == 1
    assert "unsupported store URL scheme" in failed.stderr
