"""The Schema Registry REST transport shared by the sync, async and DEK registry clients.

Each base URL is tried in turn; on one URL, transport errors and HTTP 408/429/500/502/503/504 are
retried up to ``max.retries`` times with full-jitter exponential backoff (``retries.wait.ms``
doubling, at most ``retries.max.wait.ms``), then the next URL is tried. Other statuses fail at
once with ``SchemaRegistryError`` carrying the server's ``error_code``. Basic and bearer auth,
TLS and a proxy come from confluent-kafka's configuration keys.
"""

from __future__ import annotations

import base64
import os
import random
import ssl
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, unquote, urlencode, urlsplit, urlunsplit

import orjson
import urllib3

from serdes._bearer import build_bearer
from serdes.errors import SchemaRegistryError

__all__ = ["Transport", "bool_param", "quote_segment", "registry_error"]

_RETRIABLE = frozenset((408, 429, 500, 502, 503, 504))
_ACCEPT = (
    "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
)
_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_CLIENT_VERSION = "python/serdes-0.1"


def quote_segment(segment: str) -> str:
    return quote(segment, safe="")


def bool_param(value: bool) -> str:
    return "true" if value else "false"


def _number(conf: dict[str, Any], key: str, default: float | None) -> float | None:
    value = conf.pop(key, None)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{key} must be a number, not {type(value)}")
    return value


class Transport:
    """Requests with failover across URLs, retries with backoff, auth and TLS."""

    def __init__(self, conf: dict[str, Any]) -> None:
        url = conf.pop("url", None)
        if url is None:
            raise ValueError("Missing required configuration property url")
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, not {type(url)}")
        userinfo: tuple[str, str] | None = None
        self.base_urls: list[str] = []
        for raw in url.split(","):
            if raw.strip().startswith("mock://"):  # the in-memory registry (mock_client)
                self.base_urls.append(raw.strip())
                continue
            raw = raw.strip().rstrip("/")
            if not raw:
                continue
            if not raw.startswith(("http://", "https://")):
                raise ValueError(f"Invalid url {raw}")
            parts = urlsplit(raw)
            if parts.username is not None and userinfo is None:
                userinfo = (unquote(parts.username), unquote(parts.password or ""))
            netloc = parts.hostname or ""
            if ":" in netloc:
                netloc = f"[{netloc}]"
            if parts.port is not None:
                netloc += f":{parts.port}"
            self.base_urls.append(urlunsplit((parts.scheme, netloc, parts.path, "", "")))
        if not self.base_urls:
            raise ValueError("Missing required configuration property url")

        conf.pop("basic.auth.credentials.source", None)
        if "basic.auth.user.info" in conf:
            if userinfo is not None:
                raise ValueError(
                    "basic.auth.user.info configured with userinfo credentials in "
                    "the URL. Remove userinfo credentials from the url or remove "
                    "basic.auth.user.info from the configuration"
                )
            pair = str(conf.pop("basic.auth.user.info")).split(":", 1)
            if len(pair) != 2:
                raise ValueError(
                    "basic.auth.user.info must be in the form of {username}:{password}"
                )
            userinfo = (pair[0], pair[1])
        self.base_headers: dict[str, str] = {
            "Accept": _ACCEPT,
            "Confluent-Client-Version": _CLIENT_VERSION,
        }
        if userinfo is not None and userinfo != ("", ""):
            token = base64.b64encode(f"{userinfo[0]}:{userinfo[1]}".encode()).decode()
            self.base_headers["Authorization"] = f"Basic {token}"

        timeout = _number(conf, "timeout", None)
        self.timeout = urllib3.Timeout(total=timeout) if timeout is not None else None
        self.cache_capacity = int(_number(conf, "cache.capacity", 1000) or 1000)
        self.cache_latest_ttl_sec = _number(conf, "cache.latest.ttl.sec", None)
        self.max_retries = int(_number(conf, "max.retries", 3) or 0)
        self.retries_wait_ms = float(_number(conf, "retries.wait.ms", 1000) or 0)
        self.retries_max_wait_ms = float(_number(conf, "retries.max.wait.ms", 20000) or 0)

        tls: dict[str, Any] = {}
        ca = conf.pop("ssl.ca.location", None)
        key = conf.pop("ssl.key.location", None)
        key_password = conf.pop("ssl.key.password", None)
        cert = conf.pop("ssl.certificate.location", None)
        if (key is not None or key_password is not None) and cert is None:
            raise ValueError(
                "ssl.certificate.location required when configuring "
                "ssl.key.location or ssl.key.password"
            )
        if ca is False:
            tls["cert_reqs"] = ssl.CERT_NONE
            tls["assert_hostname"] = False
        elif isinstance(ca, str):
            tls["ca_cert_dir" if _is_dir(ca) else "ca_certs"] = ca
        if cert is not None:
            tls["cert_file"] = cert
            if key is not None:
                tls["key_file"] = key
            if key_password is not None:
                tls["key_password"] = key_password
        proxy = conf.pop("proxy", None)
        # Kept for the async face (serdes._async.transport), which opens its own connections.
        self.tls: dict[str, Any] = tls
        self.proxy: str | None = proxy
        self.sleep: Callable[[float], None] = time.sleep  # the async face awaits instead
        common = {"maxsize": 8, "retries": False, "timeout": self.timeout, **tls}
        self.pool: urllib3.PoolManager = (
            urllib3.ProxyManager(proxy, **common) if proxy else urllib3.PoolManager(**common)
        )

        source = conf.pop("bearer.auth.credentials.source", None)
        self.bearer = build_bearer(source, conf, self) if source is not None else None

    def _backoff(self, attempt: int) -> None:
        ceiling = min(self.retries_wait_ms * (2.0**attempt), self.retries_max_wait_ms)
        self.sleep(random.random() * ceiling / 1000.0)

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | list[tuple[str, Any]] | None = None,
        body: Any = None,
    ) -> Any:
        headers = dict(self.base_headers)
        payload = None
        if body is not None:
            payload = orjson.dumps(body)
            headers["Content-Type"] = _CONTENT_TYPE
            headers["Confluent-Accept-Unknown-Properties"] = "true"
        if self.bearer is not None:
            headers.update(self.bearer.headers())
        target = path
        if query:
            target += ("&" if "?" in path else "?") + urlencode(query, doseq=True)

        last_status: int | None = None
        last_body = b""
        last_error: Exception | None = None
        for base in self.base_urls:
            url = f"{base}/{target}"
            for attempt in range(self.max_retries + 1):
                try:
                    resp = self.pool.request(method, url, body=payload, headers=headers)
                except urllib3.exceptions.HTTPError as exc:
                    last_error, last_status = exc, None
                    if attempt < self.max_retries:
                        self._backoff(attempt)
                        continue
                    break
                status = resp.status
                if 200 <= status < 300:
                    if status == 204 or not resp.data:
                        return None
                    return orjson.loads(resp.data)
                last_status, last_body, last_error = status, resp.data, None
                if status not in _RETRIABLE:
                    raise registry_error(status, last_body)
                if attempt < self.max_retries:
                    self._backoff(attempt)
                    continue
                break
        if last_status is not None:
            raise registry_error(last_status, last_body)
        raise SchemaRegistryError(
            -1,
            -1,
            f"could not reach the Schema Registry at {', '.join(self.base_urls)}: {last_error}",
        )

    def close(self) -> None:
        self.pool.clear()


def _is_dir(path: str) -> bool:
    return os.path.isdir(path)


def registry_error(status: int, data: bytes) -> SchemaRegistryError:
    try:
        doc = orjson.loads(data)
        if isinstance(doc, dict) and "error_code" in doc:
            return SchemaRegistryError(status, int(doc["error_code"]), str(doc.get("message")))
    except orjson.JSONDecodeError:
        pass
    return SchemaRegistryError(status, -1, f"Unknown Schema Registry Error: {data[:500]!r}")
