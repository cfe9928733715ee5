"""The probe reader (pure: no Spark): what it keeps of a writer record, and that resolving to it
with an Avro reader (fastavro here; Spark's Java reader in test_spark_avro_native_errors) tells
a good record from a truncated one or one with an enum index out of range."""

from __future__ import annotations

import io
import json

import pytest
from fastavro import parse_schema, schemaless_reader, schemaless_writer

from spark_serdes.avro_probe import probe_reader

STATE = {"type": "enum", "name": "State", "symbols": ["OPEN", "DONE"]}
ORDER = {
    "type": "record", "name": "Order", "namespace": "probe",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "state", "type": STATE},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "lines", "type": {"type": "array", "items": {
            "type": "record", "name": "Line",
            "fields": [{"name": "sku", "type": "string"}, {"name": "st", "type": "State"}],
        }}},
        {"name": "marks", "type": {"type": "map", "values": "State"}},
        {"name": "ship", "type": ["null", {
            "type": "record", "name": "Ship",
            "fields": [{"name": "zip", "type": "int"}, {"name": "mode", "type": {
                "type": "enum", "name": "Mode", "symbols": ["AIR", "SEA"]}}],
        }], "default": None},
        {"name": "extra", "type": ["null", "int", {
            "type": "record", "name": "Plain", "fields": [{"name": "x", "type": "int"}]}]},
        {"name": "blob", "type": {"type": "fixed", "name": "Blob", "size": 2}},
    ],
}  # fmt: skip
GOOD = {
    "id": 1, "state": "DONE", "note": "n",
    "lines": [{"sku": "a", "st": "OPEN"}, {"sku": "b", "st": "DONE"}],
    "marks": {"k": "DONE"}, "ship": {"zip": 9, "mode": "SEA"}, "extra": {"x": 3},
    "blob": b"xy",
}  # fmt: skip


def _probe(writer: dict) -> tuple[dict, str]:
    result = probe_reader(json.dumps(writer))
    assert result is not None
    text, flag = result
    return json.loads(text), flag


def _encode(schema: dict, record: dict) -> bytes:
    out = io.BytesIO()
    schemaless_writer(out, parse_schema(schema), record)
    return out.getvalue()


def _read(writer: dict, probe: dict, data: bytes) -> dict:
    return schemaless_reader(io.BytesIO(data), parse_schema(writer), parse_schema(probe))  # type: ignore[return-value]


def test_keeps_only_the_paths_to_enums_and_whole_unions_that_hold_one() -> None:
    probe, flag = _probe(ORDER)
    assert flag == "decoded"
    assert probe == {
        "type": "record", "name": "probe.Order",
        "fields": [
            {"name": "state", "type": {
                "type": "enum", "name": "probe.State", "symbols": ["OPEN", "DONE"]}},
            {"name": "lines", "type": {"type": "array", "items": {
                "type": "record", "name": "probe.Line",
                "fields": [{"name": "st", "type": "probe.State"}]}}},
            {"name": "marks", "type": {"type": "map", "values": "probe.State"}},
            {"name": "ship", "type": ["null", {
                "type": "record", "name": "probe.Ship",
                "fields": [{"name": "mode", "type": {
                    "type": "enum", "name": "probe.Mode", "symbols": ["AIR", "SEA"]}}]}]},
            {"name": "decoded", "type": "boolean", "default": True},
        ],
    }  # fmt: skip


def test_a_record_without_enums_probes_with_the_flag_alone_and_a_non_record_has_none() -> None:
    plain = {"type": "record", "name": "P", "fields": [
        {"name": "a", "type": "long"}, {"name": "u", "type": ["null", "string"]}]}  # fmt: skip
    probe, flag = _probe(plain)
    assert probe["fields"] == [{"name": flag, "type": "boolean", "default": True}]
    assert probe_reader(json.dumps({"type": "array", "items": "long"})) is None
    assert probe_reader('"string"') is None


def test_the_flag_does_not_take_a_writer_field_name() -> None:
    writer = {"type": "record", "name": "W", "fields": [
        {"name": "decoded", "type": "string"}, {"name": "decoded_", "type": "int"}]}  # fmt: skip
    probe, flag = _probe(writer)
    assert flag == "decoded__"
    data = _encode(writer, {"decoded": "x", "decoded_": 1})
    assert _read(writer, probe, data) == {flag: True}


def test_a_union_holding_an_enum_keeps_each_branch_as_little_as_resolves() -> None:
    writer = {"type": "record", "name": "U", "fields": [{"name": "u", "type": [
        "null", "string", {"type": "array", "items": {"type": "record", "name": "I",
                                                      "fields": [{"name": "n", "type": "int"}]}},
        {"type": "enum", "name": "E", "symbols": ["A"]}]}]}  # fmt: skip
    probe, flag = _probe(writer)
    assert probe["fields"][0]["type"] == [
        "null", "string",
        {"type": "array", "items": {"type": "record", "name": "I", "fields": []}},
        {"type": "enum", "name": "E", "symbols": ["A"]},
    ]  # fmt: skip
    for value in (None, "s", [{"n": 1}, {"n": 2}], "A"):
        assert _read(writer, probe, _encode(writer, {"u": value}))[flag] is True


def test_recursive_types_are_defined_once() -> None:
    writer = {"type": "record", "name": "Node", "fields": [
        {"name": "s", "type": {"type": "enum", "name": "S", "symbols": ["X", "Y"]}},
        {"name": "next", "type": ["null", "Node"], "default": None}]}  # fmt: skip
    probe, flag = _probe(writer)
    assert probe["fields"][1] == {"name": "next", "type": ["null", "Node"]}
    data = _encode(writer, {"s": "Y", "next": {"s": "X", "next": None}})
    # the nested Node is the probe's record too, its flag filled from the default
    nested = {"s": "X", "next": None, flag: True}
    assert _read(writer, probe, data) == {"s": "Y", "next": nested, flag: True}
    bad = bytearray(data)
    bad[2] = 0x08  # the nested record's enum index: 4 of 2
    with pytest.raises(IndexError):  # fastavro: the symbol list has no index 4
        _read(writer, probe, bytes(bad))


def test_resolving_to_the_probe_tells_good_from_bad_records() -> None:
    probe, flag = _probe(ORDER)
    data = _encode(ORDER, GOOD)
    assert _read(ORDER, probe, data)[flag] is True
    with pytest.raises((EOFError, IndexError)):  # fastavro's way of saying truncated
        _read(ORDER, probe, data[:-3])
    bad_state = bytearray(data)
    assert bad_state[1] == 2  # id 1 (zigzag 0x02), then the state's index
    bad_state[2] = 0x0A  # index 5 of 2
    # (fastavro checks an enum index even when skipping; Avro's Java reader, Spark's, does
    # not: test_spark_avro_native_errors shows the probe catching it there)
    with pytest.raises(IndexError):  # fastavro: the symbol list has no index 5
        _read(ORDER, probe, bytes(bad_state))
