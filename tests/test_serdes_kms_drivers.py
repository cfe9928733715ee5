"""The KMS driver classes a confluent-kafka application calls at start-up
(``LocalKmsDriver.register()``, ``AwsKmsDriver.register()``, ...): importable and registrable
without their cloud SDKs, failing with the extra to install only when a key is used; and the
Vault driver's TLS settings (a Vault behind a private CA, with mutual TLS).

No Vault server can run here: the TLS test serves Vault's two transit endpoints over HTTPS
from a local stand-in requiring a client certificate; what is under test is the driver's TLS
(hvac's real client, a real handshake), not Vault."""

from __future__ import annotations

import base64
import json
import ssl
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.production_helpers import Pki

SDKS = ("boto3", "hvac", "google.cloud", "google.cloud.kms_v1", "azure", "azure.identity")


@pytest.fixture
def no_cloud_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if no cloud SDK were installed (importing one raises ImportError)."""
    for module in SDKS:
        monkeypatch.setitem(sys.modules, module, None)
    for name in [m for m in sys.modules if m.startswith("serdes.encryption.cloud.")]:
        monkeypatch.delitem(sys.modules, name)


@pytest.fixture
def drivers() -> Iterator[None]:
    """Restore serdes' driver list after a test that registers drivers."""
    from serdes.encryption import kms

    saved = list(kms._drivers)
    yield
    kms._drivers[:] = saved
    kms._aeads.clear()


@pytest.mark.usefixtures("no_cloud_sdks", "drivers")
@pytest.mark.parametrize(
    ("name", "prefix", "extra"),
    [
        ("AwsKmsDriver", "aws-kms://", "aws"),
        ("AzureKmsDriver", "azure-kms://", "azure"),
        ("GcpKmsDriver", "gcp-kms://", "gcp"),
        ("HcVaultKmsDriver", "hcvault://", "vault"),
    ],
)
def test_cloud_driver_classes_register_without_their_sdk(
    name: str, prefix: str, extra: str
) -> None:
    import serdes.encryption
    from serdes.encryption import kms

    cls = getattr(serdes.encryption, name)
    assert cls is getattr(kms, name)
    cls.register()
    cls.register()  # start-up code may run twice: the list does not grow
    assert sum(type(d) is cls for d in kms._drivers) == 1
    found = kms.driver_for(prefix + "some/key")
    assert type(found) is cls
    assert found.get_key_url_prefix() == prefix
    with pytest.raises(kms.KmsError, match=rf"pip install 'pyschemaregistry\[{extra}\]'"):
        kms.aead_for(prefix[: -len("://")], "arn:aws:kms:eu-west-1:1:key/x", {})


@pytest.mark.usefixtures("drivers")
def test_local_kms_driver_register_as_confluents() -> None:
    """``LocalKmsDriver.register()``, as a ported application calls it (the key derivation is
    compared with confluent-kafka's in tests/test_serdes_encryption.py)."""
    from serdes.encryption import LocalKmsDriver, kms

    LocalKmsDriver.register()
    LocalKmsDriver.register()
    assert sum(type(d) is LocalKmsDriver for d in kms._drivers) == 1
    assert type(kms.driver_for("local-kms://k")) is LocalKmsDriver
    aead = kms.aead_for("local-kms", "k", {"secret": "s3cret"})
    assert aead.decrypt(aead.encrypt(b"dek bytes", b""), b"") == b"dek bytes"


# ---- Vault TLS ---------------------------------------------------------------------------------


@pytest.fixture
def clean_vault_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("VAULT_CACERT", "VAULT_CLIENT_CERT", "VAULT_CLIENT_KEY", "VAULT_TOKEN"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.usefixtures("clean_vault_env")
def test_vault_tls_settings_and_their_environment_fallbacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from serdes.encryption.cloud.vault_tls import vault_cert, vault_verify

    assert vault_verify({}) is True
    assert vault_verify({"ssl.ca.location": ""}) is True  # empty never turns verification off
    assert vault_verify({"ssl.ca.location": "/c/ca.pem"}) == "/c/ca.pem"
    assert vault_cert({}) is None
    assert vault_cert({"ssl.certificate.location": "both.pem"}) == "both.pem"
    conf = {"ssl.certificate.location": "c.pem", "ssl.key.location": "c.key"}
    assert vault_cert(conf) == ("c.pem", "c.key")
    with pytest.raises(ValueError, match=r"ssl\.certificate\.location required"):
        vault_cert({"ssl.key.location": "c.key"})

    monkeypatch.setenv("VAULT_CACERT", "/env/ca.pem")
    monkeypatch.setenv("VAULT_CLIENT_CERT", "env.pem")
    monkeypatch.setenv("VAULT_CLIENT_KEY", "env.key")
    assert vault_verify({}) == "/env/ca.pem"
    assert vault_verify({"ssl.ca.location": "/c/ca.pem"}) == "/c/ca.pem"
    assert vault_cert({}) == ("env.pem", "env.key")
    assert vault_cert(conf) == ("c.pem", "c.key")


class _Transit(BaseHTTPRequestHandler):
    """Vault's ``POST /v1/MOUNT/encrypt/KEY`` and ``/decrypt/KEY`` (a reversible stand-in
    cipher: the point is the TLS around it)."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("X-Vault-Token") != "root" or "/transit/" not in self.path:
            self._answer(403, {"errors": ["permission denied"]})
        elif "/encrypt/" in self.path:
            raw = base64.b64decode(body["plaintext"])[::-1]
            self._answer(
                200, {"data": {"ciphertext": "vault:v1:" + base64.b64encode(raw).decode()}}
            )
        else:
            raw = base64.b64decode(body["ciphertext"].removeprefix("vault:v1:"))[::-1]
            self._answer(200, {"data": {"plaintext": base64.b64encode(raw).decode()}})

    def _answer(self, status: int, doc: dict[str, Any]) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Pki]]:
    """An HTTPS transit endpoint on a private CA that requires a client certificate."""
    pki = Pki(tmp_path_factory.mktemp("vault-pki"), name="vault")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pki.server_cert), str(pki.server_key))
    context.load_verify_locations(str(pki.ca))
    context.verify_mode = ssl.CERT_REQUIRED
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Transit)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}", pki
    server.shutdown()
    server.server_close()


@pytest.mark.usefixtures("clean_vault_env", "drivers")
def test_vault_behind_a_private_ca_with_mutual_tls(vault: tuple[str, Pki]) -> None:
    from serdes.encryption import kms

    address, pki = vault
    key_id = f"https://{address}/transit/keys/orders"
    tls = {
        "token.id": "root",
        "ssl.ca.location": str(pki.ca),
        "ssl.certificate.location": str(pki.client_cert),
        "ssl.key.location": str(pki.client_key),
    }
    aead = kms.aead_for("hcvault", key_id, tls)
    wrapped = aead.encrypt(b"dek bytes", b"")
    assert wrapped.startswith(b"vault:v1:")
    assert aead.decrypt(wrapped, b"") == b"dek bytes"
    # confluent-kafka's driver API gives the same AEAD
    client = kms.HcVaultKmsDriver().new_kms_client(tls, "hcvault://" + key_id)
    assert client.get_aead("hcvault://" + key_id).decrypt(wrapped, b"") == b"dek bytes"

    # without the private CA the server is not trusted; without the client certificate the
    # server refuses the handshake
    for missing in ("ssl.ca.location", "ssl.certificate.location"):
        conf = {k: v for k, v in tls.items() if k != missing}
        if missing == "ssl.certificate.location":
            conf.pop("ssl.key.location")
        with pytest.raises(Exception, match=r"(?i)ssl|certificate|handshake|alert|reset|EOF"):
            kms.aead_for("hcvault", key_id, conf).encrypt(b"x", b"")
