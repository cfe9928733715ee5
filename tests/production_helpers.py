"""Helpers of the production tests: a ``schema-registry serve`` process with any environment
(HTTP or HTTPS), certificates made at test time, JWT keys and a loopback OAuth/JWKS server."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol, TypeVar

import httpx
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from registry.auth.passwords import hash_password
from tests.conftest import free_port

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
AVRO = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


class _HasUrl(Protocol):
    url: str


_S = TypeVar("_S", bound=_HasUrl)


class Server:
    """``python -m registry.cli serve`` on a free port with ``env`` added to the environment."""

    def __init__(
        self,
        tmp: Path,
        env: dict[str, str] | None = None,
        *,
        args: list[str] | None = None,
        scheme: str = "http",
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.port = free_port()
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.log_path = tmp / f"server-{self.port}.log"
        self.env = {**os.environ, "SCHEMA_REGISTRY_STORE": f"sqlite:///{tmp / 'r.db'}"}
        self.env.update(env or {})
        self.args = args or []
        self.verify = verify
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120) -> Server:
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "registry.cli", "serve", "--port", str(self.port), *self.args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log()}")
            try:
                with httpx.Client(verify=self.verify, timeout=2) as client:
                    if client.get(self.url + "/live").status_code == 200:
                        return self
            except (httpx.HTTPError, ssl.SSLError):
                time.sleep(0.1)
        raise RuntimeError(f"server did not start: {self.log()}")

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return -9

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def client(self, **kwargs: Any) -> httpx.Client:
        headers = {"Content-Type": CONTENT_TYPE, **kwargs.pop("headers", {})}
        return httpx.Client(
            base_url=self.url,
            headers=headers,
            verify=kwargs.pop("verify", self.verify),
            timeout=kwargs.pop("timeout", 10),
            **kwargs,
        )


@contextmanager
def running(server: Server) -> Iterator[Server]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


def settled_leader(
    servers: Sequence[_S],
    ready: Callable[[_S], dict[str, Any]],
    election: tuple[str, str] | None = None,
    timeout: float = 60,
) -> _S:
    """The leader once every instance is ready (``ready`` waits until one names a leader),
    exactly one says it leads and every view names its URL. Right after an instance joins or
    dies, the others' views lag the rebalance: one round of views can name no leader, or two.
    With ``election`` (bootstrap servers, ``_schemas`` topic), also until the Kafka election
    group is stable with one member per server, so that no join's rebalance is still to come
    (it would take leadership away for a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        views = [ready(s) for s in servers]
        leaders = [s for s, v in zip(servers, views, strict=True) if v.get("is_leader")]
        agreed = len(leaders) == 1 and all(v.get("leader") == leaders[0].url for v in views)
        stable = election is None or _group_stable(*election, members=len(servers))
        if agreed and stable:
            return leaders[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"no agreed leader among {views} (group stable: {stable})")
        time.sleep(0.2)


def _group_stable(bootstrap: str, topic: str, members: int) -> bool:
    """Whether every instance heartbeats in the Kafka store's election topic (read with
    ``read_uncommitted``, the last few seconds): after that no join is still to be seen."""
    import orjson
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "test-election-view",
            "enable.auto.commit": False,
        }
    )
    try:
        tp = TopicPartition(f"{topic}-election", 0)
        low, high = consumer.get_watermark_offsets(tp, timeout=10, cached=False)
        consumer.assign([TopicPartition(tp.topic, 0, max(low, high - 200))])
        seen: set[str] = set()
        for msg in consumer.consume(num_messages=200, timeout=2):
            if msg.error() is None and (msg.key() or b"").startswith(b"hb:"):
                seen.add(orjson.loads(msg.value())["member"])
        return len(seen) >= members
    finally:
        consumer.close()


def write_users(path: Path, users: dict[str, str]) -> None:
    # cheap scrypt parameters keep the tests fast; the server reads them from the hash
    path.write_text("".join(f"{name}:{hash_password(pw, n=2**10)}\n" for name, pw in users.items()))


def tls_context(ca: Path, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    """A client context trusting ``ca`` (and presenting ``cert``/``key`` when given)."""
    context = ssl.create_default_context(cafile=str(ca))
    if cert is not None:
        context.load_cert_chain(str(cert), str(key) if key else None)
    return context


# ---- certificates -----------------------------------------------------------------------------


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_key(key: Any, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


class Pki:
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate, as files."""

    def __init__(self, directory: Path, name: str = "test") -> None:
        self.dir = directory
        now = datetime.datetime.now(datetime.UTC)
        self.ca_key = ec.generate_private_key(ec.SECP256R1())
        self.ca_cert = (
            x509.CertificateBuilder()
            .subject_name(_name(f"{name} CA"))
            .issuer_name(_name(f"{name} CA"))
            .public_key(self.ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self.ca_key.public_key()), critical=False
            )
            .sign(self.ca_key, hashes.SHA256())
        )
        self.ca = directory / f"{name}-ca.pem"
        self.ca.write_bytes(self.ca_cert.public_bytes(serialization.Encoding.PEM))
        self.server_cert, self.server_key = self.issue("127.0.0.1", server=True)
        self.client_cert, self.client_key = self.issue("client-app", server=False)

    def issue(self, cn: str, *, server: bool) -> tuple[Path, Path]:
        now = datetime.datetime.now(datetime.UTC)
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(self.ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.ca_key.public_key()),
                critical=False,
            )
            .add_extension(
                x509.ExtendedKeyUsage(
                    [x509.ExtendedKeyUsageOID.SERVER_AUTH]
                    if server
                    else [x509.ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address(cn)), x509.DNSName("localhost")]
                ),
                critical=False,
            )
        cert = builder.sign(self.ca_key, hashes.SHA256())
        cert_path = self.dir / f"{cn}.pem"
        key_path = self.dir / f"{cn}.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, key_path)
        return cert_path, key_path

    def https_server(
        self, tmp: Path, env: dict[str, str] | None = None, args: Sequence[str] = ()
    ) -> Server:
        """A registry serving HTTPS with this server certificate (``args`` added), whose test
        client trusts this CA."""
        tls = ["--tls-certfile", str(self.server_cert), "--tls-keyfile", str(self.server_key)]
        return Server(tmp, env, args=[*tls, *args], scheme="https", verify=tls_context(self.ca))


# ---- JWT ------------------------------------------------------------------------------------


class Signer:
    """An RSA key pair that signs JWTs; its public half as PEM or JWKS."""

    def __init__(self, kid: str = "k1") -> None:
        self.kid = kid
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def token(self, claims: dict[str, Any] | None = None, **headers: Any) -> str:
        now = int(time.time())
        body = {"sub": "alice", "iat": now, "exp": now + 600, **(claims or {})}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, self.key, algorithm="RS256", headers={"kid": self.kid, **headers})

    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def jwk(self) -> dict[str, Any]:
        jwk: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update({"kid": self.kid, "use": "sig", "alg": "RS256"})
        return jwk


class IdentityProvider:
    """A loopback OAuth token endpoint (client credentials) and JWKS URL."""

    def __init__(self, signer: Signer, claims: dict[str, Any] | None = None) -> None:
        self.signer = signer
        self.claims = claims or {}
        self.jwks_fetches = 0
        self.keys: list[dict[str, Any]] = [signer.jwk()]
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _reply(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                provider.jwks_fetches += 1
                self._reply({"keys": provider.keys})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                token = provider.signer.token(provider.claims)
                self._reply({"access_token": token, "token_type": "Bearer", "expires_in": 600})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> IdentityProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
