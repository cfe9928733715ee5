"""JSON Schema texts: the canonical form is Jackson's compact re-serialisation (document key
order, exact decimals, Jackson's escaping); the normalised form sorts object keys recursively
the way Jackson's ``TreeMap`` does (UTF-16 code-unit order)."""

from __future__ import annotations

import json

import pytest

from registry.formats.json_schema import JsonSchemaFormat

FMT = JsonSchemaFormat()


def canonical(text: str) -> str:
    return FMT.parse(text).canonical()


def normalized(text: str) -> str:
    return FMT.parse(text).normalized()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{ "type" : "string" }', '{"type":"string"}'),
        (
            '{\n  "type": "object",\n  "properties": {\n    "b": {"type": "integer"},\n'
            '    "a": {"type": "string"}\n  },\n  "required": ["b", "a"]\n}',
            '{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}},'
            '"required":["b","a"]}',
        ),
        ('{"title": "caf\\u00e9 \\u2603"}', '{"title":"café ☃"}'),
        ('{"title": "a/b"}', '{"title":"a/b"}'),
        ('{"title": "tab\\there\\nnl\\r\\b\\f"}', '{"title":"tab\\there\\nnl\\r\\b\\f"}'),
        ('{"title": "\\u0001\\u001f\\u007f"}', '{"title":"\\u0001\\u001F\x7f"}'),
        ('{"title": "quote \\" back \\\\"}', '{"title":"quote \\" back \\\\"}'),
        ('{"maximum": 1.50}', '{"maximum":1.50}'),
        ('{"maximum": 100}', '{"maximum":100}'),
        ('{"maximum": 1e10}', '{"maximum":1E+10}'),
        ('{"maximum": 2.5E3}', '{"maximum":2.5E+3}'),
        ('{"minimum": 0.0000001}', '{"minimum":1E-7}'),
        ('{"minimum": 0.000123}', '{"minimum":0.000123}'),
        ('{"minimum": -0.0}', '{"minimum":0.0}'),
        ('{"minimum": -0}', '{"minimum":0}'),
        (
            '{"maximum": 123456789012345678901234567890}',
            '{"maximum":123456789012345678901234567890}',
        ),
        ('{"default": [1, {"b": null, "a": true}]}', '{"default":[1,{"b":null,"a":true}]}'),
        ('{"type": "string", "type": "integer"}', '{"type":"integer"}'),
        ('{"a": 1, "b": 2, "a": 3}', '{"a":3,"b":2}'),
        ("true", "true"),
    ],
    ids=[
        "whitespace removed",
        "key and array order kept",
        "non-ASCII written as is",
        "slash not escaped",
        "short escapes",
        "control characters in upper-case hex, DEL as is",
        "quote and backslash",
        "decimal scale kept",
        "integer",
        "exponent as BigDecimal prints it",
        "exponent with fraction",
        "small decimal in scientific notation",
        "small decimal in plain notation",
        "negative zero decimal",
        "negative zero integer",
        "big integer",
        "nested values",
        "duplicate key keeps the last value",
        "duplicate key keeps its first position",
        "boolean schema",
    ],
)
def test_canonical_text(text: str, expected: str) -> None:
    assert canonical(text) == expected


def test_equal_documents_written_differently_have_one_canonical_text() -> None:
    document = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}}
    compact = json.dumps(document, separators=(",", ":"))
    pretty = json.dumps(document, indent=4)
    assert canonical(compact) == canonical(pretty) == compact


def test_normalized_sorts_keys_recursively_and_keeps_array_order() -> None:
    text = (
        '{"type":"object","properties":{"b":{"type":"string","maxLength":3},"a":{"type":"integer"}},'
        '"required":["b","a"],"allOf":[{"title":"z","description":"y"}]}'
    )
    assert normalized(text) == (
        '{"allOf":[{"description":"y","title":"z"}],"properties":{"a":{"type":"integer"},'
        '"b":{"maxLength":3,"type":"string"}},"required":["b","a"],"type":"object"}'
    )


def test_normalized_of_reordered_documents_is_equal() -> None:
    one = '{"title":"t","type":"object","properties":{"x":{"type":"string"},"y":{}}}'
    two = '{"properties":{"y":{},"x":{"type":"string"}},"type":"object","title":"t"}'
    assert canonical(one) != canonical(two)
    assert normalized(one) == normalized(two)


def test_normalized_sorts_by_utf16_code_units_like_java() -> None:
    # U+FFFF sorts after U+1F600 in UTF-16 (0xFFFF > 0xD83D), before it by code point
    text = '{"properties":{"\\uffff":{},"\\ud83d\\ude00":{},"a":{}}}'
    assert normalized(text) == '{"properties":{"a":{},"\U0001f600":{},"\uffff":{}}}'


def test_normalized_keeps_decimals_exact() -> None:
    assert (
        normalized('{"multipleOf": 0.10, "maximum": 1e2}') == '{"maximum":1E+2,"multipleOf":0.10}'
    )


def test_formats_fall_back_to_canonical_and_name_is_the_title() -> None:
    parsed = FMT.parse('{"title": "Order", "type": "object"}')
    assert parsed.formatted("resolved") == parsed.canonical()
    assert parsed.formatted(None) == parsed.canonical()
    assert parsed.name() == "Order"
    assert FMT.parse('{"type": "object"}').name() is None
    assert str(parsed) == parsed.canonical()
    assert parsed.schema_type == "JSON"
