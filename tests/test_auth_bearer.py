"""Bearer JWTs on a live server: keys from a PEM file or a JWKS URL (a loopback identity
provider), issuer, audience, expiry and algorithm checks, key rotation, and confluent-kafka's
``STATIC_TOKEN`` and ``OAUTHBEARER`` (client credentials) sources against it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError

from tests.production_helpers import AVRO, IdentityProvider, Server, Signer, running

ISSUER = "https://issuer.test"
AUDIENCE = "schema-registry"
CLAIMS = {"iss": ISSUER, "aud": AUDIENCE}


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer("k1")


@pytest.fixture(scope="module")
def pem_server(tmp_path_factory: pytest.TempPathFactory, signer: Signer) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("bearer")
    keys = tmp / "keys.pem"
    keys.write_bytes(signer.public_pem())
    env = {
        "SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE": str(keys),
        "SCHEMA_REGISTRY_AUTH_JWT_ISSUER": ISSUER,
        "SCHEMA_REGISTRY_AUTH_JWT_AUDIENCE": AUDIENCE,
        "SCHEMA_REGISTRY_AUTH_JWT_LEEWAY": "0",
    }
    with running(Server(tmp, env)) as srv:
        yield srv


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_valid_token_is_accepted(pem_server: Server, signer: Signer) -> None:
    with pem_server.client(headers=bearer(signer.token(CLAIMS))) as client:
        assert client.post("/subjects/t-value/versions", json={"schema": AVRO}).json()["id"] == 1
        assert client.get("/subjects").json() == ["t-value"]


def _rsa_hs256(signer: Signer) -> str:
    # the classic confusion attack: HMAC "signed" with the public key's PEM
    header = {"alg": "HS256", "typ": "JWT"}
    body = {"sub": "eve", "exp": int(time.time()) + 60, **CLAIMS}
    segments = [
        jwt.utils.base64url_encode(json.dumps(header).encode()),
        jwt.utils.base64url_encode(json.dumps(body).encode()),
    ]
    import hashlib
    import hmac

    signing_input = b".".join(segments)
    signature = hmac.new(signer.public_pem(), signing_input, hashlib.sha256).digest()
    return (signing_input + b"." + jwt.utils.base64url_encode(signature)).decode()


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda s: s.token({**CLAIMS, "exp": int(time.time()) - 5}), "Signature has expired"),
        (lambda s: s.token({**CLAIMS, "iss": "https://evil.test"}), "Invalid issuer"),
        (lambda s: s.token({**CLAIMS, "aud": "someone-else"}), "Audience doesn't match"),
        (lambda s: s.token({**CLAIMS, "exp": None}), 'missing the "exp" claim'),
        (lambda s: s.token({**CLAIMS, "sub": None}), "has no 'sub' claim"),
        (lambda s: Signer("k1").token(CLAIMS), "Signature verification failed"),
        (lambda s: jwt.encode({"sub": "eve", **CLAIMS}, None, algorithm="none"), "'none'"),
        (_rsa_hs256, "'HS256' is not accepted"),
        (lambda s: "not-a-jwt", "Malformed bearer token"),
    ],
    ids=[
        "expired",
        "issuer",
        "audience",
        "no-exp",
        "no-sub",
        "other-key",
        "alg-none",
        "hs256",
        "garbage",
    ],
)
def test_bad_tokens_are_401_with_an_invalid_token_challenge(
    pem_server: Server, signer: Signer, make: object, reason: str
) -> None:
    token = make(signer)  # type: ignore[operator]
    with pem_server.client(headers=bearer(token)) as client:
        response = client.get("/subjects")
    assert response.status_code == 401, response.text
    body = response.json()
    assert body["error_code"] == 401
    assert reason in body["message"]
    assert response.headers["www-authenticate"] == (
        'Bearer realm="schema-registry", error="invalid_token"'
    )


def test_confluent_client_static_token(pem_server: Server, signer: Signer) -> None:
    client = SchemaRegistryClient(
        {
            "url": pem_server.url,
            "bearer.auth.credentials.source": "STATIC_TOKEN",
            "bearer.auth.token": signer.token(CLAIMS),
            "bearer.auth.logical.cluster": "lsrc-test",
            "bearer.auth.identity.pool.id": "pool-1",
        }
    )
    schema_id = client.register_schema("static-value", Schema(AVRO, "AVRO"))
    assert client.get_schema(schema_id).schema_str == AVRO

    expired = SchemaRegistryClient(
        {
            "url": pem_server.url,
            "bearer.auth.credentials.source": "STATIC_TOKEN",
            "bearer.auth.token": signer.token({**CLAIMS, "exp": int(time.time()) - 60}),
            "bearer.auth.logical.cluster": "lsrc-test",
        }
    )
    with pytest.raises(SchemaRegistryError) as denied:
        expired.get_subjects()
    assert denied.value.http_status_code == 401


def test_jwks_url_oauthbearer_client_and_key_rotation(tmp_path: Path, signer: Signer) -> None:
    with IdentityProvider(signer, CLAIMS) as idp:
        env = {
            "SCHEMA_REGISTRY_AUTH_JWT_JWKS_URL": idp.url + "/jwks",
            "SCHEMA_REGISTRY_AUTH_JWT_ISSUER": ISSUER,
            "SCHEMA_REGISTRY_AUTH_JWT_AUDIENCE": AUDIENCE,
        }
        with running(Server(tmp_path, env)) as srv:
            client = SchemaRegistryClient(
                {
                    "url": srv.url,
                    "bearer.auth.credentials.source": "OAUTHBEARER",
                    "bearer.auth.client.id": "app",
                    "bearer.auth.client.secret": "app-secret",
                    "bearer.auth.scope": "schema_registry",
                    "bearer.auth.issuer.endpoint.url": idp.url + "/token",
                    "bearer.auth.logical.cluster": "lsrc-test",
                }
            )
            assert client.register_schema("oauth-value", Schema(AVRO, "AVRO")) == 1
            assert client.get_subjects() == ["oauth-value"]
            fetches = idp.jwks_fetches
            assert fetches >= 1
            # the keys are cached: more requests fetch nothing
            for _ in range(5):
                client.get_subjects()
            assert idp.jwks_fetches == fetches

            # the provider rotates to a new key: an unknown kid makes the server fetch again
            rotated = Signer("k2")
            idp.keys.append(rotated.jwk())
            time.sleep(2.1)  # unknown key ids refetch at most every 2 s
            with srv.client(headers=bearer(rotated.token(CLAIMS))) as http:
                assert http.get("/subjects").status_code == 200
            assert idp.jwks_fetches == fetches + 1
            # a kid the provider does not publish is refused (and refetching is rate-limited)
            with srv.client(headers=bearer(Signer("k3").token(CLAIMS))) as http:
                response = http.get("/subjects")
            assert idp.jwks_fetches == fetches + 1
            assert response.status_code == 401
            assert "No key to verify the bearer token (kid 'k3')" in response.json()["message"]


def test_unreachable_jwks_url_refuses_tokens(tmp_path: Path, signer: Signer) -> None:
    env = {"SCHEMA_REGISTRY_AUTH_JWT_JWKS_URL": "http://127.0.0.1:9/jwks"}
    with running(Server(tmp_path, env)) as srv:
        with srv.client(headers=bearer(signer.token())) as client:
            response = client.get("/subjects")
        assert response.status_code == 401
        assert "could not fetch the JWKS" in srv.log()


def test_basic_and_bearer_together(tmp_path: Path, signer: Signer) -> None:
    from tests.production_helpers import write_users

    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps({"keys": [signer.jwk()]}))
    write_users(tmp_path / "users", {"bob": "pw"})
    env = {
        "SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE": str(keys),
        "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(tmp_path / "users"),
    }
    with running(Server(tmp_path, env)) as srv, srv.client() as client:
        missing = client.get("/subjects")
        assert missing.status_code == 401
        assert missing.headers.get_list("www-authenticate") == [
            'Basic realm="schema-registry", charset="UTF-8"',
            'Bearer realm="schema-registry"',
        ]
        assert client.get("/subjects", auth=("bob", "pw")).status_code == 200
        assert client.get("/subjects", headers=bearer(signer.token())).status_code == 200


def test_unusable_keys_file_stops_the_server(tmp_path: Path) -> None:
    keys = tmp_path / "keys.pem"
    keys.write_text("not a key")
    server = Server(tmp_path, {"SCHEMA_REGISTRY_AUTH_JWT_KEYS_FILE": str(keys)})
    with pytest.raises(RuntimeError, match="server exited"):
        server.start()
    assert "no PEM public key, certificate or JWKS found" in server.log()
