"""The Kafka store under faults, on a single broker of this module's own (it is stopped and
started): instances survive broker restarts and recover without a restart; failover after
``kill -9`` of the leader within the lease; SIGTERM hands over at once; a write that meets no
leader waits, then answers 50003; and a ``read_uncommitted`` reader of the topic concludes
what a ``read_committed`` one does, aborted transactions included."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from registry.records import decode_key, decode_value
from tests.conftest import LiveServer, free_port
from tests.fixtures.kafka import SCRIPT
from tests.kafka_helpers import CONTENT_TYPE

HEADERS = {"Content-Type": CONTENT_TYPE}
# failover within seconds: one fault drill at a time (tests/fixtures/parallel.py)
pytestmark = pytest.mark.timing_sensitive


def _script(*args: str) -> None:
    done = subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr


class Broker:
    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="registry-kafka-faults-")
        self.port, self.controller = free_port(), free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.up = False

    def start(self) -> None:
        _script("start", "--dir", self.dir, "--port", str(self.port),
                "--controller-port", str(self.controller))  # fmt: skip
        self.up = True

    def stop(self) -> None:
        _script("stop", "--dir", self.dir)
        self.up = False


@pytest.fixture(scope="module")
def broker() -> Iterator[Broker]:
    broker = Broker()
    broker.start()
    try:
        yield broker
    finally:
        if broker.up:
            broker.stop()
        shutil.rmtree(broker.dir, ignore_errors=True)


def avro(name: str) -> str:
    return json.dumps({"type": "record", "name": name, "fields": [{"name": "a", "type": "int"}]})


def ready(server: LiveServer, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(server.url + "/ready", timeout=2)
            if reply.status_code == 200 and reply.json().get("leader"):
                return dict(reply.json())
            last = reply.text
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.1)
    raise AssertionError(f"{server.url} not ready: {last}\n{server.log()[-3000:]}")


def leader_of(servers: list[LiveServer], timeout: float = 60) -> LiveServer:
    deadline = time.monotonic() + timeout
    while True:
        views = [ready(s) for s in servers]
        leaders = [s for s, v in zip(servers, views, strict=True) if v.get("is_leader")]
        if len(leaders) == 1 and all(v["leader"] == leaders[0].url for v in views):
            return leaders[0]
        assert time.monotonic() < deadline, views
        time.sleep(0.1)


def register(server: LiveServer, subject: str, name: str, timeout: float = 30) -> httpx.Response:
    return httpx.post(
        f"{server.url}/subjects/{subject}/versions",
        json={"schema": avro(name)},
        headers=HEADERS,
        timeout=timeout,
    )


def alive(server: LiveServer) -> bool:
    return server.proc is not None and server.proc.poll() is None


def start_servers(url: str, tmp: Path, count: int) -> list[LiveServer]:
    """``count`` instances, started at the same time (each start waits for its HTTP port)."""
    servers = [LiveServer(url, tmp) for _ in range(count)]

    def start(server: LiveServer) -> None:
        # slow to answer on a loaded machine: alive() and ready() decide
        with contextlib.suppress(RuntimeError):
            server.start()

    threads = [threading.Thread(target=start, args=(s,)) for s in servers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for server in servers:
        assert alive(server), server.log()[-3000:]
    return servers


def stop_all(servers: list[LiveServer]) -> None:
    for server in servers:
        if alive(server):
            server.stop()


def rebuild(bootstrap: str, topic: str, isolation: str) -> dict[str, dict[Any, str]]:
    """What a reader with ``isolation`` concludes from the topic: id -> schema and
    (subject, version) -> schema, and the ids or versions it saw given to two schemas."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"rebuild-{isolation}",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": isolation,
        }
    )
    ids: dict[int, str] = {}
    versions: dict[tuple[str, int], str] = {}
    conflicts: dict[Any, str] = {}
    try:
        tp = TopicPartition(topic, 0)
        _, high = consumer.get_watermark_offsets(tp, timeout=10, cached=False)
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error() is not None:
                if msg.error().code() == KafkaError._PARTITION_EOF and msg.offset() >= high:
                    break
                continue
            key = decode_key(msg.key())
            value = decode_value(msg.value())
            if key.keytype != "SCHEMA" or value is None:
                continue
            schema = value["schema"]
            for table, k in ((ids, value["id"]), (versions, (value["subject"], value["version"]))):
                if table.setdefault(k, schema) != schema:  # type: ignore[attr-defined]
                    conflicts[k] = schema
        else:
            raise AssertionError(f"could not read {topic} to {high}")
    finally:
        consumer.close()
    return {"ids": ids, "versions": versions, "conflicts": conflicts}  # type: ignore[dict-item]


def test_instances_survive_broker_restarts_and_recover(broker: Broker, tmp_path: Path) -> None:
    topic = f"_faults_{free_port()}"
    url = f"kafka://{broker.bootstrap}/?topic={topic}&write.timeout.ms=3000&leader.wait.ms=2000"
    servers = start_servers(url, tmp_path, 2)
    try:
        leader_of(servers)
        assert register(servers[1], "s", "A0").json()["id"] == 1
        for cycle in range(2):
            broker.stop()
            began = time.monotonic()
            for n, server in enumerate(servers):
                failed = register(server, f"down{cycle}{n}", "Down")
                # a clean Confluent error within the write timeout plus the leader wait
                assert failed.status_code in (500, 503), failed.text
                assert failed.json()["error_code"] in (50001, 50002, 50003, 50004, 503)
                assert httpx.get(server.url + "/live", timeout=5).status_code == 200
            assert time.monotonic() - began < 30
            broker.start()
            time.sleep(3)  # librdkafka reconnects; the old code aborted about now
            for server in servers:
                assert alive(server), f"{server.url} exited:\n{server.log()[-3000:]}"
                assert httpx.get(server.url + "/live", timeout=5).status_code == 200
            # the registry recovers without a restart: writes through both instances
            deadline = time.monotonic() + 60
            for n, server in enumerate(servers):
                while True:
                    reply = register(server, f"up{cycle}{n}", "Up")
                    if reply.status_code == 200:
                        break
                    assert time.monotonic() < deadline, reply.text
                    time.sleep(0.5)
        for server in servers:
            assert alive(server), server.log()[-3000:]
        committed = rebuild(broker.bootstrap, topic, "read_committed")
        uncommitted = rebuild(broker.bootstrap, topic, "read_uncommitted")
        assert committed["conflicts"] == {} and uncommitted["conflicts"] == {}
        assert committed["ids"] == uncommitted["ids"]
    finally:
        stop_all(servers)


def _first_write_after(server: LiveServer, began: float, subject: str) -> float:
    while True:
        reply = register(server, subject, "After", timeout=30)
        if reply.status_code == 200:
            return time.monotonic() - began
        assert reply.json()["error_code"] in (50002, 50003, 50004), reply.text
        assert time.monotonic() - began < 30, "no failover within 30 s"


def test_failover_after_kill_9_and_handover_on_sigterm(broker: Broker, tmp_path: Path) -> None:
    """Default settings: the old consumer-group election needed its 6 s session."""
    topic = f"_faults_{free_port()}"
    url = f"kafka://{broker.bootstrap}/?topic={topic}"
    servers = start_servers(url, tmp_path, 4)  # one survives three kills
    try:
        took = []
        for kill in range(3):
            leader = leader_of(servers)
            survivor = next(s for s in servers if s is not leader)
            assert register(leader, f"k{kill}", "Before").status_code == 200
            subject = f"after{kill}"
            assert leader.proc is not None
            os.kill(leader.proc.pid, signal.SIGKILL)
            began = time.monotonic()
            took.append(_first_write_after(survivor, began, subject))
            leader.proc.wait(10)
            servers.remove(leader)
        print(f"\nfailover after kill -9: {[round(t, 2) for t in took]} s")
        assert statistics.median(took) < 4.0, took

        servers.extend(start_servers(url, tmp_path, 1))
        leader = leader_of(servers)
        survivor = next(s for s in servers if s is not leader)
        leader.stop()  # SIGTERM: the leader resigns
        began = time.monotonic()
        handover = _first_write_after(survivor, began, "term")
        print(f"handover after SIGTERM: {handover:.2f} s")
        assert handover < 2.5  # no lease to wait for (1.5 s) and no failover to detect
    finally:
        stop_all(servers)


def test_a_write_that_meets_a_dead_leader_waits_then_answers_50003(
    broker: Broker, tmp_path: Path
) -> None:
    # a lease longer than the test: the follower never claims, the dead leader stays named
    topic = f"_faults_{free_port()}"
    url = f"kafka://{broker.bootstrap}/?topic={topic}&election.lease.ms=60000&leader.wait.ms=2000"
    servers = start_servers(url, tmp_path, 2)
    try:
        dead = leader_of(servers)
        follower = next(s for s in servers if s is not dead)
        assert dead.proc is not None
        os.kill(dead.proc.pid, signal.SIGKILL)
        began = time.monotonic()
        reply = register(follower, "s", "X")
        waited = time.monotonic() - began
        assert reply.status_code == 500
        assert reply.json()["error_code"] == 50003
        assert dead.url in reply.json()["message"]
        assert 1.8 < waited < 10
    finally:
        stop_all(servers)


def test_aborted_records_mean_the_same_to_every_reader(broker: Broker, tmp_path: Path) -> None:
    """A leader dies with a transaction open: the next leader aborts it and re-commits its
    records, so a read_uncommitted reader sees no id given to two schemas."""
    topic = f"_faults_{free_port()}"
    url = f"kafka://{broker.bootstrap}/?topic={topic}"
    servers = start_servers(url, tmp_path, 1)
    try:
        leader_of(servers)
        assert register(servers[0], "a", "A").json()["id"] == 1
        stop_all(servers)  # the leader resigns
        # a leader that decided "id 2 is B under b" and died before committing
        zombie = Producer(
            {
                "bootstrap.servers": broker.bootstrap,
                "transactional.id": f"pyschemaregistry-{topic}",
            }
        )
        zombie.init_transactions(30)
        zombie.begin_transaction()
        key = json.dumps(
            {"keytype": "SCHEMA", "subject": "b", "version": 1, "magic": 1},
            separators=(",", ":"),
        )
        value = {"subject": "b", "version": 1, "id": 2, "schema": avro("B"), "deleted": False}
        zombie.produce(topic, key=key.encode(), value=json.dumps(value).encode(), partition=0)
        zombie.flush(30)  # in the log, never committed
        servers = start_servers(url, tmp_path, 1)
        leader_of(servers)
        third = register(servers[0], "c", "C").json()
        committed = rebuild(broker.bootstrap, topic, "read_committed")
        uncommitted = rebuild(broker.bootstrap, topic, "read_uncommitted")
        assert uncommitted["conflicts"] == {}, uncommitted
        assert committed["ids"] == uncommitted["ids"]
        assert committed["ids"][2] == avro("B")  # re-committed by the new leader
        assert third["id"] == 3
    finally:
        stop_all(servers)


def test_the_leader_reads_records_it_did_not_write_before_deciding(
    broker: Broker, tmp_path: Path
) -> None:
    """A record committed after the leader's last commit by someone else (here a transaction
    of another producer left open while the leader writes, then committed: like a transaction
    whose commit outlived its client's timeout while a partition leader moved) is read before
    the next write is decided, and the leader applies it. The leader once trusted its last
    commit to end the topic: it gave the same id again and, having applied its own record from
    the delivery report, skipped the earlier record for good (the three-broker fault run's lost
    writes, duplicate ids and instances that disagree)."""
    topic = f"_faults_{free_port()}"
    url = f"kafka://{broker.bootstrap}/?topic={topic}"
    servers = start_servers(url, tmp_path, 1)
    try:
        leader = leader_of(servers)
        assert register(leader, "a", "A").json()["id"] == 1
        assert register(leader, "z", "Z").json()["id"] == 2
        other = Producer(
            {"bootstrap.servers": broker.bootstrap, "transactional.id": f"other-{topic}"}
        )
        other.init_transactions(30)
        other.begin_transaction()
        key = json.dumps(
            {"keytype": "SCHEMA", "subject": "b", "version": 1, "magic": 1},
            separators=(",", ":"),
        )
        value = {"subject": "b", "version": 1, "id": 3, "schema": avro("B"), "deleted": False}
        other.produce(topic, key=key.encode(), value=json.dumps(value).encode(), partition=0)
        assert other.flush(30) == 0  # in the log, committed in two seconds
        committer = threading.Timer(2.0, other.commit_transaction, args=(30,))
        committer.start()
        try:
            reply = register(leader, "c", "C")
        finally:
            committer.join()
        assert reply.status_code == 200, reply.text
        assert reply.json()["id"] == 4, reply.json()
        committed = rebuild(broker.bootstrap, topic, "read_committed")
        assert committed["conflicts"] == {}, committed["conflicts"]
        deadline = time.monotonic() + 10
        while True:
            got = httpx.get(f"{leader.url}/subjects/b/versions/1", timeout=10)
            if got.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert got.status_code == 200 and got.json()["id"] == 3, got.text
    finally:
        stop_all(servers)
