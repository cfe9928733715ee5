"""Shared pieces of the serdes tests: one live registry per test module, both libraries' clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient as ConfluentClient

from serdes import SchemaRegistryClient
from tests.conftest import LiveServer, sqlite_live_server


@pytest.fixture(scope="module")
def registry_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """Our server process, shared by a module's tests (each test uses its own topics)."""
    tmp: Path = tmp_path_factory.mktemp("serdes-registry")
    yield from sqlite_live_server(tmp)


@pytest.fixture(scope="module")
def ours(registry_server: LiveServer) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": registry_server.url})


@pytest.fixture(scope="module")
def theirs(registry_server: LiveServer) -> ConfluentClient:
    return ConfluentClient({"url": registry_server.url})
