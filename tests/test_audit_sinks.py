"""The audit file sink (rotation, reading back across rotated files), the stdout sink, fail
open and fail closed with their metrics, and ``schema-registry audit``."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.audit.reader import EventFilter, audit_files, select, subject_history
from registry.audit.sinks import FileSink, StdoutSink
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.production_helpers import CONTENT_TYPE

AVRO = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


def event(n: int, subject: str = "s") -> dict[str, Any]:
    return {
        "id": str(n),
        "time": f"2026-01-01T00:00:{n % 60:02d}.000Z",
        "data": {
            "request": {"subject": subject},
            "authenticationInfo": {"principal": "p"},
            "result": {"outcome": "success"},
        },
    }


def test_file_sink_rotates_by_size_and_keeps_its_backups(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    sink = FileSink(str(path), max_bytes=1000, backups=2)
    lines = [orjson.dumps(event(n)) for n in range(60)]
    for n, line in enumerate(lines):
        sink.write(line, event(n))
    sink.close()
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "audit.jsonl",
        "audit.jsonl.1",
        "audit.jsonl.2",
    ]
    for name in audit_files(str(path)):
        size = Path(name).stat().st_size
        assert 0 < size <= 1000
    # oldest first across the files, the newest line last, nothing out of order or torn
    kept = [e["id"] for e in select(str(path), EventFilter())]
    assert kept == [str(n) for n in range(60 - len(kept), 60)]
    assert 12 <= len(kept) < 60  # three files of about six lines
    # a new sink on the same path appends and rotates on
    again = FileSink(str(path), max_bytes=1000, backups=2)
    again.write(lines[0], event(0))
    again.close()
    assert select(str(path), EventFilter(), last=1)[0]["id"] == "0"


def test_stdout_sink_writes_one_line_per_event() -> None:
    stream = io.BytesIO()
    sink = StdoutSink(stream)
    sink.write(b'{"a":1}', {})
    sink.write(b'{"a":2}', {})
    assert stream.getvalue() == b'{"a":1}\n{"a":2}\n'


def test_filters(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    events = [event(1, "orders-value"), event(2, ":.prod:orders-key"), event(3, "pay")]
    events[2]["data"]["result"]["outcome"] = "denied"
    events[1]["data"]["authenticationInfo"]["principal"] = "ci"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in events) + b'{"torn')

    def ids(where: EventFilter) -> list[str]:
        return [e["id"] for e in select(str(path), where)]

    assert ids(EventFilter()) == ["1", "2", "3"]
    assert ids(EventFilter(subject="orders-*")) == ["1", "2"]
    assert ids(EventFilter(subject=":.prod:*")) == ["2"]
    assert ids(EventFilter(principal="ci")) == ["2"]
    assert ids(EventFilter(outcome="denied")) == ["3"]
    assert ids(EventFilter(since="2026-01-01T00:00:02", until="2026-01-01T00:00:02.5")) == ["2"]
    assert [h["id"] for h in subject_history(str(path), "pay")] == ["3"]


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Any]:
    registries: list[Registry] = []
    clients: list[TestClient] = []

    def make(**settings: Any) -> TestClient:
        n = len(registries)
        reg = Registry(
            open_store(f"sqlite:///{tmp_path / f'r{n}.db'}"), Settings(poll_interval=0, **settings)
        )
        reg.start()
        registries.append(reg)
        client = TestClient(create_app(reg, manage_lifecycle=False))
        client.headers["Content-Type"] = CONTENT_TYPE
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)
    for reg in registries:
        reg.stop()


def metric(client: TestClient, name: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not exported")


def test_fail_open_serves_and_counts_dropped_events(tmp_path: Path, make_client: Any) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the audit directory should be")
    client = make_client(audit_file=str(blocker / "audit.jsonl"))
    answer = client.post("/subjects/s/versions", json={"schema": AVRO})
    assert answer.status_code == 200
    assert metric(client, 'schema_registry_audit_events_dropped_total{sink="file"}') == 1
    assert metric(client, 'schema_registry_audit_events_written_total{sink="file"}') == 0


def test_fail_closed_refuses_changes_while_the_file_cannot_be_written(
    tmp_path: Path, make_client: Any
) -> None:
    blocker = tmp_path / "audit"
    blocker.write_text("a file where the audit directory should be")
    path = blocker / "audit.jsonl"
    client = make_client(audit_file=str(path), audit_fail_closed=True)
    # the first change finds the sink failing only when writing its event: answered 500
    first = client.post("/subjects/s/versions", json={"schema": AVRO})
    assert first.status_code == 500
    assert first.json()["error_code"] == 50001
    # from then on changes are refused before they are made, reads still served
    refused = client.post("/subjects/t/versions", json={"schema": AVRO})
    assert (refused.status_code, refused.json()["error_code"]) == (503, 50301)
    assert client.get("/subjects").json() == ["s"]
    assert client.delete("/subjects/s").status_code == 503
    assert metric(client, "schema_registry_audit_refused_changes_total") == 2
    # the disk comes back: changes are served and audited again
    blocker.unlink()
    blocker.mkdir()
    assert client.post("/subjects/t/versions", json={"schema": AVRO}).status_code == 200
    logged = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["data"]["request"]["subject"] for e in logged] == ["t"]
    assert metric(client, 'schema_registry_audit_events_written_total{sink="file"}') == 1


def test_events_written_are_counted_per_sink(tmp_path: Path, make_client: Any) -> None:
    client = make_client(audit_file=str(tmp_path / "a.jsonl"))
    for n in range(3):
        client.post(f"/subjects/s{n}/versions", json={"schema": AVRO})
    client.get("/subjects")
    assert metric(client, 'schema_registry_audit_events_written_total{sink="file"}') == 3
    assert metric(client, 'schema_registry_audit_events_dropped_total{sink="file"}') == 0


def test_reads_audited_when_configured(tmp_path: Path, make_client: Any) -> None:
    path = tmp_path / "a.jsonl"
    client = make_client(audit_file=str(path), audit_reads=True)
    client.get("/subjects")
    client.post("/subjects/s", json={"schema": AVRO})  # a look-up of a missing subject
    methods = [e["data"]["methodName"] for e in select(str(path), EventFilter())]
    assert methods == ["schema-registry.subjects.list_subjects", "schema-registry.subjects.lookup"]


def test_no_audit_file_no_history(make_client: Any) -> None:
    client = make_client()
    answer = client.get("/audit/subjects/s")
    assert (answer.status_code, answer.json()["error_code"]) == (404, 404)


class Cli:
    """``schema-registry audit ARGS`` in this process: exit code, standard output and error."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *args: str) -> tuple[int, str, str]:
        from registry.cli import main

        self.capsys.readouterr()
        code = main(["audit", *args])
        out, err = self.capsys.readouterr()
        return code, out, err


def test_audit_command_filters_the_file(
    tmp_path: Path, make_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli = Cli(capsys)
    path = tmp_path / "a.jsonl"
    client = make_client(audit_file=str(path))
    client.post("/subjects/orders/versions", json={"schema": AVRO})
    client.post("/subjects/orders/versions", json={"schema": "not a schema"})
    client.put("/config/pay", json={"compatibility": "NONE"})
    code, out, err = run_cli(
        "--file", str(path), "--subject", "orders", "--outcome", "failure", "--json"
    )
    assert code == 0, err
    [failure] = [json.loads(line) for line in out.splitlines()]
    assert failure["data"]["result"]["errorCode"] == 42201
    lines = run_cli("--file", str(path), "--since", "1h")[1].splitlines()
    assert len(lines) == 3
    assert "subjects.register" in lines[0] and "orders v1 id=1" in lines[0]
    assert "failure 422 (42201" in lines[1]
    assert "config.put_subject" in lines[2] and "pay" in lines[2]
    assert run_cli("--file", str(path), "--until", "2000-01-01")[1] == ""
    assert len(run_cli("--file", str(path), "-n", "1")[1].splitlines()) == 1
    assert run_cli("--file", str(path), "--principal", "nobody")[1] == ""
    code, _, err = run_cli("--file", str(path), "--since", "yesterday")
    assert code == 2 and "not a time" in err
    assert run_cli("--file", str(tmp_path / "none.jsonl"))[0] == 1


def test_a_large_error_answer_is_passed_on_whole(tmp_path: Path) -> None:
    """The middleware holds a failure's answer to read its error code: an answer larger than
    it reads is still sent whole (and its event has no code)."""
    import asyncio

    from registry.audit.hub import Auditor
    from registry.audit.middleware import MAX_ERROR_BODY, AuditMiddleware

    body = orjson.dumps({"error_code": 42201, "message": "x" * (MAX_ERROR_BODY + 10)})
    small = orjson.dumps({"error_code": 40401, "message": "Subject 's' not found."})

    async def app(scope: Any, receive: Any, send: Any) -> None:
        payload = body if scope["path"] == "/large" else small
        await send({"type": "http.response.start", "status": 422, "headers": []})
        for start in range(0, len(payload), 4096):
            chunk = payload[start : start + 4096]
            more = start + 4096 < len(payload)
            await send({"type": "http.response.body", "body": chunk, "more_body": more})

    path = tmp_path / "a.jsonl"
    middleware = AuditMiddleware(app, Auditor([FileSink(str(path), 0, 0)], source="test"))
    sent: list[bytes] = []

    async def send(message: Any) -> None:
        if message["type"] == "http.response.body":
            sent.append(message.get("body", b""))

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    for name in ("/large", "/small"):
        scope = {"type": "http", "method": "DELETE", "path": name, "headers": [], "state": {}}
        scope["state"]["audit_refused"] = True  # audited whatever its route
        asyncio.run(middleware(scope, receive, send))
    assert sent == [body, small]
    codes = [e["data"]["result"]["errorCode"] for e in select(str(path), EventFilter())]
    assert codes == [None, 40401]


def test_a_request_refused_before_routing_is_named_by_its_route(
    tmp_path: Path, make_client: Any
) -> None:
    """The schema limits answer before FastAPI routes: the event still names the operation,
    subject and context (and a look-up refused there, a read, has none)."""
    path = tmp_path / "a.jsonl"
    client = make_client(audit_file=str(path), max_schema_bytes=100)
    big = {"schema": '"' + "x" * 200 + '"'}
    assert client.post("/contexts/.c1/subjects/a%2Fb/versions", json=big).status_code == 422
    assert client.post("/subjects/a", json=big).status_code == 422  # a look-up
    [event] = select(str(path), EventFilter())
    data = event["data"]
    assert data["methodName"] == "schema-registry.subjects.register"
    assert data["request"]["path"] == "/contexts/.c1/subjects/a%2Fb/versions"
    assert (data["request"]["subject"], data["request"]["context"]) == (":.c1:a/b", ".c1")
    assert data["result"]["errorCode"] == 42209
