"""KMS drivers: how a KEK (``kmsType`` + ``kmsKeyId``) becomes an AEAD that wraps DEKs.

A driver is registered for a key URL prefix (``local-kms://``, ``aws-kms://``, ...), as in
confluent-kafka's ``kms_driver_registry``; :func:`aead_for` finds it and caches the AEAD per
(URL, configuration). ``local-kms`` is built in: its KEK is AES-128-GCM with a key derived by
HKDF-SHA256 from a secret (the rule's or KEK's ``secret`` property, else ``$LOCAL_SECRET``), the
same derivation as confluent-kafka's and Java's local KMS. The cloud drivers are imported only
when a KEK of their type is used, from the optional extras (``pip install
pyschemaregistry[aws]``, ``[azure]``, ``[gcp]``, ``[vault]``).
"""

from __future__ import annotations

import abc
import os
import threading
from collections.abc import Mapping
from typing import Any, Protocol

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from serdes.encryption.tink import RawAesGcm

KMS_TYPE_SUFFIX = "://"


class KmsError(Exception):
    """No driver, missing credentials or a failing KMS call."""


class Aead(Protocol):
    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes: ...

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes: ...


class KmsDriver(abc.ABC):
    """Makes AEADs for the key URLs that start with :meth:`key_url_prefix`."""

    @abc.abstractmethod
    def key_url_prefix(self) -> str: ...

    @abc.abstractmethod
    def new_aead(self, config: Mapping[str, Any], key_url: str) -> Aead: ...

    def get_key_url_prefix(self) -> str:
        """confluent-kafka's name of :meth:`key_url_prefix`."""
        return self.key_url_prefix()

    def new_kms_client(self, conf: Mapping[str, Any], key_url: str | None) -> KmsClient:
        """confluent-kafka's driver method: a client (Tink's ``KmsClient`` shape) whose
        ``get_aead(key_url)`` is this driver's AEAD; the key's SDK client is made now."""
        return KmsClient(self, conf, key_url)

    @classmethod
    def register(cls) -> None:
        """Register a new driver of this class (it wins for its prefix), as confluent-kafka's
        ``LocalKmsDriver.register()``, ``AwsKmsDriver.register()``, ... that applications call
        at start-up. serdes registers all five built-in drivers already; calling this is
        harmless."""
        register_kms_driver(cls())


class KmsClient:
    """What confluent-kafka's ``KmsDriver.new_kms_client`` returns: AEADs for the key URLs
    under ``key_url`` (every URL of the driver's prefix when ``None``)."""

    def __init__(self, driver: KmsDriver, conf: Mapping[str, Any], key_url: str | None) -> None:
        self._driver, self._conf = driver, dict(conf)
        self._key_url = key_url or driver.key_url_prefix()
        self._aeads: dict[str, Aead] = {}
        if key_url and key_url != driver.key_url_prefix():
            self._aeads[key_url] = driver.new_aead(self._conf, key_url)

    def does_support(self, key_url: str) -> bool:
        return key_url.startswith(self._key_url)

    def get_aead(self, key_url: str) -> Aead:
        if not self.does_support(key_url):
            raise KmsError(f"this client is bound to {self._key_url}, not {key_url}")
        found = self._aeads.get(key_url)
        if found is None:
            found = self._aeads[key_url] = self._driver.new_aead(self._conf, key_url)
        return found


class LocalKmsDriver(KmsDriver):
    """``local-kms://``: a KEK derived from a secret; for tests and air-gapped installs."""

    def key_url_prefix(self) -> str:
        return "local-kms://"

    def new_aead(self, config: Mapping[str, Any], key_url: str) -> Aead:
        secret = config.get("secret") or os.environ.get("LOCAL_SECRET")
        if not secret:
            raise KmsError("cannot load secret: set the rule parameter 'secret' or LOCAL_SECRET")
        return RawAesGcm(local_key(str(secret)))


def local_key(secret: str) -> bytes:
    """HKDF-SHA256(secret, no salt, no info) to 16 bytes: the local KMS's AES-128 key."""
    return HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(
        secret.encode("utf-8")
    )


class _CloudDriver(KmsDriver):
    """A cloud driver whose module (and SDK, an optional extra) is imported on first use: the
    class imports, registers and matches key URLs without the SDK installed; making an AEAD
    without it raises :class:`KmsError` naming the extra to install."""

    prefix: str
    module: str
    extra: str

    def key_url_prefix(self) -> str:
        return self.prefix

    def new_aead(self, config: Mapping[str, Any], key_url: str) -> Aead:
        import importlib

        try:
            mod = importlib.import_module(self.module)
        except ImportError as exc:
            raise KmsError(
                f"{self.prefix} keys need the {self.extra!r} extra: "
                f"pip install 'pyschemaregistry[{self.extra}]' ({exc})"
            ) from exc
        aead: Aead = mod.new_aead(config, key_url[len(self.prefix) :])
        return aead


class AwsKmsDriver(_CloudDriver):
    """``aws-kms://`` keys (AWS KMS; boto3 from the ``aws`` extra)."""

    prefix, module, extra = "aws-kms://", "serdes.encryption.cloud.aws", "aws"


class AzureKmsDriver(_CloudDriver):
    """``azure-kms://`` keys (Azure Key Vault; the ``azure`` extra)."""

    prefix, module, extra = "azure-kms://", "serdes.encryption.cloud.azure", "azure"


class GcpKmsDriver(_CloudDriver):
    """``gcp-kms://`` keys (Google Cloud KMS; the ``gcp`` extra)."""

    prefix, module, extra = "gcp-kms://", "serdes.encryption.cloud.gcp", "gcp"


class HcVaultKmsDriver(_CloudDriver):
    """``hcvault://`` keys (HashiCorp Vault's transit engine; hvac from the ``vault`` extra).
    TLS: ``ssl.ca.location`` (``$VAULT_CACERT``), ``ssl.certificate.location``
    (``$VAULT_CLIENT_CERT``), ``ssl.key.location`` (``$VAULT_CLIENT_KEY``); see
    :mod:`serdes.encryption.cloud.vault_tls`."""

    prefix, module, extra = "hcvault://", "serdes.encryption.cloud.hcvault", "vault"


_drivers: list[KmsDriver] = [
    LocalKmsDriver(),
    AwsKmsDriver(),
    AzureKmsDriver(),
    GcpKmsDriver(),
    HcVaultKmsDriver(),
]
_lock = threading.Lock()
_aeads: dict[tuple[str, tuple[tuple[str, str], ...]], Aead] = {}


def register_kms_driver(driver: KmsDriver) -> None:
    """Add a driver; it wins over earlier ones for its prefix."""
    with _lock:
        # a driver of the same class for the same prefix is replaced, so that start-up code
        # calling ``XKmsDriver.register()`` again and again does not grow the list
        prefix = driver.key_url_prefix()
        _drivers[:] = [
            d for d in _drivers if type(d) is not type(driver) or d.key_url_prefix() != prefix
        ]
        _drivers.insert(0, driver)
        _aeads.clear()


def driver_for(key_url: str) -> KmsDriver:
    with _lock:
        for driver in _drivers:
            if key_url.startswith(driver.key_url_prefix()):
                return driver
    raise KmsError(f"no KMS driver found for key URL: {key_url}")


def aead_for(kms_type: str, kms_key_id: str, config: Mapping[str, Any]) -> Aead:
    """The (cached) AEAD of the KEK ``kms_type://kms_key_id`` under ``config``."""
    key_url = kms_type + KMS_TYPE_SUFFIX + kms_key_id
    cache_key = (key_url, tuple(sorted((str(k), str(v)) for k, v in config.items())))
    found = _aeads.get(cache_key)
    if found is not None:
        return found
    aead = driver_for(key_url).new_aead(config, key_url)
    with _lock:
        _aeads[cache_key] = aead
    return aead
