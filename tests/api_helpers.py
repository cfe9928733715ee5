"""Small helpers of the REST API tests: a compact Avro record schema, and an error answer's
status, Confluent ``error_code`` and message."""

from __future__ import annotations

import json
from typing import Any


def record(*fields: str) -> str:
    """Record ``R`` with an ``int`` field per name, as compact JSON."""
    return json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": f, "type": "int"} for f in fields]},
        separators=(",", ":"),
    )


def error(response: Any, status: int, code: int) -> str:
    """Assert ``response`` is the error ``status`` / ``code``; its message."""
    assert response.status_code == status, response.text
    assert response.json()["error_code"] == code, response.json()
    return str(response.json()["message"])
