"""Cloud KMS drivers, each importing its SDK: ``aws`` (boto3), ``azure`` (azure-identity,
azure-keyvault-keys), ``gcp`` (google-cloud-kms), ``hcvault`` (hvac). Installed with the
extras of the same names (``pip install 'pyschemaregistry[aws]'``...) and loaded by
:mod:`serdes.encryption.kms` when a KEK of their type is first used. Each exposes
``new_aead(config, key_id)``; the wrapped DEKs are what confluent-kafka's drivers (Tink's KMS
integrations) write, so either client unwraps the other's.

Not tested here (no cloud accounts); the calls follow the SDKs' documented APIs.
"""
