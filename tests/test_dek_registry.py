"""The DEK registry (``/dek-registry/v1``): KEKs, DEKs, versions, soft and permanent deletes,
undeletes, shared KEKs, with Confluent's status and error codes; on a fresh SQLite store."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store
from serdes.encryption.kms import aead_for
from serdes.encryption.tink import cipher
from tests.production_helpers import write_users

KEKS = "/dek-registry/v1/keks"
SECRET = "a local secret for the shared kek"


def kek(name: str = "k1", **extra: object) -> dict[str, object]:
    return {"name": name, "kmsType": "local-kms", "kmsKeyId": "key1", **extra}


def material(text: str = "wrapped") -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.fixture
def keys(client: TestClient) -> TestClient:
    assert client.post(KEKS, json=kek()).status_code == 200
    return client


def test_create_get_and_list_keks(client: TestClient) -> None:
    created = client.post(KEKS, json=kek(doc="orders", kmsProps={"b": "2", "a": "1"}))
    assert created.status_code == 200
    body = created.json()
    assert {k: body[k] for k in ("name", "kmsType", "kmsKeyId", "doc", "shared")} == {
        "name": "k1",
        "kmsType": "local-kms",
        "kmsKeyId": "key1",
        "doc": "orders",
        "shared": False,
    }
    assert body["kmsProps"] == {"a": "1", "b": "2"}
    assert body["ts"] > 0
    assert client.get(f"{KEKS}/k1").json() == body
    assert client.get(KEKS).json() == ["k1"]


def test_kms_type_is_normalised_like_confluent(client: TestClient) -> None:
    made = client.post(KEKS, json={"name": "a", "kmsType": "AWS", "kmsKeyId": "arn"})
    assert made.json()["kmsType"] == "aws-kms"


def test_same_kek_twice_is_409_40971(keys: TestClient) -> None:
    again = keys.post(KEKS, json=kek(kmsKeyId="other"))
    assert again.status_code == 409
    assert again.json() == {
        "error_code": 40971,
        "message": "Key 'k1' already exists; use a different value",
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "1abc", "kmsType": "local-kms", "kmsKeyId": "x"}, "name"),
        ({"name": "a b", "kmsType": "local-kms", "kmsKeyId": "x"}, "name"),
        ({"name": "a" * 65, "kmsType": "local-kms", "kmsKeyId": "x"}, "name"),
        ({"name": "ok", "kmsType": "local-kms"}, "kmsKeyId"),
        ({"name": "ok", "kmsKeyId": "x"}, "kmsType"),
    ],
)
def test_invalid_kek_is_422_42271_and_stores_nothing(
    client: TestClient, body: dict[str, object], field: str
) -> None:
    reply = client.post(KEKS, json=body)
    assert reply.status_code == 422
    assert reply.json() == {"error_code": 42271, "message": field}
    assert client.get(f"{KEKS}?deleted=true").json() == []


def test_missing_kek_is_404_40470(client: TestClient) -> None:
    for path in (f"{KEKS}/nope", f"{KEKS}/nope/deks", f"{KEKS}/nope/deks/s/versions"):
        reply = client.get(path)
        assert reply.status_code == 404, path
        assert reply.json() == {"error_code": 40470, "message": "Key 'nope' not found"}


def test_update_kek_keeps_kms_fields(keys: TestClient) -> None:
    updated = keys.put(f"{KEKS}/k1", json={"doc": "new", "kmsProps": {"x": "y"}})
    assert updated.status_code == 200
    assert updated.json()["doc"] == "new"
    assert updated.json()["kmsProps"] == {"x": "y"}
    assert updated.json()["kmsKeyId"] == "key1"
    assert keys.put(f"{KEKS}/nope", json={"doc": "x"}).json()["error_code"] == 40470


def test_kek_soft_delete_undelete_and_permanent_delete(keys: TestClient) -> None:
    permanent = keys.delete(f"{KEKS}/k1?permanent=true")
    assert permanent.status_code == 404
    assert permanent.json()["error_code"] == 40471
    assert keys.delete(f"{KEKS}/k1").status_code == 204
    assert keys.get(f"{KEKS}/k1").json()["error_code"] == 40470
    assert keys.get(f"{KEKS}/k1?deleted=true").json()["deleted"] is True
    assert keys.get(KEKS).json() == []
    assert keys.get(f"{KEKS}?deleted=true").json() == ["k1"]
    assert keys.post(f"{KEKS}/k1/undelete").status_code == 204
    assert "deleted" not in keys.get(f"{KEKS}/k1").json()
    assert keys.delete(f"{KEKS}/k1").status_code == 204
    assert keys.delete(f"{KEKS}/k1?permanent=true").status_code == 204
    assert keys.get(f"{KEKS}/k1?deleted=true").status_code == 404
    assert keys.delete(f"{KEKS}/k1").json()["error_code"] == 40470


def test_recreating_a_soft_deleted_kek_undeletes_it(keys: TestClient) -> None:
    assert keys.delete(f"{KEKS}/k1").status_code == 204
    assert keys.post(KEKS, json=kek(kmsKeyId="changed")).status_code == 409
    again = keys.post(KEKS, json=kek())
    assert again.status_code == 200
    assert "deleted" not in again.json()


def test_dek_versions_and_latest(keys: TestClient) -> None:
    for version in (1, 2):
        made = keys.post(
            f"{KEKS}/k1/deks/orders-value",
            json={"version": version, "encryptedKeyMaterial": material(f"v{version}")},
        )
        assert made.status_code == 200, made.text
        assert made.json()["version"] == version
        assert "keyMaterial" not in made.json()
    base = f"{KEKS}/k1/deks/orders-value"
    assert keys.get(f"{base}/versions").json() == [1, 2]
    assert keys.get(f"{base}/versions/latest").json()["encryptedKeyMaterial"] == material("v2")
    assert keys.get(f"{base}/versions/1").json()["encryptedKeyMaterial"] == material("v1")
    assert keys.get(base).json()["version"] == 1
    assert keys.get(f"{KEKS}/k1/deks").json() == ["orders-value"]
    assert keys.get(f"{base}/versions/3").json() == {
        "error_code": 40470,
        "message": "Key 'orders-value' not found",
    }
    bad = keys.get(f"{base}/versions/zero")
    assert (bad.status_code, bad.json()["error_code"]) == (422, 42202)
    wrong_alg = keys.get(f"{base}?algorithm=AES256_SIV")
    assert wrong_alg.json()["error_code"] == 40470
    assert keys.get(f"{base}?algorithm=NOPE").status_code == 404


def test_dek_in_body_form_and_conflicts(keys: TestClient) -> None:
    body = {"subject": "s", "encryptedKeyMaterial": material()}
    assert keys.post(f"{KEKS}/k1/deks", json=body).status_code == 200
    same = keys.post(f"{KEKS}/k1/deks", json=body)
    assert (same.status_code, same.json()["error_code"]) == (409, 40971)
    other = keys.post(f"{KEKS}/k1/deks", json={**body, "algorithm": "AES256_SIV"})
    assert other.status_code == 200
    assert keys.get(f"{KEKS}/k1/deks/s/versions?algorithm=AES256_SIV").json() == [1]


def test_dek_without_material_needs_a_shared_kek(keys: TestClient) -> None:
    reply = keys.post(f"{KEKS}/k1/deks/s", json={})
    assert reply.status_code == 422
    assert reply.json() == {"error_code": 42271, "message": "encryptedKeyMaterial"}
    missing = keys.post(f"{KEKS}/nope/deks/s", json={"encryptedKeyMaterial": material()})
    assert missing.json()["error_code"] == 40470


def test_dek_deletes_and_undeletes(keys: TestClient) -> None:
    base = f"{KEKS}/k1/deks/s"
    for version in (1, 2):
        keys.post(base, json={"version": version, "encryptedKeyMaterial": material()})
    assert keys.delete(f"{base}/versions/1?permanent=true").json()["error_code"] == 40471
    assert keys.delete(f"{base}/versions/1").status_code == 204
    assert keys.get(f"{base}/versions").json() == [2]
    assert keys.get(f"{base}/versions?deleted=true").json() == [1, 2]
    # the KEK cannot go while a DEK is live
    assert keys.delete(f"{KEKS}/k1").json()["error_code"] == 42272
    assert keys.post(f"{base}/versions/1/undelete").status_code == 204
    assert keys.get(f"{base}/versions").json() == [1, 2]
    assert keys.delete(base).status_code == 204
    assert keys.get(f"{KEKS}/k1/deks").json() == []
    assert keys.get(f"{KEKS}/k1/deks?deleted=true").json() == ["s"]
    # soft-deleted DEKs allow a soft delete of the KEK, not a permanent one
    assert keys.delete(f"{KEKS}/k1").status_code == 204
    assert keys.post(f"{base}/undelete").json()["error_code"] == 40472
    assert keys.delete(f"{KEKS}/k1?permanent=true").json()["error_code"] == 42272
    assert keys.post(f"{KEKS}/k1/undelete").status_code == 204
    assert keys.post(f"{base}/undelete").status_code == 204
    assert keys.get(f"{base}/versions").json() == [1, 2]
    assert keys.delete(base).status_code == 204
    assert keys.delete(f"{base}?permanent=true").status_code == 204
    assert keys.get(f"{base}/versions?deleted=true").json() == []
    assert keys.delete(base).json()["error_code"] == 40470


@pytest.fixture
def local_secret(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("LOCAL_SECRET", SECRET)
    yield SECRET


def test_shared_kek_dek_is_generated_and_unwrapped(client: TestClient, local_secret: str) -> None:
    assert client.post(KEKS, json=kek("shared", shared=True)).status_code == 200
    made = client.post(f"{KEKS}/shared/deks/s", json={})
    assert made.status_code == 200, made.text
    dek = made.json()
    raw = base64.b64decode(dek["keyMaterial"])
    # the registry wrapped the key with the local KMS's KEK: the client-side driver unwraps it
    kek_aead = aead_for("local-kms", "key1", {"secret": local_secret})
    assert kek_aead.decrypt(base64.b64decode(dek["encryptedKeyMaterial"]), b"") == raw
    box = cipher("AES256_GCM", raw)
    assert box.decrypt(box.encrypt(b"x")) == b"x"
    fetched = client.get(f"{KEKS}/shared/deks/s/versions/1").json()
    assert fetched["keyMaterial"] == dek["keyMaterial"]


def test_shared_kek_without_a_secret_is_50070(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCAL_SECRET", raising=False)
    assert client.post(KEKS, json=kek("shared", shared=True)).status_code == 200
    reply = client.post(f"{KEKS}/shared/deks/s", json={})
    assert reply.status_code == 500
    assert reply.json()["error_code"] == 50070
    assert client.get(f"{KEKS}/shared/deks?deleted=true").json() == []


def test_dek_subject_in_a_context_and_with_slash(keys: TestClient) -> None:
    for subject in (":.ctx:orders", "a/b"):
        path = f"{KEKS}/k1/deks/{subject.replace('/', '%2F')}"
        assert keys.post(path, json={"encryptedKeyMaterial": material()}).status_code == 200
        assert keys.get(path).json()["subject"] == subject
    assert keys.get(f"{KEKS}/k1/deks").json() == [":.ctx:orders", "a/b"]


RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: [dev]
    subjects: ["orders-*"]
    permission: write
  - principals: [reader]
    subjects: ["orders-*"]
    permission: read
"""
USERS = {"admin": "a", "dev": "d", "reader": "r"}


def test_dek_rights_follow_the_subject(tmp_path: Path) -> None:
    write_users(tmp_path / "users", USERS)
    (tmp_path / "rules.yaml").write_text(RULES)
    settings = Settings(
        poll_interval=0,
        auth_users_file=str(tmp_path / "users"),
        auth_rules_file=str(tmp_path / "rules.yaml"),
    )
    reg = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), settings)
    reg.start()

    def who(name: str) -> dict[str, str]:
        token = base64.b64encode(f"{name}:{USERS[name]}".encode()).decode()
        return {"Authorization": f"Basic {token}"}

    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as client:
            # KEKs are changed by admins only; anyone may read them
            assert client.post(KEKS, json=kek(), headers=who("dev")).status_code == 403
            assert client.post(KEKS, json=kek(), headers=who("admin")).status_code == 200
            assert client.get(f"{KEKS}/k1", headers=who("reader")).status_code == 200
            body = {"encryptedKeyMaterial": material()}
            mine = f"{KEKS}/k1/deks/orders-value"
            theirs = f"{KEKS}/k1/deks/pay-value"
            assert client.post(mine, json=body, headers=who("dev")).status_code == 200
            denied = client.post(theirs, json=body, headers=who("dev"))
            assert (denied.status_code, denied.json()["error_code"]) == (403, 40301)
            assert client.post(mine, json=body, headers=who("reader")).status_code == 403
            assert client.post(theirs, json=body, headers=who("admin")).status_code == 200
            assert client.get(mine, headers=who("reader")).status_code == 200
            # an unreadable DEK answers as a missing one, and listings leave it out
            hidden = client.get(theirs, headers=who("reader"))
            assert hidden.status_code == 404
            assert hidden.json() == {"error_code": 40470, "message": "Key 'pay-value' not found"}
            listed = client.get(f"{KEKS}/k1/deks", headers=who("reader")).json()
            assert listed == ["orders-value"]
            assert client.get(f"{KEKS}/k1/deks", headers=who("admin")).json() == [
                "orders-value",
                "pay-value",
            ]
    finally:
        reg.stop()


def test_records_have_confluents_key_format(client: TestClient, registry: Registry) -> None:
    assert client.post(KEKS, json=kek()).status_code == 200
    body = {"encryptedKeyMaterial": material(), "algorithm": "AES256_SIV", "version": 3}
    assert client.post(f"{KEKS}/k1/deks/s", json=body).status_code == 200
    keys = [r.key for r in registry.store.read_after(-1)]
    assert keys == [
        b'{"tenant":"default","name":"k1","type":"KEK"}',
        b'{"tenant":"default","kekName":"k1","subject":"s","algorithm":"AES256_SIV",'
        b'"version":3,"type":"DEK"}',
    ]


def test_records_written_by_confluent_are_served(tmp_path: Path) -> None:
    """Keys in another field order, values without ``ts`` (Confluent's KafkaCache keeps the
    record timestamp), another tenant's keys skipped, a tombstone removing a DEK."""
    from registry.records import Record

    state = Registry(open_store(f"sqlite:///{tmp_path / 'r.db'}"), Settings()).state
    kek_key = b'{"type":"KEK","name":"ck","tenant":"default"}'
    dek_key = (
        b'{"type":"DEK","version":1,"algorithm":"AES256_GCM","subject":"t","kekName":"ck",'
        b'"tenant":"default"}'
    )
    records = [
        (
            kek_key,
            b'{"name":"ck","kmsType":"aws-kms","kmsKeyId":"arn","kmsProps":{},'
            b'"shared":false,"deleted":false,"type":"KEK"}',
        ),
        (
            b'{"tenant":"other","name":"x","type":"KEK"}',
            b'{"name":"x","kmsType":"aws-kms","kmsKeyId":"a","deleted":false,"type":"KEK"}',
        ),
        (
            dek_key,
            b'{"kekName":"ck","subject":"t","version":1,"algorithm":"AES256_GCM",'
            b'"encryptedKeyMaterial":"AAAA","deleted":false,"type":"DEK"}',
        ),
        (
            dek_key.replace(b'"version":1', b'"version":2'),
            b'{"kekName":"ck","subject":"t","version":2,"algorithm":"AES256_GCM",'
            b'"encryptedKeyMaterial":"BBBB","deleted":false,"type":"DEK"}',
        ),
        (dek_key.replace(b'"version":1', b'"version":2'), None),
    ]
    state.apply_all(
        Record(key, value, offset, 1_700_000_000_000 + offset)
        for offset, (key, value) in enumerate(records)
    )
    index = state.encryption_keys
    assert index.kek_names(True) == ["ck"]
    dek = index.dek("ck", "t", "AES256_GCM", -1, False)
    assert dek is not None and dek.version == 1 and dek.encrypted_key_material == "AAAA"
    assert dek.ts == 1_700_000_000_002


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[TestClient]:
    """A registry holding at most 2 KEKs and 2 DEKs (``dek_registry_max_keys=1``: Confluent
    refuses a create once more than the maximum exist)."""
    reg = Registry(
        open_store(f"sqlite:///{tmp_path / 'r.db'}"),
        Settings(poll_interval=0, dek_registry_max_keys=1),
    )
    reg.start()
    try:
        with TestClient(create_app(reg, manage_lifecycle=False)) as client:
            yield client
    finally:
        reg.stop()


TOO_MANY = {"error_code": 40972, "message": "A maximum of 1 keys already exist"}


def test_keks_beyond_the_cap_are_409_40972_and_stored_nothing(capped: TestClient) -> None:
    assert capped.post(KEKS, json=kek("a")).status_code == 200
    assert capped.post(KEKS, json=kek("b")).status_code == 200
    refused = capped.post(KEKS, json=kek("c"))
    assert (refused.status_code, refused.json()) == (409, TOO_MANY)
    assert capped.get(KEKS, params={"deleted": "true"}).json() == ["a", "b"]
    # the count is checked first (an existing name is also 40972), soft-deleted keys count
    assert capped.post(KEKS, json=kek("a")).json()["error_code"] == 40972
    assert capped.delete(f"{KEKS}/b").status_code == 204
    assert capped.post(KEKS, json=kek("c")).json()["error_code"] == 40972
    # a permanent delete makes room
    assert capped.delete(f"{KEKS}/b", params={"permanent": "true"}).status_code == 204
    assert capped.post(KEKS, json=kek("c")).status_code == 200


def test_deks_beyond_the_cap_are_409_40972_generated_or_not(
    capped: TestClient, local_secret: str
) -> None:
    assert capped.post(KEKS, json=kek("plain")).status_code == 200
    assert capped.post(KEKS, json=kek("shared", shared=True)).status_code == 200
    deks = f"{KEKS}/plain/deks"
    for version in (1, 2):
        body = {"encryptedKeyMaterial": material(), "version": version}
        assert capped.post(f"{deks}/s", json=body).status_code == 200
    refused = capped.post(f"{deks}/s", json={"encryptedKeyMaterial": material(), "version": 3})
    assert (refused.status_code, refused.json()) == (409, TOO_MANY)
    # DEKs are counted across KEKs; one the registry would generate is refused before the KMS
    generated = capped.post(f"{KEKS}/shared/deks/t", json={})
    assert (generated.status_code, generated.json()) == (409, TOO_MANY)
    assert capped.get(f"{deks}/s/versions").json() == [1, 2]
    assert capped.get(f"{KEKS}/shared/deks").json() == []


def test_kek_context_parameter_is_accepted_and_ignored_as_by_confluent(
    client: TestClient,
) -> None:
    # Confluent's clients may send ?context= on the KEK calls; its server has no KEK contexts
    # (DekRegistryResource reads no such parameter): the same KEK answers with or without it
    made = client.post(KEKS, params={"context": ".team"}, json=kek("ctx"))
    assert made.status_code == 200, made.text
    plain = client.get(f"{KEKS}/ctx").json()
    assert client.get(f"{KEKS}/ctx", params={"context": ".other"}).json() == plain == made.json()
    updated = client.put(f"{KEKS}/ctx", params={"context": ".team"}, json={"doc": "d"})
    assert updated.status_code == 200 and updated.json()["doc"] == "d"
    assert client.delete(f"{KEKS}/ctx", params={"context": ".team"}).status_code == 204
    assert client.get(KEKS, params={"deleted": "true"}).json() == ["ctx"]
