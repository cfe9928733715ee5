"""An in-memory DEK registry for unit tests: ``DekRegistryClient({"url": "mock://"})``.

As confluent-kafka's ``MockDekRegistryClient``: each client holds its own KEKs and DEKs (no
HTTP); registering returns what is already there under the same key, a DEK gets a timestamp,
a lookup of something never registered raises ``SchemaRegistryError`` 404 / 40470, and version
-1 means the highest version registered for that KEK, subject and algorithm.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from serdes.client_schemes import register_scheme
from serdes.encryption.dek_client import (
    DEFAULT_ALGORITHM,
    LATEST_VERSION,
    Dek,
    DekRegistryClient,
    Kek,
    algorithm_name,
)
from serdes.errors import SchemaRegistryError

__all__ = ["MockDekRegistryClient"]


def _not_found() -> SchemaRegistryError:
    return SchemaRegistryError(404, 40470, "Key Not Found")


class MockDekRegistryClient(DekRegistryClient):
    """See the module docstring."""

    def __init__(self, conf: dict[str, Any] | None = None) -> None:
        self._conf = dict(conf or {"url": "mock://"})
        self._lock = threading.Lock()
        self._keks: dict[tuple[str, bool, str | None], Kek] = {}
        self._deks: dict[tuple[str, str, int, str, bool], Dek] = {}

    def close(self) -> None:
        """Nothing to close: no connections."""

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
        with self._lock:
            found = self._keks.get(key)
            if found is None:
                found = Kek(
                    name=name,
                    kms_type=kms_type,
                    kms_key_id=kms_key_id,
                    kms_props=dict(kms_props) if kms_props is not None else None,
                    doc=doc,
                    shared=shared,
                )
                self._keks[key] = found
            return found

    def get_kek(self, name: str, deleted: bool = False, context: str | None = None) -> Kek:
        found = self._keks.get((name, deleted, context))
        if found is None:
            raise _not_found()
        return found

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
        with self._lock:
            found = self._deks.get(key)
            if found is None:
                found = Dek(
                    kek_name=kek_name,
                    subject=subject,
                    version=version,
                    algorithm=algorithm,
                    encrypted_key_material=encrypted_key_material,
                    ts=round(time.time() * 1000),
                )
                self._deks[key] = found
            return found

    def get_dek(
        self,
        kek_name: str,
        subject: str,
        algorithm: str = DEFAULT_ALGORITHM,
        version: int = 1,
        deleted: bool = False,
    ) -> Dek:
        algorithm = algorithm_name(algorithm)
        with self._lock:
            if version == LATEST_VERSION:
                versions = [
                    k[2] for k in self._deks if k[:2] == (kek_name, subject) and k[3] == algorithm
                ]
                if not versions:
                    raise _not_found()
                version = max(versions)
            found = self._deks.get((kek_name, subject, version, algorithm, False))
        if found is None:
            raise _not_found()
        return found

    def clear_caches(self) -> None:
        """The stored keys are the registry itself: nothing is a cache here."""


register_scheme(DekRegistryClient, "mock", MockDekRegistryClient)
