"""``hcvault://VAULT_HOST:PORT/MOUNT/keys/NAME``: Vault's transit engine (as Tink's HashiCorp
Vault AEAD: the plaintext base64, an empty context, the ``vault:v1:...`` ciphertext string's
bytes). Credentials: ``token.id`` (``$VAULT_TOKEN``), ``namespace`` (``$VAULT_NAMESPACE``),
or AppRole ``approle.role.id`` + ``approle.secret.id``. TLS: ``ssl.ca.location``,
``ssl.certificate.location``, ``ssl.key.location`` (:mod:`serdes.encryption.cloud.vault_tls`)."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlparse

import hvac

from serdes.encryption.cloud.vault_tls import vault_cert, vault_verify

_PATH = re.compile(r"/?([^/]+(?:/[^/]+)*)/keys/([^/]+)")


class VaultAead:
    def __init__(self, client: Any, mount: str, key_name: str) -> None:
        self._client, self._mount, self._key = client, mount, key_name

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        if associated_data:
            raise ValueError("Vault's transit AEAD takes no associated data")
        reply = self._client.secrets.transit.encrypt_data(
            name=self._key,
            plaintext=base64.b64encode(plaintext).decode(),
            context="",
            mount_point=self._mount,
        )
        return str(reply["data"]["ciphertext"]).encode()

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        if associated_data:
            raise ValueError("Vault's transit AEAD takes no associated data")
        reply = self._client.secrets.transit.decrypt_data(
            name=self._key, ciphertext=ciphertext.decode(), context="", mount_point=self._mount
        )
        return base64.b64decode(reply["data"]["plaintext"])


def new_aead(config: Mapping[str, Any], key_id: str) -> VaultAead:
    parsed = urlparse(key_id if "://" in key_id else "http://" + key_id)
    matched = _PATH.fullmatch(quote(parsed.path))
    if matched is None:
        raise ValueError(f"invalid Vault key path {parsed.path!r}: expected MOUNT/keys/NAME")
    client = hvac.Client(
        url=f"{parsed.scheme}://{parsed.netloc}",
        token=config.get("token.id") or os.environ.get("VAULT_TOKEN"),
        namespace=config.get("namespace") or os.environ.get("VAULT_NAMESPACE"),
        verify=vault_verify(config),
        cert=vault_cert(config),
    )
    role = config.get("approle.role.id") or os.environ.get("VAULT_APPROLE_ROLE_ID")
    secret = config.get("approle.secret.id") or os.environ.get("VAULT_APPROLE_SECRET_ID")
    if role and secret:
        client.auth.approle.login(role_id=role, secret_id=secret)
    return VaultAead(client, matched.group(1), matched.group(2))
