"""Several ``schema-registry serve`` processes on one Kafka topic: forwarding to the elected
leader (headers passed on, answers verbatim), 50004/50003, failover after ``kill -9`` within
15 s, and no id or subject-version given to two schemas while leaders are killed under load."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from registry.store.kafka import KafkaLogStore
from tests.conftest import LiveServer, free_port
from tests.kafka_helpers import CONTENT_TYPE, read_topic
from tests.production_helpers import settled_leader

HEADERS = {"Content-Type": CONTENT_TYPE}
# failover within seconds: one fault drill at a time (tests/fixtures/parallel.py)
pytestmark = pytest.mark.timing_sensitive
#: fast failover for the tests (the broker started by scripts/kafka allows 1 s sessions)
SESSION = "election.session.timeout.ms=2000"


def avro(name: str, extra_field: str | None = None) -> str:
    fields: list[dict[str, Any]] = [{"name": "id", "type": "long"}]
    if extra_field:
        fields.append({"name": extra_field, "type": "string", "default": ""})
    return json.dumps({"type": "record", "name": name, "fields": fields}, separators=(",", ":"))


def wait_ready(server: LiveServer, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(server.url + "/ready", timeout=2)
            if reply.status_code == 200:
                return dict(reply.json())
            last = reply.json()
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.1)
    raise AssertionError(f"{server.url} not ready: {last}\n{server.log()[-3000:]}")


def leader_of(servers: list[LiveServer], timeout: float = 30) -> LiveServer:
    """The instance that says it leads, once every live instance agrees on its URL."""
    return settled_leader(servers, wait_ready, timeout=timeout)


@pytest.fixture
def cluster_url(kafka_bootstrap: str, kafka_topic: str) -> str:
    return f"kafka://{kafka_bootstrap}/?topic={kafka_topic}&{SESSION}"


@pytest.fixture
def servers(cluster_url: str, tmp_path: Path) -> Iterator[list[LiveServer]]:
    started: list[LiveServer] = []
    try:
        for _ in range(3):
            server = LiveServer(cluster_url, tmp_path)
            server.start()
            started.append(server)
        for server in started:
            wait_ready(server)
        yield started
    finally:
        for server in started:
            if server.proc is not None and server.proc.poll() is None:
                server.stop()


def test_three_instances_forward_writes_and_read_their_own(servers: list[LiveServer]) -> None:
    leader = leader_of(servers)
    followers = [s for s in servers if s is not leader]
    assert len(followers) == 2
    for i, server in enumerate(servers):
        schema = avro(f"R{i}")
        reply = httpx.post(
            f"{server.url}/subjects/s{i}/versions",
            json={"schema": schema},
            headers={**HEADERS, "X-Request-ID": f"req-{i}"},
            timeout=30,
        )
        assert reply.status_code == 200, reply.text
        assert reply.json()["id"] == i + 1
        # the leader's answer comes back verbatim (its X-Request-ID echo included)
        assert reply.headers["x-request-id"] == f"req-{i}"
        # the leader's applied offset (what the follower reads up to) is not passed on
        assert "x-registry-applied-offset" not in reply.headers
        # read-your-writes on the instance written to, follower or not
        got = httpx.get(f"{server.url}/subjects/s{i}/versions/1", timeout=5).json()
        assert (got["id"], got["schema"]) == (i + 1, schema)
    # config, mode and delete writes are forwarded too; errors come back with the leader's code
    follower = followers[0]
    assert httpx.put(
        f"{follower.url}/config/s0", json={"compatibility": "FULL"}, headers=HEADERS, timeout=30
    ).json() == {"compatibility": "FULL"}
    assert httpx.get(f"{follower.url}/config/s0", timeout=5).json()["compatibilityLevel"] == "FULL"
    assert httpx.put(
        f"{follower.url}/mode/s1", json={"mode": "READONLY"}, headers=HEADERS, timeout=30
    ).json() == {"mode": "READONLY"}
    refused = httpx.post(
        f"{follower.url}/subjects/s1/versions", json={"schema": avro("X")}, headers=HEADERS
    )
    assert refused.status_code == 422 and refused.json()["error_code"] == 42205
    assert httpx.delete(f"{followers[1].url}/subjects/s2", timeout=30).json() == [1]
    missing = httpx.delete(f"{followers[1].url}/subjects/nope", timeout=30)
    assert missing.status_code == 404 and missing.json()["error_code"] == 40401
    # every instance converges on the same state
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        views = [httpx.get(f"{s.url}/subjects", timeout=5).json() for s in servers]
        if all(v == ["s0", "s1"] for v in views):
            break
        time.sleep(0.1)
    assert views == [["s0", "s1"]] * 3


class _Capture(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.seen.append((self.command, self.path, headers, body))
        answer = b'{"id":4242}'
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("X-Leader", "capture")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_forwarding_passes_authorization_and_returns_the_answer_verbatim(
    cluster_url: str, tmp_path: Path
) -> None:
    capture = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    threading.Thread(target=capture.serve_forever, daemon=True).start()
    leader_url = f"http://127.0.0.1:{capture.server_address[1]}"
    # the leader is a store advertising the capture server's URL
    leader = KafkaLogStore(cluster_url, advertised_url=leader_url)
    leader.open()
    follower = LiveServer(cluster_url, tmp_path, env={"SCHEMA_REGISTRY_MAX_REQUEST_BYTES": "2000"})
    try:
        assert leader.wait_leader(30)
        follower.start()
        assert wait_ready(follower)["leader"] == leader_url
        reply = httpx.post(
            f"{follower.url}/subjects/a%2Fb/versions?normalize=true",
            content=b'{"schema": "\\"int\\""}',
            headers={**HEADERS, "Authorization": "Basic dXNlcjpwYXNz", "X-Custom": "kept"},
            timeout=30,
        )
        assert reply.status_code == 200
        assert reply.json()["id"] == 4242
        assert reply.headers["x-leader"] == "capture"
        method, path, headers, body = _Capture.seen[-1]
        assert (method, path) == ("POST", "/subjects/a%2Fb/versions?normalize=true")
        assert headers["authorization"] == "Basic dXNlcjpwYXNz"
        assert headers["x-custom"] == "kept"
        assert headers["x-forward"] == "true"
        assert headers["content-type"] == CONTENT_TYPE
        assert body == b'{"schema": "\\"int\\""}'
        # reads are answered locally, never forwarded
        count = len(_Capture.seen)
        assert httpx.get(f"{follower.url}/subjects", timeout=5).json() == []
        lookup = httpx.post(f"{follower.url}/subjects/x", json={"schema": '"int"'}, timeout=5)
        assert lookup.json()["error_code"] == 40401
        assert len(_Capture.seen) == count
        # a body larger than the server accepts is refused before forwarding
        big = httpx.post(
            f"{follower.url}/subjects/big/versions",
            json={"schema": json.dumps("x" * 5000)},
            headers=HEADERS,
            timeout=30,
        )
        assert big.status_code == 413 and big.json()["error_code"] == 413
        assert len(_Capture.seen) == count
    finally:
        follower.stop()
        leader.close()
        capture.shutdown()


def test_a_leader_without_http_is_50004(cluster_url: str, tmp_path: Path) -> None:
    # a leader that serves no HTTP (e.g. the copy command): writes cannot be forwarded
    silent = KafkaLogStore(cluster_url)
    silent.open()
    follower = LiveServer(cluster_url, tmp_path)
    try:
        assert silent.wait_leader(30)
        follower.start()
        wait_ready(follower)
        began = time.monotonic()
        reply = httpx.post(
            f"{follower.url}/subjects/s/versions", json={"schema": '"int"'}, headers=HEADERS
        )
        assert reply.status_code == 500
        assert reply.json() == {"error_code": 50004, "message": "Leader not known."}
        assert time.monotonic() - began < 5
        # reads still work
        assert httpx.get(f"{follower.url}/subjects", timeout=5).json() == []
    finally:
        follower.stop()
        silent.close()


def test_an_unreachable_leader_is_50003(cluster_url: str, tmp_path: Path) -> None:
    dead_url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    dead = KafkaLogStore(cluster_url, advertised_url=dead_url)
    dead.open()
    # the follower waits leader.wait.ms for a leader that answers, then gives up
    follower = LiveServer(f"{cluster_url}&leader.wait.ms=1000", tmp_path)
    try:
        assert dead.wait_leader(30)
        follower.start()
        assert wait_ready(follower)["leader"] == dead_url
        began = time.monotonic()
        reply = httpx.post(
            f"{follower.url}/subjects/s/versions", json={"schema": '"int"'}, headers=HEADERS
        )
        assert reply.status_code == 500
        assert reply.json()["error_code"] == 50003
        assert dead_url in reply.json()["message"]
        assert 0.9 < time.monotonic() - began < 5
    finally:
        follower.stop()
        dead.close()


def _kill(server: LiveServer) -> None:
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(timeout=10)


def test_failover_after_kill_9_within_15_seconds(servers: list[LiveServer]) -> None:
    leader = leader_of(servers)
    first = httpx.post(
        f"{leader.url}/subjects/before/versions", json={"schema": avro("B")}, headers=HEADERS
    )
    assert first.json()["id"] == 1
    survivors = [s for s in servers if s is not leader]
    _kill(leader)
    killed_at = time.monotonic()
    took = None
    while time.monotonic() - killed_at < 30:
        reply = httpx.post(
            f"{survivors[0].url}/subjects/after/versions",
            json={"schema": avro("A")},
            headers=HEADERS,
            timeout=30,
        )
        if reply.status_code == 200:
            took = time.monotonic() - killed_at
            break
        assert reply.json()["error_code"] in (50002, 50003, 50004), reply.text
        time.sleep(0.2)
    assert took is not None, "no instance took over within 30 s"
    print(f"\nfailover: writes succeed again {took:.1f}s after kill -9 of the leader")
    assert took < 15
    assert reply.json()["id"] == 2
    new_leader = leader_of(survivors)
    assert new_leader is not leader
    for server in survivors:
        got = httpx.get(f"{server.url}/subjects/before/versions/1", timeout=5).json()
        assert got["id"] == 1


def test_no_duplicate_ids_while_leaders_are_killed(
    servers: list[LiveServer], cluster_url: str, kafka_bootstrap: str, kafka_topic: str
) -> None:
    acked: dict[tuple[str, str], dict[str, Any]] = {}
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[str] = []

    def client(worker: int) -> None:
        n = 0
        with httpx.Client(timeout=30) as http:
            while not stop.is_set() and n < 400:
                n += 1
                subject = f"subj-{n % 5}"  # shared subjects: versions are contended too
                schema = avro(f"W{worker}N{n}", extra_field=f"f{worker}_{n}")
                target = servers[(worker + n) % len(servers)]
                if target.proc is None or target.proc.poll() is not None:
                    continue
                try:
                    reply = http.post(
                        f"{target.url}/subjects/{subject}/versions?normalize=false",
                        json={"schema": schema},
                        headers=HEADERS,
                    )
                except httpx.HTTPError:
                    continue  # the instance was killed mid-request: not acknowledged
                if reply.status_code == 200:
                    with lock:
                        acked[(subject, schema)] = reply.json()
                elif reply.json().get("error_code") not in (503, 50001, 50002, 50003, 50004):
                    errors.append(reply.text)

    # compatibility NONE: every new schema is a new version
    leader = leader_of(servers)
    assert (
        httpx.put(
            f"{leader.url}/config", json={"compatibility": "NONE"}, headers=HEADERS, timeout=30
        ).status_code
        == 200
    )
    workers = [threading.Thread(target=client, args=(w,)) for w in range(6)]
    for w in workers:
        w.start()
    try:
        for _round in range(2):
            time.sleep(3)
            live = [s for s in servers if s.proc is not None and s.proc.poll() is None]
            victim = leader_of(live)
            _kill(victim)
            time.sleep(1)
            victim.start()  # the killed instance comes back as a follower
    finally:
        time.sleep(3)
        stop.set()
        for w in workers:
            w.join(timeout=60)
    assert not errors, errors[:3]
    # the restarted instance replayed the topic and said so in its log
    wait_ready(victim)
    assert f"replayed {kafka_topic} up to offset" in victim.log()
    print(f"\n{len(acked)} registrations acknowledged across 2 leader kills")
    assert len(acked) > 20, f"too few registrations acknowledged: {len(acked)}"

    # every acknowledged registration is present, with the id it was acknowledged with
    reader = servers[0]
    wait_ready(reader)
    # one connection for every look-up: a new client per call builds a TLS context each time,
    # which made this loop outlast the test's time limit once the store acknowledged ~500 writes
    with httpx.Client(base_url=reader.url, headers=HEADERS, timeout=30) as lookups:
        for (subject, schema), answer in acked.items():
            found = lookups.post(f"/subjects/{subject}", json={"schema": schema})
            assert found.status_code == 200, (subject, found.text)
            assert found.json()["id"] == answer["id"]

    # the log never gives one id or one subject-version to two different schemas
    by_id: dict[int, set[str]] = {}
    by_version: dict[tuple[str, int], set[str]] = {}
    for key, value in read_topic(kafka_bootstrap, kafka_topic):
        k = json.loads(key)
        if k["keytype"] != "SCHEMA" or value is None:
            continue
        v = json.loads(value)
        by_id.setdefault(v["id"], set()).add(v["schema"])
        by_version.setdefault((v["subject"], v["version"]), set()).add(v["schema"])
    assert {i: s for i, s in by_id.items() if len(s) > 1} == {}
    assert {k: s for k, s in by_version.items() if len(s) > 1} == {}
    assert len(by_id) >= len({a["id"] for a in acked.values()})


def test_a_paused_old_leader_is_fenced(
    servers: list[LiveServer], kafka_bootstrap: str, kafka_topic: str
) -> None:
    """SIGSTOP the leader until another instance leads, write there, then SIGCONT the old one
    and write to both at once: the old leader's stale state never yields a duplicate id."""
    old = leader_of(servers)
    assert old.proc is not None
    none = httpx.put(f"{old.url}/config", json={"compatibility": "NONE"}, headers=HEADERS)
    assert none.status_code == 200
    os.kill(old.proc.pid, signal.SIGSTOP)
    try:
        survivors = [s for s in servers if s is not old]
        new = leader_of(survivors, timeout=30)
        for i in range(3):
            reply = httpx.post(
                f"{new.url}/subjects/s/versions", json={"schema": avro(f"New{i}")}, headers=HEADERS
            )
            assert reply.status_code == 200, reply.text
    finally:
        os.kill(old.proc.pid, signal.SIGCONT)
    acked: dict[str, int] = {}
    lock = threading.Lock()

    def write(target: LiveServer, name: str) -> None:
        try:
            reply = httpx.post(
                f"{target.url}/subjects/s/versions",
                json={"schema": avro(name)},
                headers=HEADERS,
                timeout=30,
            )
        except httpx.HTTPError:
            return
        if reply.status_code == 200:
            with lock:
                acked[name] = reply.json()["id"]
        else:
            assert reply.json()["error_code"] in (50001, 50002, 50003, 50004), reply.text

    threads = [
        threading.Thread(target=write, args=(target, f"{tag}{i}"))
        for i in range(5)
        for target, tag in ((old, "Old"), (new, "Cur"))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert any(name.startswith("Cur") for name in acked)
    by_id: dict[int, set[str]] = {}
    by_version: dict[int, set[str]] = {}
    for key, value in read_topic(kafka_bootstrap, kafka_topic):
        if value is None or json.loads(key)["keytype"] != "SCHEMA":
            continue
        v = json.loads(value)
        by_id.setdefault(v["id"], set()).add(v["schema"])
        by_version.setdefault(v["version"], set()).add(v["schema"])
    assert all(len(s) == 1 for s in by_id.values()), by_id
    assert all(len(s) == 1 for s in by_version.values()), by_version
    for name, schema_id in acked.items():
        assert by_id[schema_id] == {avro(name)}


def test_a_stopped_leader_hands_over_at_once(
    kafka_bootstrap: str, kafka_topic: str, tmp_path: Path
) -> None:
    """SIGTERM: the leader leaves the election group on the way out, so the next instance
    leads well before the (here 10 s) session timeout would have noticed."""
    url = f"kafka://{kafka_bootstrap}/?topic={kafka_topic}&election.session.timeout.ms=10000"
    pair = [LiveServer(url, tmp_path), LiveServer(url, tmp_path)]
    try:
        for server in pair:
            server.start()
            wait_ready(server)
        leader = leader_of(pair)
        other = next(s for s in pair if s is not leader)
        assert leader.stop() == 0
        stopped_at = time.monotonic()
        while time.monotonic() - stopped_at < 20:
            reply = httpx.post(
                f"{other.url}/subjects/s/versions",
                json={"schema": avro("S")},
                headers=HEADERS,
                timeout=30,
            )
            if reply.status_code == 200:
                break
            time.sleep(0.1)
        took = time.monotonic() - stopped_at
        assert reply.json()["id"] == 1
        assert took < 5, f"handover took {took:.1f}s"
        assert "stopped" in leader.log()
    finally:
        for server in pair:
            if server.proc is not None and server.proc.poll() is None:
                server.stop()


def test_an_instance_joining_does_not_fail_writes_on_a_follower(
    cluster_url: str, tmp_path: Path
) -> None:
    """Scaling out: while a new instance joins (the election group rebalances), writes sent to
    a follower keep succeeding; the leader keeps its partition (cooperative-sticky) and the
    follower keeps forwarding to it rather than answering 50004 mid-rebalance."""
    started = [LiveServer(cluster_url, tmp_path), LiveServer(cluster_url, tmp_path)]
    try:
        for server in started:
            server.start()
        leader = leader_of(started)
        follower = next(s for s in started if s is not leader)
        answers: list[tuple[int, str]] = []
        stop = threading.Event()

        def write() -> None:
            with httpx.Client(base_url=follower.url, timeout=30) as client:
                n = 0
                while not stop.is_set():
                    n += 1
                    reply = client.post(
                        f"/subjects/scale-{n}-value/versions",
                        json={"schema": avro(f"S{n}")},
                        headers=HEADERS,
                    )
                    answers.append((reply.status_code, reply.text))

        writer = threading.Thread(target=write)
        writer.start()
        try:
            time.sleep(1)
            for _ in range(2):  # two joins, each a rebalance
                joining = LiveServer(cluster_url, tmp_path)
                started.append(joining)
                joining.start()
                wait_ready(joining)
                assert leader_of(started) is leader
                time.sleep(2)
        finally:
            stop.set()
            writer.join(timeout=60)
    finally:
        for server in started:
            server.stop()
    failed = [a for a in answers if a[0] != 200]
    assert len(answers) > 20 and not failed, (len(answers), failed[:3])


def test_a_forwarded_write_is_audited_once_by_the_leader(cluster_url: str, tmp_path: Path) -> None:
    """A write sent to a follower crosses two instances; the leader's audit event is the only
    one (with the state it changed), the follower's relay writes none."""
    started: list[LiveServer] = []
    files = [tmp_path / f"audit-{n}.jsonl" for n in range(2)]
    try:
        for audit_file in files:
            server = LiveServer(
                cluster_url, tmp_path, {"SCHEMA_REGISTRY_AUDIT_FILE": str(audit_file)}
            )
            server.start()
            started.append(server)
        leader = leader_of(started)
        follower = next(s for s in started if s is not leader)
        url = f"{follower.url}/subjects/audited/versions"
        done = httpx.post(url, json={"schema": avro("Audited")}, headers=HEADERS, timeout=30)
        assert done.status_code == 200, done.text
        bad = httpx.post(url, json={"schema": "{not avro"}, headers=HEADERS, timeout=30)
        assert bad.status_code == 422
        events = [
            (n, json.loads(line))
            for n, audit_file in enumerate(files)
            if audit_file.exists()
            for line in audit_file.read_text().splitlines()
        ]
        mine = [(n, e) for n, e in events if e["data"]["request"]["path"].startswith("/subjects/")]
        statuses = sorted(e["data"]["result"]["status"] for _, e in mine)
        assert statuses == [200, 422], mine
        leader_index = started.index(leader)
        assert {n for n, _ in mine} == {leader_index}
        ok = next(e for _, e in mine if e["data"]["result"]["status"] == 200)
        assert ok["data"]["state"]["before"] != ok["data"]["state"]["after"]
    finally:
        for server in started:
            if server.proc is not None and server.proc.poll() is None:
                server.stop()
