"""serdes.SchemaRegistryClient's TLS files and HTTP Basic credentials against our server run
with HTTPS and a users file: the CA file verifies the server, credentials are sent, wrong or
missing ones are a SchemaRegistryError 401, and the serdes work through it."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from confluent_kafka.serialization import MessageField, SerializationContext
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from serdes import SchemaRegistryClient, SchemaRegistryError
from serdes.avro import AvroDeserializer, AvroSerializer
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "server.pem", tmp / "server.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    tmp = tmp_path_factory.mktemp("tls-auth")
    cert, key = _self_signed(tmp)
    users = tmp / "users"
    env = {**os.environ, "SCHEMA_REGISTRY_AUTH_USERS_FILE": str(users)}
    subprocess.run(
        [sys.executable, "-m", "registry.cli", "user", "add", "--file", str(users),
         "--password-stdin", "ann"],
        input=b"s3cret\n", check=True, env=env, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    port = free_port()
    log = (tmp / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "registry.cli", "serve", "--port", str(port), "--store",
         f"sqlite:///{tmp / 'db.sqlite'}", "--tls-certfile", str(cert), "--tls-keyfile",
         str(key)],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
    )  # fmt: skip
    url = f"https://127.0.0.1:{port}"
    pool = urllib3.PoolManager(ca_certs=str(cert), retries=False)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                pool.request("GET", url + "/live", timeout=1)
                break
            except urllib3.exceptions.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp / "server.log").read_text()) from None
                time.sleep(0.1)
        yield url, cert
    finally:
        pool.clear()
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:  # over TLS it can linger on SIGTERM after serving
            proc.kill()
            proc.wait(timeout=10)


def test_tls_and_basic_auth_credentials_work_end_to_end(secured) -> None:
    url, cert = secured
    client = SchemaRegistryClient(
        {"url": url, "ssl.ca.location": str(cert), "basic.auth.user.info": "ann:s3cret"}
    )
    schema = json.dumps({"type": "record", "name": "S", "fields": [{"name": "a", "type": "int"}]})
    ctx = SerializationContext("secure", MessageField.VALUE)
    with client:
        data = AvroSerializer(client, schema)({"a": 5}, ctx)
        assert AvroDeserializer(client)(data, ctx) == {"a": 5}
        assert client.get_subjects() == ["secure-value"]
    in_url = SchemaRegistryClient({"url": url.replace("https://", "https://ann:s3cret@"),
                                   "ssl.ca.location": str(cert)})  # fmt: skip
    with in_url:
        assert in_url.get_subjects() == ["secure-value"]


@pytest.mark.parametrize("userinfo", ["ann:wrong", None])
def test_wrong_or_missing_credentials_are_a_401(secured, userinfo: str | None) -> None:
    url, cert = secured
    conf = {"url": url, "ssl.ca.location": str(cert), "max.retries": 0}
    if userinfo is not None:
        conf["basic.auth.user.info"] = userinfo
    with SchemaRegistryClient(conf) as client, pytest.raises(SchemaRegistryError) as raised:
        client.get_subjects()
    assert raised.value.http_status_code == 401


def test_an_unverifiable_server_is_refused_unless_verification_is_off(secured) -> None:
    url, _ = secured
    creds = {"url": url, "basic.auth.user.info": "ann:s3cret", "max.retries": 0}
    with (
        SchemaRegistryClient(creds) as client,
        pytest.raises(SchemaRegistryError, match="could not reach the Schema Registry"),
    ):
        client.get_subjects()  # the system CAs do not know this certificate
    with (
        SchemaRegistryClient({**creds, "ssl.ca.location": False}) as unverified,
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        assert isinstance(unverified.get_subjects(), list)
