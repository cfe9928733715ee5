"""Two registry processes on one PostgreSQL, registering concurrently, never give one id to
two schemas, never give one subject-version to two schemas, and lose no acknowledged write."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.conftest import CONTENT_TYPE, LiveServer

SUBJECTS = 6
SCHEMAS_PER_WRITER = 15


def schema_text(n: int) -> str:
    return json.dumps(
        {"type": "record", "name": f"R{n}", "fields": [{"name": f"f{n}", "type": "int"}]}
    )


def field_added(n: int, extra: int) -> str:
    fields = [{"name": f"f{n}", "type": "int"}] + [
        {"name": f"x{i}", "type": "int", "default": 0} for i in range(extra)
    ]
    return json.dumps({"type": "record", "name": f"R{n}", "fields": fields})


@pytest.fixture
def two_servers(postgres_store_url: str, tmp_path: Path):
    servers = [
        LiveServer(postgres_store_url, tmp_path, env={"SCHEMA_REGISTRY_POLL_INTERVAL": "0.2"})
        for _ in range(2)
    ]
    for server in servers:
        server.start()
    yield servers
    for server in servers:
        server.stop()


def test_parallel_registrations_through_two_processes(two_servers: list[LiveServer]) -> None:
    # each writer registers new versions into shared subjects (versions contend) and
    # distinct schemas (ids contend); half the schemas are registered by both processes
    jobs = []
    for writer in range(4):
        server = two_servers[writer % 2]
        for i in range(SCHEMAS_PER_WRITER):
            subject = f"s{i % SUBJECTS}"
            shared = i % 2 == 0
            text = (
                field_added(i % SUBJECTS, i // SUBJECTS + 1)
                if shared
                else schema_text(1000 + writer * 100 + i)
            )
            jobs.append((server.url, subject if shared else f"own-{writer}-{i}", text))

    def register(job: tuple[str, str, str]) -> tuple[str, str, int]:
        url, subject, text = job
        with httpx.Client(timeout=30) as client:
            response = client.post(
                f"{url}/subjects/{subject}/versions?normalize=false",
                json={"schema": text},
                headers={"Content-Type": CONTENT_TYPE},
            )
            assert response.status_code in (200, 409), response.text
            return subject, text, response.json().get("id", -1)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(register, jobs))

    acknowledged = [(s, t, i) for s, t, i in results if i > 0]
    assert len(acknowledged) >= len(jobs) // 2

    # both processes converge on the same state
    deadline = time.monotonic() + 10
    answers: list[list] = []
    while time.monotonic() < deadline:
        answers = [httpx.get(f"{s.url}/schemas?limit=100000").json() for s in two_servers]
        if answers[0] == answers[1]:
            break
        time.sleep(0.2)
    assert answers[0] == answers[1]
    stored = answers[0]

    # no id given to two different schemas, no subject-version given twice
    text_of_id: dict[int, str] = {}
    seen_versions: set[tuple[str, int]] = set()
    for entry in stored:
        assert text_of_id.setdefault(entry["id"], entry["schema"]) == entry["schema"]
        key = (entry["subject"], entry["version"])
        assert key not in seen_versions
        seen_versions.add(key)

    # every acknowledged registration is there, under the id it was acknowledged with
    for subject, text, schema_id in acknowledged:
        matching = [e for e in stored if e["subject"] == subject and e["id"] == schema_id]
        assert matching, (subject, schema_id)
        assert json.loads(matching[0]["schema"]) == json.loads(text)

    # the same schema in two subjects, registered through different processes, shares its id
    first = httpx.post(
        f"{two_servers[0].url}/subjects/twin-a/versions",
        json={"schema": schema_text(5000)},
        headers={"Content-Type": CONTENT_TYPE},
    )
    second = httpx.post(
        f"{two_servers[1].url}/subjects/twin-b/versions",
        json={"schema": schema_text(5000)},
        headers={"Content-Type": CONTENT_TYPE},
    )
    assert first.json()["id"] == second.json()["id"]
