"""Field-level encryption (Confluent's CSFLE): Tink keys and AEADs, KMS drivers, the DEK
registry client and the ENCRYPT / ENCRYPT_PAYLOAD rule executors, byte-compatible with
confluent-kafka 2.16 and Confluent's Java client.

Modules: :mod:`~serdes.encryption.tink` (DEK formats and ciphers), :mod:`~serdes.encryption.kms`
(KMS drivers: ``local-kms`` built in; ``aws-kms``, ``azure-kms``, ``gcp-kms``, ``hcvault`` with
the optional extras), :mod:`~serdes.encryption.dek_client` (``/dek-registry/v1`` client) and
:mod:`~serdes.encryption.executor` (the rule executors).
"""
