"""Canonical (Avro Java ``Schema.toString``), normalised (Confluent ``normalize``) and resolved
texts of Avro schemas, as exact strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from registry.formats.avro import AvroFormat
from registry.formats.avro.printer import java_double, java_float, json_string
from registry.formats.base import Dependency

AVRO = AvroFormat()


def canonical(text: str, deps: tuple[Dependency, ...] = ()) -> str:
    return AVRO.parse(text, deps).canonical()


def normalized(text: str, deps: tuple[Dependency, ...] = ()) -> str:
    return AVRO.parse(text, deps).normalized()


# (case id, input text, expected canonical text)
CANONICAL_CASES: list[tuple[str, str, str]] = [
    ("primitive_object_form_collapses", '{   "type":   "string"}', '"string"'),
    ("primitive_name", '"int"', '"int"'),
    ("primitive_whitespace", '  "null"  ', '"null"'),
    ("primitive_reserved_attrs_dropped", '{"type":"long","name":"x","doc":"d"}', '"long"'),
    (
        "primitive_with_logical_type_kept",
        '{"type":"int","logicalType":"date"}',
        '{"type":"int","logicalType":"date"}',
    ),
    (
        "primitive_custom_props_in_text_order",
        '{"type":"string","z":1,"a":{"y":true,"b":null}}',
        '{"type":"string","z":1,"a":{"y":true,"b":null}}',
    ),
    (
        "decimal_bytes_props_in_text_order",
        '{"type":"bytes","scale":2,"precision":4,"logicalType":"decimal"}',
        '{"type":"bytes","scale":2,"precision":4,"logicalType":"decimal"}',
    ),
    (
        "record_key_order",
        '{"aliases":["Old"],"custom":1,"fields":[],"doc":"d","namespace":"ns","name":"R",'
        '"type":"record"}',
        '{"type":"record","name":"R","namespace":"ns","doc":"d","fields":[],"custom":1,'
        '"aliases":["Old"]}',
    ),
    (
        "field_key_order",
        '{"type":"record","name":"R","fields":[{"p":true,"aliases":["x"],"order":"descending",'
        '"default":1,"doc":"d","type":"int","name":"f"}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","doc":"d","default":1,'
        '"order":"descending","aliases":["x"],"p":true}]}',
    ),
    (
        "field_type_object_form_collapses",
        '{"type":"record","name":"myrecord","fields":[{"type":{"type":"int"},"name":"field0"}]}',
        '{"type":"record","name":"myrecord","fields":[{"name":"field0","type":"int"}]}',
    ),
    (
        "field_order_ascending_dropped",
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","order":"ascending"}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int"}]}',
    ),
    (
        "field_order_upper_case_accepted_lower_case_printed",
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","order":"IGNORE"}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","order":"ignore"}]}',
    ),
    (
        "error_type_kept",
        '{"type":"error","name":"Oops","fields":[{"name":"m","type":"string"}]}',
        '{"type":"error","name":"Oops","fields":[{"name":"m","type":"string"}]}',
    ),
    (
        "dotted_name_overrides_namespace",
        '{"type":"record","name":"a.b.R","namespace":"ignored","fields":[]}',
        '{"type":"record","name":"R","namespace":"a.b","fields":[]}',
    ),
    (
        "empty_namespace_is_null_namespace",
        '{"type":"record","name":"R","namespace":"","fields":[]}',
        '{"type":"record","name":"R","fields":[]}',
    ),
    (
        "nested_record_inherits_namespace",
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}}]}',
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}}]}',
    ),
    (
        "nested_record_other_namespace_printed",
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","namespace":"b","fields":[]}}]}',
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","namespace":"b","fields":[]}}]}',
    ),
    (
        "nested_record_same_namespace_explicit_not_printed",
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","namespace":"a","fields":[]}}]}',
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","fields":[]}}]}',
    ),
    (
        "nested_null_namespace_inside_namespace_printed_as_empty",
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","namespace":"","fields":[]}}]}',
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"record","name":"Inner","namespace":"","fields":[]}}]}',
    ),
    (
        "nested_dotted_name_in_other_namespace",
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"enum","name":"x.y.E","symbols":["A"]}}]}',
        '{"type":"record","name":"Outer","namespace":"a","fields":[{"name":"in","type":'
        '{"type":"enum","name":"E","namespace":"x.y","symbols":["A"]}}]}',
    ),
    (
        "three_level_namespaces",
        '{"type":"record","name":"A","namespace":"n1","fields":[{"name":"b","type":'
        '{"type":"record","name":"B","namespace":"n2","fields":[{"name":"c","type":'
        '{"type":"record","name":"C","fields":[]}},{"name":"c2","type":"C"},'
        '{"name":"a","type":"n1.A"}]}}]}',
        '{"type":"record","name":"A","namespace":"n1","fields":[{"name":"b","type":'
        '{"type":"record","name":"B","namespace":"n2","fields":[{"name":"c","type":'
        '{"type":"record","name":"C","fields":[]}},{"name":"c2","type":"C"},'
        '{"name":"a","type":"n1.A"}]}}]}',
    ),
    (
        "reference_same_namespace_short_other_namespace_full",
        '{"type":"record","name":"R","namespace":"a","fields":['
        '{"name":"e","type":{"type":"enum","name":"E","namespace":"b","symbols":["X"]}},'
        '{"name":"e2","type":"b.E"},'
        '{"name":"f","type":{"type":"fixed","name":"F","size":2}},'
        '{"name":"f2","type":"a.F"}]}',
        '{"type":"record","name":"R","namespace":"a","fields":['
        '{"name":"e","type":{"type":"enum","name":"E","namespace":"b","symbols":["X"]}},'
        '{"name":"e2","type":"b.E"},'
        '{"name":"f","type":{"type":"fixed","name":"F","size":2}},'
        '{"name":"f2","type":"F"}]}',
    ),
    (
        "reference_named_like_a_type_written_full",
        '{"type":"record","name":"R","namespace":"ns","fields":['
        '{"name":"a","type":{"type":"fixed","name":"map","size":1}},'
        '{"name":"b","type":"map"}]}',
        '{"type":"record","name":"R","namespace":"ns","fields":['
        '{"name":"a","type":{"type":"fixed","name":"map","size":1}},'
        '{"name":"b","type":"ns.map"}]}',
    ),
    (
        "recursive_record_self_reference",
        '{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},'
        '{"name":"next","type":["null","Node"],"default":null}]}',
        '{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},'
        '{"name":"next","type":["null","Node"],"default":null}]}',
    ),
    (
        "type_attribute_naming_a_defined_type",
        '{"type":"record","name":"R","fields":[{"name":"a","type":'
        '{"type":"enum","name":"E","symbols":["X"]}},{"name":"b","type":{"type":"E","x":1}}]}',
        '{"type":"record","name":"R","fields":[{"name":"a","type":'
        '{"type":"enum","name":"E","symbols":["X"]}},{"name":"b","type":"E"}]}',
    ),
    (
        "enum_key_order",
        '{"x":"y","aliases":["F"],"default":"A","symbols":["A","B"],"doc":"d","name":"E",'
        '"type":"enum"}',
        '{"type":"enum","name":"E","doc":"d","symbols":["A","B"],"default":"A","x":"y",'
        '"aliases":["F"]}',
    ),
    (
        "fixed_key_order",
        '{"aliases":["G"],"size":16,"logicalType":"uuid","name":"F","namespace":"n",'
        '"type":"fixed","doc":"d"}',
        '{"type":"fixed","name":"F","namespace":"n","doc":"d","size":16,"logicalType":"uuid",'
        '"aliases":["G"]}',
    ),
    (
        "fixed_decimal",
        '{"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":10,"scale":2}',
        '{"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":10,"scale":2}',
    ),
    (
        "duration_on_fixed",
        '{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}',
        '{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}',
    ),
    (
        "array_and_map_with_props",
        '{"type":"array","x":1,"items":{"type":"map","values":"long","y":"z"}}',
        '{"type":"array","items":{"type":"map","values":"long","y":"z"},"x":1}',
    ),
    (
        "union_members_collapse",
        '["null",{"type":"string"},{"type":"array","items":{"type":"int"}}]',
        '["null","string",{"type":"array","items":"int"}]',
    ),
    (
        "aliases_relative_to_own_namespace",
        '{"type":"record","name":"R","namespace":"a","aliases":["a.Old","b.Other","Plain"],'
        '"fields":[]}',
        '{"type":"record","name":"R","namespace":"a","fields":[],'
        '"aliases":["Old","b.Other","Plain"]}',
    ),
    (
        "aliases_deduplicated",
        '{"type":"record","name":"R","aliases":["X","X"],"fields":[{"name":"f","type":"int",'
        '"aliases":["y","y","z"]}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","aliases":["y","z"]}],'
        '"aliases":["X"]}',
    ),
    (
        "field_aliases_printed_verbatim",
        '{"type":"record","name":"R","namespace":"a","fields":[{"name":"f","type":"int",'
        '"aliases":["a.x","old"]}]}',
        '{"type":"record","name":"R","namespace":"a","fields":[{"name":"f","type":"int",'
        '"aliases":["a.x","old"]}]}',
    ),
    (
        "doc_escapes_and_non_ascii",
        '{"type":"record","name":"R","doc":"tab\\there \\"q\\" back\\\\slash\\nnl \\u0001 '
        '\\u001f slash/ \\u00e9 \\u4e2d \\ud83d\\ude00 \\u007f","fields":[]}',
        '{"type":"record","name":"R","doc":"tab\\there \\"q\\" back\\\\slash\\nnl \\u0001 '
        '\\u001F slash/ é 中 😀 \x7f","fields":[]}',
    ),
    (
        "doc_escapes_b_f_r",
        '{"type":"enum","name":"E","doc":"\\b\\f\\r\\u000b","symbols":[]}',
        '{"type":"enum","name":"E","doc":"\\b\\f\\r\\u000B","symbols":[]}',
    ),
    (
        "field_doc_non_ascii",
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","doc":"größe"}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","doc":"größe"}]}',
    ),
    (
        "non_string_doc_and_namespace_ignored",
        '{"type":"record","name":"R","namespace":5,"doc":7,"fields":[]}',
        '{"type":"record","name":"R","fields":[]}',
    ),
    (
        "duplicate_json_keys_last_value_first_position",
        '{"type":"string","x":1,"type":"int","x":2}',
        '{"type":"int","x":2}',
    ),
    ("json_comments_allowed", '/* c */ {"type": // t\n "int"}  ', '"int"'),
    (
        "record_level_reserved_like_keys_are_props",
        '{"type":"record","name":"R","fields":[],"default":{},"order":"x","logicalType":"y"}',
        '{"type":"record","name":"R","fields":[],"default":{},"order":"x","logicalType":"y"}',
    ),
    (
        "field_props_keep_order_and_values",
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","b":[1,{"z":0,"a":1}],'
        '"a":"s","logicalType":"date"}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","b":[1,{"z":0,"a":1}],'
        '"a":"s","logicalType":"date"}]}',
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(t, e, id=i) for i, t, e in CANONICAL_CASES],
)
def test_canonical(text: str, expected: str) -> None:
    assert canonical(text) == expected


def test_canonical_is_idempotent() -> None:
    for _, _text, expected in CANONICAL_CASES:
        assert canonical(expected) == expected


def _field(type_: str, default: str) -> str:
    field = f'{{"name":"f","type":{type_},"default":{default}}}'
    return f'{{"type":"record","name":"R","fields":[{field}]}}'


# (case id, field type, default as written, default as printed)
DEFAULT_CASES: list[tuple[str, str, str, str]] = [
    ("int", '"int"', "10", "10"),
    ("negative_zero_int", '"long"', "-0", "0"),
    ("long_large", '"long"', "9223372036854775807", "9223372036854775807"),
    ("double_one", '"double"', "1.0", "1.0"),
    ("double_int_literal_stays_int", '"double"', "1", "1"),
    ("double_exponent", '"double"', "1e3", "1000.0"),
    ("double_small", '"double"', "0.00001", "1.0E-5"),
    ("double_thousandth", '"double"', "0.001", "0.001"),
    ("double_large", '"double"', "12345678.9", "1.23456789E7"),
    ("double_below_1e7", '"double"', "9999999.0", "9999999.0"),
    ("double_negative", '"double"', "-2.5E-10", "-2.5E-10"),
    ("double_string_becomes_number", '"double"', '"1.5"', "1.5"),
    ("float_string_becomes_number", '"float"', '"2"', "2.0"),
    ("double_string_nan", '"double"', '"NaN"', '"NaN"'),
    ("double_string_infinity", '"double"', '"-Infinity"', '"-Infinity"'),
    ("string_default", '"string"', '"a\\"b"', '"a\\"b"'),
    ("bytes_default_unicode_escape", '"bytes"', '"\\u00ff"', '"ÿ"'),
    ("boolean", '"boolean"', "true", "true"),
    ("null_in_union", '["null","int"]', "null", "null"),
    ("array", '{"type":"array","items":"int"}', "[ 1, 2 ]", "[1,2]"),
    ("map_key_order_kept", '{"type":"map","values":"int"}', '{"b":1,"a":2}', '{"b":1,"a":2}'),
    (
        "record_default",
        '{"type":"record","name":"S","fields":[{"name":"x","type":"int"}]}',
        '{"x": 1}',
        '{"x":1}',
    ),
]


@pytest.mark.parametrize(
    ("type_", "default", "printed"),
    [pytest.param(t, d, p, id=i) for i, t, d, p in DEFAULT_CASES],
)
def test_canonical_reprints_defaults(type_: str, default: str, printed: str) -> None:
    parsed = AVRO.parse(_field(type_, default))
    assert parsed.canonical() == _field(canonical(type_), printed)


# ---- references ----------------------------------------------------------------------------

SUB1 = (
    '{"type":"record","name":"Subrecord1","namespace":"otherns","fields":'
    '[{"name":"field1","type":"string"}]}'
)
SUB2 = (
    '{"type":"record","name":"Subrecord2","namespace":"otherns","fields":'
    '[{"name":"field2","type":"string"}]}'
)
DEPS = (Dependency("otherns.Subrecord1", SUB1), Dependency("otherns.Subrecord2", SUB2))
MAIN = (
    '{"type":"record","name":"myrecord","fields":[{"type":{"type":"int"},"name":"field0"},'
    '{"name":"field1","type":"otherns.Subrecord1"},{"name":"field2","type":"otherns.Subrecord2"}],'
    '"extraMetadata": {"a": 1, "b": 2}}'
)
MAIN_SWAPPED = (
    '{"type":"record","name":"myrecord","fields":[{"type":"int","name":"field0"},'
    '{"name":"field1","type":"otherns.Subrecord1"},{"name":"field2","type":"otherns.Subrecord2"}],'
    '"extraMetadata": {"b": 2, "a": 1}}'
)


def test_referenced_types_printed_by_name_in_canonical() -> None:
    assert canonical(MAIN, DEPS) == (
        '{"type":"record","name":"myrecord","fields":[{"name":"field0","type":"int"},'
        '{"name":"field1","type":"otherns.Subrecord1"},'
        '{"name":"field2","type":"otherns.Subrecord2"}],"extraMetadata":{"a":1,"b":2}}'
    )


def test_referenced_types_inlined_in_resolved_format() -> None:
    parsed = AVRO.parse(MAIN, DEPS)
    assert parsed.formatted("resolved") == (
        '{"type":"record","name":"myrecord","fields":[{"name":"field0","type":"int"},'
        '{"name":"field1","type":{"type":"record","name":"Subrecord1","namespace":"otherns",'
        '"fields":[{"name":"field1","type":"string"}]}},'
        '{"name":"field2","type":{"type":"record","name":"Subrecord2","namespace":"otherns",'
        '"fields":[{"name":"field2","type":"string"}]}}],"extraMetadata":{"a":1,"b":2}}'
    )


@pytest.mark.parametrize("fmt", [None, "", "default", "serialized", "RESOLVED"])
def test_other_formats_give_canonical(fmt: str | None) -> None:
    parsed = AVRO.parse(MAIN, DEPS)
    assert parsed.formatted(fmt) == parsed.canonical()


def test_reference_in_same_namespace_printed_short() -> None:
    text = (
        '{"type":"record","name":"Main","namespace":"otherns","fields":'
        '[{"name":"s","type":"Subrecord1"}]}'
    )
    assert canonical(text, DEPS[:1]) == (
        '{"type":"record","name":"Main","namespace":"otherns","fields":'
        '[{"name":"s","type":"Subrecord1"}]}'
    )


def test_main_schema_that_is_only_a_reference() -> None:
    parsed = AVRO.parse('"otherns.Subrecord1"', DEPS[:1])
    assert parsed.canonical() == '"otherns.Subrecord1"'
    assert parsed.formatted("resolved") == (
        '{"type":"record","name":"Subrecord1","namespace":"otherns","fields":'
        '[{"name":"field1","type":"string"}]}'
    )


def test_type_nested_inside_a_reference_is_inlined_at_first_use() -> None:
    # Avro only knows the *top-level* referenced schemas when printing: a type defined inside a
    # reference is written in full the first time the main schema uses it.
    dep = Dependency(
        "ns.Outer",
        '{"type":"record","name":"Outer","namespace":"ns","fields":[{"name":"i","type":'
        '{"type":"enum","name":"Inner","symbols":["A"]}}]}',
    )
    text = (
        '{"type":"record","name":"M","namespace":"ns","fields":[{"name":"o","type":"Outer"},'
        '{"name":"i","type":"Inner"},{"name":"j","type":"Inner"}]}'
    )
    assert canonical(text, (dep,)) == (
        '{"type":"record","name":"M","namespace":"ns","fields":[{"name":"o","type":"Outer"},'
        '{"name":"i","type":{"type":"enum","name":"Inner","symbols":["A"]}},'
        '{"name":"j","type":"Inner"}]}'
    )


def test_transitive_references() -> None:
    base = Dependency("a.Base", '{"type":"enum","name":"a.Base","symbols":["X"]}')
    mid = Dependency(
        "a.Mid",
        '{"type":"record","name":"Mid","namespace":"a","fields":[{"name":"b","type":"Base"}]}',
    )
    text = '{"type":"record","name":"b.Top","fields":[{"name":"m","type":"a.Mid"}]}'
    parsed = AVRO.parse(text, (base, mid))
    assert parsed.canonical() == (
        '{"type":"record","name":"Top","namespace":"b","fields":[{"name":"m","type":"a.Mid"}]}'
    )
    assert parsed.formatted("resolved") == (
        '{"type":"record","name":"Top","namespace":"b","fields":[{"name":"m","type":'
        '{"type":"record","name":"Mid","namespace":"a","fields":[{"name":"b","type":'
        '{"type":"enum","name":"Base","symbols":["X"]}}]}}]}'
    )


# ---- normalisation -------------------------------------------------------------------------


def test_normalization_sorts_custom_properties_confluent_test() -> None:
    # RestApiTest.testSchemaNormalization: both texts normalise to the same schema.
    expected = (
        '{"type":"record","name":"myrecord","fields":[{"name":"field0","type":"int"},'
        '{"name":"field1","type":"otherns.Subrecord1"},'
        '{"name":"field2","type":"otherns.Subrecord2"}],"extraMetadata":{"a":1,"b":2}}'
    )
    assert normalized(MAIN, DEPS) == expected
    assert normalized(MAIN_SWAPPED, DEPS) == expected
    assert canonical(MAIN_SWAPPED, DEPS) != expected


def test_normalization_keeps_doc_confluent_test() -> None:
    # AvroSchemaTest.testNormalization
    text = (
        '{"type":"record","name":"myrecord","doc":"hi\\"there","fields":'
        '[{"type":"string","name":"f1","doc":"bye\\"now"}]}'
    )
    expected = (
        '{"type":"record","name":"myrecord","doc":"hi\\"there","fields":'
        '[{"name":"f1","type":"string","doc":"bye\\"now"}]}'
    )
    assert canonical(text) == expected
    assert normalized(text) == expected


def test_normalization_preserves_metadata_for_primitive_types_confluent_test() -> None:
    # AvroSchemaTest.testNormalizationPreservesMetadataForPrimitiveTypes
    text = (
        '{"connect.name": "some.scope.Envelope","fields": [{"default": null,"name": "before",'
        '"type": ["null",{"connect.name": "some.scope.Value","fields": [{"name": "created_at",'
        '"type": {"connect.name": "io.debezium.time.Timestamp","connect.version": 1,'
        '"type": "long"}},{"name":"normal_long","type":"long"}],"name": "Value",'
        '"type": "record"}]},{"default": null,"name": "after","type": ["null","Value"]}],'
        '"name": "Envelope","namespace": "some.scope","type": "record"}'
    )
    expected = (
        '{"type":"record","name":"Envelope","namespace":"some.scope","fields":[{"name":"before",'
        '"type":["null",{"type":"record","name":"Value","fields":[{"name":"created_at",'
        '"type":{"type":"long","connect.name":"io.debezium.time.Timestamp",'
        '"connect.version":1}},{"name":"normal_long","type":"long"}],'
        '"connect.name":"some.scope.Value"}],"default":null},{"name":"after",'
        '"type":["null","Value"],"default":null}],"connect.name":"some.scope.Envelope"}'
    )
    assert canonical(text) == expected
    assert normalized(text) == expected


# (case id, input, expected normalised canonical text)
NORMALIZED_CASES: list[tuple[str, str, str]] = [
    (
        "record_props_sorted",
        '{"type":"record","name":"R","fields":[],"z":1,"a":{"d":1,"c":[{"y":1,"x":2}]}}',
        '{"type":"record","name":"R","fields":[],"a":{"c":[{"x":2,"y":1}],"d":1},"z":1}',
    ),
    (
        "field_props_sorted_and_aliases_sorted",
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","z":true,"a":false,'
        '"aliases":["z","a"],"order":"descending","doc":"d"}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","doc":"d",'
        '"order":"descending","aliases":["a","z"],"a":false,"z":true}]}',
    ),
    (
        "namespace_folded_then_printed_again",
        '{"type":"record","namespace":"a.b","name":"R","fields":[{"name":"e","type":'
        '{"type":"enum","name":"E","symbols":["X","Y"],"default":"X","doc":"d","p":1}},'
        '{"name":"e2","type":"E"}]}',
        '{"type":"record","name":"R","namespace":"a.b","fields":[{"name":"e","type":'
        '{"type":"enum","name":"E","doc":"d","symbols":["X","Y"],"default":"X","p":1}},'
        '{"name":"e2","type":"E"}]}',
    ),
    (
        "named_type_aliases_sorted_by_full_name",
        '{"type":"record","name":"R","namespace":"n","aliases":["Z","b.A"],"fields":[]}',
        '{"type":"record","name":"R","namespace":"n","fields":[],"aliases":["b.A","Z"]}',
    ),
    (
        "empty_record_doc_dropped_field_doc_kept",
        '{"type":"record","name":"R","doc":"","fields":[{"name":"f","type":"int","doc":""}]}',
        '{"type":"record","name":"R","fields":[{"name":"f","type":"int","doc":""}]}',
    ),
    (
        "decimal_logical_attributes_first",
        '{"type":"bytes","scale":2,"precision":4,"a":1,"logicalType":"decimal"}',
        '{"type":"bytes","logicalType":"decimal","precision":4,"scale":2,"a":1}',
    ),
    (
        "decimal_zero_scale_moves_after_sorted_props",
        '{"type":"bytes","logicalType":"decimal","precision":4,"scale":0,"a":1}',
        '{"type":"bytes","logicalType":"decimal","precision":4,"a":1,"scale":0}',
    ),
    (
        "fixed_decimal_logical_attributes_after_size",
        '{"type":"fixed","name":"D","x":1,"scale":1,"logicalType":"decimal","precision":3,'
        '"size":4}',
        '{"type":"fixed","name":"D","size":4,"logicalType":"decimal","precision":3,"scale":1,'
        '"x":1}',
    ),
    (
        "unknown_logical_type_is_a_plain_sorted_prop",
        '{"type":"fixed","name":"Dur","z":0,"logicalType":"duration","size":12}',
        '{"type":"fixed","name":"Dur","size":12,"logicalType":"duration","z":0}',
    ),
    (
        "timestamp_logical_type",
        '{"type":"long","x":"y","logicalType":"timestamp-millis"}',
        '{"type":"long","logicalType":"timestamp-millis","x":"y"}',
    ),
    (
        "array_and_map_props_sorted",
        '{"type":"array","items":{"type":"map","values":"int","b":1,"a":2},"d":0,"c":1}',
        '{"type":"array","items":{"type":"map","values":"int","a":2,"b":1},"c":1,"d":0}',
    ),
    (
        "double_default_int_literal_printed_as_double",
        '{"type":"record","name":"R","fields":[{"name":"d","type":"double","default":1},'
        '{"name":"f","type":"float","default":0.1},{"name":"l","type":"long","default":5}]}',
        '{"type":"record","name":"R","fields":[{"name":"d","type":"double","default":1.0},'
        '{"name":"f","type":"float","default":0.1},{"name":"l","type":"long","default":5}]}',
    ),
    (
        "map_and_record_defaults_sorted",
        '{"type":"record","name":"R","fields":[{"name":"m","type":{"type":"map","values":"int"},'
        '"default":{"b":1,"a":2}},{"name":"s","type":{"type":"record","name":"S","fields":'
        '[{"name":"y","type":"int"},{"name":"x","type":"double"}]},"default":{"y":1,"x":2}}]}',
        '{"type":"record","name":"R","fields":[{"name":"m","type":{"type":"map","values":"int"},'
        '"default":{"a":2,"b":1}},{"name":"s","type":{"type":"record","name":"S","fields":'
        '[{"name":"y","type":"int"},{"name":"x","type":"double"}]},"default":{"x":2.0,"y":1}}]}',
    ),
    (
        "union_default_follows_first_branch",
        '{"type":"record","name":"R","fields":[{"name":"u","type":["double","null"],"default":3}]}',
        '{"type":"record","name":"R","fields":[{"name":"u","type":["double","null"],'
        '"default":3.0}]}',
    ),
    (
        "null_namespace_type_inside_namespace_joins_it",
        # Confluent writes the nested type's full name "In" without a namespace attribute, so
        # parsing the normalised text puts it in the enclosing namespace.
        '{"type":"record","name":"Outer","namespace":"ns","fields":[{"name":"f","type":'
        '{"type":"record","name":"In","namespace":"","fields":[]}}]}',
        '{"type":"record","name":"Outer","namespace":"ns","fields":[{"name":"f","type":'
        '{"type":"record","name":"In","fields":[]}}]}',
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(t, e, id=i) for i, t, e in NORMALIZED_CASES],
)
def test_normalized(text: str, expected: str) -> None:
    assert normalized(text) == expected


def test_normalized_is_stable() -> None:
    for _, _, expected in NORMALIZED_CASES:
        assert normalized(expected) == expected


def test_normalized_prop_order_insensitive() -> None:
    a = '{"type":"record","name":"R","fields":[{"name":"f","type":"int","x":1,"y":2}],"p":1,"q":2}'
    b = '{"q":2,"fields":[{"y":2,"name":"f","x":1,"type":"int"}],"p":1,"name":"R","type":"record"}'
    assert canonical(a) != canonical(b)
    assert normalized(a) == normalized(b)


def test_normalized_keeps_references_by_name() -> None:
    text = '{"type":"record","name":"M","fields":[{"name":"s","type":"otherns.Subrecord1"}]}'
    assert normalized(text, DEPS[:1]) == (
        '{"type":"record","name":"M","fields":[{"name":"s","type":"otherns.Subrecord1"}]}'
    )


# ---- number and string writing --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1.0"),
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (100.0, "100.0"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (0.001, "0.001"),
        (0.0001, "1.0E-4"),
        (1.5e300, "1.5E300"),
        (-123.456, "-123.456"),
    ],
)
def test_java_double(value: float, text: str) -> None:
    assert java_double(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.1, "0.1"), (1.0, "1.0"), (3.3, "3.3"), (1e10, "1.0E10"), (16777217.0, "1.6777216E7")],
)
def test_java_float(value: float, text: str) -> None:
    assert java_float(value) == text


def test_json_string_escapes_like_jackson() -> None:
    assert json_string('a"b\\c\n\t\x00\x1f/é') == '"a\\"b\\\\c\\n\\t\\u0000\\u001F/é"'


# ---- fixtures produced by Apache Avro Java 1.11.4 -----------------------------------------

ORACLE = json.loads(
    (Path(__file__).parent / "data" / "avro" / "avro_java_oracle.json").read_text("utf-8")
)


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in ORACLE["parse"]])
def test_matches_avro_java_to_string(case: dict[str, Any]) -> None:
    deps = tuple(Dependency(f"dep{i}", text) for i, text in enumerate(case["deps"]))
    parsed = AVRO.parse(case["schema"], deps, strict=False)
    assert parsed.canonical() == case["canonical"]
    assert parsed.formatted("resolved") == case["resolved"]
