"""Hypothesis property tests: random and mutated schema texts fed to the parsers, printers and
compatibility checkers of all three formats never crash: each text is either a clean
``InvalidSchemaError`` (42201 over HTTP) or a parsed schema whose canonical and normalised
texts print, re-parse, and whose compatibility checks give a verdict (a list of strings)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.core import default_formats
from registry.formats.base import InvalidSchemaError, ParsedSchema, SchemaFormat

FORMATS = default_formats()

AVRO = [
    '"int"',
    '{"type":"record","name":"R","namespace":"n.s","fields":[{"name":"a","type":"int"},'
    '{"name":"b","type":["null","string"],"default":null},'
    '{"name":"c","type":{"type":"array","items":"long"},"default":[]}]}',
    '{"type":"enum","name":"E","symbols":["A","B","C"],"default":"A"}',
    '{"type":"map","values":{"type":"fixed","name":"F","size":4}}',
    '{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]},'
    '{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":4,"scale":2}},'
    '{"name":"t","type":{"type":"long","logicalType":"timestamp-millis"}}]}',
]
JSON_SCHEMAS = [
    '{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},'
    '"required":["a"],"additionalProperties":false}',
    '{"$schema":"http://json-schema.org/draft-07/schema#","type":"array",'
    '"items":{"type":"number","minimum":0}}',
    '{"oneOf":[{"type":"string"},{"type":"null"}]}',
    '{"definitions":{"x":{"type":"boolean"}},"type":"object",'
    '"properties":{"x":{"$ref":"#/definitions/x"}}}',
    '{"type":"object","properties":{"e":{"enum":["a","b"]},"n":{"type":"object",'
    '"properties":{"m":{"type":"integer","maximum":9}}}}}',
]
PROTOBUF = [
    'syntax = "proto3";\npackage p;\nmessage M { int32 a = 1; string b = 2; repeated M c = 3; }',
    'syntax = "proto3";\nmessage A { enum E { X = 0; Y = 1; } E e = 1; map<string, int64> m = 2;'
    " oneof o { string s = 3; bytes b = 4; } }",
    'syntax = "proto2";\nmessage Old { required int32 id = 1;'
    ' optional string n = 2 [default = "x"]; }',
    'syntax = "proto3";\nimport "google/protobuf/timestamp.proto";\n'
    "message T { google.protobuf.Timestamp at = 1; message Inner { double d = 1; } Inner i = 2; }",
]
CORPUS = {"AVRO": AVRO, "JSON": JSON_SCHEMAS, "PROTOBUF": PROTOBUF}

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(
        ["int", "string", "record", "array", "map", "enum", "fixed", "null", "object", "integer"]
    )
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "name",
                    "fields",
                    "items",
                    "values",
                    "symbols",
                    "size",
                    "default",
                    "properties",
                    "required",
                    "$ref",
                    "oneOf",
                    "anyOf",
                    "enum",
                    "namespace",
                    "logicalType",
                    "aliases",
                    "additionalProperties",
                    "definitions",
                    "$schema",
                ]
            )
            | st.text(max_size=6),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)
PROTO_TOKENS = st.sampled_from(
    [
        "syntax",
        "=",
        '"proto3"',
        '"proto2"',
        ";",
        "message",
        "M",
        "N",
        "{",
        "}",
        "int32",
        "string",
        "repeated",
        "optional",
        "oneof",
        "enum",
        "map<string,",
        ">",
        "1",
        "2",
        "0",
        "package",
        "p.q",
        "import",
        '"google/protobuf/any.proto"',
        "option",
        "reserved",
        "[",
        "]",
        "default",
        "extensions",
        "to",
        "max",
        "service",
        "rpc",
        "returns",
        "(",
        ")",
        "\n",
        " ",
    ]
)


def outcome(fmt: SchemaFormat, text: str, *, strict: bool = True) -> ParsedSchema | None:
    """The parsed schema, or None for a clean ``InvalidSchemaError``; anything else fails."""
    try:
        parsed = fmt.parse(text, strict=strict)
    except InvalidSchemaError as exc:
        assert str(exc), "an InvalidSchemaError must say why"
        return None
    canonical = parsed.canonical()
    normalized = parsed.normalized()
    assert isinstance(canonical, str) and isinstance(normalized, str)
    # what the registry stores parses again (it is re-read with strict=False at start-up)
    again = fmt.parse(canonical, strict=False)
    assert isinstance(again.canonical(), str)
    return parsed


def verdict(fmt: SchemaFormat, reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
    found = fmt.compatibility_errors(reader, writer)
    assert isinstance(found, list) and all(isinstance(m, str) for m in found)
    return found


def mutate(text: str, data: st.DataObject) -> str:
    kind = data.draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "json"]))
    if kind == "json":
        try:
            doc = json.loads(text)
        except ValueError:
            kind = "insert"
        else:
            return json.dumps(_mutate_json(doc, data))
    at = data.draw(st.integers(0, len(text)))
    if kind == "delete":
        end = data.draw(st.integers(at, min(len(text), at + 8)))
        return text[:at] + text[end:]
    if kind == "duplicate":
        end = data.draw(st.integers(at, min(len(text), at + 20)))
        return text[:end] + text[at:end] + text[end:]
    piece = data.draw(
        st.sampled_from(['"', "{", "}", "[", "]", ",", ":", "null", "0", "-1", "\\", "é", ";", " "])
        | st.text(max_size=3)
    )
    if kind == "replace":
        return text[:at] + piece + text[at + 1 :]
    return text[:at] + piece + text[at:]


def _mutate_json(doc: Any, data: st.DataObject) -> Any:
    if isinstance(doc, dict) and doc:
        key = data.draw(st.sampled_from(sorted(doc)))
        action = data.draw(st.sampled_from(["drop", "replace", "recurse"]))
        out = dict(doc)
        if action == "drop":
            del out[key]
        elif action == "replace":
            out[key] = data.draw(JSON_VALUES)
        else:
            out[key] = _mutate_json(doc[key], data)
        return out
    if isinstance(doc, list) and doc:
        i = data.draw(st.integers(0, len(doc) - 1))
        out_list = list(doc)
        out_list[i] = (
            _mutate_json(doc[i], data) if data.draw(st.booleans()) else data.draw(JSON_VALUES)
        )
        return out_list
    return data.draw(JSON_VALUES)


FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def test_corpus_parses() -> None:
    for name, texts in CORPUS.items():
        for text in texts:
            assert outcome(FORMATS[name], text) is not None, (name, text)


@pytest.mark.parametrize("name", ["AVRO", "JSON", "PROTOBUF"])
@FUZZ
@given(text=st.text(max_size=200))
def test_random_text_is_invalid_or_parsed(name: str, text: str) -> None:
    outcome(FORMATS[name], text)
    outcome(FORMATS[name], text, strict=False)


@pytest.mark.parametrize("name", ["AVRO", "JSON"])
@FUZZ
@given(doc=JSON_VALUES)
def test_random_json_documents_are_invalid_or_parsed(name: str, doc: Any) -> None:
    fmt = FORMATS[name]
    parsed = outcome(fmt, json.dumps(doc))
    if parsed is not None:
        verdict(fmt, parsed, parsed)
        for text in CORPUS[name]:
            other = fmt.parse(text)
            verdict(fmt, parsed, other)
            verdict(fmt, other, parsed)


@FUZZ
@given(tokens=st.lists(PROTO_TOKENS, max_size=40))
def test_random_protobuf_token_streams_are_invalid_or_parsed(tokens: list[str]) -> None:
    fmt = FORMATS["PROTOBUF"]
    parsed = outcome(fmt, 'syntax = "proto3";\n' + " ".join(tokens))
    if parsed is not None:
        verdict(fmt, parsed, parsed)


@pytest.mark.parametrize("name", ["AVRO", "JSON", "PROTOBUF"])
@FUZZ
@given(data=st.data())
def test_mutated_schemas_are_invalid_or_checked_against_the_original(
    name: str, data: st.DataObject
) -> None:
    fmt = FORMATS[name]
    original_text = data.draw(st.sampled_from(CORPUS[name]))
    text = original_text
    for _ in range(data.draw(st.integers(1, 3))):
        text = mutate(text, data)
    parsed = outcome(fmt, text)
    if parsed is None:
        return
    original = fmt.parse(original_text)
    verdict(fmt, parsed, original)
    verdict(fmt, original, parsed)
    # a schema reads its own data
    assert verdict(fmt, parsed, parsed) == [], text
