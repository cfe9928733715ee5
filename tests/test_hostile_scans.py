"""Scans of whole schema texts that run before any parser (the nesting limit) or before protoc
(comments, imports): each call into C is bounded by one token, not by the text, so a large text
never holds the GIL for long, and the limit's scan of a large request runs off the event loop.
The token loops must find exactly what the whole-text regexes they replace found."""

from __future__ import annotations

import asyncio
import json
import random
import re
from itertools import accumulate

import pytest
from fastapi.testclient import TestClient

from registry.api import limits
from registry.formats.protobuf import repair, scan, source_hints

# the whole-text scans these loops replaced: the reference semantics
_OLD_PROTO_NOISE = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S
)
_OLD_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_OLD_IMPORT = re.compile(r'\bimport\s+(?:(public|weak)\s+)?"([^"\n]*)"\s*;')
_STEP = {"{": 1, "[": 1, "}": -1, "]": -1}


def _old_depth(text: str, proto: bool) -> int:
    noise = _OLD_PROTO_NOISE if proto else _OLD_JSON_STRING
    brackets = re.sub(r"[^\[\]{}]+", "", noise.sub("", text))
    return max(0, max(accumulate(_STEP[c] for c in brackets), default=0))


def _old_strip(text: str) -> str:
    return re.sub(
        r"(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')|//[^\n]*|/\*.*?(?:\*/|\Z)",
        lambda m: m.group(1) or " ",
        text,
        flags=re.S,
    )


def _texts(alphabet: list[str], count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(count)]


def test_nesting_depth_finds_what_the_whole_text_scan_found() -> None:
    alphabet = ['"', "'", "/", "*", "\\", "\n", "a", "{", "}", "[", "]"]
    for text in _texts(alphabet, 8_000, 1):
        assert limits.nesting_depth(text, "PROTOBUF") == _old_depth(text, True), repr(text)
        assert limits.nesting_depth(text, "JSON") == _old_depth(text, False), repr(text)


def test_protobuf_comment_and_keyword_scans_find_what_the_regexes_found() -> None:
    alphabet = ['"', "'", "/", "*", "\\", "\n", "a", " ", "import ", 'import "x.proto";']
    alphabet += ['import public "y";', 'ximport "z";', "rpc A(B) returns (C)", "extend X {"]
    for text in _texts(alphabet, 8_000, 2):
        stripped = _old_strip(text)
        assert scan.strip_comments(text) == stripped, repr(text)
        wanted = [m.group(2) for m in _OLD_IMPORT.finditer(stripped)]
        assert repair.missing_imports(text, [], lambda name: False) == wanted, repr(text)
        for pattern, word in ((source_hints._RPC, "rpc"), (source_hints._EXTEND, "extend")):
            found = [m.groups() for m in scan.matches_at(pattern, stripped, word)]
            assert found == [m.groups() for m in pattern.finditer(stripped)], repr(text)


def test_large_schema_is_measured_off_the_event_loop(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[bool] = []
    measure = limits.nesting_depth

    def spy(text: str, schema_type: str = "AVRO") -> int:
        try:
            asyncio.get_running_loop()
            threads.append(True)  # on the event loop: every other request waits
        except RuntimeError:
            threads.append(False)
        return measure(text, schema_type)

    monkeypatch.setattr(limits, "nesting_depth", spy)
    fields = [{"name": f"f{i}", "type": ["null", "string"], "doc": "x" * 40} for i in range(1500)]
    schema = json.dumps({"type": "record", "name": "R", "fields": fields})
    assert len(schema) > 65536
    answer = client.post("/subjects/big/versions", json={"schema": schema})
    assert answer.status_code == 200, answer.text
    assert threads == [False]
