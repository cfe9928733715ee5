"""Principals beyond user names: ``group:NAME`` from a JWT groups claim (a list, a string, a
nested claim), and the common name of a verified TLS client certificate for requests without
credentials; one live HTTPS server with real tokens and real certificates."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from registry.auth.rules import Identity, parse_rules, principal_matches
from registry.settings import Settings
from registry.tls import common_name, uvicorn_options
from tests.production_helpers import AVRO, CONTENT_TYPE, Pki, Server, Signer, running, tls_context

RULES = """
rules:
  - principals: [admin]
    permission: admin
  - principals: ["group:analysts"]
    subjects: ["analytics-*"]
    permission: read
  - principals: ["Group:publishers", "group:team-*"]
    subjects: ["analytics-*"]
    permission: write
  - principals: [client-app]
    subjects: ["app-*"]
    permission: write
"""


class Live:
    def __init__(self, server: Server, pki: Pki, signer: Signer) -> None:
        self.server, self.pki, self.signer = server, pki, signer

    def client(self, *, cert: bool = False, token: dict[str, Any] | None = None) -> httpx.Client:
        pki = self.pki
        verify = (
            tls_context(pki.ca, pki.client_cert, pki.client_key) if cert else tls_context(pki.ca)
        )
        headers = {"Content-Type": CONTENT_TYPE}
        if token is not None:
            headers["Authorization"] = f"Bearer {self.signer.token(token)}"
        return httpx.Client(base_url=self.server.url, verify=verify, headers=headers, timeout=10)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    tmp = tmp_path_factory.mktemp("principals")
    pki, signer = Pki(tmp), Signer()
    (tmp / "keys.pem").write_bytes(signer.public_pem())
    (tmp / "rules.yaml").write_text(RULES)
    env = {
        "SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE": str(tmp / "keys.pem"),
        "SCHEMA_REGISTRY_AUTH_JWT_GROUPS_CLAIM": "groups, realm_access.roles",
        "SCHEMA_REGISTRY_AUTH_CLIENT_CERT_PRINCIPAL": "true",
        "SCHEMA_REGISTRY_AUTH_RULES_FILE": str(tmp / "rules.yaml"),
        "SCHEMA_REGISTRY_LOG_FORMAT": "json",
        "SCHEMA_REGISTRY_ACCESS_LOG": "true",
    }
    args = [
        "--tls-certfile", str(pki.server_cert), "--tls-keyfile", str(pki.server_key),
        "--tls-ca-file", str(pki.ca), "--tls-client-auth", "optional",
    ]  # fmt: skip
    server = Server(tmp, env, args=args, scheme="https", verify=tls_context(pki.ca))
    with running(server):
        made = Live(server, pki, signer)
        with made.client(token={"sub": "admin"}) as admin:
            for subject in ("analytics-value", "secret-value"):
                answer = admin.post(f"/subjects/{subject}/versions", json={"schema": AVRO})
                assert answer.status_code == 200, answer.text
        yield made


def register(client: httpx.Client, subject: str) -> httpx.Response:
    return client.post(f"/subjects/{subject}/versions", json={"schema": AVRO})


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": "bob", "groups": ["analysts"]},
        {"sub": "bob", "groups": "staff analysts"},
        {"sub": "bob", "groups": "staff,analysts"},
        {"sub": "bob", "realm_access": {"roles": ["analysts"]}},
    ],
)
def test_a_group_in_the_token_reads_what_the_group_may_read(
    live: Live, claims: dict[str, Any]
) -> None:
    with live.client(token=claims) as client:
        assert client.get("/subjects/analytics-value/versions").json() == [1]
        assert client.get("/subjects").json() == ["analytics-value"]
        hidden = client.get("/subjects/secret-value/versions")
        assert hidden.json() == {
            "error_code": 40401,
            "message": "Subject 'secret-value' not found.",
        }
        denied = register(client, "analytics-value")
        assert denied.status_code == 403
        assert denied.json()["error_code"] == 40301


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": "carol", "groups": ["publishers"]},
        {"sub": "carol", "realm_access": {"roles": ["team-data"]}},
    ],
)
def test_a_group_with_write_registers(live: Live, claims: dict[str, Any]) -> None:
    with live.client(token=claims) as client:
        assert register(client, "analytics-value").json()["id"] == 1
        assert register(client, "secret-value").status_code == 403


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": "group:analysts"},  # a user named like a group is not in it
        {"sub": "dave"},
        {"sub": "dave", "groups": []},
        {"sub": "dave", "roles": ["analysts"]},  # not a configured groups claim
        {"sub": "dave", "realm_access": "analysts"},
    ],
)
def test_without_the_group_nothing_is_readable(live: Live, claims: dict[str, Any]) -> None:
    with live.client(token=claims) as client:
        assert client.get("/subjects").json() == []
        assert client.get("/subjects/analytics-value/versions").json()["error_code"] == 40401


def test_a_malformed_groups_claim_is_refused(live: Live) -> None:
    with live.client(token={"sub": "bob", "groups": [1, 2]}) as client:
        answer = client.get("/subjects")
    assert answer.status_code == 401
    assert answer.json() == {
        "error_code": 401,
        "message": "Unauthorized: Bearer token claim 'groups' must be a string or a list of "
        "strings",
    }


def test_the_client_certificate_names_a_caller_without_credentials(live: Live) -> None:
    with live.client(cert=True) as client:
        assert register(client, "app-value").status_code == 200
        assert client.get("/subjects").json() == ["app-value"]
        denied = register(client, "analytics-value")
        assert denied.json() == {
            "error_code": 40301,
            "message": "User is denied operation Write on Subject: analytics-value",
        }
    # credentials win over the certificate: bob is not client-app
    with live.client(cert=True, token={"sub": "bob"}) as client:
        assert register(client, "app-value").status_code == 403
    # no certificate, no credentials: 401
    with live.client() as client:
        answer = client.get("/subjects")
        assert answer.status_code == 401
        assert answer.json()["message"] == "Unauthorized: credentials are required"
    lines = [x for x in live.server.log().splitlines() if '"registry.access"' in x]
    assert any('"principal": "client-app"' in x or '"principal":"client-app"' in x for x in lines)


def test_group_and_user_prefixes() -> None:
    bob = Identity("bob", frozenset({"analysts"}))
    assert principal_matches("group:analysts", bob)
    assert principal_matches("GROUP:analy*", bob)
    assert principal_matches("user:bob", bob)
    assert principal_matches("bob", bob)
    assert not principal_matches("group:bob", bob)
    assert not principal_matches("user:analysts", bob)
    assert not principal_matches("group:analysts", Identity("group:analysts"))
    rules = parse_rules(RULES)
    assert rules.grants(bob).can("analytics-x", rules.rules[1].permission)
    assert not rules.grants("bob").can("analytics-x", rules.rules[1].permission)


@pytest.mark.parametrize("name", ["group:", "user:", "GROUP:"])
def test_a_prefix_without_a_name_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="names nobody"):
        parse_rules(f"rules: [{{principals: ['{name}'], permission: read}}]")


def test_certificate_principals_need_client_certificates(tmp_path: Path) -> None:
    pki = Pki(tmp_path)
    settings = Settings(
        tls_certfile=str(pki.server_cert),
        tls_keyfile=str(pki.server_key),
        auth_client_cert_principal=True,
    )
    with pytest.raises(ValueError, match="AUTH_CLIENT_CERT_PRINCIPAL needs client certificates"):
        uvicorn_options(settings)
    assert common_name({"subject": ((("organizationName", "x"),), (("commonName", "a"),))}) == "a"
    assert common_name({}) is None and common_name(None) is None
