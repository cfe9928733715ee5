"""A client of the DEK registry (``/dek-registry/v1``), with the API of confluent-kafka's
``DekRegistryClient``: ``register_kek``, ``get_kek``, ``register_dek``, ``get_dek``; KEKs and
DEKs cached per (name, deleted) and (kek, subject, version, algorithm, deleted), the latest
version (-1) dropped from the cache when a DEK is registered. It shares the HTTP transport
(failover, retries, auth, TLS) of ``serdes.transport.Transport``.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from serdes.client_schemes import client_class
from serdes.errors import SchemaRegistryError
from serdes.transport import Transport, bool_param, quote_segment

LATEST_VERSION = -1
DEFAULT_ALGORITHM = "AES256_GCM"


class DekAlgorithm(StrEnum):
    """The algorithms of a DEK (confluent-kafka's enum of that name): ``register_dek`` and
    ``get_dek`` take a member or its string; a fetched ``Dek.algorithm`` is a member (equal to
    its string)."""

    AES128_GCM = "AES128_GCM"
    AES256_GCM = "AES256_GCM"
    AES256_SIV = "AES256_SIV"


def _algorithm(value: Any) -> Any:
    """A known algorithm's ``DekAlgorithm`` member; anything else as given."""
    try:
        return DekAlgorithm(value)
    except ValueError:
        return value


def algorithm_name(algorithm: Any) -> str:
    """``"AES256_SIV"`` for that string or an enum member of it (confluent's ``DekAlgorithm``)."""
    return str(getattr(algorithm, "value", algorithm))


@dataclass
class Kek:
    name: str | None
    kms_type: str | None
    kms_key_id: str | None
    kms_props: dict[str, str] | None
    doc: str | None
    shared: bool | None
    ts: int | None = None
    deleted: bool | None = None

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> Kek:
        return cls(
            name=src.get("name"),
            kms_type=src.get("kmsType"),
            kms_key_id=src.get("kmsKeyId"),
            kms_props=dict(src.get("kmsProps") or {}),
            doc=src.get("doc"),
            shared=src.get("shared"),
            ts=src.get("ts"),
            deleted=src.get("deleted"),
        )


@dataclass
class Dek:
    kek_name: str | None
    subject: str | None
    version: int | None
    algorithm: str | None
    encrypted_key_material: str | None
    key_material: str | None = None
    ts: int | None = None
    deleted: bool | None = None
    #: the unwrapped key and the cipher made from it, filled in by the executor
    _raw: bytes | None = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> Dek:
        return cls(
            kek_name=src.get("kekName"),
            subject=src.get("subject"),
            version=src.get("version"),
            algorithm=_algorithm(src.get("algorithm")),
            encrypted_key_material=src.get("encryptedKeyMaterial"),
            key_material=src.get("keyMaterial"),
            ts=src.get("ts"),
            deleted=src.get("deleted"),
        )

    def get_encrypted_key_material_bytes(self) -> bytes | None:
        if self.encrypted_key_material is None:
            return None
        return base64.b64decode(self.encrypted_key_material)

    def get_key_material_bytes(self) -> bytes | None:
        if self._raw is None and self.key_material is not None:
            with self._lock:
                self._raw = base64.b64decode(self.key_material)
        return self._raw

    def set_key_material(self, raw: bytes | None) -> None:
        with self._lock:
            self._raw = raw
            self.key_material = None if raw is None else base64.b64encode(raw).decode()


class DekRegistryClient:
    """See the module docstring. ``conf`` is a Schema Registry client configuration."""

    def __new__(cls, conf: dict[str, Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        # ``mock://`` URLs give the in-memory DEK registry (it registers itself)
        if cls is DekRegistryClient:
            return super().__new__(client_class(cls, conf))
        return super().__new__(cls)

    def __init__(self, conf: dict[str, Any]) -> None:
        self._conf = dict(conf)
        self._transport = Transport(dict(conf))
        self._lock = threading.Lock()
        self._keks: dict[tuple[str, bool, str | None], Kek] = {}
        self._deks: dict[tuple[str, str, int, str, bool], Dek] = {}

    def __enter__(self) -> DekRegistryClient:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def close(self) -> None:
        self._transport.close()

    def config(self) -> dict[str, Any]:
        return self._conf

    def register_kek(
        self,
        name: str,
        kms_type: str,
        kms_key_id: str,
        shared: bool = False,
        kms_props: dict[str, str] | None = None,
        doc: str | None = None,
        context: str | None = None,
    ) -> Kek:
        key = (name, False, context)
        found = self._keks.get(key)
        if found is not None:
            return found
        body: dict[str, Any] = {
            "name": name,
            "kmsType": kms_type,
            "kmsKeyId": kms_key_id,
            "shared": shared,
        }
        if kms_props is not None:
            body["kmsProps"] = kms_props
        if doc is not None:
            body["doc"] = doc
        query = {"context": context} if context is not None else None
        kek = Kek.from_dict(self._transport.request("POST", "dek-registry/v1/keks", query, body))
        with self._lock:
            self._keks[key] = kek
        return kek

    def get_kek(self, name: str, deleted: bool = False, context: str | None = None) -> Kek:
        key = (name, deleted, context)
        found = self._keks.get(key)
        if found is not None:
            return found
        query: dict[str, Any] = {"deleted": bool_param(deleted)}
        if context is not None:
            query["context"] = context
        kek = Kek.from_dict(
            self._transport.request("GET", f"dek-registry/v1/keks/{quote_segment(name)}", query)
        )
        with self._lock:
            self._keks[key] = kek
        return kek

    def register_dek(
        self,
        kek_name: str,
        subject: str,
        encrypted_key_material: str | None,
        algorithm: str = DEFAULT_ALGORITHM,
        version: int = 1,
    ) -> Dek:
        algorithm = algorithm_name(algorithm)
        key = (kek_name, subject, version, algorithm, False)
        found = self._deks.get(key)
        if found is not None:
            return found
        body: dict[str, Any] = {"subject": subject, "version": version, "algorithm": algorithm}
        if encrypted_key_material is not None:
            body["encryptedKeyMaterial"] = encrypted_key_material
        path = f"dek-registry/v1/keks/{quote_segment(kek_name)}/deks"
        try:
            reply = self._transport.request("POST", f"{path}/{quote_segment(subject)}", None, body)
        except SchemaRegistryError as exc:
            if exc.http_status_code != 405:
                raise
            reply = self._transport.request("POST", path, None, body)  # an older registry
        dek = Dek.from_dict(reply)
        with self._lock:
            self._deks[key] = dek
            # the latest version is now another one
            self._deks.pop((kek_name, subject, LATEST_VERSION, algorithm, False), None)
            self._deks.pop((kek_name, subject, LATEST_VERSION, algorithm, True), None)
        return dek

    def get_dek(
        self,
        kek_name: str,
        subject: str,
        algorithm: str = DEFAULT_ALGORITHM,
        version: int = 1,
        deleted: bool = False,
    ) -> Dek:
        algorithm = algorithm_name(algorithm)
        key = (kek_name, subject, version, algorithm, deleted)
        found = self._deks.get(key)
        if found is not None:
            return found
        kek, subj = quote_segment(kek_name), quote_segment(subject)
        path = f"dek-registry/v1/keks/{kek}/deks/{subj}/versions/{version}"
        query = {"algorithm": algorithm, "deleted": bool_param(deleted)}
        dek = Dek.from_dict(self._transport.request("GET", path, query))
        with self._lock:
            self._deks[key] = dek
        return dek

    def clear_caches(self) -> None:
        with self._lock:
            self._keks.clear()
            self._deks.clear()

    @staticmethod
    def new_client(conf: dict[str, Any]) -> DekRegistryClient:
        """A client for ``conf``: the in-memory one for ``mock://`` or no URL, as confluent's."""
        if conf.get("url") is None:
            return DekRegistryClient({"url": "mock://"})
        return DekRegistryClient(conf)
