"""DEK registry records in every store: SQLite and PostgreSQL tables, the Kafka topic; replayed
on restart, carried by ``schema-registry copy``; served to confluent-kafka's DekRegistryClient."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.rules.encryption.dek_registry.dek_registry_client import (
    DekAlgorithm,
    DekRegistryClient,
)
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.copy import copy_store
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from tests.conftest import CONTENT_TYPE, LiveServer
from tests.kafka_helpers import kafka_client, read_topic
from tests.production_helpers import settled_leader

KEKS = "/dek-registry/v1/keks"
PATHS = [
    f"{KEKS}?deleted=true",
    f"{KEKS}/k1",
    f"{KEKS}/k2?deleted=true",
    f"{KEKS}/k1/deks?deleted=true",
    f"{KEKS}/k1/deks/orders/versions?deleted=true",
    f"{KEKS}/k1/deks/orders/versions/1?deleted=true",
    f"{KEKS}/k1/deks/orders/versions/2",
    f"{KEKS}/k1/deks/gone/versions?deleted=true",
    "/subjects",
]


def material(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def fill(client: TestClient) -> None:
    def ok(reply: object, status: int = 200) -> None:
        assert getattr(reply, "status_code", 0) == status, getattr(reply, "text", reply)

    ok(client.post(KEKS, json={"name": "k1", "kmsType": "local-kms", "kmsKeyId": "a"}))
    ok(client.post(KEKS, json={"name": "k2", "kmsType": "aws", "kmsKeyId": "arn:x"}))
    ok(client.delete(f"{KEKS}/k2"), 204)
    for version in (1, 2):
        body = {"version": version, "encryptedKeyMaterial": material(f"m{version}")}
        ok(client.post(f"{KEKS}/k1/deks/orders", json=body))
    ok(client.delete(f"{KEKS}/k1/deks/orders/versions/1"), 204)
    ok(client.post(f"{KEKS}/k1/deks/gone", json={"encryptedKeyMaterial": material("g")}))
    ok(client.delete(f"{KEKS}/k1/deks/gone"), 204)
    ok(client.delete(f"{KEKS}/k1/deks/gone?permanent=true"), 204)  # tombstones
    ok(client.post("/subjects/orders/versions", json={"schema": '"string"'}))


def answers(client: TestClient) -> dict[str, tuple[int, object]]:
    out = {}
    for path in PATHS:
        reply = client.get(path)
        out[path] = (reply.status_code, reply.json())
    return out


def check(before: dict[str, tuple[int, object]]) -> None:
    assert before[f"{KEKS}?deleted=true"] == (200, ["k1", "k2"])
    assert before[f"{KEKS}/k2?deleted=true"][1]["deleted"] is True  # type: ignore[index]
    assert before[f"{KEKS}/k1/deks/orders/versions?deleted=true"] == (200, [1, 2])
    assert before[f"{KEKS}/k1/deks/gone/versions?deleted=true"] == (200, [])
    assert before[f"{KEKS}/k1/deks?deleted=true"] == (200, ["orders"])
    assert before["/subjects"] == (200, ["orders"])


@contextmanager
def sql_client(url: str) -> Iterator[TestClient]:
    registry = Registry(open_store(url), Settings(poll_interval=0))
    with TestClient(create_app(registry), headers={"Content-Type": CONTENT_TYPE}) as client:
        yield client


def test_sqlite_replays_keys_after_restart(sqlite_url: str) -> None:
    with sql_client(sqlite_url) as client:
        fill(client)
        before = answers(client)
    check(before)
    with sql_client(sqlite_url) as client:
        assert answers(client) == before


def test_postgres_store_and_copy_to_sqlite(postgres_store_url: str, tmp_path: Path) -> None:
    with sql_client(postgres_store_url) as client:
        fill(client)
        before = answers(client)
    check(before)
    backup = f"sqlite:///{tmp_path / 'backup.db'}"
    assert copy_store(postgres_store_url, backup).records > 0
    with sql_client(backup) as client:
        assert answers(client) == before


def test_kafka_store_keeps_keys_in_their_own_topic_replays_and_copies(
    kafka_bootstrap: str, kafka_url: str, kafka_topic: str, tmp_path: Path
) -> None:
    with kafka_client(kafka_url) as client:
        fill(client)
        before = answers(client)
    check(before)
    # as Confluent: KEKs and DEKs in the keys topic, schemas alone in the schemas topic
    keys_topic = f"{kafka_topic}_dek_registry_keys"
    kinds = {json.loads(k).get("type") for k, _ in read_topic(kafka_bootstrap, keys_topic)}
    assert kinds == {"KEK", "DEK"}
    schema_keys = [json.loads(k) for k, _ in read_topic(kafka_bootstrap, kafka_topic)]
    assert {k["keytype"] for k in schema_keys} == {"SCHEMA"}
    with kafka_client(kafka_url) as client:
        assert answers(client) == before
    backup = f"sqlite:///{tmp_path / 'backup.db'}"
    assert copy_store(kafka_url, backup).records > 0
    with sql_client(backup) as client:
        assert answers(client) == before
    restored_topic = f"restored_{uuid.uuid4().hex[:8]}"
    restored = f"kafka://{kafka_bootstrap}/?topic={restored_topic}"
    assert copy_store(backup, restored).records > 0
    with kafka_client(restored) as client:
        assert answers(client) == before
    restored_kinds = {
        json.loads(k).get("type")
        for k, _ in read_topic(kafka_bootstrap, f"{restored_topic}_dek_registry_keys")
    }
    assert restored_kinds == {"KEK", "DEK"}


def test_confluent_dek_registry_client(live_server: LiveServer) -> None:
    client = DekRegistryClient({"url": live_server.url})
    kek = client.register_kek("ck", "local-kms", "key1", shared=False, doc="d")
    assert (kek.name, kek.kms_type, kek.kms_key_id, kek.shared, kek.doc) == (
        "ck",
        "local-kms",
        "key1",
        False,
        "d",
    )
    assert client.get_kek("ck").kms_key_id == "key1"
    dek = client.register_dek("ck", "orders-value", material("m1"), DekAlgorithm.AES256_SIV, 1)
    assert dek.version == 1
    assert dek.algorithm == DekAlgorithm.AES256_SIV
    assert dek.ts and dek.ts > 0
    again = DekRegistryClient({"url": live_server.url})
    fetched = again.get_dek("ck", "orders-value", DekAlgorithm.AES256_SIV, -1)
    assert fetched.get_encrypted_key_material_bytes() == b"m1"
    with pytest.raises(SchemaRegistryError) as missing:
        again.get_dek("ck", "orders-value", DekAlgorithm.AES256_GCM, 1)
    assert (missing.value.http_status_code, missing.value.error_code) == (404, 40470)
    with pytest.raises(SchemaRegistryError) as conflict:
        again.register_kek("ck", "local-kms", "other")
    assert (conflict.value.http_status_code, conflict.value.error_code) == (409, 40971)


def test_a_follower_forwards_key_writes_to_the_leader(
    kafka_bootstrap: str, kafka_topic: str, tmp_path: Path
) -> None:
    from tests.test_kafka_cluster import SESSION, wait_ready

    url = f"kafka://{kafka_bootstrap}/?topic={kafka_topic}&{SESSION}"
    servers = [LiveServer(url, tmp_path), LiveServer(url, tmp_path)]
    try:
        for server in servers:
            server.start()
        leader = settled_leader(servers, wait_ready, election=(kafka_bootstrap, kafka_topic))
        follower = next(s for s in servers if s is not leader)
        headers = {"Content-Type": CONTENT_TYPE}
        made = httpx.post(
            f"{follower.url}{KEKS}",
            json={"name": "fk", "kmsType": "local-kms", "kmsKeyId": "a"},
            headers=headers,
            timeout=30,
        )
        assert made.status_code == 200, made.text
        dek = httpx.post(
            f"{follower.url}{KEKS}/fk/deks/orders",
            json={"encryptedKeyMaterial": material("m")},
            headers=headers,
            timeout=30,
        )
        assert dek.status_code == 200, dek.text
        again = httpx.post(f"{follower.url}{KEKS}/fk/deks/orders", json={}, headers=headers)
        assert again.json()["error_code"] == 42271  # the leader's answer, verbatim
        # read-your-writes on the follower, and the leader has them
        for server in (follower, leader):
            got = httpx.get(f"{server.url}{KEKS}/fk/deks/orders/versions", timeout=5)
            assert got.json() == [1]
    finally:
        for server in servers:
            if server.proc is not None and server.proc.poll() is None:
                server.stop()
