"""Parsing Avro schemas: what is valid, what is rejected and why, strict vs lenient."""

from __future__ import annotations

import json
from typing import Any

import pytest

from registry.formats.avro import AvroFormat, AvroSchema
from registry.formats.avro.model import (
    ArraySchema,
    EnumSchema,
    FixedSchema,
    MapSchema,
    PrimitiveSchema,
    RecordSchema,
    UnionSchema,
)
from registry.formats.base import Dependency, InvalidSchemaError
from tests.work_count import assert_linear, python_calls

AVRO = AvroFormat()


def rec(*fields: str, name: str = "R", extra: str = "") -> str:
    return f'{{"type":"record","name":"{name}"{extra},"fields":[{",".join(fields)}]}}'


def field(name: str, type_: str, extra: str = "") -> str:
    return f'{{"name":"{name}","type":{type_}{extra}}}'


# ---- valid schemas -------------------------------------------------------------------------

VALID: list[tuple[str, str]] = [
    ("null", '"null"'),
    ("boolean", '"boolean"'),
    ("int", '"int"'),
    ("long", '"long"'),
    ("float", '"float"'),
    ("double", '"double"'),
    ("bytes", '"bytes"'),
    ("string", '"string"'),
    ("object_form", '{"type":"string"}'),
    ("array", '{"type":"array","items":"string"}'),
    ("map", '{"type":"map","values":{"type":"array","items":"long"}}'),
    ("union", '["null","string",{"type":"array","items":"int"},{"type":"map","values":"int"}]'),
    ("empty_union", "[]"),
    ("enum", '{"type":"enum","name":"Suit","symbols":["SPADES","HEARTS"],"default":"SPADES"}'),
    ("fixed", '{"type":"fixed","name":"md5","size":16}'),
    ("fixed_zero_size", '{"type":"fixed","name":"nothing","size":0}'),
    ("empty_record", rec()),
    ("error_record", '{"type":"error","name":"E","fields":[]}'),
    (
        "record_all_attributes",
        rec(
            field("a", '"int"', ',"default":1,"doc":"d","order":"descending","aliases":["b"]'),
            name="ns.R",
            extra=',"doc":"x","aliases":["Old"],"custom":{"k":[1]}',
        ),
    ),
    ("recursive", rec(field("next", '["null","R"]', ',"default":null'))),
    (
        "union_of_named_types",
        '[{"type":"record","name":"A","fields":[]},{"type":"record","name":"B","fields":[]},'
        '{"type":"enum","name":"C","symbols":[]},{"type":"fixed","name":"D","size":1}]',
    ),
    (
        "same_short_name_different_namespaces_in_union",
        '[{"type":"record","name":"a.X","fields":[]},{"type":"record","name":"b.X","fields":[]}]',
    ),
    ("decimal_bytes", '{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}'),
    ("decimal_bytes_no_scale", '{"type":"bytes","logicalType":"decimal","precision":1}'),
    (
        "decimal_fixed_max_precision",
        '{"type":"fixed","name":"d","size":8,"logicalType":"decimal","precision":18}',
    ),
    ("uuid_string", '{"type":"string","logicalType":"uuid"}'),
    ("uuid_fixed16", '{"type":"fixed","name":"u","size":16,"logicalType":"uuid"}'),
    ("date", '{"type":"int","logicalType":"date"}'),
    ("time_millis", '{"type":"int","logicalType":"time-millis"}'),
    ("time_micros", '{"type":"long","logicalType":"time-micros"}'),
    ("timestamp_millis", '{"type":"long","logicalType":"timestamp-millis"}'),
    ("timestamp_micros", '{"type":"long","logicalType":"timestamp-micros"}'),
    ("local_timestamp_millis", '{"type":"long","logicalType":"local-timestamp-millis"}'),
    ("local_timestamp_micros", '{"type":"long","logicalType":"local-timestamp-micros"}'),
    ("duration", '{"type":"fixed","name":"dur","size":12,"logicalType":"duration"}'),
    ("unknown_logical_type_is_a_property", '{"type":"string","logicalType":"my-own"}'),
    ("non_string_logical_type_ignored", '{"type":"string","logicalType":5}'),
    ("union_default_first_branch_null", rec(field("f", '["null","string"]', ',"default":null'))),
    ("union_default_first_branch_string", rec(field("f", '["string","null"]', ',"default":"x"'))),
    ("int_default_max", rec(field("f", '"int"', ',"default":2147483647'))),
    ("long_default_max", rec(field("f", '"long"', ',"default":9223372036854775807'))),
    ("float_default_int", rec(field("f", '"float"', ',"default":1'))),
    ("double_default_string_number", rec(field("f", '"double"', ',"default":"1e3"'))),
    ("double_default_string_nan", rec(field("f", '"double"', ',"default":"NaN"'))),
    ("bytes_default", rec(field("f", '"bytes"', ',"default":"\\u00ff"'))),
    ("boolean_default", rec(field("f", '"boolean"', ',"default":false'))),
    ("array_default", rec(field("f", '{"type":"array","items":"int"}', ',"default":[1,2]'))),
    ("map_default", rec(field("f", '{"type":"map","values":"string"}', ',"default":{"a":"b"}'))),
    (
        "record_default_uses_inner_field_default",
        rec(
            field(
                "f",
                '{"type":"record","name":"S","fields":[{"name":"x","type":"int"},'
                '{"name":"y","type":"int","default":0}]}',
                ',"default":{"x":1}',
            )
        ),
    ),
    (
        "enum_field_default",
        rec(field("f", '{"type":"enum","name":"E","symbols":["A","B"]}', ',"default":"B"')),
    ),
    (
        "fixed_field_default",
        rec(field("f", '{"type":"fixed","name":"F","size":2}', ',"default":"ab"')),
    ),
    ("underscore_names", rec(field("_f1", '"int"'), name="_a._b._R")),
    ("json_with_comments", '// leading\n{"type": /* inline */ "int"}'),
    (
        "type_by_named_reference_object",
        rec(field("a", '{"type":"fixed","name":"F","size":1}'), field("b", '{"type":"F"}')),
    ),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in VALID])
def test_valid_schemas_parse_strict(text: str) -> None:
    parsed = AVRO.parse(text)
    assert isinstance(parsed, AvroSchema)
    assert parsed.schema_type == "AVRO"
    # the canonical text is itself a valid schema with the same canonical text
    assert AVRO.parse(parsed.canonical()).canonical() == parsed.canonical()


def test_model_shapes() -> None:
    parsed = AVRO.parse(
        rec(
            field("i", '"int"'),
            field("a", '{"type":"array","items":"long"}'),
            field("m", '{"type":"map","values":"string"}'),
            field("u", '["null","R"]', ',"default":null'),
            field("e", '{"type":"enum","name":"E","symbols":["X"]}'),
            field("x", '{"type":"fixed","name":"F","size":3}'),
            name="n.R",
        )
    )
    root = parsed.root
    assert isinstance(root, RecordSchema)
    assert root.fullname == "n.R" and root.name == "R" and root.namespace == "n"
    kinds = [type(f.schema) for f in root.fields]
    assert kinds == [
        PrimitiveSchema,
        ArraySchema,
        MapSchema,
        UnionSchema,
        EnumSchema,
        FixedSchema,
    ]
    union = root.fields[3].schema
    assert isinstance(union, UnionSchema)
    assert union.types[1] is root  # a reference by name is the same node
    assert [f.pos for f in root.fields] == list(range(6))
    assert parsed.name() == "n.R"


def test_each_primitive_occurrence_is_a_distinct_node() -> None:
    root = AVRO.parse(rec(field("a", '"int"'), field("b", '"int"'))).root
    assert isinstance(root, RecordSchema)
    assert root.fields[0].schema is not root.fields[1].schema


def test_enum_and_non_record_have_no_record_name() -> None:
    assert AVRO.parse('{"type":"enum","name":"E","symbols":[]}').name() is None
    assert AVRO.parse('"int"').name() is None


def test_logical_types_recognised_like_avro_java() -> None:
    root = AVRO.parse('{"type":"bytes","logicalType":"decimal","precision":5,"scale":1}').root
    assert root.logical is not None
    assert (root.logical.name, root.logical.precision, root.logical.scale) == ("decimal", 5, 1)
    # duration is unknown to Avro Java 1.11: kept as a property only
    dur = AVRO.parse('{"type":"fixed","name":"d","size":12,"logicalType":"duration"}').root
    assert dur.logical is None and dur.props == {"logicalType": "duration"}


# ---- invalid schemas (strict) --------------------------------------------------------------

# (case id, text, a fragment the error message must contain)
INVALID: list[tuple[str, str, str]] = [
    ("not_json", "{not json", "Invalid JSON"),
    ("empty_text", "   ", "empty schema"),
    ("trailing_garbage", '{"type":"int"} x', "dangling content after end of schema: x"),
    (
        "trailing_comment_is_dangling_content",
        '{"type":"int"} // c',
        "dangling content after end of schema: // c",
    ),
    ("trailing_second_value", '"int" "long"', 'dangling content after end of schema: "long"'),
    ("nan_literal", rec(field("f", '"double"', ',"default":NaN')), "non-standard token 'NaN'"),
    ("number_is_not_a_schema", "5", "Schema not yet supported: 5"),
    ("null_is_not_a_schema", "null", "Schema not yet supported: null"),
    ("true_is_not_a_schema", "true", "Schema not yet supported: true"),
    ("unknown_top_level_name", '"foo"', 'Undefined name: "foo"'),
    ("unknown_array_items", '{"type":"array","items":"foo"}', 'Undefined name: "foo"'),
    ("unknown_union_branch", '["null","Missing"]', 'Undefined name: "Missing"'),
    (
        "unknown_field_type",
        rec(field("field1", '"str"'), name="myrecord"),
        '"str" is not a defined name. The type of the "field1" field must be a defined name or '
        'a {"type": ...} expression.',
    ),
    ("unknown_type_attribute", '{"type":"foo"}', "Type not supported: foo"),
    ("missing_type", '{"name":"x"}', 'No type: {"name":"x"}'),
    ("non_string_type", '{"type":["null","int"]}', "No type:"),
    ("record_without_name", '{"type":"record","fields":[]}', "No name in schema:"),
    ("enum_without_name", '{"type":"enum","symbols":[]}', "No name in schema:"),
    ("fixed_without_name", '{"type":"fixed","size":1}', "No name in schema:"),
    ("record_without_fields", '{"type":"record","name":"R"}', "Record has no fields:"),
    ("record_fields_not_array", '{"type":"record","name":"R","fields":{}}', "Record has no fields"),
    ("field_without_name", rec('{"type":"int"}'), 'No field name: {"type":"int"}'),
    ("field_not_object", rec('"int"'), 'No field name: "int"'),
    ("field_without_type", rec('{"name":"f"}'), 'No field type: {"name":"f"}'),
    ("field_type_null", rec('{"name":"f","type":null}'), "Schema not yet supported: null"),
    ("enum_without_symbols", '{"type":"enum","name":"E"}', "Enum has no symbols:"),
    ("enum_symbol_not_string", '{"type":"enum","name":"E","symbols":[1]}', "Enum symbol"),
    ("array_without_items", '{"type":"array"}', 'Array has no items type: {"type":"array"}'),
    ("map_without_values", '{"type":"map"}', 'Map has no values type: {"type":"map"}'),
    ("fixed_without_size", '{"type":"fixed","name":"F"}', "Invalid or no size:"),
    ("fixed_size_string", '{"type":"fixed","name":"F","size":"16"}', "Invalid or no size:"),
    ("fixed_size_float", '{"type":"fixed","name":"F","size":16.0}', "Invalid or no size:"),
    ("fixed_size_negative", '{"type":"fixed","name":"F","size":-1}', "Length is negative: -1"),
    ("name_initial_digit", rec(name="1abc"), "Illegal initial character: 1abc"),
    ("name_dash", rec(name="a-b"), "Illegal character in: a-b"),
    ("name_non_ascii", rec(name="café"), "Illegal character in: café"),
    ("dotted_name_bad_last_part", rec(name="ns.1R"), "Illegal initial character: 1R"),
    ("empty_name", rec(name=""), "Empty name"),
    (
        "namespace_invalid",
        rec(field("f", '"string"'), name="myrecord", extra=',"namespace":"a-bad.namespace"'),
        'Namespace part "a-bad" is invalid: Illegal character in: a-bad',
    ),
    ("namespace_empty_part", rec(extra=',"namespace":"a..b"'), 'Namespace part "" is invalid'),
    ("dotted_name_bad_namespace", rec(name="1a.R"), 'Namespace part "1a" is invalid'),
    ("field_name_invalid", rec(field("my-field", '"int"')), "Illegal character in: my-field"),
    ("field_name_empty", rec(field("", '"int"')), "Empty name"),
    ("enum_symbol_invalid", '{"type":"enum","name":"E","symbols":["ok","1bad"]}', "1bad"),
    ("alias_invalid", rec(extra=',"aliases":["bad-alias"]'), "Illegal character in: bad-alias"),
    ("aliases_not_array", rec(extra=',"aliases":"X"'), "aliases not an array:"),
    ("alias_not_string", rec(extra=',"aliases":[1]'), "alias not a string: 1"),
    ("field_aliases_not_array", rec(field("f", '"int"', ',"aliases":"x"')), "aliases not an array"),
    (
        "redefined_type",
        rec(
            field("a", '{"type":"enum","name":"E","symbols":["A"]}'),
            field("b", '{"type":"enum","name":"E","symbols":["B"]}'),
        ),
        "Can't redefine: E",
    ),
    ("record_redefines_itself", rec(field("a", rec(name="R"))), "Can't redefine: R"),
    (
        "duplicate_field",
        rec(field("x", '"int"'), field("x", '"string"'), name="myrecord"),
        "Duplicate field x in record myrecord: x type:STRING pos:1 and x type:INT pos:0.",
    ),
    (
        "duplicate_enum_symbol",
        '{"type":"enum","name":"E","symbols":["A","B","A"]}',
        "Duplicate enum symbol: A",
    ),
    (
        "enum_default_not_a_symbol",
        '{"type":"enum","name":"E","symbols":["A","B"],"default":"C"}',
        "The Enum Default: C is not in the enum symbol set: [A, B]",
    ),
    ("nested_union", '["null",["int","string"]]', "Nested union:"),
    ("duplicate_primitive_in_union", '["string","int","string"]', "Duplicate in union:string"),
    (
        "duplicate_array_in_union",
        '[{"type":"array","items":"int"},{"type":"array","items":"string"}]',
        "Duplicate in union:array",
    ),
    (
        "duplicate_map_in_union",
        '[{"type":"map","values":"int"},{"type":"map","values":"string"}]',
        "Duplicate in union:map",
    ),
    (
        "duplicate_named_in_union",
        '[{"type":"record","name":"A","fields":[]},"A"]',
        "Duplicate in union:A",
    ),
    (
        "record_named_after_primitive",
        '{"type":"record","name":"int","fields":[]}',
        "Schemas may not be named after primitives: int",
    ),
    (
        "invalid_default_null_for_string",
        rec(field("f", '"string"', ',"default":null'), name="myrecord"),
        'Invalid default for field f: null not a "string"',
    ),
    (
        "invalid_default_string_for_int",
        rec(field("f", '"int"', ',"default":"foo"')),
        'Invalid default for field f: "foo" not a "int"',
    ),
    ("invalid_default_float_for_int", rec(field("f", '"int"', ',"default":1.5')), "1.5 not a"),
    (
        "invalid_default_int_overflow",
        rec(field("f", '"int"', ',"default":2147483648')),
        "Invalid default for field f: 2147483648",
    ),
    (
        "invalid_default_long_overflow",
        rec(field("f", '"long"', ',"default":9223372036854775808')),
        "Invalid default for field f",
    ),
    ("invalid_default_bool_for_int", rec(field("f", '"int"', ',"default":true')), "true not a"),
    ("invalid_default_for_boolean", rec(field("f", '"boolean"', ',"default":0')), "0 not a"),
    ("invalid_default_for_bytes", rec(field("f", '"bytes"', ',"default":[1]')), "[1] not a"),
    ("invalid_default_for_null", rec(field("f", '"null"', ',"default":"null"')), '"null" not a'),
    (
        "invalid_default_array_element",
        rec(field("f", '{"type":"array","items":"int"}', ',"default":[1,"x"]')),
        'Invalid default for field f: [1,"x"] not a {"type":"array","items":"int"}',
    ),
    (
        "invalid_default_map_value",
        rec(field("f", '{"type":"map","values":"int"}', ',"default":{"a":"b"}')),
        "Invalid default for field f",
    ),
    (
        "invalid_default_record_missing_field",
        rec(
            field(
                "f",
                '{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]}',
                ',"default":{}',
            )
        ),
        "Invalid default for field f: {} not a",
    ),
    (
        "invalid_default_enum_not_string",
        rec(field("f", '{"type":"enum","name":"E","symbols":["A"]}', ',"default":1')),
        "Invalid default for field f: 1 not a",
    ),
    (
        "invalid_default_string_for_double",
        rec(field("f", '"double"', ',"default":"abc"')),
        'Invalid default for field f: "abc" is not a number',
    ),
    (
        "recursive_record_default_cannot_be_checked",
        rec(field("f", '"R"', ',"default":{}')),
        "inside its own definition",
    ),
    (
        "invalid_order",
        rec(field("f", '"int"', ',"order":"sideways"')),
        'Invalid order for field f: "sideways"',
    ),
]


@pytest.mark.parametrize(("text", "fragment"), [pytest.param(t, f, id=i) for i, t, f in INVALID])
def test_invalid_schemas_rejected_with_reason(text: str, fragment: str) -> None:
    with pytest.raises(InvalidSchemaError) as info:
        AVRO.parse(text)
    assert fragment in str(info.value)


def test_non_string_text_rejected() -> None:
    with pytest.raises(InvalidSchemaError):
        AVRO.parse(b'"int"')  # type: ignore[arg-type]


def test_deeply_nested_schema_rejected_cleanly() -> None:
    text = '{"type":"array","items":' * 5000 + '"int"' + "}" * 5000
    with pytest.raises(InvalidSchemaError):
        AVRO.parse(text)


# ---- strict vs lenient ---------------------------------------------------------------------

# Rejected in strict mode, accepted in lenient mode (stored schemas).
STRICT_ONLY: list[tuple[str, str]] = [
    ("bad_record_name", rec(name="a-b")),
    ("non_ascii_name", rec(name="café")),
    ("bad_namespace", rec(extra=',"namespace":"a-bad.namespace"')),
    ("bad_field_name", rec(field("1f", '"int"'))),
    ("bad_enum_symbol", '{"type":"enum","name":"E","symbols":["a b"]}'),
    ("bad_alias", rec(extra=',"aliases":["x-y"]')),
    ("bad_default_null_string", rec(field("f", '"string"', ',"default":null'))),
    ("bad_default_union", rec(field("f", '["null","int"]', ',"default":"x"'))),
    ("bad_default_int", rec(field("f", '"int"', ',"default":"x"'))),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in STRICT_ONLY])
def test_strict_rejects_lenient_accepts(text: str) -> None:
    with pytest.raises(InvalidSchemaError):
        AVRO.parse(text, strict=True)
    parsed = AVRO.parse(text, strict=False)
    assert parsed.canonical()  # printable
    assert AVRO.parse(parsed.canonical(), strict=False).canonical() == parsed.canonical()


def test_lenient_keeps_invalid_default_verbatim() -> None:
    parsed = AVRO.parse(rec(field("f", '"string"', ',"default":null')), strict=False)
    assert parsed.canonical() == (
        '{"type":"record","name":"R","fields":[{"name":"f","type":"string","default":null}]}'
    )


def test_lenient_ignores_invalid_logical_type_like_avro_java() -> None:
    parsed = AVRO.parse('{"type":"bytes","logicalType":"decimal","precision":0}', strict=False)
    assert parsed.root.logical is None
    assert parsed.canonical() == '{"type":"bytes","logicalType":"decimal","precision":0}'


# Structural errors are errors in both modes.
BOTH_MODES: list[tuple[str, str]] = [
    ("undefined_name", '"Nope"'),
    ("duplicate_field", rec(field("x", '"int"'), field("x", '"int"'))),
    ("duplicate_symbol", '{"type":"enum","name":"E","symbols":["A","A"]}'),
    ("redefine", '[{"type":"fixed","name":"F","size":1},{"type":"fixed","name":"F","size":2}]'),
    ("nested_union", '[["int"]]'),
    ("missing_fields", '{"type":"record","name":"R"}'),
    ("not_json", "{"),
    ("bad_order", rec(field("f", '"int"', ',"order":5'))),
]


@pytest.mark.parametrize("text", [pytest.param(t, id=i) for i, t in BOTH_MODES])
@pytest.mark.parametrize("strict", [True, False])
def test_structural_errors_in_both_modes(text: str, strict: bool) -> None:
    with pytest.raises(InvalidSchemaError):
        AVRO.parse(text, strict=strict)


# ---- references ----------------------------------------------------------------------------

ADDRESS = Dependency(
    "com.acme.Address",
    '{"type":"record","name":"Address","namespace":"com.acme","fields":'
    '[{"name":"street","type":"string"}]}',
)


def test_main_schema_uses_referenced_type() -> None:
    parsed = AVRO.parse(
        rec(
            field("home", '"com.acme.Address"'),
            field("work", '["null","com.acme.Address"]', ',"default":null'),
        ),
        [ADDRESS],
    )
    root = parsed.root
    assert isinstance(root, RecordSchema)
    home = root.fields[0].schema
    assert isinstance(home, RecordSchema) and home.fullname == "com.acme.Address"


def test_reference_resolved_in_enclosing_namespace() -> None:
    text = rec(field("a", '"Address"'), extra=',"namespace":"com.acme"')
    assert AVRO.parse(text, [ADDRESS]).canonical() == (
        '{"type":"record","name":"R","namespace":"com.acme","fields":'
        '[{"name":"a","type":"Address"}]}'
    )


def test_missing_reference_is_undefined_name() -> None:
    with pytest.raises(InvalidSchemaError) as info:
        AVRO.parse(rec(field("home", '"com.acme.Address"')))
    assert '"com.acme.Address" is not a defined name' in str(info.value)


def test_redefining_a_referenced_type_is_an_error() -> None:
    with pytest.raises(InvalidSchemaError) as info:
        AVRO.parse(ADDRESS.schema, [ADDRESS])
    assert str(info.value) == "Can't redefine: com.acme.Address"


def test_invalid_reference_reported_with_its_name() -> None:
    with pytest.raises(InvalidSchemaError) as info:
        AVRO.parse('"int"', [Dependency("bad.Ref", "{oops")])
    assert str(info.value).startswith("Invalid reference bad.Ref: Invalid JSON")


def test_references_parsed_leniently() -> None:
    legacy = Dependency(
        "Legacy",
        '{"type":"record","name":"Legacy","fields":[{"name":"f","type":"string","default":null}]}',
    )
    parsed = AVRO.parse(rec(field("l", '"Legacy"')), [legacy], strict=True)
    assert (
        parsed.canonical() == '{"type":"record","name":"R","fields":[{"name":"l","type":"Legacy"}]}'
    )


# ---- performance ---------------------------------------------------------------------------


def big_record(count: int) -> str:
    fields: list[dict[str, Any]] = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            fields.append({"name": f"f{i}", "type": "int", "default": i})
        elif kind == 1:
            fields.append({"name": f"f{i}", "type": ["null", "string"], "default": None})
        elif kind == 2:
            fields.append({"name": f"f{i}", "type": {"type": "array", "items": "long"}})
        elif kind == 3:
            fields.append(
                {"name": f"f{i}", "type": {"type": "enum", "name": f"E{i}", "symbols": ["A", "B"]}}
            )
        else:
            fields.append({"name": f"f{i}", "type": "double", "doc": "a value"})
    return json.dumps({"type": "record", "name": "Big", "namespace": "perf", "fields": fields})


def test_500_field_record_parses_prints_and_checks_in_linear_work() -> None:
    """Parse, print and check of a record cost work linear in its fields, counted in Python
    calls (~52 per field today), not timed: a unit test on a loaded machine cannot bound
    wall-clock time (the speed is measured in bench/)."""

    def work(fields: int) -> int:
        text = big_record(fields)

        def parse_print_check() -> None:
            parsed = AVRO.parse(text)
            assert parsed.canonical().count('"name":"f') == fields
            assert not AVRO.compatibility_errors(parsed, AVRO.parse(text))

        return python_calls(parse_print_check)

    assert_linear(work, 500, per_item=150)
