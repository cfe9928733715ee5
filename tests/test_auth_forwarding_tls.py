"""Forwarding between instances over HTTPS on the Kafka store: a follower verifies the leader's
certificate against its CA setting and keeps the caller's identity (Basic credentials passed
on; a client-certificate caller vouched for by the follower's own certificate); a follower that
does not trust the leader's certificate refuses with 50003 and sends nothing."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import httpx
import pytest

from tests.production_helpers import (
    AVRO,
    CONTENT_TYPE,
    Pki,
    Server,
    settled_leader,
    tls_context,
    write_users,
)

RULES = """
rules:
  - principals: [dev]
    subjects: ["orders-*"]
    permission: write
  - principals: [client-app]
    subjects: ["app-*"]
    permission: write
"""


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": CONTENT_TYPE}


def ready(server: Server, pki: Pki, timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(server.url + "/ready", timeout=2, verify=tls_context(pki.ca))
            if reply.status_code == 200 and reply.json().get("leader"):
                return dict(reply.json())
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{server.url} not ready:\n{server.log()[-2000:]}")


def access(server: Server) -> dict[str, dict[str, object]]:
    lines = [json.loads(x) for x in server.log().splitlines() if x.startswith("{")]
    return {str(x.get("request_id")): x for x in lines if x.get("logger") == "registry.access"}


def test_forwarding_over_https_verifies_the_leader_and_keeps_the_caller(
    kafka_bootstrap: str, kafka_topic: str, tmp_path: Path
) -> None:
    (tmp_path / "other").mkdir()
    pki, other = Pki(tmp_path), Pki(tmp_path / "other", "other")
    peer_cert, peer_key = pki.issue("registry-peer", server=False)
    write_users(tmp_path / "users", {"dev": "d"})
    (tmp_path / "rules.yaml").write_text(RULES)
    env = {
        "SCHEMA_REGISTRY_STORE": f"kafka://{kafka_bootstrap}/?topic={kafka_topic}"
        "&election.session.timeout.ms=2000",
        "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(tmp_path / "users"),
        "SCHEMA_REGISTRY_AUTH_RULES_FILE": str(tmp_path / "rules.yaml"),
        "SCHEMA_REGISTRY_AUTH_CLIENT_CERT_PRINCIPAL": "true",
        "SCHEMA_REGISTRY_AUTH_TRUSTED_FORWARDERS": "registry-*",
        "SCHEMA_REGISTRY_FORWARD_TLS_CERTFILE": str(peer_cert),
        "SCHEMA_REGISTRY_FORWARD_TLS_KEYFILE": str(peer_key),
        "SCHEMA_REGISTRY_LOG_FORMAT": "json",
        "SCHEMA_REGISTRY_ACCESS_LOG": "true",
    }
    args = [
        "--tls-certfile", str(pki.server_cert), "--tls-keyfile", str(pki.server_key),
        "--tls-ca-file", str(pki.ca), "--tls-client-auth", "optional",
    ]  # fmt: skip
    servers: dict[str, Server] = {}

    def start(name: str, extra: dict[str, str]) -> Server:
        (tmp_path / name).mkdir()
        server = Server(
            tmp_path / name, {**env, **extra}, args=args, scheme="https", verify=tls_context(pki.ca)
        )
        servers[name] = server.start()
        return server

    try:
        leader = start("leader", {})
        # /ready names an instance the leader as soon as it holds the election partition, and
        # is_leader turns true once its producer is ready: wait for both
        assert settled_leader([leader], lambda s: ready(s, pki)) is leader
        # the follower trusts the leader through SCHEMA_REGISTRY_TLS_CA_FILE (same CA)
        trusting = start("trusting", {})
        doubting = start("doubting", {"SCHEMA_REGISTRY_FORWARD_TLS_CA_FILE": str(other.ca)})
        # each instance's view settled after the last join's rebalance, the first still leading
        everyone = [leader, trusting, doubting]
        election = (kafka_bootstrap, kafka_topic)
        assert settled_leader(everyone, lambda s: ready(s, pki), election) is leader

        as_app = tls_context(pki.ca, pki.client_cert, pki.client_key)
        with httpx.Client(base_url=trusting.url, verify=as_app, timeout=30) as client:
            by_password = client.post(
                "/subjects/orders-value/versions",
                json={"schema": AVRO},
                headers={**basic("dev", "d"), "X-Request-ID": "tls-1"},
            )
            assert by_password.json()["id"] == 1, by_password.text
            by_certificate = client.post(
                "/subjects/app-value/versions",
                json={"schema": AVRO},
                headers={"Content-Type": CONTENT_TYPE, "X-Request-ID": "tls-2"},
            )
            assert by_certificate.json()["id"] == 1, by_certificate.text
            # with credentials, a client's own X-Forwarded-Principal is dropped
            dropped = client.post(
                "/subjects/app-value/versions",
                json={"schema": AVRO},
                headers={
                    **basic("dev", "d"),
                    "X-Forwarded-Principal": "client-app",
                    "X-Request-ID": "tls-3",
                },
            )
            assert dropped.status_code == 403
            # without, it is refused: the caller's certificate is not an instance's
            forged = client.post(
                "/subjects/orders-value/versions",
                json={"schema": AVRO},
                headers={"Content-Type": CONTENT_TYPE, "X-Forwarded-Principal": "dev"},
            )
            assert forged.status_code == 401
            assert "X-Forwarded-Principal" in forged.json()["message"]
            assert client.get("/subjects").json() == ["app-value"]
        # straight to the leader with the client's certificate: refused the same way
        with httpx.Client(base_url=leader.url, verify=as_app, timeout=30) as client:
            forged = client.post(
                "/subjects/orders-value/versions",
                json={"schema": AVRO},
                headers={"Content-Type": CONTENT_TYPE, "X-Forwarded-Principal": "dev"},
            )
            assert forged.status_code == 401

        on_leader = access(leader)
        assert on_leader["tls-1"]["principal"] == "dev"
        assert on_leader["tls-2"]["principal"] == "client-app"
        assert on_leader["tls-2"]["status"] == 200
        assert "tls-3" not in on_leader  # refused by the follower

        with httpx.Client(base_url=doubting.url, verify=tls_context(pki.ca), timeout=30) as client:
            refused = client.post(
                "/subjects/orders-refused/versions",
                json={"schema": AVRO},
                headers={**basic("dev", "d"), "X-Request-ID": "tls-4"},
            )
            assert refused.status_code == 500
            body = refused.json()
            assert body["error_code"] == 50003
            assert body["message"].startswith(
                f"Error while forwarding the request to the leader {leader.url}: its TLS "
                "certificate is not trusted ("
            )
            assert body["message"].endswith(
                "); set SCHEMA_REGISTRY_FORWARD_TLS_CA_FILE to the CA that signs it"
            )
            listed = client.get("/subjects?subjectPrefix=orders", headers=basic("dev", "d"))
            assert listed.json() == ["orders-value"]
        assert "tls-4" not in access(leader)
    finally:
        for server in servers.values():
            server.stop()


def test_unusable_forwarding_files_stop_the_server(tmp_path: Path) -> None:
    from registry.api.forwarding import client_tls
    from registry.settings import Settings

    with pytest.raises(ValueError, match="unusable TLS file for forwarding"):
        client_tls(Settings(forward_tls_ca_file=str(tmp_path / "missing.pem")))
    with pytest.raises(ValueError, match="_FORWARD_TLS_KEYFILE needs _FORWARD_TLS_CERTFILE"):
        client_tls(Settings(forward_tls_keyfile=str(tmp_path / "k.pem")))
    pki = Pki(tmp_path)
    context = client_tls(Settings(forward_tls_ca_file=str(pki.ca)))
    assert context.verify_mode.name == "CERT_REQUIRED" and context.check_hostname


pytestmark = pytest.mark.timeout(300)
