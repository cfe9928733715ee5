"""JSON Schema parsing: drafts picked by ``$schema``, strict meta-schema validation, Confluent's
strict field-name rule, and ``$ref`` resolution (local, recursive, other subjects)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from registry.formats.base import Dependency, InvalidSchemaError
from registry.formats.json_schema import JsonSchemaFormat
from registry.formats.json_schema.model import (
    CombinedSchema,
    ObjectSchema,
    ReferenceSchema,
    StringSchema,
    deref,
)
from tests.work_count import assert_linear, python_calls

FMT = JsonSchemaFormat()
DRAFT_URLS = {
    4: "http://json-schema.org/draft-04/schema#",
    6: "http://json-schema.org/draft-06/schema#",
    7: "http://json-schema.org/draft-07/schema#",
    2019: "https://json-schema.org/draft/2019-09/schema",
    2020: "https://json-schema.org/draft/2020-12/schema",
}


def parse(schema: Any, deps: tuple[Dependency, ...] = (), strict: bool = True) -> Any:
    text = schema if isinstance(schema, str) else json.dumps(schema)
    return FMT.parse(text, deps, strict=strict)


@pytest.mark.parametrize("draft", sorted(DRAFT_URLS))
def test_schema_keyword_picks_the_draft(draft: int) -> None:
    parsed = parse({"$schema": DRAFT_URLS[draft], "type": "object"})
    assert parsed.draft == draft


@pytest.mark.parametrize(
    ("url", "draft"),
    [
        ("https://json-schema.org/draft-07/schema", 7),
        ("http://json-schema.org/draft-06/schema", 6),
        ("http://json-schema.org/schema", 4),
        ("http://json-schema.org/draft/2019-09/schema#", 2019),
    ],
)
def test_alternative_draft_urls(url: str, draft: int) -> None:
    assert parse({"$schema": url}).draft == draft


def test_no_or_unknown_schema_keyword_means_draft_7() -> None:
    assert parse({"type": "string"}).draft == 7
    assert parse({"$schema": "https://example.com/my-meta", "type": "string"}).draft == 7


@pytest.mark.parametrize("draft", sorted(DRAFT_URLS))
def test_type_12_is_invalid_in_every_draft(draft: int) -> None:
    with pytest.raises(InvalidSchemaError, match="type"):
        parse({"$schema": DRAFT_URLS[draft], "type": 12})


def test_type_12_is_invalid_without_schema_keyword() -> None:
    with pytest.raises(InvalidSchemaError, match="#/type"):
        parse({"type": 12})


@pytest.mark.parametrize(
    ("schema", "valid_in"),
    [
        ({"type": "number", "minimum": 1, "exclusiveMinimum": True}, {4}),
        ({"type": "number", "exclusiveMinimum": 1}, {6, 7, 2019, 2020}),
        ({"type": "object", "required": []}, {6, 7, 2019, 2020}),
        ({"type": "string", "minLength": -1}, set()),
        ({"properties": {"a": {"type": "strin"}}}, set()),
        ({"enum": "not an array"}, set()),
        ({"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}, {4, 6, 7, 2019, 2020}),
    ],
    ids=[
        "draft-4 boolean exclusiveMinimum",
        "numeric exclusiveMinimum",
        "empty required",
        "negative minLength",
        "unknown nested type",
        "enum not an array",
        "$defs",
    ],
)
def test_strict_meta_schema_validation_per_draft(
    schema: dict[str, Any], valid_in: set[int]
) -> None:
    for draft, url in DRAFT_URLS.items():
        document = {"$schema": url, **schema}
        if draft in valid_in:
            parse(document)
        else:
            with pytest.raises(InvalidSchemaError):
                parse(document)


def test_error_names_the_place() -> None:
    with pytest.raises(InvalidSchemaError, match=r"#/properties/a/minLength"):
        parse({"properties": {"a": {"type": "string", "minLength": -2}}})


def test_non_strict_parse_skips_meta_schema_validation_but_not_structure() -> None:
    assert parse({"type": "string", "minLength": -1}, strict=False).canonical()
    with pytest.raises(InvalidSchemaError, match="unknown type"):
        parse({"type": "strin"}, strict=False)


@pytest.mark.parametrize("text", ["{", '{"type": "string",}', "", "   ", "nul"])
def test_not_json(text: str) -> None:
    with pytest.raises(InvalidSchemaError, match="Invalid JSON"):
        parse(text)


@pytest.mark.parametrize("text", ["[1]", '"string"', "12", "null"])
def test_a_schema_is_an_object_or_a_boolean(text: str) -> None:
    with pytest.raises(InvalidSchemaError, match="expected an object or boolean at the root"):
        parse(text)


@pytest.mark.parametrize("text", ["true", "false", "{}"])
def test_boolean_and_empty_schemas(text: str) -> None:
    assert parse(text).canonical() == text


def test_trailing_content_is_ignored_like_jackson_read_tree() -> None:
    assert parse('{"type": "string"} {"ignored": 1}').canonical() == '{"type":"string"}'


def test_strict_rejects_top_level_field_names_starting_with_double_dollar() -> None:
    schema = {"type": "object", "properties": {"$$x": {"type": "string"}}}
    with pytest.raises(InvalidSchemaError, match=r"#/properties/\$\$x: Field names cannot start"):
        parse(schema)
    assert parse(schema, strict=False).canonical()
    nested = {"properties": {"a": {"properties": {"$$x": {}}}}}
    assert parse(nested).canonical()


# ---- the model ---------------------------------------------------------------------------


def test_type_with_enum_is_a_synthetic_all_of() -> None:
    root = parse({"type": "string", "enum": ["a"]}).root
    assert isinstance(root, CombinedSchema) and root.criterion == "allOf" and root.synthetic
    assert [type(s).__name__ for s in root.subschemas] == ["EnumSchema", "StringSchema"]


def test_type_list_is_an_any_of() -> None:
    root = parse({"type": ["string", "null"], "maxLength": 3}).root
    assert isinstance(root, CombinedSchema) and root.criterion == "anyOf"
    string = root.subschemas[0]
    assert isinstance(string, StringSchema) and string.max_length == 3


def test_object_keywords_without_type_make_an_object_schema() -> None:
    root = parse({"properties": {"a": {"type": "string"}}, "required": ["a"]}).root
    assert isinstance(root, ObjectSchema) and root.required == ["a"]


# ---- references --------------------------------------------------------------------------


def test_local_definitions_and_defs() -> None:
    for bucket in ("definitions", "$defs"):
        root = parse(
            {"properties": {"a": {"$ref": f"#/{bucket}/s"}}, bucket: {"s": {"type": "string"}}}
        ).root
        ref = root.properties["a"]
        assert isinstance(ref, ReferenceSchema) and isinstance(deref(ref), StringSchema)


def test_defs_pointer_finds_a_body_kept_under_definitions() -> None:
    root = parse({"properties": {"a": {"$ref": "#/$defs/s"}}, "definitions": {"s": {}}}).root
    assert isinstance(root.properties["a"], ReferenceSchema)


def test_unresolvable_local_pointer() -> None:
    with pytest.raises(InvalidSchemaError, match="cannot be resolved"):
        parse({"properties": {"a": {"$ref": "#/definitions/missing"}}})


def test_recursive_reference_makes_a_cyclic_model() -> None:
    root = parse({"type": "object", "properties": {"next": {"$ref": "#"}}}).root
    assert deref(root.properties["next"]) is root


def test_pure_reference_cycle_is_invalid() -> None:
    with pytest.raises(InvalidSchemaError, match="refers to itself"):
        parse(
            {
                "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}},
                "$ref": "#/definitions/a",
            }
        )


ADDRESS = json.dumps(
    {
        "type": "object",
        "properties": {"zip": {"type": "string"}},
        "definitions": {"country": {"enum": ["NL", "FR"]}},
    }
)


def test_reference_to_another_subject_by_file_name() -> None:
    root = parse(
        {"properties": {"home": {"$ref": "address.json"}}},
        (Dependency("address.json", ADDRESS),),
    ).root
    home = deref(root.properties["home"])
    assert isinstance(home, ObjectSchema) and list(home.properties) == ["zip"]


def test_reference_with_a_fragment_into_another_subject() -> None:
    root = parse(
        {"properties": {"c": {"$ref": "address.json#/definitions/country"}}},
        (Dependency("address.json", ADDRESS),),
    ).root
    assert type(deref(root.properties["c"])).__name__ == "EnumSchema"


def test_reference_by_url_relative_to_the_root_id() -> None:
    schema = {
        "$id": "https://example.com/schemas/customer.json",
        "properties": {"home": {"$ref": "address.json"}},
    }
    for name in ("https://example.com/schemas/address.json", "address.json"):
        root = parse(schema, (Dependency(name, ADDRESS),)).root
        assert isinstance(deref(root.properties["home"]), ObjectSchema)


def test_transitive_references() -> None:
    deps = (
        Dependency("zip.json", json.dumps({"type": "string", "pattern": "^[0-9]{4}"})),
        Dependency("address.json", json.dumps({"properties": {"zip": {"$ref": "zip.json"}}})),
    )
    root = parse({"properties": {"home": {"$ref": "address.json"}}}, deps).root
    zip_schema = deref(deref(root.properties["home"]).properties["zip"])
    assert isinstance(zip_schema, StringSchema) and zip_schema.pattern == "^[0-9]{4}"


def test_missing_reference_is_invalid() -> None:
    with pytest.raises(InvalidSchemaError, match=r"no schema reference is named 'other\.json'"):
        parse({"properties": {"a": {"$ref": "other.json"}}})


def test_anchors_and_embedded_ids() -> None:
    draft7 = {"definitions": {"s": {"$id": "#str", "type": "string"}}, "$ref": "#str"}
    assert isinstance(deref(parse(draft7).root), StringSchema)
    draft2020 = {
        "$schema": DRAFT_URLS[2020],
        "$defs": {"s": {"$anchor": "str", "type": "string"}},
        "$ref": "#str",
    }
    assert isinstance(deref(parse(draft2020).root), StringSchema)
    embedded = {
        "$id": "https://example.com/root.json",
        "definitions": {"s": {"$id": "https://example.com/s.json", "type": "string"}},
        "properties": {"a": {"$ref": "s.json"}},
    }
    assert isinstance(deref(parse(embedded).root.properties["a"]), StringSchema)


# ---- size --------------------------------------------------------------------------------


def big_schema(fields: int) -> dict[str, Any]:
    return {
        "$schema": DRAFT_URLS[7],
        "type": "object",
        "properties": {
            f"field_{i}": {"type": ["string", "null"], "maxLength": 64, "description": f"f{i}"}
            for i in range(fields)
        },
        "required": [f"field_{i}" for i in range(0, fields, 10)],
        "additionalProperties": False,
    }


def test_a_500_property_schema_parses_in_linear_work() -> None:
    """Counted in Python calls (~18 per property today), not timed: a unit test on a loaded
    machine cannot bound wall-clock time (bench/json_schema_bench.py measures the speed)."""

    def work(properties: int) -> int:
        text = json.dumps(big_schema(properties))
        parsed: list[Any] = []
        calls = python_calls(lambda: parsed.append(FMT.parse(text)))
        assert len(parsed[0].root.properties) == properties
        return calls

    assert_linear(work, 500, per_item=60)
