"""Schema texts with escapes that cannot be written as UTF-8 (lone surrogates), control
characters and non-ASCII survive registration, identity and retrieval."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

LONE_SURROGATE_AVRO = (
    '{"type":"record","name":"R","doc":"\\ud800 half a pair","fields":[{"name":"a","type":"int"}]}'
)
LONE_SURROGATE_JSON = '{"type":"object","description":"\\udfff alone"}'


@pytest.mark.parametrize(
    ("schema_type", "schema", "escaped"),
    [
        ("AVRO", LONE_SURROGATE_AVRO, "\\uD800 half a pair"),
        ("JSON", LONE_SURROGATE_JSON, "\\uDFFF alone"),
    ],
)
def test_lone_surrogates_are_escaped_not_a_server_error(
    client: TestClient, schema_type: str, schema: str, escaped: str
) -> None:
    first = client.post("/subjects/s/versions", json={"schema": schema, "schemaType": schema_type})
    assert first.status_code == 200, first.text
    again = client.post("/subjects/s/versions", json={"schema": schema, "schemaType": schema_type})
    assert again.json() == first.json()
    stored = client.get("/subjects/s/versions/1/schema").text
    assert escaped in stored


def test_non_ascii_and_controls_keep_jacksons_spelling(client: TestClient) -> None:
    schema = '{"type":"record","name":"R","doc":"caf\\u00e9 \\u0001 \\t","fields":[]}'
    assert client.post("/subjects/s/versions", json={"schema": schema}).status_code == 200
    assert client.get("/subjects/s/versions/1/schema").text == (
        '{"type":"record","name":"R","doc":"caf\u00e9 \\u0001 \\t","fields":[]}'
    )
