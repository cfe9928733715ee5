"""Avro reader/writer compatibility (Apache Avro ``SchemaCompatibility``) and Confluent's
difference strings.

Each table case is (writer schema, reader schema, expected incompatibilities as
(errorType, path, additionalInfo)); an empty list means the reader can read the writer's data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from registry.formats.avro import AvroFormat
from registry.formats.avro.compatibility import incompatibilities
from registry.formats.base import Dependency

AVRO = AvroFormat()

Expected = list[tuple[str, str, str]]


def j(value: Any) -> str:
    return json.dumps(value)


def rec(*fields: dict[str, Any], name: str = "R", **extra: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": list(fields), **extra}


def f(name: str, type_: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **extra}


def enum(*symbols: str, name: str = "E", **extra: Any) -> dict[str, Any]:
    return {"type": "enum", "name": name, "symbols": list(symbols), **extra}


def fixed(size: int, name: str = "F", **extra: Any) -> dict[str, Any]:
    return {"type": "fixed", "name": name, "size": size, **extra}


def arr(items: Any) -> dict[str, Any]:
    return {"type": "array", "items": items}


def mp(values: Any) -> dict[str, Any]:
    return {"type": "map", "values": values}


def check(writer: Any, reader: Any) -> Expected:
    w = AVRO.parse(j(writer))
    r = AVRO.parse(j(reader))
    return [(i.type, i.location, i.message) for i in incompatibilities(r.root, w.root)]


TM = "TYPE_MISMATCH"
MUB = "MISSING_UNION_BRANCH"
MES = "MISSING_ENUM_SYMBOLS"
RFM = "READER_FIELD_MISSING_DEFAULT_VALUE"
NM = "NAME_MISMATCH"
FSM = "FIXED_SIZE_MISMATCH"

PRIMS = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
PROMOTIONS = {
    ("int", "long"),
    ("int", "float"),
    ("int", "double"),
    ("long", "float"),
    ("long", "double"),
    ("float", "double"),
    ("string", "bytes"),
    ("bytes", "string"),
}


def _tm(reader: str, writer: str, path: str = "/") -> tuple[str, str, str]:
    return (
        TM,
        path,
        f"reader type: {reader.upper()} not compatible with writer type: {writer.upper()}",
    )


# Every primitive writer against every primitive reader: same type or a promotion is
# compatible, anything else is a TYPE_MISMATCH at the root.
PRIMITIVE_MATRIX = [
    pytest.param(
        w,
        r,
        [] if w == r or (w, r) in PROMOTIONS else [_tm(r, w)],
        id=f"primitive_{w}_read_as_{r}",
    )
    for w in PRIMS
    for r in PRIMS
]


@pytest.mark.parametrize(("writer", "reader", "expected"), PRIMITIVE_MATRIX)
def test_primitive_resolution(writer: str, reader: str, expected: Expected) -> None:
    assert check(writer, reader) == expected


CASES: list[tuple[str, Any, Any, Expected]] = [
    # ---- arrays and maps --------------------------------------------------------------------
    ("array_same", arr("int"), arr("int"), []),
    ("array_items_promoted", arr("int"), arr("long"), []),
    ("array_items_narrowed", arr("long"), arr("int"), [_tm("int", "long", "/items")]),
    ("map_values_promoted", mp("float"), mp("double"), []),
    ("map_values_mismatch", mp("string"), mp("int"), [_tm("int", "string", "/values")]),
    ("array_read_as_map", arr("int"), mp("int"), [_tm("map", "array")]),
    ("map_read_as_array", mp("int"), arr("int"), [_tm("array", "map")]),
    (
        "nested_array_of_map",
        arr(mp("int")),
        arr(mp("string")),
        [_tm("string", "int", "/items/values")],
    ),
    ("array_read_as_primitive", arr("int"), "int", [_tm("int", "array")]),
    # ---- fixed ------------------------------------------------------------------------------
    ("fixed_same", fixed(4), fixed(4), []),
    ("fixed_size_change", fixed(4), fixed(8), [(FSM, "/size", "expected: 4, found: 8")]),
    ("fixed_rename", fixed(4, "A"), fixed(4, "B"), [(NM, "/name", "expected: A")]),
    (
        "fixed_rename_and_resize",
        fixed(4, "A"),
        fixed(2, "B"),
        [(NM, "/name", "expected: A"), (FSM, "/size", "expected: 4, found: 2")],
    ),
    ("fixed_namespace_change_only", fixed(4, "a.F"), fixed(4, "b.F"), []),
    ("fixed_rename_with_alias", fixed(4, "a.Old"), fixed(4, "a.New", aliases=["Old"]), []),
    ("fixed_read_as_bytes", fixed(4), "bytes", [_tm("bytes", "fixed")]),
    ("bytes_read_as_fixed", "bytes", fixed(4), [_tm("fixed", "bytes")]),
    # ---- enums ------------------------------------------------------------------------------
    ("enum_same", enum("A", "B"), enum("A", "B"), []),
    ("enum_symbol_added_in_reader", enum("A"), enum("A", "B"), []),
    ("enum_symbols_reordered", enum("A", "B"), enum("B", "A"), []),
    (
        "enum_symbol_missing_in_reader",
        enum("A", "B", "C"),
        enum("A", "B"),
        [(MES, "/symbols", "[C]")],
    ),
    (
        "enum_missing_symbols_sorted",
        enum("A", "D", "C"),
        enum("A"),
        [(MES, "/symbols", "[C, D]")],
    ),
    (
        "enum_missing_symbol_with_reader_default",
        enum("A", "B", "C"),
        enum("A", "B", default="A"),
        [],
    ),
    (
        "enum_writer_default_does_not_help",
        enum("A", "B", "C", default="A"),
        enum("A", "B"),
        [(MES, "/symbols", "[C]")],
    ),
    ("enum_rename", enum("A", name="X"), enum("A", name="Y"), [(NM, "/name", "expected: X")]),
    ("enum_rename_with_alias", enum("A", name="X"), enum("A", name="Y", aliases=["X"]), []),
    (
        "enum_rename_and_missing_symbol",
        enum("A", "B", name="X"),
        enum("A", name="Y"),
        [(NM, "/name", "expected: X"), (MES, "/symbols", "[B]")],
    ),
    ("enum_namespace_change_only", enum("A", name="a.E"), enum("A", name="b.E"), []),
    ("enum_read_as_string", enum("A"), "string", [_tm("string", "enum")]),
    ("string_read_as_enum", "string", enum("A"), [_tm("enum", "string")]),
    # ---- records: fields --------------------------------------------------------------------
    ("record_same", rec(f("a", "int")), rec(f("a", "int")), []),
    (
        "record_field_added_with_default",
        rec(f("a", "int")),
        rec(f("a", "int"), f("b", "string", default="x")),
        [],
    ),
    (
        "record_field_added_without_default",
        rec(f("a", "int")),
        rec(f("a", "int"), f("b", "string")),
        [(RFM, "/fields/1", "b")],
    ),
    (
        "record_two_fields_added_without_default",
        rec(f("a", "int")),
        rec(f("x", "int"), f("a", "int"), f("y", "int")),
        [(RFM, "/fields/0", "x"), (RFM, "/fields/2", "y")],
    ),
    ("record_field_removed", rec(f("a", "int"), f("b", "string")), rec(f("a", "int")), []),
    (
        "record_fields_reordered",
        rec(f("a", "int"), f("b", "string")),
        rec(f("b", "string"), f("a", "int")),
        [],
    ),
    ("record_field_promoted", rec(f("a", "int")), rec(f("a", "long")), []),
    (
        "record_field_type_changed",
        rec(f("a", "int"), f("b", "string")),
        rec(f("a", "int"), f("b", "int")),
        [_tm("int", "string", "/fields/1/type")],
    ),
    (
        "record_field_renamed_with_alias",
        rec(f("old", "int")),
        rec(f("new", "int", aliases=["old"])),
        [],
    ),
    (
        "record_field_renamed_without_alias",
        rec(f("old", "int")),
        rec(f("new", "int")),
        [(RFM, "/fields/0", "new")],
    ),
    (
        "record_field_renamed_with_default",
        rec(f("old", "int")),
        rec(f("new", "int", default=0)),
        [],
    ),
    (
        "record_field_alias_type_checked",
        rec(f("old", "string")),
        rec(f("new", "int", aliases=["old"])),
        [_tm("int", "string", "/fields/0/type")],
    ),
    (
        "record_default_null_on_union_added",
        rec(f("a", "int")),
        rec(f("a", "int"), f("b", ["null", "string"], default=None)),
        [],
    ),
    (
        "record_missing_enum_field_with_enum_default",
        # Avro checks the reader enum against the *writer record*: a type mismatch.
        rec(f("a", "int")),
        rec(f("a", "int"), f("e", enum("A", "B", default="A"))),
        [_tm("enum", "record", "/fields/1/type")],
    ),
    (
        "record_missing_enum_field_without_any_default",
        rec(f("a", "int")),
        rec(f("a", "int"), f("e", enum("A", "B"))),
        [(RFM, "/fields/1", "e")],
    ),
    (
        "record_many_problems_in_field_order",
        rec(f("a", "int"), f("b", "string"), f("c", arr("long"))),
        rec(f("c", arr("int")), f("d", "int"), f("a", "boolean"), f("b", "string")),
        [
            _tm("int", "long", "/fields/0/type/items"),
            (RFM, "/fields/1", "d"),
            _tm("boolean", "int", "/fields/2/type"),
        ],
    ),
    (
        "record_error_reads_record",
        rec(f("a", "int")),
        {"type": "error", "name": "R", "fields": [f("a", "int")]},
        [],
    ),
    ("empty_records", rec(), rec(), []),
    # ---- records: names ---------------------------------------------------------------------
    ("record_rename", rec(name="A"), rec(name="B"), [(NM, "/name", "expected: A")]),
    ("record_namespace_change_only", rec(name="a.R"), rec(name="b.R"), []),
    ("record_rename_with_full_alias", rec(name="a.Old"), rec(name="b.New", aliases=["a.Old"]), []),
    (
        "record_alias_resolved_in_reader_namespace_does_not_match",
        rec(name="a.Old"),
        rec(name="b.New", aliases=["Old"]),
        [(NM, "/name", "expected: a.Old")],
    ),
    (
        "record_rename_and_field_missing",
        rec(f("a", "int"), name="A"),
        rec(f("b", "int"), name="B"),
        [(NM, "/name", "expected: A"), (RFM, "/fields/0", "b")],
    ),
    ("record_read_as_map", rec(), mp("int"), [_tm("map", "record")]),
    # ---- nested records ---------------------------------------------------------------------
    (
        "nested_record_field_added_without_default",
        rec(f("in", rec(f("x", "int"), name="In"))),
        rec(f("in", rec(f("x", "int"), f("y", "int"), name="In"))),
        [(RFM, "/fields/0/type/fields/1", "y")],
    ),
    (
        "nested_record_type_change",
        rec(f("in", rec(f("x", "int"), name="In"))),
        rec(f("in", rec(f("x", "string"), name="In"))),
        [_tm("string", "int", "/fields/0/type/fields/0/type")],
    ),
    (
        "nested_record_renamed",
        rec(f("in", rec(name="In"))),
        rec(f("in", rec(name="In2"))),
        [(NM, "/fields/0/type/name", "expected: In")],
    ),
    (
        "record_in_array_in_map",
        mp(arr(rec(f("x", "int"), name="In"))),
        mp(arr(rec(f("x", "int"), f("z", "int"), name="In"))),
        [(RFM, "/values/items/fields/1", "z")],
    ),
    (
        "same_named_type_used_twice_reports_memoised_path",
        # The second use of the same (reader, writer) pair returns the memoised result,
        # with the path recorded the first time (as Avro does).
        rec(f("a", rec(f("x", "int"), name="In")), f("b", "In")),
        rec(f("a", rec(f("x", "string"), name="In")), f("b", "In")),
        [
            _tm("string", "int", "/fields/0/type/fields/0/type"),
            _tm("string", "int", "/fields/0/type/fields/0/type"),
        ],
    ),
    # ---- unions -----------------------------------------------------------------------------
    ("union_same", ["null", "int"], ["null", "int"], []),
    ("union_reordered", ["null", "int"], ["int", "null"], []),
    ("union_branch_added_in_reader", ["null", "int"], ["null", "int", "string"], []),
    (
        "union_branch_removed_in_reader",
        ["null", "int", "string"],
        ["null", "int"],
        [(MUB, "/2", "reader union lacking writer type: STRING")],
    ),
    (
        "union_two_branches_missing",
        ["null", "int", "string", "boolean"],
        ["int"],
        [
            (MUB, "/0", "reader union lacking writer type: NULL"),
            (MUB, "/2", "reader union lacking writer type: STRING"),
            (MUB, "/3", "reader union lacking writer type: BOOLEAN"),
        ],
    ),
    ("union_branches_promoted", ["int", "string"], ["long", "bytes"], []),
    ("primitive_widened_to_union", "int", ["null", "int"], []),
    ("primitive_widened_to_union_with_promotion", "int", ["null", "double"], []),
    (
        "primitive_read_by_union_without_it",
        "int",
        ["null", "string"],
        [(MUB, "/", "reader union lacking writer type: INT")],
    ),
    (
        "union_narrowed_to_primitive",
        # A writer union read by a non-union: each branch is checked from a fresh root.
        ["null", "int"],
        "int",
        [_tm("int", "null")],
    ),
    ("single_branch_union_read_as_primitive", ["int"], "long", []),
    (
        "union_narrowed_in_record_field_path_restarts",
        rec(f("a", ["null", "string"], default=None)),
        rec(f("a", "string")),
        [_tm("string", "null")],
    ),
    (
        "record_field_widened_to_union",
        rec(f("a", "string")),
        rec(f("a", ["null", "string"])),
        [],
    ),
    (
        "record_field_union_branch_removed",
        rec(f("a", ["null", "string", "int"], default=None)),
        rec(f("a", ["null", "string"], default=None)),
        [(MUB, "/fields/0/type/2", "reader union lacking writer type: INT")],
    ),
    (
        "record_field_read_by_union_without_it",
        rec(f("a", "int")),
        rec(f("a", ["null", "string"], default=None)),
        [(MUB, "/fields/0/type", "reader union lacking writer type: INT")],
    ),
    (
        "union_record_branch_incompatible",
        ["null", rec(f("x", "int"), name="In")],
        ["null", rec(f("x", "int"), f("y", "int"), name="In")],
        [(MUB, "/1", "reader union lacking writer type: RECORD")],
    ),
    (
        "union_record_branch_compatible_evolution",
        ["null", rec(f("x", "int"), name="In")],
        ["null", rec(f("x", "int"), f("y", "int", default=1), name="In")],
        [],
    ),
    (
        "union_of_records_matched_by_name",
        [rec(name="A"), rec(f("b", "int"), name="B")],
        [rec(f("b", "int"), name="B"), rec(name="A")],
        [],
    ),
    (
        "union_enum_symbol_removed",
        ["null", enum("A", "B")],
        ["null", enum("A")],
        [(MUB, "/1", "reader union lacking writer type: ENUM")],
    ),
    (
        "union_writer_enum_read_by_union_with_renamed_enum",
        enum("A", name="X"),
        ["null", enum("A", name="Y")],
        [(MUB, "/", "reader union lacking writer type: ENUM")],
    ),
    ("union_of_arrays_promoted", [arr("int"), "null"], ["null", arr("long")], []),
    (
        "empty_writer_union_is_readable_by_anything",
        [],
        "int",
        [],
    ),
    (
        "empty_reader_union_reads_nothing",
        "int",
        [],
        [(MUB, "/", "reader union lacking writer type: INT")],
    ),
    # ---- recursive types --------------------------------------------------------------------
    (
        "recursive_same",
        rec(f("v", "int"), f("next", ["null", "R"], default=None)),
        rec(f("v", "int"), f("next", ["null", "R"], default=None)),
        [],
    ),
    (
        "recursive_field_added_with_default",
        rec(f("v", "int"), f("next", ["null", "R"], default=None)),
        rec(f("v", "int"), f("next", ["null", "R"], default=None), f("w", "int", default=0)),
        [],
    ),
    (
        "recursive_field_added_without_default_reported_once",
        rec(f("v", "int"), f("next", ["null", "R"], default=None)),
        rec(f("v", "int"), f("next", ["null", "R"], default=None), f("w", "int")),
        [(RFM, "/fields/2", "w")],
    ),
    (
        "recursive_via_array",
        rec(f("children", arr("R"))),
        rec(f("children", arr("R")), f("label", "string", default="")),
        [],
    ),
    (
        "mutually_recursive",
        rec(f("b", rec(f("a", ["null", "A"], default=None), name="B")), name="A"),
        rec(f("b", rec(f("a", ["null", "A"], default=None), name="B")), name="A"),
        [],
    ),
    # ---- logical types are ignored by resolution --------------------------------------------
    ("logical_date_read_as_int", {"type": "int", "logicalType": "date"}, "int", []),
    (
        "logical_timestamp_millis_to_micros",
        {"type": "long", "logicalType": "timestamp-millis"},
        {"type": "long", "logicalType": "timestamp-micros"},
        [],
    ),
    (
        "decimal_precision_change",
        {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2},
        {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2},
        [],
    ),
    ("custom_props_ignored", {"type": "string", "x": 1}, {"type": "string", "x": 2}, []),
    (
        "docs_ignored",
        rec(f("a", "int", doc="x"), doc="d1"),
        rec(f("a", "int", doc="y"), doc="d2"),
        [],
    ),
]


@pytest.mark.parametrize(
    ("writer", "reader", "expected"),
    [pytest.param(w, r, e, id=i) for i, w, r, e in CASES],
)
def test_reader_writer_compatibility(writer: Any, reader: Any, expected: Expected) -> None:
    assert check(writer, reader) == expected


# ---- directions: what the caller's BACKWARD / FORWARD checks give --------------------------


def backward(new: Any, old: Any) -> list[str]:
    return AVRO.compatibility_errors(AVRO.parse(j(new)), AVRO.parse(j(old)))


def forward(new: Any, old: Any) -> list[str]:
    return AVRO.compatibility_errors(
        AVRO.parse(j(old)), AVRO.parse(j(new)), reader_label="old", writer_label="new"
    )


def types_of(messages: list[str]) -> list[str]:
    return [m.split("'")[1] for m in messages]


# (case id, old schema, new schema, backward errorTypes, forward errorTypes)
DIRECTIONS: list[tuple[str, Any, Any, list[str], list[str]]] = [
    (
        "add_field_with_default",
        rec(f("a", "int")),
        rec(f("a", "int"), f("b", "int", default=0)),
        [],
        [],
    ),
    ("add_field_without_default", rec(f("a", "int")), rec(f("a", "int"), f("b", "int")), [RFM], []),
    (
        "remove_field_with_default",
        rec(f("a", "int"), f("b", "int", default=0)),
        rec(f("a", "int")),
        [],
        [],
    ),
    (
        "remove_field_without_default",
        rec(f("a", "int"), f("b", "int")),
        rec(f("a", "int")),
        [],
        [RFM],
    ),
    (
        "widen_to_union",
        rec(f("a", "string")),
        rec(f("a", ["null", "string"], default=None)),
        [],
        [TM],
    ),
    (
        "narrow_from_union",
        rec(f("a", ["null", "string"], default=None)),
        rec(f("a", "string")),
        [TM],
        [],
    ),
    ("promote_int_to_long", rec(f("a", "int")), rec(f("a", "long")), [], [TM]),
    ("rename_field_with_alias", rec(f("a", "int")), rec(f("b", "int", aliases=["a"])), [], [RFM]),
    ("rename_record_with_alias", rec(name="Old"), rec(name="New", aliases=["Old"]), [], [NM]),
    ("enum_symbol_added", enum("A"), enum("A", "B"), [], [MES]),
    ("enum_symbol_removed", enum("A", "B"), enum("A"), [MES], []),
    ("enum_symbol_added_with_default", enum("A", default="A"), enum("A", "B", default="A"), [], []),
    (
        "enum_symbol_removed_with_default",
        enum("A", "B", default="A"),
        enum("A", default="A"),
        [],
        [],
    ),
    ("union_branch_added", ["null", "int"], ["null", "int", "string"], [], [MUB]),
    ("union_branch_removed", ["null", "int", "string"], ["null", "int"], [MUB], []),
    ("fixed_resized", fixed(4), fixed(8), [FSM], [FSM]),
    ("type_changed", rec(f("a", "int")), rec(f("a", "string")), [TM], [TM]),
]


@pytest.mark.parametrize(
    ("old", "new", "back", "fwd"),
    [pytest.param(o, n, b, fw, id=i) for i, o, n, b, fw in DIRECTIONS],
)
def test_backward_and_forward_calls(old: Any, new: Any, back: list[str], fwd: list[str]) -> None:
    assert types_of(backward(new, old)) == back
    assert types_of(forward(new, old)) == fwd


# ---- exact Confluent strings ---------------------------------------------------------------


def test_message_reader_field_missing_default_backward() -> None:
    old = rec(f("f1", "string"))
    new = rec(f("f1", "string"), f("f2", "string"))
    assert backward(new, old) == [
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'f2' at path "
        "'/fields/1' in the new schema has no default value and is missing in the old schema', "
        "additionalInfo:'f2'}"
    ]


def test_message_reader_field_missing_default_forward() -> None:
    old = rec(f("f1", "string"), f("f2", "string"))
    new = rec(f("f1", "string"))
    assert forward(new, old) == [
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'f2' at path "
        "'/fields/1' in the old schema has no default value and is missing in the new schema', "
        "additionalInfo:'f2'}"
    ]


def test_message_type_mismatch() -> None:
    assert backward(rec(f("a", "string")), rec(f("a", "int"))) == [
        "{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in "
        "the new schema does not match with the old schema', additionalInfo:'reader type: STRING "
        "not compatible with writer type: INT'}"
    ]


def test_message_name_mismatch() -> None:
    assert backward(rec(name="ns.B"), rec(name="ns.A")) == [
        "{errorType:'NAME_MISMATCH', description:'The name of the schema has changed (path "
        "'/name')', additionalInfo:'expected: ns.A'}"
    ]


def test_message_missing_enum_symbols() -> None:
    assert backward(enum("A"), enum("A", "C", "B")) == [
        "{errorType:'MISSING_ENUM_SYMBOLS', description:'The new schema is missing enum symbols "
        "'[B, C]' at path '/symbols' in the old schema', additionalInfo:'[B, C]'}"
    ]


def test_message_missing_union_branch() -> None:
    assert backward(rec(f("a", ["null", "int"])), rec(f("a", ["null", "int", "string"]))) == [
        "{errorType:'MISSING_UNION_BRANCH', description:'The new schema is missing a type inside "
        "a union field at path '/fields/0/type/2' in the old schema', additionalInfo:'reader "
        "union lacking writer type: STRING'}"
    ]


def test_message_fixed_size_mismatch_forward_labels() -> None:
    assert forward(fixed(16), fixed(8)) == [
        "{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED type field at path "
        "'/size' in the old schema does not match with the new schema', additionalInfo:'expected: "
        "16, found: 8'}"
    ]


def test_custom_labels() -> None:
    messages = AVRO.compatibility_errors(
        AVRO.parse(j(rec(f("a", "int"), f("b", "int")))),
        AVRO.parse(j(rec(f("a", "int")))),
        reader_label="reader",
        writer_label="writer",
    )
    assert messages == [
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path "
        "'/fields/1' in the reader schema has no default value and is missing in the writer "
        "schema', additionalInfo:'b'}"
    ]


def test_field_matching_two_writer_fields_is_an_unexpected_exception() -> None:
    writer = rec(f("a", "int"), f("b", "int"))
    reader = rec(f("a", "int", aliases=["b"]))
    assert backward(reader, writer) == [
        "Unexpected exception during compatibility check: Reader record field a type:INT pos:0 "
        "matches multiple fields in writer record schema "
        '{"type":"record","name":"R","fields":[{"name":"a","type":"int"},'
        '{"name":"b","type":"int"}]}'
    ]


def test_all_incompatibilities_are_returned_in_avro_order() -> None:
    old = rec(f("a", "int"), f("e", enum("X", "Y")), f("u", ["null", "int", "string"]), name="A")
    new = rec(
        f("a", "string"),
        f("e", enum("X")),
        f("u", ["null", "int"]),
        f("n", "int"),
        name="B",
    )
    assert types_of(backward(new, old)) == [NM, TM, MES, MUB, RFM]


# ---- references ----------------------------------------------------------------------------

ADDRESS_V1 = Dependency(
    "com.acme.Address",
    j(rec(f("street", "string"), name="Address", namespace="com.acme")),
)
ADDRESS_V2 = Dependency(
    "com.acme.Address",
    j(rec(f("street", "string"), f("zip", "string"), name="Address", namespace="com.acme")),
)


def test_referenced_types_are_compared() -> None:
    main = j(rec(f("home", "com.acme.Address")))
    old = AVRO.parse(main, [ADDRESS_V1])
    new = AVRO.parse(main, [ADDRESS_V2])
    assert AVRO.compatibility_errors(new, old) == [
        "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'zip' at path "
        "'/fields/0/type/fields/1' in the new schema has no default value and is missing in the "
        "old schema', additionalInfo:'zip'}"
    ]
    assert AVRO.compatibility_errors(old, new, "old", "new") == []


def test_reference_and_inlined_type_are_equivalent() -> None:
    main = j(rec(f("home", "com.acme.Address")))
    with_ref = AVRO.parse(main, [ADDRESS_V1])
    inlined = AVRO.parse(with_ref.formatted("resolved"))
    assert AVRO.compatibility_errors(with_ref, inlined) == []
    assert AVRO.compatibility_errors(inlined, with_ref) == []


def test_large_schemas_check_quickly_and_agree() -> None:
    fields = [f(f"f{i}", ["null", "string"], default=None) for i in range(500)]
    old = AVRO.parse(j(rec(*fields)))
    new = AVRO.parse(j(rec(*fields, f("extra", "int"))))
    assert types_of(AVRO.compatibility_errors(new, old)) == [RFM]
    assert AVRO.compatibility_errors(old, new, "old", "new") == []


# ---- fixtures produced by Apache Avro Java 1.11.4 -----------------------------------------

ORACLE = json.loads(
    (Path(__file__).parent / "data" / "avro" / "avro_java_oracle.json").read_text("utf-8")
)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in ORACLE["compat"]])
def test_matches_avro_java_schema_compatibility(case: dict[str, Any]) -> None:
    def deps(texts: list[str]) -> tuple[Dependency, ...]:
        return tuple(Dependency(f"dep{i}", text) for i, text in enumerate(texts))

    reader = AVRO.parse(case["reader"], deps(case["readerDeps"]), strict=False)
    writer = AVRO.parse(case["writer"], deps(case["writerDeps"]), strict=False)
    found = [[i.type, i.location, i.message] for i in incompatibilities(reader.root, writer.root)]
    assert found == case["incompatibilities"]
