"""HTTPS and client certificates (mTLS) for ``schema-registry serve``: the settings turned into
uvicorn's ``ssl_*`` options, checked before the server starts.

With ``auth_client_cert_principal`` the HTTP protocol is uvicorn's own with one addition: the
common name of the client certificate the TLS handshake verified is put in every request's
``scope["state"][CLIENT_CN]`` (uvicorn does not pass the certificate to the application;
the state is the server's, so no header can forge it)."""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Mapping
from typing import Any

from registry.settings import Settings

CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "optional": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """``{}`` for plain HTTP; ``ValueError`` for an incomplete or unreadable configuration."""
    client_auth = settings.tls_client_auth.strip().lower() or "none"
    if client_auth not in CLIENT_AUTH:
        raise ValueError(
            f"SCHEMA_REGISTRY_TLS_CLIENT_AUTH={settings.tls_client_auth!r}: "
            "use none, optional or required"
        )
    if settings.auth_client_cert_principal and client_auth == "none":
        raise ValueError(
            "SCHEMA_REGISTRY_AUTH_CLIENT_CERT_PRINCIPAL needs client certificates: set "
            "SCHEMA_REGISTRY_TLS_CLIENT_AUTH to optional or required"
        )
    if not settings.tls_certfile and not settings.tls_keyfile:
        if client_auth != "none" or settings.tls_ca_file:
            raise ValueError("client certificates need TLS: set the certificate and key files")
        return {}
    if not (settings.tls_certfile and settings.tls_keyfile):
        raise ValueError("TLS needs both SCHEMA_REGISTRY_TLS_CERTFILE and _TLS_KEYFILE")
    if client_auth != "none" and not settings.tls_ca_file:
        raise ValueError(
            f"client_auth={client_auth} needs SCHEMA_REGISTRY_TLS_CA_FILE (the CA that signs "
            "client certificates)"
        )
    for path in (settings.tls_certfile, settings.tls_keyfile, settings.tls_ca_file):
        if path and not os.access(path, os.R_OK):
            raise ValueError(f"cannot read TLS file {path}")
    # fail now, with the reason, rather than inside uvicorn's start-up
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(
            settings.tls_certfile, settings.tls_keyfile, settings.tls_keyfile_password or None
        )
        if settings.tls_ca_file:
            context.load_verify_locations(settings.tls_ca_file)
    except ssl.SSLError as exc:
        raise ValueError(f"unusable TLS certificate or key: {exc}") from None
    options: dict[str, Any] = {
        "ssl_certfile": settings.tls_certfile,
        "ssl_keyfile": settings.tls_keyfile,
        "ssl_cert_reqs": CLIENT_AUTH[client_auth],
    }
    if settings.tls_keyfile_password:
        options["ssl_keyfile_password"] = settings.tls_keyfile_password
    if settings.tls_ca_file:
        options["ssl_ca_certs"] = settings.tls_ca_file
    if settings.auth_client_cert_principal:
        options["http"] = certificate_protocol()
    return options


#: key of a request's ``scope["state"]`` holding its verified client certificate's common name
CLIENT_CN = "tls_client_cn"


def common_name(certificate: Mapping[str, Any] | None) -> str | None:
    """The subject's common name in ``ssl.SSLSocket.getpeercert()``'s form; None without one."""
    for rdn in (certificate or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName" and value:
                return str(value)
    return None


def certificate_protocol(base: type[asyncio.Protocol] | None = None) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (or ``base``), also putting the client certificate's CN in the
    request state."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol

    class CertificateProtocol(base):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            name = common_name(transport.get_extra_info("peercert"))
            if name is not None:  # a per-connection copy: app_state is shared
                self.app_state = {**self.app_state, CLIENT_CN: name}

    return CertificateProtocol
