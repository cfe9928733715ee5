"""The committed OpenAPI document is exactly what the server serves, and covers every route."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from registry.openapi import render

SPEC = Path(__file__).resolve().parents[1] / "openapi" / "openapi.json"


def test_committed_spec_matches_the_served_one(client: TestClient) -> None:
    served = client.get("/openapi.json")
    assert served.status_code == 200
    committed = json.loads(SPEC.read_text())
    assert served.json() == committed, (
        "openapi/openapi.json is stale: regenerate it with "
        "`.venv/bin/python -m registry.openapi > openapi/openapi.json`"
    )
    assert render() == SPEC.read_text()


def test_spec_documents_bodies_and_errors() -> None:
    spec = json.loads(SPEC.read_text())
    register = spec["paths"]["/subjects/{subject}/versions"]["post"]
    media = "application/vnd.schemaregistry.v1+json"
    assert register["requestBody"]["content"][media]["schema"] == {
        "$ref": "#/components/schemas/RegisterSchemaRequest"
    }
    assert {"200", "409", "422", "500"} <= set(register["responses"])
    assert "ErrorMessage" in spec["components"]["schemas"]
    assert len(spec["paths"]) >= 26
