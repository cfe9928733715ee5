"""Shared pieces of the rules tests: both libraries' rule executors registered, a rule set
registered under a subject, and one function running the same call through confluent-kafka
and serdes and giving back what each did (its value, or that it failed)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient
from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor as CCel
from confluent_kafka.schema_registry.rules.cel.cel_field_executor import (
    CelFieldExecutor as CCelField,
)
from confluent_kafka.schema_registry.rules.jsonata.jsonata_executor import (
    JsonataExecutor as CJsonata,
)
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

from serdes import Metadata, RuleSet, Schema, SchemaRegistryClient
from serdes.rules.cel import CelExecutor, CelFieldExecutor
from serdes.rules.jsonata import JsonataExecutor
from tests.conftest import LiveServer, sqlite_live_server

_counter = itertools.count()


@pytest.fixture(scope="session")
def rules_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One registry process for all the rules tests (each test uses its own subjects)."""
    tmp: Path = tmp_path_factory.mktemp("rules-registry")
    yield from sqlite_live_server(tmp)


@pytest.fixture(scope="module")
def ours(rules_server: LiveServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": rules_server.url})


@pytest.fixture(scope="module")
def theirs(rules_server: LiveServer) -> ConfluentClient:
    return ConfluentClient({"url": rules_server.url})


def register_executors() -> None:
    """The CEL, CEL_FIELD and JSONATA executors in both libraries' global registries."""
    for executor in (CCel, CCelField, CJsonata, CelExecutor, CelFieldExecutor, JsonataExecutor):
        executor.register()


def topic(prefix: str) -> str:
    return f"{prefix}-{next(_counter)}"


def value_ctx(name: str, headers: Any = None) -> SerializationContext:
    return SerializationContext(name, MessageField.VALUE, headers)


def rule(
    name: str,
    kind: str,
    mode: str,
    rule_type: str,
    expr: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "kind": kind, "mode": mode, "type": rule_type}
    if expr is not None:
        out["expr"] = expr
    for key, value in extra.items():
        out[{"on_success": "onSuccess", "on_failure": "onFailure"}.get(key, key)] = value
    return out


def register(
    client: Any,
    subject: str,
    schema_str: str,
    schema_type: str,
    domain: list[dict[str, Any]] | None = None,
    migration: list[dict[str, Any]] | None = None,
    metadata: dict[str, Any] | None = None,
) -> int:
    """Register a schema carrying the given rules (and metadata); its id."""
    doc: dict[str, Any] = {}
    if domain:
        doc["domainRules"] = domain
    if migration:
        doc["migrationRules"] = migration
    schema = Schema(
        schema_str,
        schema_type,
        [],
        Metadata(doc=metadata) if metadata is not None else None,
        RuleSet(doc=doc) if doc else None,
    )
    return client.register_schema(subject, schema)


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", result) or ("failed", the error's class name) - what a caller can see."""
    try:
        return ("ok", fn())
    except SerializationError as exc:
        return ("failed", "SerializationError" if exc is not None else None)


def both(theirs: Callable[[], Any], ours: Callable[[], Any]) -> tuple[Any, Any]:
    """The outcomes of the same call through confluent-kafka and serdes."""
    return outcome(theirs), outcome(ours)
