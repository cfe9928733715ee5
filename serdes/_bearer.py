"""Bearer-token headers for the registry client, configured as confluent-kafka configures them.

Sources (``bearer.auth.credentials.source``): STATIC_TOKEN, OAUTHBEARER (client credentials),
OAUTHBEARER_AZURE_IMDS (a managed identity's token from the Azure instance metadata service)
and CUSTOM (a function returning the fields). Validation order, exception classes and messages
follow confluent-kafka's ``_oauthbearer`` builders: a missing key is a ``ValueError``, a value of
the wrong type a ``TypeError``. ``bearer.auth.identity.pool.id`` may be a list of pool ids; it is
sent comma-separated (:func:`normalize_identity_pool`).
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit, urlunsplit

import orjson

from serdes.errors import OAuthTokenError, SchemaRegistryError

__all__ = ["AZURE_IMDS_TOKEN_ENDPOINT", "Bearer", "build_bearer", "normalize_identity_pool"]

AZURE_IMDS_TOKEN_ENDPOINT = "http://169.254.169.254/metadata/identity/oauth2/token"
_EXPIRY_THRESHOLD = 0.8


class _Http(Protocol):
    """What a token source needs from the client's transport: pool, timeout, retry policy."""

    pool: Any
    timeout: Any
    max_retries: int

    def _backoff(self, attempt: int) -> None: ...


def normalize_identity_pool(identity_pool_raw: str | list[str] | None) -> str | None:
    """``None``, one pool id, or a list of ids joined with commas (as confluent-kafka)."""
    if identity_pool_raw is None:
        return None
    if isinstance(identity_pool_raw, str):
        return identity_pool_raw
    if isinstance(identity_pool_raw, list):
        if not all(isinstance(item, str) for item in identity_pool_raw):
            raise TypeError("All items in identity pool list must be strings")
        return ",".join(identity_pool_raw)
    raise TypeError(f"identity pool id must be a str or list, not {type(identity_pool_raw)}")


def _pop_str(conf: dict[str, Any], key: str, what: str | None = None) -> str:
    value = conf.pop(key)
    if not isinstance(value, str):
        raise TypeError(f"{what or key} must be a str, not {type(value)}")
    return value


def _require(conf: dict[str, Any], keys: tuple[str, ...], what: str) -> None:
    missing = [k for k in keys if k not in conf]
    if missing:
        raise ValueError(f"Missing required {what} properties: {', '.join(missing)}")


class Bearer:
    """The ``Authorization``/``target-sr-cluster``/``Confluent-Identity-Pool-Id`` headers."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.logical_cluster = ""
        self.identity_pool: str | None = None
        self._token: str | None = None
        self._lock = threading.Lock()

    def _common(self, conf: dict[str, Any]) -> None:
        _require(conf, ("bearer.auth.logical.cluster",), "bearer configuration")
        self.logical_cluster = _pop_str(conf, "bearer.auth.logical.cluster", "logical cluster")
        self.identity_pool = normalize_identity_pool(conf.pop("bearer.auth.identity.pool.id", None))

    def fields(self) -> dict[str, Any]:
        """confluent-kafka's ``get_bearer_fields``: token, logical cluster, identity pool."""
        out: dict[str, Any] = {
            "bearer.auth.token": self.token(),
            "bearer.auth.logical.cluster": self.logical_cluster,
        }
        if self.identity_pool is not None:
            out["bearer.auth.identity.pool.id"] = self.identity_pool
        return out

    def token(self) -> str:
        assert self._token is not None
        return self._token

    def headers(self) -> dict[str, str]:
        fields = self.fields()
        missing = [
            k for k in ("bearer.auth.token", "bearer.auth.logical.cluster") if k not in fields
        ]
        if missing:
            raise ValueError(
                "Missing required bearer auth fields, needs to be set in config or custom "
                "function: " + ", ".join(missing)
            )
        out = {
            "Authorization": f"Bearer {fields['bearer.auth.token']}",
            "target-sr-cluster": str(fields["bearer.auth.logical.cluster"]),
        }
        pool = fields.get("bearer.auth.identity.pool.id")
        if pool is not None:
            out["Confluent-Identity-Pool-Id"] = normalize_identity_pool(pool) or ""
        return out


class _Static(Bearer):
    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__("STATIC_TOKEN")
        self._common(conf)
        if "bearer.auth.token" not in conf:
            raise ValueError("Missing bearer.auth.token")
        self._token = _pop_str(conf, "bearer.auth.token")


class _Custom(Bearer):
    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__("CUSTOM")
        _require(
            conf,
            ("bearer.auth.custom.provider.function", "bearer.auth.custom.provider.config"),
            "custom OAuth configuration",
        )
        fn = conf.pop("bearer.auth.custom.provider.function")
        if not callable(fn):
            raise TypeError(
                f"bearer.auth.custom.provider.function must be a callable, not {type(fn)}"
            )
        fn_conf = conf.pop("bearer.auth.custom.provider.config")
        if not isinstance(fn_conf, dict):
            raise TypeError(
                f"bearer.auth.custom.provider.config must be a dict, not {type(fn_conf)}"
            )
        self._fn: Callable[[dict[str, Any]], dict[str, Any]] = fn
        self._fn_conf = fn_conf

    def fields(self) -> dict[str, Any]:
        return self._fn(self._fn_conf)


class _Fetched(Bearer):
    """A token fetched over HTTP and refreshed once 80% of its lifetime has passed."""

    def __init__(self, source: str, http: _Http) -> None:
        super().__init__(source)
        self._http = http
        self._expires = 0.0

    def token(self) -> str:
        if self._token is None or time.time() >= self._expires:
            with self._lock:
                if self._token is None or time.time() >= self._expires:
                    self._refresh_with_retries()
        assert self._token is not None
        return self._token

    def _refresh_with_retries(self) -> None:
        """As confluent-kafka: ``max.retries`` more tries with backoff, then ``OAuthTokenError``."""
        retries = self._http.max_retries
        for attempt in range(retries + 1):
            try:
                self._refresh()
                return
            except Exception as exc:
                if attempt >= retries:
                    raise OAuthTokenError(
                        f"Failed to retrieve token after {retries} attempts due to error: {exc}",
                        getattr(exc, "http_status_code", None),
                    ) from exc
                self._http._backoff(attempt)

    def _request(self, method: str, url: str, **kw: Any) -> dict[str, Any]:
        resp = self._http.pool.request(method, url, retries=False, timeout=self._http.timeout, **kw)
        if resp.status != 200:
            raise SchemaRegistryError(
                resp.status, -1, f"token request to {url} failed: {resp.data[:200]!r}"
            )
        return orjson.loads(resp.data)

    def _refresh(self) -> None:
        raise NotImplementedError


class _OAuth(_Fetched):
    def __init__(self, conf: dict[str, Any], http: _Http) -> None:
        super().__init__("OAUTHBEARER", http)
        self._common(conf)
        keys = (
            "bearer.auth.client.id",
            "bearer.auth.client.secret",
            "bearer.auth.scope",
            "bearer.auth.issuer.endpoint.url",
        )
        _require(conf, keys, "OAuth configuration")
        self.client_id, self.client_secret, self.scope, self.endpoint = (
            _pop_str(conf, k) for k in keys
        )

    def _refresh(self) -> None:
        basic = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        doc = self._request(
            "POST",
            self.endpoint,
            body=urlencode({"grant_type": "client_credentials", "scope": self.scope}),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Authorization": f"Basic {basic}",
            },
        )
        self._token = doc["access_token"]
        self._expires = time.time() + _EXPIRY_THRESHOLD * float(doc.get("expires_in", 3600))


class _AzureIMDS(_Fetched):
    """OAUTHBEARER_AZURE_IMDS: ``GET`` the metadata service's token endpoint (``Metadata: true``).

    ``bearer.auth.issuer.endpoint.query`` (e.g. ``resource=...&api-version=2018-02-01&client_id=
    ...``) is required unless ``bearer.auth.issuer.endpoint.url`` is overridden.
    """

    def __init__(self, conf: dict[str, Any], http: _Http) -> None:
        super().__init__("OAUTHBEARER_AZURE_IMDS", http)
        self._common(conf)
        overridden = "bearer.auth.issuer.endpoint.url" in conf
        endpoint = conf.pop("bearer.auth.issuer.endpoint.url", AZURE_IMDS_TOKEN_ENDPOINT)
        if not isinstance(endpoint, str):
            raise TypeError(f"bearer.auth.issuer.endpoint.url must be a str, not {type(endpoint)}")
        try:
            parts = urlsplit(endpoint)
        except ValueError as exc:
            raise ValueError(f"Failed to parse token endpoint URL: {exc}") from exc
        query = conf.pop("bearer.auth.issuer.endpoint.query", None)
        if query:
            if not isinstance(query, str):
                raise TypeError(
                    f"bearer.auth.issuer.endpoint.query must be a str, not {type(query)}"
                )
            endpoint = urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
        elif not overridden:
            raise ValueError(
                "bearer.auth.issuer.endpoint.query must be provided when "
                "bearer.auth.issuer.endpoint.url isn't overridden"
            )
        self.endpoint = endpoint

    def _refresh(self) -> None:
        doc = self._request("GET", self.endpoint, headers={"Metadata": "true"})
        self._token = doc["access_token"]
        lifetime = float(doc.get("expires_in", 3600))
        expires_on = float(doc.get("expires_on", time.time() + lifetime))
        self._expires = expires_on - lifetime * (1 - _EXPIRY_THRESHOLD)


def build_bearer(source: Any, conf: dict[str, Any], http: _Http) -> Bearer:
    """The bearer for ``bearer.auth.credentials.source``; pops the keys it uses from ``conf``."""
    if source == "STATIC_TOKEN":
        return _Static(conf)
    if source == "OAUTHBEARER":
        return _OAuth(conf, http)
    if source == "OAUTHBEARER_AZURE_IMDS":
        return _AzureIMDS(conf, http)
    if source == "CUSTOM":
        return _Custom(conf)
    raise ValueError("Unrecognized bearer.auth.credentials.source")
