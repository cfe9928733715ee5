"""``aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID``: AWS KMS Encrypt/Decrypt (as Tink's
``AwsKmsAead``: associated data, when any, as the encryption context ``associatedData`` in
hex). Credentials: ``access.key.id`` + ``secret.access.key``, else ``profile``, else the
default chain; ``role.arn`` (``$AWS_ROLE_ARN``), ``role.session.name``,
``role.external.id`` assume a role, as confluent-kafka's driver."""

from __future__ import annotations

import binascii
import os
from collections.abc import Mapping
from typing import Any

import boto3


def _context(associated_data: bytes) -> dict[str, str]:
    if not associated_data:
        return {}
    return {"associatedData": binascii.hexlify(associated_data).decode()}


class AwsKmsAead:
    def __init__(self, client: Any, key_arn: str) -> None:
        self._client = client
        self._key_arn = key_arn

    def encrypt(self, plaintext: bytes, associated_data: bytes) -> bytes:
        reply = self._client.encrypt(
            KeyId=self._key_arn,
            Plaintext=plaintext,
            EncryptionContext=_context(associated_data),
        )
        return bytes(reply["CiphertextBlob"])

    def decrypt(self, ciphertext: bytes, associated_data: bytes) -> bytes:
        reply = self._client.decrypt(
            KeyId=self._key_arn,
            CiphertextBlob=ciphertext,
            EncryptionContext=_context(associated_data),
        )
        return bytes(reply["Plaintext"])


def new_aead(config: Mapping[str, Any], key_arn: str) -> AwsKmsAead:
    parts = key_arn.split(":")
    if len(parts) < 6:
        raise ValueError(f"invalid AWS KMS key ARN {key_arn!r}")
    region = parts[3]
    key, secret = config.get("access.key.id"), config.get("secret.access.key")
    if key is not None and secret is not None:
        session = boto3.Session(
            region_name=region, aws_access_key_id=key, aws_secret_access_key=secret
        )
    elif config.get("profile") is not None:
        session = boto3.Session(region_name=region, profile_name=config["profile"])
    else:
        session = boto3.Session(region_name=region)
    role = config.get("role.arn") or os.environ.get("AWS_ROLE_ARN")
    if role is not None and os.environ.get("AWS_WEB_IDENTITY_TOKEN_FILE") is None:
        params = {
            "RoleArn": role,
            "RoleSessionName": config.get("role.session.name")
            or os.environ.get("AWS_ROLE_SESSION_NAME")
            or "confluent-encrypt",
        }
        external = config.get("role.external.id") or os.environ.get("AWS_ROLE_EXTERNAL_ID")
        if external is not None:
            params["ExternalId"] = external
        creds = session.client("sts").assume_role(**params)["Credentials"]
        session = boto3.Session(
            region_name=region,
            aws_access_key_id=creds["AccessKeyId"],
            aws_secret_access_key=creds["SecretAccessKey"],
            aws_session_token=creds["SessionToken"],
        )
    return AwsKmsAead(session.client("kms"), key_arn)
