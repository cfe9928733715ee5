"""The Kafka store on a real broker: topic creation and checks, Confluent's record format on the
wire, tombstones on the original key bytes, replay into a new instance, and its error codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from fastapi.testclient import TestClient

from registry import errors
from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.kafka import KafkaLogStore, KafkaStoreError, _write_error, parse_kafka_url
from tests.conftest import free_port
from tests.kafka_helpers import CONTENT_TYPE, kafka_client, produce_raw, read_topic, wait_ready

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "kafka"

COMPACT = (",", ":")
AVRO_1 = json.dumps(
    {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}, separators=COMPACT
)
AVRO_2 = json.dumps(
    {
        "type": "record",
        "name": "R",
        "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "int", "default": 0}],
    },
    separators=COMPACT,
)


# ---- URLs -----------------------------------------------------------------------------------


def test_url_defaults_and_options() -> None:
    s = parse_kafka_url("kafka://h1:9092,h2:9093")
    assert (s.bootstrap, s.topic, s.replication_factor) == ("h1:9092,h2:9093", "_schemas", None)
    assert (s.election_topic, s.election_group) == (
        "_schemas-election",
        "pyschemaregistry-_schemas",
    )
    assert (s.write_timeout, s.election_lease_ms, s.client) == (10.0, 1500, {})
    assert (s.election_heartbeat_ms, s.leader_wait_ms) == (250, 5000)
    assert (s.txn_linger_ms, s.txn_max_open_ms) == (10, 50)
    s = parse_kafka_url("kafka://h:9092/?txn.linger.ms=0&txn.max.open.ms=200")
    assert (s.txn_linger_ms, s.txn_max_open_ms, s.client) == (0, 200, {})
    # the lease's old name (when the election was a consumer group's session) still works
    s = parse_kafka_url("kafka://h:9092/?election.session.timeout.ms=600")
    assert (s.election_lease_ms, s.election_heartbeat_ms) == (600, 100)
    s = parse_kafka_url(
        "kafka://h:9092/?topic=t&replication.factor=3&write.timeout.ms=500"
        "&security.protocol=SASL_SSL&sasl.mechanism=PLAIN&sasl.username=u&sasl.password=hunter2"
    )
    assert (s.topic, s.replication_factor, s.write_timeout) == ("t", 3, 0.5)
    assert s.client == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
        "sasl.password": "hunter2",
    }
    assert "hunter2" not in s.describe()
    assert "sasl.password=***" in s.describe()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("kafka:///?topic=x", "needs brokers"),
        ("kafka://u:p@h:9092", "needs brokers"),
        ("kafka://h:9092/mytopic", "the topic is a query parameter"),
        ("kafka://h:9092/?topic=", "empty topic"),
        ("kafka://h:9092/?replication.factor=three", "not an integer"),
        ("kafka://h:9092/?write.timeout.ms=0", "must be positive"),
        ("kafka://h:9092/?txn.linger.ms=-1", "must be at least 0"),
        ("kafka://h:9092/?txn.max.open.ms=0", "must be positive"),
        ("kafka://h:9092/?election.lease.ms=600&election.heartbeat.ms=300", "a third of"),
    ],
)
def test_bad_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_kafka_url(url)


def test_unknown_client_property_is_refused_at_open(kafka_bootstrap: str) -> None:
    store = KafkaLogStore(f"kafka://{kafka_bootstrap}/?topic=x&no.such.property=1")
    with pytest.raises(KafkaStoreError, match=r"no\.such\.property"):
        store.open()


# ---- the topic ------------------------------------------------------------------------------


def test_creates_a_compacted_single_partition_topic(kafka_bootstrap: str, kafka_url: str) -> None:
    store = KafkaLogStore(kafka_url)
    store.open()
    try:
        topic = store.settings.topic
        admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
        meta = admin.list_topics(timeout=10)
        assert len(meta.topics[topic].partitions) == 1
        assert store.settings.election_topic in meta.topics
        resource = ConfigResource("topic", topic)
        configs = admin.describe_configs([resource])[resource].result(timeout=10)
        assert configs["cleanup.policy"].value == "compact"
        assert store.cluster_id() == meta.cluster_id
    finally:
        store.close()


def _create(bootstrap: str, topic: str, partitions: int, policy: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    new = NewTopic(topic, partitions, 1, config={"cleanup.policy": policy})
    admin.create_topics([new])[topic].result(timeout=30)


def test_refuses_a_topic_with_several_partitions(kafka_bootstrap: str, kafka_topic: str) -> None:
    _create(kafka_bootstrap, kafka_topic, 3, "compact")
    store = KafkaLogStore(f"kafka://{kafka_bootstrap}/?topic={kafka_topic}")
    with pytest.raises(KafkaStoreError, match=r"exactly 1 partition.*but it has 3"):
        store.open()


def test_refuses_a_topic_without_compaction(kafka_bootstrap: str, kafka_topic: str) -> None:
    _create(kafka_bootstrap, kafka_topic, 1, "delete")
    store = KafkaLogStore(f"kafka://{kafka_bootstrap}/?topic={kafka_topic}")
    with pytest.raises(KafkaStoreError, match=r"cleanup\.policy=compact.*'delete'"):
        store.open()


# ---- records on the wire --------------------------------------------------------------------


def test_writes_confluent_records_and_tombstones_on_the_original_key(
    kafka_bootstrap: str, kafka_url: str, kafka_topic: str
) -> None:
    # a schema written by an old Confluent release: other key field order, no schemaType
    old_key = b'{"subject":"old","version":1,"magic":0,"keytype":"SCHEMA"}'
    old_value = json.dumps(
        {"subject": "old", "version": 1, "id": 7, "schema": AVRO_1, "deleted": False}
    ).encode()
    creator = KafkaLogStore(kafka_url)  # creates the topic as the registry would
    creator.open()
    assert creator.wait_leader(30)
    creator.close()
    produce_raw(kafka_bootstrap, kafka_topic, [(old_key, old_value)])
    with kafka_client(kafka_url) as client:
        assert client.get("/schemas/ids/7").json()["schema"] == AVRO_1
        assert client.post("/subjects/new/versions", json={"schema": AVRO_1}).json()["id"] == 7
        assert client.put("/config/new", json={"compatibility": "FULL"}).status_code == 200
        assert client.delete("/subjects/old").json() == [1]
        assert client.delete("/subjects/old?permanent=true").json() == [1]
    records = read_topic(kafka_bootstrap, kafka_topic)
    keys = [k for k, _ in records]
    assert b'{"keytype":"SCHEMA","subject":"new","version":1,"magic":1}' in keys
    assert b'{"keytype":"CONFIG","subject":"new","magic":0}' in keys
    new_value = json.loads(
        dict(records)[b'{"keytype":"SCHEMA","subject":"new","version":1,"magic":1}']
    )
    assert (new_value["subject"], new_value["version"], new_value["id"]) == ("new", 1, 7)
    assert new_value["schema"] == AVRO_1 and new_value["deleted"] is False
    # the permanent delete is a tombstone on the exact bytes of the old key, so compaction
    # really removes the schema
    assert records[-1] == (old_key, None)


def test_replay_serves_the_same_answers_in_a_new_instance(kafka_url: str) -> None:
    paths = [
        "/subjects",
        "/subjects?deleted=true",
        "/subjects/a/versions",
        "/subjects/a/versions/2",
        "/subjects/b/versions?deleted=true",
        "/schemas/ids/1",
        "/schemas/ids/2/versions",
        "/config",
        "/config/a",
        "/mode/b",
        "/contexts",
        "/subjects/:.ctx:c/versions/1",
    ]
    with kafka_client(kafka_url) as client:
        assert client.post("/subjects/a/versions", json={"schema": AVRO_1}).json()["id"] == 1
        assert client.post("/subjects/a/versions", json={"schema": AVRO_2}).json()["id"] == 2
        # read-your-writes on the instance written to
        assert client.get("/subjects/a/versions/latest").json()["id"] == 2
        assert client.post("/subjects/b/versions", json={"schema": AVRO_1}).json()["id"] == 1
        assert client.delete("/subjects/b/versions/1").json() == 1
        assert client.post("/subjects/:.ctx:c/versions", json={"schema": AVRO_1}).status_code == 200
        assert client.put("/config", json={"compatibility": "NONE"}).status_code == 200
        assert client.put("/config/a", json={"compatibility": "FULL"}).status_code == 200
        assert client.put("/mode/b", json={"mode": "READONLY"}).status_code == 200
        before = {p: (client.get(p).status_code, client.get(p).json()) for p in paths}
    assert before["/subjects/a/versions"] == (200, [1, 2])
    with kafka_client(kafka_url) as client:
        after = {p: (client.get(p).status_code, client.get(p).json()) for p in paths}
    assert after == before


# ---- readiness and errors -------------------------------------------------------------------


def test_not_ready_before_the_replay(kafka_url: str) -> None:
    registry = Registry(KafkaLogStore(kafka_url), Settings(poll_interval=0))
    app = create_app(registry, manage_lifecycle=False)  # never started: nothing replayed
    with TestClient(app, headers={"Content-Type": CONTENT_TYPE}) as client:
        ready = client.get("/ready")
        assert ready.status_code == 503
        assert ready.json()["error_code"] == 503
        assert "not ready" in ready.json()["message"]
        blocked = client.get("/subjects")
        assert blocked.status_code == 503 and blocked.json()["error_code"] == 503
        assert client.get("/").status_code == 200


def test_a_write_on_an_instance_that_is_not_the_leader_is_50004(kafka_url: str) -> None:
    leader = KafkaLogStore(kafka_url, advertised_url="http://127.0.0.1:1")
    leader.open()
    try:
        assert leader.wait_leader(30)
        follower = KafkaLogStore(kafka_url, advertised_url="http://127.0.0.1:2")
        follower.open()
        try:
            assert follower.wait_caught_up(30)
            with pytest.raises(errors.RegistryError) as raised, follower.exclusive():
                pass
            assert raised.value.error_code == 50004
            assert not follower.is_leader
            assert follower.leader_url() == "http://127.0.0.1:1"
        finally:
            follower.close()
    finally:
        leader.close()


def _usurper(bootstrap: str, store: KafkaLogStore) -> Producer:
    """A producer with the store's transactional id: its ``init_transactions`` fences the
    leader's producer, as a newer leader's does (a false election)."""
    return Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": store.settings.transactional_id}
    )


def _registry_client(url: str) -> tuple[KafkaLogStore, Registry, TestClient]:
    # txn.linger.ms=0: each write commits before it is answered, so a fault before the commit
    # fails the write itself (with a linger it would fail a later commit of answered records)
    store = KafkaLogStore(f"{url}&txn.linger.ms=0", advertised_url="http://127.0.0.1:1")
    registry = Registry(store, Settings(poll_interval=0, v8_fields_by_header=True))
    return store, registry, TestClient(create_app(registry), headers={"Content-Type": CONTENT_TYPE})


def test_a_write_fenced_before_it_reached_the_log_is_decided_again(
    kafka_bootstrap: str, kafka_url: str, kafka_topic: str
) -> None:
    """The leader's producer is fenced (a newer producer took the transactional id) between
    two writes: the next write's records never reach the log; the leader claims again within
    the write's deadline and the registry decides the write again: 200, written once (it
    answered 500 50004 before, though no other instance led)."""
    store, _, client = _registry_client(kafka_url)
    with client:
        wait_ready(client)
        assert store.wait_leader(30)
        _usurper(kafka_bootstrap, store).init_transactions(30)
        reply = client.post("/subjects/s/versions", json={"schema": AVRO_1})
        assert reply.status_code == 200, reply.text
        assert client.get(f"/schemas/ids/{reply.json()['id']}").status_code == 200
    schemas = [k for k, _ in read_topic(kafka_bootstrap, kafka_topic) if b'"SCHEMA"' in k]
    assert len(schemas) == 1


def test_a_delete_fenced_after_its_records_reached_the_log_is_answered_once(
    kafka_bootstrap: str, kafka_url: str, kafka_topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fault lands between the delivery of a DELETE's records and its commit (the
    transaction is fenced and aborted there, as when a newer leader's ``init_transactions``
    or a coordinator move ends it): the next claim re-commits the aborted records, and the
    write, found committed, is answered as decided (200 with the version). Deciding it again
    would answer 404 for the delete's own records; before, it answered 500 50004."""
    from registry.store import kafka as kafka_store

    store, _, client = _registry_client(kafka_url)
    armed: list[Producer] = []
    landing = kafka_store.check_landing

    def fence_before_commit(*args: object, **kwargs: object) -> None:
        if armed:
            armed.pop().init_transactions(30)  # our open transaction is aborted, we are fenced
        landing(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(kafka_store, "check_landing", fence_before_commit)
    with client:
        wait_ready(client)
        assert store.wait_leader(30)
        assert client.post("/subjects/s/versions", json={"schema": AVRO_1}).status_code == 200
        armed.append(_usurper(kafka_bootstrap, store))
        reply = client.delete("/subjects/s/versions/1")
        assert reply.status_code == 200, reply.text
        assert reply.json() == 1
        assert not armed  # the fault did happen
        assert client.get("/subjects/s/versions").status_code == 404  # soft-deleted
        assert client.get("/subjects/s/versions?deleted=true").json() == [1]
    # a read_committed reader sees the deleted version once (re-committed by the claim)
    values = [v for k, v in read_topic(kafka_bootstrap, kafka_topic) if b'"SCHEMA"' in k]
    assert [b'"deleted":true' in (v or b"") for v in values] == [False, True]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (KafkaError._TIMED_OUT, 50002),
        (KafkaError._MSG_TIMED_OUT, 50002),
        (KafkaError.REQUEST_TIMED_OUT, 50002),
        (KafkaError.MSG_SIZE_TOO_LARGE, 42209),
        # a leader fenced by a newer one is no longer the leader: its follower forwards the
        # write to the new leader on 50004 instead of failing it
        (KafkaError._FENCED, 50004),
        (KafkaError.PRODUCER_FENCED, 50004),
        (KafkaError.NOT_ENOUGH_REPLICAS, 50001),
    ],
)
def test_kafka_failures_map_to_confluent_codes(code: int, expected: int) -> None:
    assert _write_error("writing", KafkaException(KafkaError(code))).error_code == expected


def test_an_unreachable_cluster_fails_start_up_quickly() -> None:
    store = KafkaLogStore(f"kafka://127.0.0.1:{free_port()}/?init.timeout.ms=2000")
    began = time.monotonic()
    with pytest.raises(KafkaStoreError, match="cannot open"):
        store.open()
    assert time.monotonic() - began < 10


def test_writes_fail_with_50001_or_50002_when_the_broker_goes_away() -> None:
    """A broker of its own (the session's must stay up): after it stops, a write answers
    within its timeout with Confluent's store error codes, never hangs."""
    directory = tempfile.mkdtemp(prefix="registry-kafka-down-")
    port = free_port()
    started = subprocess.run(
        ["bash", str(SCRIPT), "start", "--dir", directory, "--port", str(port),
         "--controller-port", str(free_port())],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    url = f"kafka://127.0.0.1:{port}/?topic=t&write.timeout.ms=3000"
    stopped = False
    try:
        with kafka_client(url) as client:
            ok = client.post("/subjects/s/versions", json={"schema": AVRO_1})
            assert ok.json()["id"] == 1
            subprocess.run(
                ["bash", str(SCRIPT), "stop", "--dir", directory], timeout=120, check=True
            )
            stopped = True
            began = time.monotonic()
            failed = client.post("/subjects/s/versions", json={"schema": AVRO_2})
            assert time.monotonic() - began < 15
            assert failed.status_code == 500
            assert failed.json()["error_code"] in (50001, 50002), failed.text
            # reads are still answered from memory
            assert client.get("/subjects/s/versions/1").json()["id"] == 1
    finally:
        if not stopped:
            subprocess.run(["bash", str(SCRIPT), "stop", "--dir", directory], timeout=120)
        shutil.rmtree(directory, ignore_errors=True)
