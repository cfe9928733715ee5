"""An encoded slash (``%2F``) in the DEK registry's path segments, as Confluent 8.x answers it.

A KEK name is refused (``DekRegistryResource.checkName`` allows letters, digits, ``_`` and
``-`` only) with 422 / 42271 and the message ``name``, on every KEK and DEK route and through
``/contexts/{ctx}/...``; nothing is stored. A DEK subject is any text without control
characters, so ``a%2Fb`` names the subject ``a/b`` on every DEK route (create, get, versions,
delete, undelete, permanent delete), and ``/contexts/.ctx/...`` names ``:.ctx:a/b``.
"""

from __future__ import annotations

import base64

import httpx
import pytest
from fastapi.testclient import TestClient

KEKS = "/dek-registry/v1/keks"
IN_CTX = "/contexts/.ctx/dek-registry/v1/keks"


def material(text: str = "wrapped") -> str:
    return base64.b64encode(text.encode()).decode()


def kek(name: str) -> dict[str, object]:
    return {"name": name, "kmsType": "local-kms", "kmsKeyId": "key1"}


def invalid_name(reply: httpx.Response) -> bool:
    return reply.status_code == 422 and reply.json() == {"error_code": 42271, "message": "name"}


@pytest.fixture
def keys(client: TestClient) -> TestClient:
    assert client.post(KEKS, json=kek("k1")).status_code == 200
    return client


# (method, path below the KEK, body)
KEK_ROUTES = [
    ("GET", "", None),
    ("PUT", "", {"doc": "changed"}),
    ("DELETE", "", None),
    ("DELETE", "?permanent=true", None),
    ("POST", "/undelete", None),
    ("GET", "/deks", None),
    ("POST", "/deks", {"subject": "s", "encryptedKeyMaterial": material()}),
    ("POST", "/deks/s", {"encryptedKeyMaterial": material()}),
    ("GET", "/deks/s", None),
    ("DELETE", "/deks/s", None),
    ("POST", "/deks/s/undelete", None),
    ("GET", "/deks/s/versions", None),
    ("GET", "/deks/s/versions/1", None),
    ("DELETE", "/deks/s/versions/1", None),
    ("POST", "/deks/s/versions/1/undelete", None),
]


@pytest.mark.parametrize("base", [KEKS, IN_CTX])
def test_a_kek_name_with_an_encoded_slash_is_refused_like_confluent(
    keys: TestClient, base: str
) -> None:
    # "k1/x" would be a valid-looking path to the KEK k1 if the slash were not kept in the name
    for method, tail, body in KEK_ROUTES:
        for name in ("k1%2Fx", "a%2fb"):
            reply = keys.request(method, f"{base}/{name}{tail}", json=body)
            assert invalid_name(reply), (method, name, tail, reply.status_code, reply.text)
    assert keys.get(f"{KEKS}?deleted=true").json() == ["k1"]
    assert "doc" not in keys.get(f"{KEKS}/k1").json()
    assert keys.get(f"{KEKS}/k1/deks?deleted=true").json() == []


def test_a_kek_named_with_a_slash_in_the_body_is_refused(client: TestClient) -> None:
    assert invalid_name(client.post(KEKS, json=kek("a/b")))
    assert client.get(f"{KEKS}?deleted=true").json() == []


@pytest.mark.parametrize(("base", "subject"), [(KEKS, "a/b"), (IN_CTX, ":.ctx:a/b")])
def test_a_dek_subject_with_an_encoded_slash_is_the_decoded_subject(
    keys: TestClient, base: str, subject: str
) -> None:
    dek = f"{base}/k1/deks/a%2Fb"
    made = keys.post(dek, json={"encryptedKeyMaterial": material()})
    assert made.status_code == 200, made.text
    assert made.json()["subject"] == subject
    second = keys.post(dek, json={"version": 2, "encryptedKeyMaterial": material()})
    assert second.json()["subject"] == subject
    assert keys.get(f"{KEKS}/k1/deks").json() == [subject]
    assert keys.get(dek).json()["version"] == 1  # Confluent: the DEK's own route is version 1
    assert keys.get(f"{dek}/versions/latest").json()["version"] == 2
    assert keys.get(f"{dek}/versions").json() == [1, 2]
    assert keys.get(f"{dek}/versions/1").json()["subject"] == subject

    # one version: soft delete, undelete, soft delete, permanent delete
    assert keys.delete(f"{dek}/versions/1").status_code == 204
    assert keys.get(f"{dek}/versions").json() == [2]
    assert keys.get(f"{dek}/versions/1?deleted=true").json()["deleted"] is True
    assert keys.post(f"{dek}/versions/1/undelete").status_code == 204
    assert keys.get(f"{dek}/versions").json() == [1, 2]
    assert keys.delete(f"{dek}/versions/1").status_code == 204
    assert keys.delete(f"{dek}/versions/1?permanent=true").status_code == 204
    assert keys.get(f"{dek}/versions?deleted=true").json() == [2]

    # the whole DEK: soft delete, undelete, soft delete, permanent delete
    assert keys.delete(dek).status_code == 204
    assert keys.get(f"{KEKS}/k1/deks").json() == []
    assert keys.get(f"{KEKS}/k1/deks?deleted=true").json() == [subject]
    assert keys.post(f"{dek}/undelete").status_code == 204
    assert keys.get(f"{KEKS}/k1/deks").json() == [subject]
    assert keys.delete(dek).status_code == 204
    assert keys.delete(f"{dek}?permanent=true").status_code == 204
    assert keys.get(f"{KEKS}/k1/deks?deleted=true").json() == []
    missing = keys.get(dek)
    assert missing.status_code == 404
    assert missing.json()["message"] == f"Key '{subject}' not found"


def test_a_dek_subject_with_a_slash_in_the_body_matches_the_encoded_path(keys: TestClient) -> None:
    made = keys.post(f"{KEKS}/k1/deks", json={"subject": "a/b", "encryptedKeyMaterial": material()})
    assert made.json()["subject"] == "a/b"
    assert keys.get(f"{KEKS}/k1/deks/a%2Fb").json()["subject"] == "a/b"
    again = keys.post(f"{KEKS}/k1/deks/a%2Fb", json={"encryptedKeyMaterial": material("x")})
    assert again.status_code == 409
    assert again.json()["message"] == "Key 'a/b' already exists; use a different value"
