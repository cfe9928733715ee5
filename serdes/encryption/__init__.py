"""Field-level encryption (Confluent's CSFLE): Tink keys and AEADs, KMS drivers, the DEK
registry client and the ENCRYPT / ENCRYPT_PAYLOAD rule executors, byte-compatible with
confluent-kafka 2.16 and Confluent's Java client.

Modules: :mod:`~serdes.encryption.tink` (DEK formats and ciphers), :mod:`~serdes.encryption.kms`
(KMS drivers: ``local-kms`` built in; ``aws-kms``, ``azure-kms``, ``gcp-kms``, ``hcvault`` with
the optional extras), :mod:`~serdes.encryption.dek_client` (``/dek-registry/v1`` client) and
:mod:`~serdes.encryption.executor` (the rule executors).

The names a confluent-kafka application imports from ``confluent_kafka.schema_registry.rules.
encryption...``: ``DekRegistryClient``, ``DekAlgorithm``, ``KmsDriver``, ``register_kms_driver``
and the driver classes ``LocalKmsDriver``, ``AwsKmsDriver``, ``AzureKmsDriver``, ``GcpKmsDriver``,
``HcVaultKmsDriver`` (each with ``register()``; importable without its cloud SDK).
"""

# the in-memory DEK registry registers itself for ``mock://`` URLs (serdes.client_schemes)
from serdes.encryption import mock_dek_client as _mock_dek_client  # noqa: F401
from serdes.encryption.dek_client import Dek, DekAlgorithm, DekRegistryClient, Kek
from serdes.encryption.kms import (
    AwsKmsDriver,
    AzureKmsDriver,
    GcpKmsDriver,
    HcVaultKmsDriver,
    KmsDriver,
    KmsError,
    LocalKmsDriver,
    register_kms_driver,
)

__all__ = [
    "AwsKmsDriver",
    "AzureKmsDriver",
    "Dek",
    "DekAlgorithm",
    "DekRegistryClient",
    "GcpKmsDriver",
    "HcVaultKmsDriver",
    "Kek",
    "KmsDriver",
    "KmsError",
    "LocalKmsDriver",
    "register_kms_driver",
]
