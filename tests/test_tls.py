"""HTTPS and client certificates on a live server, with certificates made at test time:
the real confluent-kafka client over TLS and mTLS, refused handshakes, bad configurations."""

from __future__ import annotations

import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from tests.production_helpers import AVRO, Pki, Server, running, tls_context


def test_https_with_the_confluent_client(tmp_path: Path) -> None:
    pki = Pki(tmp_path)
    server = pki.https_server(tmp_path)
    with running(server) as srv:
        conf = {"url": srv.url, "ssl.ca.location": str(pki.ca)}
        with SchemaRegistryClient(conf) as client:
            schema_id = client.register_schema("tls-value", Schema(AVRO, "AVRO"))
            assert client.get_schema(schema_id).schema_str == AVRO
        # a client that does not trust the CA is refused by its own verification
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(srv.url + "/subjects")
        # plain HTTP on the TLS port does not get an answer
        with pytest.raises(httpx.HTTPError):
            httpx.get(srv.url.replace("https", "http") + "/subjects", timeout=3)
    assert server.proc is not None and server.proc.returncode == 0  # stopped cleanly
    assert f"listening on https://127.0.0.1:{server.port}" in server.log()


def test_mutual_tls_requires_a_client_certificate_from_the_ca(tmp_path: Path) -> None:
    pki = Pki(tmp_path)
    (tmp_path / "other").mkdir()
    other = Pki(tmp_path / "other", "other")
    env = {
        "SCHEMA_REGISTRY_TLS_CERTFILE": str(pki.server_cert),
        "SCHEMA_REGISTRY_TLS_KEYFILE": str(pki.server_key),
        "SCHEMA_REGISTRY_TLS_CA_FILE": str(pki.ca),
        "SCHEMA_REGISTRY_TLS_CLIENT_AUTH": "required",
    }
    trusted = tls_context(pki.ca, pki.client_cert, pki.client_key)
    server = Server(tmp_path, env, scheme="https", verify=trusted)
    with running(server) as srv:
        conf = {
            "url": srv.url,
            "ssl.ca.location": str(pki.ca),
            "ssl.certificate.location": str(pki.client_cert),
            "ssl.key.location": str(pki.client_key),
        }
        with SchemaRegistryClient(conf) as client:
            assert client.register_schema("mtls-value", Schema(AVRO, "AVRO")) == 1
        with srv.client() as http:
            assert http.get("/subjects").json() == ["mtls-value"]
        # no certificate, or one from another CA: the handshake fails
        for bad in (
            tls_context(pki.ca),
            tls_context(pki.ca, other.client_cert, other.client_key),
        ):
            with (
                pytest.raises((httpx.HTTPError, ssl.SSLError)),
                srv.client(verify=bad) as http,
            ):
                http.get("/subjects")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tls-certfile", "{cert}"], "needs both"),
        (["--tls-client-auth", "required"], "client certificates need TLS"),
        (
            ["--tls-certfile", "{cert}", "--tls-keyfile", "{key}", "--tls-client-auth", "yes"],
            "use none, optional or required",
        ),
        (
            ["--tls-certfile", "{cert}", "--tls-keyfile", "{key}", "--tls-client-auth", "required"],
            "needs SCHEMA_REGISTRY_TLS_CA_FILE",
        ),
        (["--tls-certfile", "{cert}", "--tls-keyfile", "{cert}"], "unusable TLS certificate"),
        (["--tls-certfile", "{cert}", "--tls-keyfile", "/nonexistent.key"], "cannot read"),
    ],
)
def test_bad_tls_settings_stop_the_server_with_the_reason(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    pki = Pki(tmp_path)
    args = [f.format(cert=pki.server_cert, key=pki.server_key) for f in flags]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "registry.cli",
            "serve",
            "--port",
            "1",
            *args,
            "--store",
            f"sqlite:///{tmp_path / 'r.db'}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr
