"""Schemathesis against the committed OpenAPI document and a live server: generated requests
for every operation, zero 5xx answers, every answer matching the document (status code,
content type, body schema)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.production_helpers import Server

SPEC = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

schema = schemathesis.openapi.from_path(str(SPEC))


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = Server(tmp_path_factory.mktemp("fuzz"))
    server.start()
    try:
        yield server.url
    finally:
        assert "Traceback" not in server.log(), server.log()
        server.stop()


@schema.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_api_answers_as_documented(case: schemathesis.Case, live_url: str) -> None:
    case.call_and_validate(base_url=live_url, checks=CHECKS)
