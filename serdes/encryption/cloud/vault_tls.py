"""The TLS settings of the ``hcvault://`` driver, as confluent-kafka's ``HcVaultKmsDriver``
reads them (no hvac import, so they are checked without the ``vault`` extra).

- ``ssl.ca.location`` (else ``$VAULT_CACERT``): the CA bundle the Vault server's certificate
  must chain to. Unset or empty keeps verification on against the system CAs: an empty string
  never turns verification off (requests treats a falsy ``verify`` as "do not verify").
- ``ssl.certificate.location`` (else ``$VAULT_CLIENT_CERT``) and ``ssl.key.location`` (else
  ``$VAULT_CLIENT_KEY``): the client certificate for mutual TLS; a certificate alone may be one
  PEM holding both; a key without a certificate is refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

SSL_CA_LOCATION = "ssl.ca.location"
SSL_CERTIFICATE_LOCATION = "ssl.certificate.location"
SSL_KEY_LOCATION = "ssl.key.location"


def vault_verify(config: Mapping[str, Any]) -> bool | str:
    """hvac's ``verify``: the CA bundle's path, else ``True``."""
    ca = config.get(SSL_CA_LOCATION) or os.environ.get("VAULT_CACERT")
    return str(ca) if ca else True


def vault_cert(config: Mapping[str, Any]) -> str | tuple[str, str] | None:
    """hvac's ``cert``: ``(certificate, key)``, the certificate alone, or ``None``."""
    cert = config.get(SSL_CERTIFICATE_LOCATION)
    if cert is None:
        cert = os.environ.get("VAULT_CLIENT_CERT")
    key = config.get(SSL_KEY_LOCATION)
    if key is None:
        key = os.environ.get("VAULT_CLIENT_KEY")
    if key is not None and cert is None:
        raise ValueError(f"{SSL_CERTIFICATE_LOCATION} required when configuring {SSL_KEY_LOCATION}")
    if cert is not None and key is not None:
        return str(cert), str(key)
    return None if cert is None else str(cert)
