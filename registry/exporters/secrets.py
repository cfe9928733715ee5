"""Exporter credentials at rest: encrypted with AES-256-GCM under a key derived (HKDF-SHA256)
from the ``exporter_secret`` setting, so the log (SQL table, Kafka topic, backups of either)
never holds them in clear. Without that setting an exporter may not carry credentials.

A GET shows a credential as :data:`MASK`; a PUT that sends the mask back keeps the stored one.
"""

from __future__ import annotations

import base64
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from registry.exporters.model import invalid_config

MASK = "[hidden]"
PREFIX = "enc:v1:"
_SALT = b"pyschemaregistry exporter credentials"
#: config keys holding credentials (a key naming a password, secret or token is one too)
SECRET_KEYS = frozenset({"basic.auth.user.info", "bearer.auth.token", "bearer.auth.client.secret"})


def is_secret(key: str) -> bool:
    bare = key.removeprefix("schema.registry.")
    lowered = bare.lower()
    return bare in SECRET_KEYS or any(w in lowered for w in ("password", "secret", "token"))


def _aead(passphrase: str) -> AESGCM:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=b"exporter-config").derive(
        passphrase.encode()
    )
    return AESGCM(key)


def seal(config: dict[str, str], old: dict[str, str], passphrase: str) -> dict[str, str]:
    """``config`` with every credential encrypted; a masked one keeps its ``old`` value."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if not is_secret(key) or value.startswith(PREFIX):
            out[key] = value
            continue
        if value == MASK:
            if key in old:
                out[key] = old[key]
                continue
            raise invalid_config(f"{key} is {MASK!r}, but no value is stored for it")
        if not passphrase:
            raise invalid_config(
                f"{key}: credentials are stored encrypted, and the setting exporter_secret "
                "(SCHEMA_REGISTRY_EXPORTER_SECRET) that derives their key is not set"
            )
        nonce = os.urandom(12)
        sealed = _aead(passphrase).encrypt(nonce, value.encode(), key.encode())
        out[key] = PREFIX + base64.b64encode(nonce + sealed).decode()
    return out


def masked(config: dict[str, str]) -> dict[str, str]:
    """``config`` as a GET shows it."""
    return {k: MASK if is_secret(k) else v for k, v in config.items()}


def opened(config: dict[str, str], passphrase: str) -> dict[str, str]:
    """``config`` with its credentials in clear (for the destination client only); raises
    ``ValueError`` when they cannot be decrypted (another ``exporter_secret``)."""
    out: dict[str, str] = {}
    for key, value in config.items():
        if not value.startswith(PREFIX):
            out[key] = value
            continue
        raw = base64.b64decode(value[len(PREFIX) :])
        try:
            out[key] = _aead(passphrase).decrypt(raw[:12], raw[12:], key.encode()).decode()
        except InvalidTag as exc:
            raise ValueError(
                f"the credential {key} does not decrypt with this exporter_secret"
            ) from exc
    return out
