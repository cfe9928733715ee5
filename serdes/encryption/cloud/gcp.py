"""``gcp-kms://projects/P/locations/L/keyRings/R/cryptoKeys/K``: Cloud KMS Encrypt/Decrypt
(as Tink's ``GcpKmsAead``: associated data as additional authenticated data). Credentials: a
service account from ``client.id``, ``client.email``, ``private.key.id``, ``private.key``
(``token.uri``), else Application Default Credentials."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.cloud import kms_v1
from google.oauth2 import service_account


class GcpKmsAead:
    def __init__(self, client: Any, key_name: str) -> None:
        self._client = client
        self._key_name = key_name

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        reply = self._client.encrypt(
            request={
                "name": self._key_name,
                "plaintext": plaintext,
                "additional_authenticated_data": associated_data,
            }
        )
        return bytes(reply.ciphertext)

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        reply = self._client.decrypt(
            request={
                "name": self._key_name,
                "ciphertext": ciphertext,
                "additional_authenticated_data": associated_data,
            }
        )
        return bytes(reply.plaintext)


def new_aead(config: Mapping[str, Any], key_name: str) -> GcpKmsAead:
    if config.get("account.type", "service_account") != "service_account":
        raise ValueError("account.type must be 'service_account'")
    fields = ("client.id", "client.email", "private.key.id", "private.key")
    creds = None
    if all(config.get(f) is not None for f in fields):
        creds = service_account.Credentials.from_service_account_info(
            {
                "type": "service_account",
                "client_id": config["client.id"],
                "client_email": config["client.email"],
                "private_key_id": config["private.key.id"],
                "private_key": config["private.key"],
                "token_uri": config.get("token.uri", "https://oauth2.googleapis.com/token"),
            }
        )
    return GcpKmsAead(kms_v1.KeyManagementServiceClient(credentials=creds), key_name)
