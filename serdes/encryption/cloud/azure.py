"""``azure-kms://https://VAULT.vault.azure.net/keys/NAME/VERSION``: Key Vault RSA-OAEP-256
encrypt/decrypt of the DEK, as confluent-kafka's driver with its default settings (no key
version prefix; ``encrypt.azure.key.version.save`` is not supported). Credentials:
``tenant.id`` + ``client.id`` + ``client.secret``, else ``DefaultAzureCredential``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from azure.identity import ClientSecretCredential, DefaultAzureCredential
from azure.keyvault.keys.crypto import CryptographyClient, EncryptionAlgorithm


class AzureKmsAead:
    def __init__(self, client: Any) -> None:
        self._client = client

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        return bytes(self._client.encrypt(EncryptionAlgorithm.rsa_oaep_256, plaintext).ciphertext)

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        return bytes(self._client.decrypt(EncryptionAlgorithm.rsa_oaep_256, ciphertext).plaintext)


def new_aead(config: Mapping[str, Any], key_id: str) -> AzureKmsAead:
    tenant, client, secret = (config.get(k) for k in ("tenant.id", "client.id", "client.secret"))
    credential: Any
    if tenant is not None and client is not None and secret is not None:
        credential = ClientSecretCredential(tenant, client, secret)
    else:
        credential = DefaultAzureCredential()
    return AzureKmsAead(CryptographyClient(key_id, credential))
