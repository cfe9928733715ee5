"""Registry access for the Spark functions: one client per process and configuration.

The driver resolves a subject once when a column function is called (its versions, their ids
and schemas, the reader schema); the results travel to the executors inside the function's
closure. Executors only ask the registry for ids the driver did not know (written under another
subject, or registered after the query was planned), through a client kept per Python worker
process, whose by-id cache means one request per schema id per process.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from serdes.client import SchemaRegistryClient
from serdes.schema import Schema

__all__ = ["SubjectVersion", "client_for", "registry_conf", "subject_versions"]

_CLIENTS: dict[str, SchemaRegistryClient] = {}
_LOCK = threading.Lock()


def registry_conf(registry: str | dict[str, Any]) -> dict[str, Any]:
    """A client configuration from a URL (or comma-separated URLs) or a configuration dict."""
    if isinstance(registry, str):
        return {"url": registry}
    if isinstance(registry, dict) and "url" in registry:
        return dict(registry)
    raise TypeError(
        "registry must be a Schema Registry URL or a client configuration dict with a 'url' "
        f"(as serdes.SchemaRegistryClient takes), not {registry!r}"
    )


def conf_key(conf: dict[str, Any]) -> str:
    return json.dumps(conf, sort_keys=True, default=str)


def client_for(conf: dict[str, Any]) -> SchemaRegistryClient:
    """The process's client for this configuration (its caches shared by every task)."""
    key = conf_key(conf)
    client = _CLIENTS.get(key)
    if client is None:
        with _LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                client = SchemaRegistryClient(dict(conf))
                _CLIENTS[key] = client
    return client


@dataclass(frozen=True)
class SubjectVersion:
    version: int
    schema_id: int
    schema: Schema
    guid: str | None = None  # when the registry gives it (Confluent 8 does)


def subject_versions(client: SchemaRegistryClient, subject: str) -> list[SubjectVersion]:
    """Every live version of ``subject``, oldest first."""
    out = []
    for version in client.get_versions(subject):
        registered = client.get_version(subject, version)
        out.append(
            SubjectVersion(
                int(version), int(registered.schema_id), registered.schema, registered.guid
            )
        )
    return out
