"""Writes answered before their transaction is committed (registry.store.kafka_txn), on the
session's broker: an answered write whose transaction the leader never committed (it was killed)
is on the survivor with its id and version, and every reader of the topic agrees; a follower
sees a write within ``txn.max.open.ms``; ``txn.linger.ms=0`` commits before answering; a write
that lands apart from the open transaction (another writer in between) loses no answered write."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from registry.store.base import WriteConflict
from registry.store.kafka import KafkaLogStore
from tests.conftest import LiveServer, free_port
from tests.kafka_helpers import read_topic
from tests.test_kafka_store_faults import (
    avro,
    leader_of,
    rebuild,
    register,
    start_servers,
    stop_all,
)

# failover within seconds: one fault drill at a time (tests/fixtures/parallel.py)
pytestmark = pytest.mark.timing_sensitive

#: nothing commits an open transaction in these tests but a claim or a stop
NEVER = "&txn.linger.ms=600000&txn.max.open.ms=600000"


#: a second version of avro("B") (BACKWARD compatible)
B2 = json.dumps(
    {
        "type": "record",
        "name": "B",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 0}],
    }
)


def _register(server: LiveServer, subject: str, schema: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/subjects/{subject}/versions",
        json={"schema": schema},
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        timeout=30,
    )


def _get(server: LiveServer, path: str) -> httpx.Response:
    return httpx.get(server.url + path, timeout=10)


def _until(server: LiveServer, path: str, timeout: float) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            reply = _get(server, path)
            if reply.status_code == 200 or time.monotonic() > deadline:
                return reply
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.05)


def test_an_answered_write_of_a_killed_leader_survives_with_its_id(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """The leader answers three registrations from one open transaction and is killed before
    committing it; the survivor's claim aborts it and commits its records again. Without that
    re-commit (``_aborted_tail``) the answered writes are gone."""
    topic = f"_open_txn_{free_port()}"
    url = f"kafka://{kafka_bootstrap}/?topic={topic}{NEVER}"
    servers = start_servers(url, tmp_path, 2)
    try:
        leader = leader_of(servers)
        survivor = next(s for s in servers if s is not leader)
        answers = [register(leader, s, n).json() for s, n in (("a", "A"), ("b", "B"))]
        answers.append(_register(leader, "b", B2).json())
        assert [a.get("id") for a in answers] == [1, 2, 3], answers
        # answered, not committed: the follower cannot read it
        assert _get(survivor, "/subjects/a/versions/1").status_code == 404
        assert leader.proc is not None
        os.kill(leader.proc.pid, signal.SIGKILL)
        leader.proc.wait(10)
        servers.remove(leader)
        got = _until(survivor, "/subjects/b/versions/2", 60)
        assert got.status_code == 200, got.text
        assert (got.json()["id"], got.json()["version"]) == (3, 2)
        assert _get(survivor, "/subjects/a/versions/1").json()["id"] == 1
        assert json.loads(_get(survivor, "/schemas/ids/2").json()["schema"]) == json.loads(
            avro("B")
        )
        fourth = register(survivor, "c", "C")
        assert fourth.status_code == 200 and fourth.json()["id"] == 4, fourth.text
        stop_all(servers)  # the stopping leader commits its open transaction first
        committed = rebuild(kafka_bootstrap, topic, "read_committed")
        uncommitted = rebuild(kafka_bootstrap, topic, "read_uncommitted")
        assert committed["conflicts"] == {} and uncommitted["conflicts"] == {}, uncommitted
        assert committed["ids"] == uncommitted["ids"]
        assert sorted(committed["ids"]) == [1, 2, 3, 4]
        assert json.loads(committed["ids"][4]) == json.loads(avro("C"))
    finally:
        stop_all(servers)


def test_a_follower_sees_a_write_within_txn_max_open_ms(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """A linger longer than the test: only ``txn.max.open.ms`` (300 ms) commits the write."""
    topic = f"_open_txn_{free_port()}"
    url = f"kafka://{kafka_bootstrap}/?topic={topic}&txn.linger.ms=600000&txn.max.open.ms=300"
    servers = start_servers(url, tmp_path, 2)
    try:
        leader = leader_of(servers)
        follower = next(s for s in servers if s is not leader)
        took = []
        for n in range(3):
            assert register(leader, f"s{n}", f"S{n}").status_code == 200
            began = time.monotonic()
            assert _until(follower, f"/subjects/s{n}/versions/1", 10).status_code == 200
            took.append(time.monotonic() - began)
        print(f"\nfollower saw the write after {[round(t, 3) for t in took]} s")
        assert max(took) < 3.0, took  # 0.3 s + a commit + the follower's read, on a busy host
    finally:
        stop_all(servers)


def test_a_forwarded_write_is_committed_without_waiting_for_the_linger(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """The follower answers a write it forwarded once it has read it (up to 5 s): the leader
    commits at once for it instead of keeping the transaction open (here for ten minutes)."""
    topic = f"_open_txn_{free_port()}"
    servers = start_servers(f"kafka://{kafka_bootstrap}/?topic={topic}{NEVER}", tmp_path, 2)
    try:
        leader = leader_of(servers)
        follower = next(s for s in servers if s is not leader)
        took = []
        for n in range(3):
            began = time.monotonic()
            assert register(follower, f"f{n}", f"F{n}").status_code == 200
            took.append(time.monotonic() - began)
            assert _get(follower, f"/subjects/f{n}/versions/1").status_code == 200
        print(f"\nwrites through the follower took {[round(t, 3) for t in took]} s")
        assert max(took) < 2.5, took  # not the follower's 5 s bound on reading it
    finally:
        stop_all(servers)


def _stable_end(bootstrap: str, topic: str) -> int:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "stable", "isolation.level": "read_committed"}
    )
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), 10, cached=False)[1])
    finally:
        consumer.close()


def _write(store: KafkaLogStore, subject: str) -> int:
    key = {"keytype": "SCHEMA", "subject": subject, "version": 1, "magic": 1}
    value = {"subject": subject, "version": 1, "id": 1, "schema": avro(subject), "deleted": False}
    with store.exclusive() as txn:
        txn.append([(json.dumps(key).encode(), json.dumps(value).encode())])
    return txn.appended[-1].offset


def _committed_soon(bootstrap: str, topic: str, offset: int, timeout: float) -> bool:
    """Whether a read_committed reader can read ``offset`` within ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _stable_end(bootstrap, topic) > offset:
            return True
        time.sleep(0.05)
    return False


def test_linger_0_commits_before_answering_and_an_open_transaction_does_not(
    kafka_bootstrap: str, kafka_topic: str
) -> None:
    """With ``txn.linger.ms=0`` a read_committed reader reads a write as soon as its markers
    are written (asynchronously, right after the commit); with a long linger the write is
    answered from an open transaction, and committed when the store stops."""
    for options, committed in (("&txn.linger.ms=0", True), (NEVER, False)):
        topic = f"{kafka_topic}{len(options)}"
        store = KafkaLogStore(f"kafka://{kafka_bootstrap}/?topic={topic}{options}")
        store.open()
        try:
            assert store.wait_leader(60)
            offset = _write(store, "s")
            assert _committed_soon(kafka_bootstrap, topic, offset, 2.0) is committed, options
        finally:
            store.close()
        assert _committed_soon(kafka_bootstrap, topic, offset, 10.0)  # committed at close


def test_a_write_landing_apart_from_the_open_transaction_loses_no_answered_write(
    kafka_bootstrap: str, kafka_topic: str
) -> None:
    """Another writer's record lands between an answered write (open transaction) and the
    next write's records. The reader cannot read past our own open transaction, so the leader
    aborts, commits the answered write again, and the next write is decided again
    (WriteConflict) on the topic read to its end."""
    store = KafkaLogStore(f"kafka://{kafka_bootstrap}/?topic={kafka_topic}{NEVER}")
    store.open()
    try:
        assert store.wait_leader(60)
        _write(store, "answered")
        outsider = Producer({"bootstrap.servers": kafka_bootstrap, "acks": "all"})
        outsider.produce(kafka_topic, key=b'{"keytype":"NOOP","magic":0}', partition=0)
        assert outsider.flush(10) == 0
        began = time.monotonic()
        with pytest.raises(WriteConflict):
            _write(store, "apart")
        assert time.monotonic() - began < store.settings.write_timeout / 2  # no wait for it
        keys = [json.loads(k).get("subject") for k, _ in read_topic(kafka_bootstrap, kafka_topic)]
        assert keys == [None, "answered"], keys  # the outsider's NOOP, then ours again
        _write(store, "apart")  # decided again: reads the topic to its end first
    finally:
        store.close()
    keys = [json.loads(k).get("subject") for k, _ in read_topic(kafka_bootstrap, kafka_topic)]
    assert keys == [None, "answered", "apart"], keys
