"""JSON Schema compatibility: Confluent's ``json-schema-provider`` diff rules, one table row per
rule, under the STRICT policy (Confluent 7.9, the default) and LENIENT (Confluent 8.2's
``compatibilityPolicy``).

Each row: (rule, writer schema, reader schema, every difference as ``TYPE path``, compatible
under STRICT, compatible under LENIENT). The writer is the "original" schema, the reader the
"update" (a BACKWARD check compares the old schema as writer with the new one as reader).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from registry.formats.base import Dependency
from registry.formats.json_schema import LENIENT, STRICT, JsonSchemaFormat

FMT = JsonSchemaFormat()
D2020 = "https://json-schema.org/draft/2020-12/schema"

S = {"type": "string"}
N = {"type": "number"}
I = {"type": "integer"}  # noqa: E741
B = {"type": "boolean"}


def obj(props: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props or {}, **extra}


def closed(props: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return obj(props, additionalProperties=False, **extra)


def arr(**extra: Any) -> dict[str, Any]:
    return {"type": "array", **extra}


def d2020(schema: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": D2020, **schema}


Row = tuple[str, Any, Any, list[str], bool, bool]


def row(
    rule: str, old: Any, new: Any, changes: list[str], strict: bool, lenient: bool | None = None
) -> Row:
    return (rule, old, new, changes, strict, strict if lenient is None else lenient)


ROWS: list[Row] = [
    # ---- any schema ---------------------------------------------------------------------
    row("anything may become the empty schema", obj({"a": S}), {}, [], True),
    row("anything may become true", S, True, [], True),
    row("false may become anything", False, S, [], True),
    row("the empty schema may not become a type", {}, S, ["TYPE_CHANGED #/"], False),
    row(
        "id change is recorded, compatible",
        {"$id": "a.json"},
        {"$id": "b.json"},
        ["ID_CHANGED #/"],
        True,
    ),
    row(
        "title change is recorded, compatible",
        {**S, "title": "a"},
        {**S, "title": "b"},
        ["TITLE_CHANGED #/"],
        True,
    ),
    row(
        "description change is recorded, compatible",
        {**S, "description": "a"},
        S,
        ["DESCRIPTION_CHANGED #/"],
        True,
    ),
    row(
        "default change is recorded, compatible",
        {**S, "default": "a"},
        {**S, "default": "b"},
        ["DEFAULT_CHANGED #/"],
        True,
    ),
    row("equal defaults are no change", {**N, "default": 1}, {**N, "default": 1.0}, [], True),
    row("type change string to boolean", S, B, ["TYPE_CHANGED #/"], False),
    row("type change null to object", {"type": "null"}, obj(), ["TYPE_CHANGED #/"], False),
    row(
        "connect.type bytes on both sides is no type change",
        {**S, "connect.type": "bytes"},
        {**N, "connect.type": "bytes"},
        [],
        True,
    ),
    row(
        "connect.type bytes on one side only is a type change",
        {**S, "connect.type": "bytes"},
        N,
        ["TYPE_CHANGED #/"],
        False,
    ),
    # ---- strings --------------------------------------------------------------------------
    row("maxLength added", S, {**S, "maxLength": 5}, ["MAX_LENGTH_ADDED #/maxLength"], False),
    row("maxLength removed", {**S, "maxLength": 5}, S, ["MAX_LENGTH_REMOVED #/maxLength"], True),
    row(
        "maxLength increased",
        {**S, "maxLength": 5},
        {**S, "maxLength": 6},
        ["MAX_LENGTH_INCREASED #/maxLength"],
        True,
    ),
    row(
        "maxLength decreased",
        {**S, "maxLength": 5},
        {**S, "maxLength": 4},
        ["MAX_LENGTH_DECREASED #/maxLength"],
        False,
    ),
    row("minLength added", S, {**S, "minLength": 1}, ["MIN_LENGTH_ADDED #/minLength"], False),
    row("minLength removed", {**S, "minLength": 1}, S, ["MIN_LENGTH_REMOVED #/minLength"], True),
    row(
        "minLength increased",
        {**S, "minLength": 1},
        {**S, "minLength": 2},
        ["MIN_LENGTH_INCREASED #/minLength"],
        False,
    ),
    row(
        "minLength decreased",
        {**S, "minLength": 2},
        {**S, "minLength": 1},
        ["MIN_LENGTH_DECREASED #/minLength"],
        True,
    ),
    row("pattern added", S, {**S, "pattern": "^a"}, ["PATTERN_ADDED #/pattern"], False),
    row("pattern removed", {**S, "pattern": "^a"}, S, ["PATTERN_REMOVED #/pattern"], True),
    row(
        "pattern changed",
        {**S, "pattern": "^a"},
        {**S, "pattern": "^b"},
        ["PATTERN_CHANGED #/pattern"],
        False,
    ),
    row("same pattern is no change", {**S, "pattern": "^a"}, {**S, "pattern": "^a"}, [], True),
    row("format is not compared", {**S, "format": "date"}, {**S, "format": "uuid"}, [], True),
    # ---- numbers --------------------------------------------------------------------------
    row("maximum added", N, {**N, "maximum": 9}, ["MAXIMUM_ADDED #/maximum"], False),
    row("maximum removed", {**N, "maximum": 9}, N, ["MAXIMUM_REMOVED #/maximum"], True),
    row(
        "maximum increased",
        {**N, "maximum": 9},
        {**N, "maximum": 9.5},
        ["MAXIMUM_INCREASED #/maximum"],
        True,
    ),
    row(
        "maximum decreased",
        {**N, "maximum": 9},
        {**N, "maximum": 8},
        ["MAXIMUM_DECREASED #/maximum"],
        False,
    ),
    row("maximum equal as numbers", {**N, "maximum": 9}, {**N, "maximum": 9.0}, [], True),
    row("minimum added", N, {**N, "minimum": 0}, ["MINIMUM_ADDED #/minimum"], False),
    row("minimum removed", {**N, "minimum": 0}, N, ["MINIMUM_REMOVED #/minimum"], True),
    row(
        "minimum increased",
        {**N, "minimum": 0},
        {**N, "minimum": 1},
        ["MINIMUM_INCREASED #/minimum"],
        False,
    ),
    row(
        "minimum decreased",
        {**N, "minimum": 0},
        {**N, "minimum": -1},
        ["MINIMUM_DECREASED #/minimum"],
        True,
    ),
    row(
        "exclusiveMaximum added",
        N,
        {**N, "exclusiveMaximum": 9},
        ["EXCLUSIVE_MAXIMUM_ADDED #/exclusiveMaximum"],
        False,
    ),
    row(
        "exclusiveMaximum removed",
        {**N, "exclusiveMaximum": 9},
        N,
        ["EXCLUSIVE_MAXIMUM_REMOVED #/exclusiveMaximum"],
        True,
    ),
    row(
        "exclusiveMaximum increased",
        {**N, "exclusiveMaximum": 9},
        {**N, "exclusiveMaximum": 10},
        ["EXCLUSIVE_MAXIMUM_INCREASED #/exclusiveMaximum"],
        True,
    ),
    row(
        "exclusiveMaximum decreased",
        {**N, "exclusiveMaximum": 9},
        {**N, "exclusiveMaximum": 8},
        ["EXCLUSIVE_MAXIMUM_DECREASED #/exclusiveMaximum"],
        False,
    ),
    row(
        "exclusiveMinimum added",
        N,
        {**N, "exclusiveMinimum": 0},
        ["EXCLUSIVE_MINIMUM_ADDED #/exclusiveMinimum"],
        False,
    ),
    row(
        "exclusiveMinimum removed",
        {**N, "exclusiveMinimum": 0},
        N,
        ["EXCLUSIVE_MINIMUM_REMOVED #/exclusiveMinimum"],
        True,
    ),
    row(
        "exclusiveMinimum increased",
        {**N, "exclusiveMinimum": 0},
        {**N, "exclusiveMinimum": 1},
        ["EXCLUSIVE_MINIMUM_INCREASED #/exclusiveMinimum"],
        False,
    ),
    row(
        "exclusiveMinimum decreased",
        {**N, "exclusiveMinimum": 0},
        {**N, "exclusiveMinimum": -1},
        ["EXCLUSIVE_MINIMUM_DECREASED #/exclusiveMinimum"],
        True,
    ),
    row("multipleOf added", N, {**N, "multipleOf": 2}, ["MULTIPLE_OF_ADDED #/multipleOf"], False),
    row(
        "multipleOf removed", {**N, "multipleOf": 2}, N, ["MULTIPLE_OF_REMOVED #/multipleOf"], True
    ),
    row(
        "multipleOf expanded to a multiple",
        {**N, "multipleOf": 2},
        {**N, "multipleOf": 6},
        ["MULTIPLE_OF_EXPANDED #/multipleOf"],
        False,
    ),
    row(
        "multipleOf reduced to a divisor",
        {**N, "multipleOf": 6},
        {**N, "multipleOf": 3},
        ["MULTIPLE_OF_REDUCED #/multipleOf"],
        True,
    ),
    row(
        "multipleOf changed to an unrelated value",
        {**N, "multipleOf": 3},
        {**N, "multipleOf": 4},
        ["MULTIPLE_OF_CHANGED #/multipleOf"],
        False,
    ),
    row(
        "fractional multipleOf reduced",
        {**N, "multipleOf": 0.5},
        {**N, "multipleOf": 0.25},
        ["MULTIPLE_OF_REDUCED #/multipleOf"],
        True,
    ),
    row(
        "multipleOf 0.5 and 0.50 are equal",
        {**N, "multipleOf": 0.5},
        {**N, "multipleOf": 0.50},
        [],
        True,
    ),
    row("integer widened to number", I, N, ["TYPE_EXTENDED #/"], True),
    row("number narrowed to integer", N, I, ["TYPE_NARROWED #/"], False),
    row(
        "bounds sniffed without type make a number schema",
        {"minimum": 1},
        {"minimum": 2},
        ["MINIMUM_INCREASED #/minimum"],
        False,
    ),
    # ---- enum, const, not -----------------------------------------------------------------
    row(
        "enum extended",
        {"enum": ["a", "b"]},
        {"enum": ["a", "b", "c"]},
        ["ENUM_ARRAY_EXTENDED #/enum"],
        True,
    ),
    row(
        "enum narrowed",
        {"enum": ["a", "b"]},
        {"enum": ["a"]},
        ["ENUM_ARRAY_NARROWED #/enum"],
        False,
    ),
    row(
        "enum changed",
        {"enum": ["a", "b"]},
        {"enum": ["a", "c"]},
        ["ENUM_ARRAY_CHANGED #/enum"],
        False,
    ),
    row(
        "enum reordered is no change", {"enum": [1, "x", None]}, {"enum": [None, 1, "x"]}, [], True
    ),
    row(
        "enum beside a type is a synthetic allOf: enum removed",
        {**S, "enum": ["x"]},
        S,
        ["PRODUCT_TYPE_NARROWED #/"],
        True,
    ),
    row(
        "enum beside a type is a synthetic allOf: enum extended",
        {**S, "enum": ["x"]},
        {**S, "enum": ["x", "y"]},
        ["ENUM_ARRAY_EXTENDED #/allOf/0/enum"],
        True,
    ),
    row(
        "enum beside a type: enum narrowed breaks the branch matching",
        {**S, "enum": ["x", "y"]},
        {**S, "enum": ["x"]},
        ["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"],
        False,
    ),
    row("const changed", {"const": 1}, {"const": 2}, ["ENUM_ARRAY_CHANGED #/const"], False),
    row("const unchanged", obj({"k": {"const": "v"}}), obj({"k": {"const": "v"}}), [], True),
    row(
        "not narrowed: the excluded set shrinks",
        {"not": S},
        {"not": {**S, "maxLength": 3}},
        ["NOT_TYPE_NARROWED #/not"],
        True,
    ),
    row(
        "not extended: the excluded set grows",
        {"not": {**S, "maxLength": 3}},
        {"not": S},
        ["NOT_TYPE_EXTENDED #/not"],
        False,
    ),
    # ---- objects: open content model --------------------------------------------------------
    row(
        "optional property added to an open model (LENIENT allows)",
        obj({"a": S}),
        obj({"a": S, "b": N}),
        ["OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
        False,
        True,
    ),
    row(
        "required property with default added to an open model (LENIENT allows)",
        obj({"a": S}),
        obj({"a": S, "b": {**N, "default": 0}}, required=["b"]),
        ["REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
        False,
        True,
    ),
    row(
        "required property without default added to an open model",
        obj({"a": S}),
        obj({"a": S, "b": N}, required=["b"]),
        ["REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
        False,
    ),
    row(
        "empty-schema property added to an open model",
        obj({"a": S}),
        obj({"a": S, "b": {}}),
        ["PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "true property added to an open model",
        obj(),
        obj({"b": True}),
        ["PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "property removed, reader open",
        obj({"a": S, "b": N}),
        obj({"a": S}),
        ["PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "additionalProperties true is an open model",
        obj({"a": S}, additionalProperties=True),
        obj({"a": S, "b": S}, additionalProperties=True),
        ["OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b"],
        False,
        True,
    ),
    row(
        "property schema narrowed inside an object",
        obj({"a": {**S, "maxLength": 9}}),
        obj({"a": {**S, "maxLength": 3}}),
        ["MAX_LENGTH_DECREASED #/properties/a/maxLength"],
        False,
    ),
    row(
        "nested property type changed",
        obj({"a": obj({"b": S})}),
        obj({"a": obj({"b": B})}),
        ["TYPE_CHANGED #/properties/a/properties/b"],
        False,
    ),
    # ---- objects: closed content model ------------------------------------------------------
    row(
        "optional property added to a closed model",
        closed({"a": S}),
        closed({"a": S, "b": N}),
        ["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "required property with default added to a closed model",
        closed({"a": S}),
        closed({"a": S, "b": {**N, "default": 1}}, required=["b"]),
        ["REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "required property without default added to a closed model",
        closed({"a": S}),
        closed({"a": S, "b": N}, required=["b"]),
        ["REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
        False,
    ),
    row(
        "property removed from a closed model (LENIENT allows)",
        closed({"a": S, "b": N}),
        closed({"a": S}),
        ["PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/b"],
        False,
        True,
    ),
    row(
        "false property removed from a closed model",
        closed({"a": S, "b": False}),
        closed({"a": S}),
        ["PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "false property added to a closed model",
        closed({"a": S}),
        closed({"a": S, "b": False}),
        ["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "additionalProperties false added (LENIENT allows)",
        obj({"a": S}),
        closed({"a": S}),
        ["ADDITIONAL_PROPERTIES_REMOVED #/additionalProperties"],
        False,
        True,
    ),
    row(
        "additionalProperties false removed",
        closed({"a": S}),
        obj({"a": S}),
        ["ADDITIONAL_PROPERTIES_ADDED #/additionalProperties"],
        True,
    ),
    # ---- objects: partially open content model ----------------------------------------------
    row(
        "property added, covered by patternProperties",
        obj(patternProperties={"^s_": S}),
        obj({"s_x": S}, patternProperties={"^s_": S}),
        [
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/s_x",
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/s_x",
        ],
        True,
    ),
    row(
        "property added, not covered by patternProperties",
        obj(patternProperties={"^s_": S}),
        obj({"s_x": N}, patternProperties={"^s_": S}),
        [
            "TYPE_CHANGED #/properties/s_x",
            "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/s_x",
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/s_x",
        ],
        False,
    ),
    row(
        "property added, pattern does not match, additionalProperties schema covers",
        obj(patternProperties={"^s_": S}, additionalProperties=I),
        obj({"n": N}, patternProperties={"^s_": S}, additionalProperties=I),
        [
            "TYPE_EXTENDED #/properties/n",
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/n",
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/n",
        ],
        True,
    ),
    row(
        "property added, covered by the additionalProperties schema",
        obj(additionalProperties=S),
        obj({"x": S}, additionalProperties=S),
        [
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/x",
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/x",
        ],
        True,
    ),
    row(
        "required property added, covered, without default",
        obj(additionalProperties=S),
        obj({"x": S}, additionalProperties=S, required=["x"]),
        [
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/x",
            "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/x",
        ],
        False,
    ),
    row(
        "property added, not covered only by a LENIENT-tolerated change (policy-dependent)",
        obj(additionalProperties=obj()),
        obj({"x": obj({"z": S})}, additionalProperties=obj()),
        [
            "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/x/properties/z",
            "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/x",
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/x",
        ],
        False,
        True,
    ),
    row(
        "property removed, covered by the reader's additionalProperties schema",
        closed({"a": S, "n": I}),
        obj({"a": S}, additionalProperties=N),
        [
            "TYPE_EXTENDED #/properties/n",
            "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/n",
            "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
        ],
        True,
    ),
    row(
        "property removed, not covered by the reader's additionalProperties schema",
        closed({"a": S, "n": I}),
        obj({"a": S}, additionalProperties=S),
        [
            "TYPE_CHANGED #/properties/n",
            "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/n",
            "ADDITIONAL_PROPERTIES_ADDED #/additionalProperties",
        ],
        False,
    ),
    row(
        "property removed, covered by the reader's patternProperties",
        obj({"s_a": S}, patternProperties={"^s_": S}),
        obj(patternProperties={"^s_": S}),
        ["PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/s_a"],
        True,
    ),
    row(
        "additionalProperties schema added (LENIENT allows)",
        obj(),
        obj(additionalProperties=S),
        ["ADDITIONAL_PROPERTIES_NARROWED #/additionalProperties"],
        False,
        True,
    ),
    row(
        "additionalProperties schema removed",
        obj(additionalProperties=S),
        obj(),
        ["ADDITIONAL_PROPERTIES_EXTENDED #/additionalProperties"],
        True,
    ),
    row(
        "additionalProperties schema changed",
        obj(additionalProperties=S),
        obj(additionalProperties=B),
        ["TYPE_CHANGED #/additionalProperties"],
        False,
    ),
    row(
        "additionalProperties schema widened",
        obj(additionalProperties=I),
        obj(additionalProperties=N),
        ["TYPE_EXTENDED #/additionalProperties"],
        True,
    ),
    # ---- objects: required --------------------------------------------------------------------
    row(
        "required removed",
        obj({"a": S}, required=["a"]),
        obj({"a": S}),
        ["REQUIRED_ATTRIBUTE_REMOVED #/required/a"],
        True,
    ),
    row(
        "required added without default",
        obj({"a": S}),
        obj({"a": S}, required=["a"]),
        ["REQUIRED_ATTRIBUTE_ADDED #/required/a"],
        False,
    ),
    row(
        "required added with default",
        obj({"a": S}),
        obj({"a": {**S, "default": "x"}}, required=["a"]),
        ["REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/a", "DEFAULT_CHANGED #/properties/a"],
        True,
    ),
    row(
        "required on a $ref with a default",
        obj({"a": {"$ref": "#/definitions/s"}}, definitions={"s": S}),
        obj(
            {"a": {"$ref": "#/definitions/s", "default": "x"}}, required=["a"], definitions={"s": S}
        ),
        ["REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED #/required/a"],
        True,
    ),
    # ---- objects: dependencies and sizes ------------------------------------------------------
    row(
        "dependency array added",
        obj({"a": S, "b": S}),
        obj({"a": S, "b": S}, dependencies={"a": ["b"]}),
        ["DEPENDENCY_ARRAY_ADDED #/dependencies/a"],
        False,
    ),
    row(
        "dependency array removed",
        obj({"a": S, "b": S}, dependencies={"a": ["b"]}),
        obj({"a": S, "b": S}),
        ["DEPENDENCY_ARRAY_REMOVED #/dependencies/a"],
        True,
    ),
    row(
        "dependency array extended",
        obj({"a": S}, dependencies={"a": ["b"]}),
        obj({"a": S}, dependencies={"a": ["b", "c"]}),
        ["DEPENDENCY_ARRAY_EXTENDED #/dependencies/a"],
        False,
    ),
    row(
        "dependency array narrowed",
        obj({"a": S}, dependencies={"a": ["b", "c"]}),
        obj({"a": S}, dependencies={"a": ["c"]}),
        ["DEPENDENCY_ARRAY_NARROWED #/dependencies/a"],
        True,
    ),
    row(
        "dependency array changed",
        obj({"a": S}, dependencies={"a": ["b"]}),
        obj({"a": S}, dependencies={"a": ["c"]}),
        ["DEPENDENCY_ARRAY_CHANGED #/dependencies/a"],
        False,
    ),
    row(
        "dependency arrays in Java HashSet order",
        obj(dependencies={"foo": ["x"]}),
        obj(dependencies={"bar": ["x"]}),
        [
            "DEPENDENCY_ARRAY_ADDED #/dependencies/bar",
            "DEPENDENCY_ARRAY_REMOVED #/dependencies/foo",
        ],
        False,
    ),
    row(
        "dependency schema added",
        obj({"a": S}),
        obj({"a": S}, dependencies={"a": {"required": ["b"]}}),
        ["DEPENDENCY_SCHEMA_ADDED #/dependencies/a"],
        False,
    ),
    row(
        "dependency schema removed",
        obj({"a": S}, dependencies={"a": {"required": ["b"]}}),
        obj({"a": S}),
        ["DEPENDENCY_SCHEMA_REMOVED #/dependencies/a"],
        True,
    ),
    row(
        "dependency schema changed",
        obj(dependencies={"a": obj()}),
        obj(dependencies={"a": S}),
        ["TYPE_CHANGED #/dependencies/a"],
        False,
    ),
    row(
        "dependentRequired added (2020-12)",
        d2020(obj({"a": S})),
        d2020(obj({"a": S}, dependentRequired={"a": ["b"]})),
        ["DEPENDENCY_ARRAY_ADDED #/dependencies/a"],
        False,
    ),
    row(
        "dependentSchemas removed (2020-12)",
        d2020(obj(dependentSchemas={"a": obj()})),
        d2020(obj()),
        ["DEPENDENCY_SCHEMA_REMOVED #/dependencies/a"],
        True,
    ),
    row(
        "maxProperties added",
        obj(),
        obj(maxProperties=3),
        ["MAX_PROPERTIES_ADDED #/maxProperties"],
        False,
    ),
    row(
        "maxProperties removed",
        obj(maxProperties=3),
        obj(),
        ["MAX_PROPERTIES_REMOVED #/maxProperties"],
        True,
    ),
    row(
        "maxProperties increased",
        obj(maxProperties=3),
        obj(maxProperties=4),
        ["MAX_PROPERTIES_INCREASED #/maxProperties"],
        True,
    ),
    row(
        "maxProperties decreased",
        obj(maxProperties=3),
        obj(maxProperties=2),
        ["MAX_PROPERTIES_DECREASED #/maxProperties"],
        False,
    ),
    row(
        "minProperties added",
        obj(),
        obj(minProperties=1),
        ["MIN_PROPERTIES_ADDED #/minProperties"],
        False,
    ),
    row(
        "minProperties removed",
        obj(minProperties=1),
        obj(),
        ["MIN_PROPERTIES_REMOVED #/minProperties"],
        True,
    ),
    row(
        "minProperties increased",
        obj(minProperties=1),
        obj(minProperties=2),
        ["MIN_PROPERTIES_INCREASED #/minProperties"],
        False,
    ),
    row(
        "minProperties decreased",
        obj(minProperties=2),
        obj(minProperties=1),
        ["MIN_PROPERTIES_DECREASED #/minProperties"],
        True,
    ),
    # ---- objects: unevaluatedProperties (2019-09 and later) ------------------------------------
    row(
        "unevaluatedProperties false added (LENIENT allows)",
        d2020(obj({"a": S})),
        d2020(obj({"a": S}, unevaluatedProperties=False)),
        ["UNEVALUATED_PROPERTIES_REMOVED #/unevaluatedProperties"],
        False,
        True,
    ),
    row(
        "unevaluatedProperties false removed",
        d2020(obj(unevaluatedProperties=False)),
        d2020(obj()),
        ["UNEVALUATED_PROPERTIES_ADDED #/unevaluatedProperties"],
        True,
    ),
    row(
        "unevaluatedProperties schema added (LENIENT allows)",
        d2020(obj()),
        d2020(obj(unevaluatedProperties=S)),
        ["UNEVALUATED_PROPERTIES_NARROWED #/unevaluatedProperties"],
        False,
        True,
    ),
    row(
        "unevaluatedProperties schema removed",
        d2020(obj(unevaluatedProperties=S)),
        d2020(obj()),
        ["UNEVALUATED_PROPERTIES_EXTENDED #/unevaluatedProperties"],
        True,
    ),
    row(
        "unevaluatedProperties schema changed",
        d2020(obj(unevaluatedProperties=S)),
        d2020(obj(unevaluatedProperties=B)),
        ["TYPE_CHANGED #/unevaluatedProperties"],
        False,
    ),
    row(
        "property added to a model closed by unevaluatedProperties",
        d2020(obj({"a": S}, unevaluatedProperties=False)),
        d2020(obj({"a": S, "b": S}, unevaluatedProperties=False)),
        ["OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b"],
        True,
    ),
    row(
        "property added, covered by the unevaluatedProperties schema",
        d2020(obj(unevaluatedProperties=S)),
        d2020(obj({"b": S}, unevaluatedProperties=S)),
        [
            "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/b",
            "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/b",
        ],
        True,
    ),
    row(
        "unevaluatedProperties is ignored before 2019-09",
        obj(),
        obj(unevaluatedProperties=False),
        [],
        True,
    ),
    # ---- arrays -------------------------------------------------------------------------------
    row("items schema added", arr(), arr(items=S), ["SCHEMA_ADDED #/items"], False),
    row("items schema removed", arr(items=S), arr(), ["SCHEMA_REMOVED #/items"], True),
    row("items schema changed", arr(items=S), arr(items=N), ["TYPE_CHANGED #/items"], False),
    row("items schema widened", arr(items=I), arr(items=N), ["TYPE_EXTENDED #/items"], True),
    row(
        "tuple item changed",
        arr(items=[S, N]),
        arr(items=[B, N]),
        ["TYPE_CHANGED #/items/0"],
        False,
    ),
    row(
        "tuple item removed, reader open",
        arr(items=[S, N]),
        arr(items=[S]),
        ["ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/1"],
        True,
    ),
    row(
        "tuple item added to an open model",
        arr(items=[S]),
        arr(items=[S, N]),
        ["ITEM_ADDED_TO_OPEN_CONTENT_MODEL #/items/1"],
        False,
    ),
    row(
        "empty tuple item added to an open model",
        arr(items=[S]),
        arr(items=[S, {}]),
        ["ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL #/items/1"],
        True,
    ),
    row(
        "tuple item added to a closed model",
        arr(items=[S], additionalItems=False),
        arr(items=[S, N], additionalItems=False),
        ["ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1"],
        True,
    ),
    row(
        "tuple item removed from a closed model",
        arr(items=[S, N], additionalItems=False),
        arr(items=[S], additionalItems=False),
        ["ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"],
        False,
    ),
    row(
        "false tuple item removed from a closed model",
        arr(items=[S, False], additionalItems=False),
        arr(items=[S], additionalItems=False),
        ["ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL #/items/1"],
        True,
    ),
    row(
        "tuple item added, covered by additionalItems",
        arr(items=[S], additionalItems=I),
        arr(items=[S, N], additionalItems=I),
        [
            "TYPE_EXTENDED #/items/1",
            "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
        ],
        True,
    ),
    row(
        "tuple item added, not covered by additionalItems",
        arr(items=[S], additionalItems=N),
        arr(items=[S, B], additionalItems=N),
        [
            "TYPE_CHANGED #/items/1",
            "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
        ],
        False,
    ),
    row(
        "tuple item removed, covered by the reader's additionalItems",
        arr(items=[S, I], additionalItems=N),
        arr(items=[S], additionalItems=N),
        [
            "TYPE_EXTENDED #/items/1",
            "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
        ],
        True,
    ),
    row(
        "tuple item removed, not covered by the reader's additionalItems",
        arr(items=[S, B], additionalItems=N),
        arr(items=[S], additionalItems=N),
        [
            "TYPE_CHANGED #/items/1",
            "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1",
        ],
        False,
    ),
    row(
        "additionalItems false added",
        arr(items=[S]),
        arr(items=[S], additionalItems=False),
        ["ADDITIONAL_ITEMS_REMOVED #/additionalItems"],
        False,
    ),
    row(
        "additionalItems false removed",
        arr(items=[S], additionalItems=False),
        arr(items=[S]),
        ["ADDITIONAL_ITEMS_ADDED #/additionalItems"],
        True,
    ),
    row(
        "additionalItems schema added",
        arr(items=[S]),
        arr(items=[S], additionalItems=S),
        ["ADDITIONAL_ITEMS_NARROWED #/additionalItems"],
        False,
    ),
    row(
        "additionalItems schema removed",
        arr(items=[S], additionalItems=S),
        arr(items=[S]),
        ["ADDITIONAL_ITEMS_EXTENDED #/additionalItems"],
        True,
    ),
    row(
        "additionalItems schema changed",
        arr(items=[S], additionalItems=S),
        arr(items=[S], additionalItems=B),
        ["TYPE_CHANGED #/additionalItems"],
        False,
    ),
    row("maxItems added", arr(), arr(maxItems=3), ["MAX_ITEMS_ADDED #/maxItems"], False),
    row("maxItems removed", arr(maxItems=3), arr(), ["MAX_ITEMS_REMOVED #/maxItems"], True),
    row(
        "maxItems increased",
        arr(maxItems=3),
        arr(maxItems=4),
        ["MAX_ITEMS_INCREASED #/maxItems"],
        True,
    ),
    row(
        "maxItems decreased",
        arr(maxItems=3),
        arr(maxItems=2),
        ["MAX_ITEMS_DECREASED #/maxItems"],
        False,
    ),
    row("minItems added", arr(), arr(minItems=1), ["MIN_ITEMS_ADDED #/minItems"], False),
    row("minItems removed", arr(minItems=1), arr(), ["MIN_ITEMS_REMOVED #/minItems"], True),
    row(
        "minItems increased",
        arr(minItems=1),
        arr(minItems=2),
        ["MIN_ITEMS_INCREASED #/minItems"],
        False,
    ),
    row(
        "minItems decreased",
        arr(minItems=2),
        arr(minItems=1),
        ["MIN_ITEMS_DECREASED #/minItems"],
        True,
    ),
    row(
        "uniqueItems added",
        arr(),
        arr(uniqueItems=True),
        ["UNIQUE_ITEMS_ADDED #/uniqueItems"],
        False,
    ),
    row(
        "uniqueItems removed",
        arr(uniqueItems=True),
        arr(),
        ["UNIQUE_ITEMS_REMOVED #/uniqueItems"],
        True,
    ),
    row(
        "maxContains added",
        d2020(arr(contains=N)),
        d2020(arr(contains=N, maxContains=2)),
        ["MAX_CONTAINS_ADDED #/maxContains"],
        False,
    ),
    row(
        "maxContains decreased",
        d2020(arr(contains=N, maxContains=3)),
        d2020(arr(contains=N, maxContains=2)),
        ["MAX_CONTAINS_DECREASED #/maxContains"],
        False,
    ),
    row(
        "minContains increased",
        d2020(arr(contains=N, minContains=1)),
        d2020(arr(contains=N, minContains=2)),
        ["MIN_CONTAINS_INCREASED #/minContains"],
        False,
    ),
    row(
        "minContains removed",
        d2020(arr(contains=N, minContains=2)),
        d2020(arr(contains=N)),
        ["MIN_CONTAINS_REMOVED #/minContains"],
        True,
    ),
    row(
        "prefixItems item added to a model closed by items false (2020-12)",
        d2020(arr(prefixItems=[S], items=False)),
        d2020(arr(prefixItems=[S, N], items=False)),
        ["ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1"],
        True,
    ),
    row(
        "prefixItems item added, covered by items (2020-12)",
        d2020(arr(prefixItems=[S], items=N)),
        d2020(arr(prefixItems=[S, N], items=N)),
        ["ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/items/1"],
        True,
    ),
    row(
        "unevaluatedItems false added (2020-12)",
        d2020(arr(prefixItems=[S])),
        d2020(arr(prefixItems=[S], unevaluatedItems=False)),
        ["UNEVALUATED_ITEMS_REMOVED #/unevaluatedItems"],
        False,
    ),
    # ---- combined schemas -------------------------------------------------------------------
    row("anyOf branch added", {"anyOf": [S]}, {"anyOf": [S, N]}, ["SUM_TYPE_EXTENDED #/"], True),
    row("anyOf branch removed", {"anyOf": [S, N]}, {"anyOf": [S]}, ["SUM_TYPE_NARROWED #/"], False),
    row(
        "oneOf branch removed",
        {"oneOf": [S, N, B]},
        {"oneOf": [S, N]},
        ["SUM_TYPE_NARROWED #/"],
        False,
    ),
    row(
        "allOf branch added",
        {"allOf": [obj({"a": S})]},
        {"allOf": [obj({"a": S}), obj()]},
        ["PRODUCT_TYPE_EXTENDED #/"],
        False,
    ),
    row(
        "allOf branch removed",
        {"allOf": [obj({"a": S}), {"required": ["a"]}]},
        {"allOf": [obj({"a": S})]},
        ["PRODUCT_TYPE_NARROWED #/"],
        True,
    ),
    row(
        "oneOf to anyOf", {"oneOf": [S, N]}, {"anyOf": [S, N]}, ["COMBINED_TYPE_EXTENDED #/"], True
    ),
    row(
        "allOf to anyOf",
        {"allOf": [obj(), {"required": ["a"]}]},
        {"anyOf": [obj(), {"required": ["a"]}]},
        ["COMBINED_TYPE_EXTENDED #/"],
        True,
    ),
    row(
        "anyOf to oneOf", {"anyOf": [S, N]}, {"oneOf": [S, N]}, ["COMBINED_TYPE_CHANGED #/"], False
    ),
    row(
        "allOf to oneOf",
        {"allOf": [obj(), {"required": ["a"]}]},
        {"oneOf": [obj(), {"required": ["a"]}]},
        ["COMBINED_TYPE_CHANGED #/"],
        False,
    ),
    row(
        "singleton allOf to oneOf",
        {"allOf": [S]},
        {"oneOf": [S, N]},
        ["COMBINED_TYPE_EXTENDED #/", "SUM_TYPE_EXTENDED #/"],
        True,
    ),
    row(
        "oneOf to singleton allOf",
        {"oneOf": [S, N]},
        {"allOf": [S]},
        ["COMBINED_TYPE_CHANGED #/"],
        False,
    ),
    row(
        "branch changed: no matching covers the branches",
        {"oneOf": [S, N]},
        {"oneOf": [S, B]},
        ["COMBINED_TYPE_SUBSCHEMAS_CHANGED #/"],
        False,
    ),
    row("equal branches are collapsed", {"anyOf": [S, S]}, {"anyOf": [S]}, [], True),
    row("branches reordered", {"anyOf": [S, N]}, {"anyOf": [N, S]}, [], True),
    row(
        "compatible change inside a matched branch",
        {"anyOf": [{**S, "maxLength": 5}, N]},
        {"anyOf": [S, N]},
        ["MAX_LENGTH_REMOVED #/anyOf/0/maxLength"],
        True,
    ),
    row(
        "bipartite matching finds the assignment greedy order misses",
        {"anyOf": [I, {**N, "maximum": 5}]},
        {"anyOf": [{**N, "maximum": 9}, I]},
        ["MAXIMUM_INCREASED #/anyOf/1/maximum"],
        True,
    ),
    row(
        "non-combined becomes an anyOf containing it",
        S,
        {"anyOf": [N, S]},
        ["SUM_TYPE_EXTENDED #/"],
        True,
    ),
    row(
        "non-combined becomes a oneOf not containing it",
        S,
        {"oneOf": [N, B]},
        ["TYPE_CHANGED #/"],
        False,
    ),
    row(
        "non-combined becomes an allOf",
        S,
        {"allOf": [S, {"maxLength": 3}]},
        ["TYPE_CHANGED #/"],
        False,
    ),
    row(
        "allOf becomes one of its branches",
        {"allOf": [S, {"maxLength": 3}]},
        S,
        ["PRODUCT_TYPE_NARROWED #/"],
        True,
    ),
    row("anyOf becomes a non-combined schema", {"anyOf": [S, N]}, S, ["TYPE_CHANGED #/"], False),
    row("singleton oneOf becomes its branch", {"oneOf": [S]}, S, [], True),
    row(
        "type list extended",
        {"type": ["string"]},
        {"type": ["string", "null"]},
        ["SUM_TYPE_EXTENDED #/"],
        True,
    ),
    row(
        "type list narrowed",
        {"type": ["string", "null"]},
        {"type": ["string"]},
        ["SUM_TYPE_NARROWED #/"],
        False,
    ),
    row(
        "nullable becomes non-nullable", {"type": ["string", "null"]}, S, ["TYPE_CHANGED #/"], False
    ),
    row(
        "non-nullable becomes nullable",
        S,
        {"type": ["null", "string"]},
        ["SUM_TYPE_EXTENDED #/"],
        True,
    ),
    # ---- references ---------------------------------------------------------------------------
    row(
        "change behind a local $ref",
        obj({"a": {"$ref": "#/definitions/x"}}, definitions={"x": S}),
        obj({"a": {"$ref": "#/definitions/x"}}, definitions={"x": N}),
        ["TYPE_CHANGED #/properties/a"],
        False,
    ),
    row(
        "inline schema moved behind a $ref",
        obj({"a": S}),
        obj({"a": {"$ref": "#/$defs/x"}}, **{"$defs": {"x": S}}),
        [],
        True,
    ),
    row(
        "$ref into $defs (2020-12)",
        d2020(obj({"a": {"$ref": "#/$defs/x"}}, **{"$defs": {"x": S}})),
        d2020(obj({"a": {"$ref": "#/$defs/x"}}, **{"$defs": {"x": {**S, "maxLength": 2}}})),
        ["MAX_LENGTH_ADDED #/properties/a/maxLength"],
        False,
    ),
    row(
        "$ref siblings other than annotations are ignored (draft 7)",
        obj({"a": {"$ref": "#/definitions/x", "maxLength": 1}}, definitions={"x": S}),
        obj({"a": S}),
        [],
        True,
    ),
    row(
        "recursive schema unchanged",
        obj({"v": S, "next": {"$ref": "#"}}),
        obj({"v": S, "next": {"$ref": "#"}}),
        [],
        True,
    ),
    row(
        "recursive schema changed: reported through the cycle too (fixed point)",
        obj({"v": S, "next": {"$ref": "#"}}),
        obj({"v": N, "next": {"$ref": "#"}}),
        ["TYPE_CHANGED #/properties/next/properties/v", "TYPE_CHANGED #/properties/v"],
        False,
    ),
]


def _ids(rows: list[Row]) -> list[str]:
    return [r[0] for r in rows]


def _parse(schema: Any, deps: tuple[Dependency, ...] = ()) -> Any:
    return FMT.parse(json.dumps(schema), deps, strict=False)


def test_the_table_is_large_and_names_are_unique() -> None:
    assert len(ROWS) > 150
    assert len(set(_ids(ROWS))) == len(ROWS)


@pytest.mark.parametrize(
    ("rule", "old", "new", "changes", "strict", "lenient"), ROWS, ids=_ids(ROWS)
)
def test_rule(
    rule: str, old: Any, new: Any, changes: list[str], strict: bool, lenient: bool
) -> None:
    writer, reader = _parse(old), _parse(new)
    for policy, expected in ((STRICT, strict), (LENIENT, lenient)):
        diffs = FMT.differences(reader, writer, policy)
        if policy == STRICT or not changes or "NOT_COVERED" not in " ".join(changes):
            assert [str(d) for d in diffs] == changes, policy
        errors = FMT.compatibility_errors(reader, writer, policy=policy)
        assert (errors == []) is expected, (policy, errors)


# ---- beyond the table: policy-dependent differences, messages, labels, references ----------


def test_coverage_by_a_partially_open_model_is_judged_under_the_policy() -> None:
    writer = _parse(obj(additionalProperties=obj()))
    reader = _parse(obj({"x": obj({"z": S})}, additionalProperties=obj()))
    lenient = [str(d) for d in FMT.differences(reader, writer, LENIENT)]
    assert lenient == [
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/x/properties/z",
        "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL #/properties/x",
        "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL #/properties/x",
    ]


def test_message_format_matches_confluent_including_the_mismatched_quote() -> None:
    errors = FMT.compatibility_errors(_parse(obj({"a": B})), _parse(obj({"a": S})))
    assert errors == [
        '{errorType:"TYPE_CHANGED", description:"A type at path \'#/properties/a\' is different '
        "between the new schema and the old schema'}"
    ]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            S,
            {**S, "maxLength": 2},
            '{errorType:"MAX_LENGTH_ADDED", description:"The keyword at '
            "path '#/maxLength' in the new schema is not present in the old schema'}",
        ),
        (
            {**S, "minLength": 1},
            {**S, "minLength": 2},
            '{errorType:"MIN_LENGTH_INCREASED", '
            "description:\"The value at path '#/minLength' in the new schema is more than its "
            "value in the old schema'}",
        ),
        (
            {**N, "maximum": 2},
            {**N, "maximum": 1},
            '{errorType:"MAXIMUM_DECREASED", '
            "description:\"The value at path '#/maximum' in the new schema is less than its "
            "value in the old schema'}",
        ),
        (
            {**S, "pattern": "a"},
            {**S, "pattern": "b"},
            '{errorType:"PATTERN_CHANGED", '
            "description:\"The value at path '#/pattern' is different between the new and old "
            "schema'}",
        ),
        (
            {"enum": [1, 2]},
            {"enum": [1]},
            '{errorType:"ENUM_ARRAY_NARROWED", description:"An '
            "array or combined type at path '#/enum' has fewer elements in the new schema than the "
            "old schema'}",
        ),
        (
            {"not": {**S, "maxLength": 1}},
            {"not": S},
            '{errorType:"NOT_TYPE_EXTENDED", '
            "description:\"An array or combined type at path '#/not' has more elements in the new "
            "schema than the old schema'}",
        ),
        (
            obj(),
            obj({"b": S}),
            '{errorType:"OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", '
            'description:"The new schema has an open content model and has a property or item at '
            "path '#/properties/b' which is missing in the old schema'}",
        ),
        (
            closed(),
            closed({"b": S}, required=["b"]),
            '{errorType:"REQUIRED_PROPERTY_ADDED_TO_'
            'UNOPEN_CONTENT_MODEL", description:"The new schema has an unopen content model and '
            "has a required property at path '#/properties/b' which is missing in the old schema'}",
        ),
        (
            closed({"b": S}),
            closed(),
            '{errorType:"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", '
            'description:"The new has a closed content model and is missing a property or item '
            "present at path '#/properties/b' in the old schema'}",
        ),
        (
            closed({"b": I}),
            obj(additionalProperties=S),
            '{errorType:"PROPERTY_REMOVED_NOT_'
            'COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", description:"A property or item is missing '
            "in the new schema but present at path '#/properties/b' in the old schema and is not "
            "covered by its partially open content model'}",
        ),
        (
            obj(additionalProperties=S),
            obj({"b": I}, additionalProperties=S),
            '{errorType:"'
            'PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL", description:"The new '
            "schema has a property or item at path '#/properties/b' which is missing in the old "
            "schema and is not covered by its partially open content model'}",
        ),
        (arr(), arr(items=S), '{errorType:"SCHEMA_ADDED", description:"\'}'),
    ],
    ids=[
        "keyword added",
        "value increased",
        "value decreased",
        "value changed",
        "type narrowed",
        "type extended",
        "added to open model",
        "required added to unopen model",
        "removed from closed model",
        "removed not covered",
        "added not covered",
        "no template (SCHEMA_ADDED)",
    ],
)
def test_description_templates(old: Any, new: Any, message: str) -> None:
    errors = FMT.compatibility_errors(_parse(new), _parse(old))
    assert message in errors


def test_forward_direction_swaps_the_labels() -> None:
    old, new = _parse(S), _parse({**S, "maxLength": 2})
    # FORWARD: the old schema reads data written with the new one
    assert FMT.compatibility_errors(old, new, reader_label="old", writer_label="new") == []
    errors = FMT.compatibility_errors(new, old, reader_label="old", writer_label="new")
    assert errors == [
        '{errorType:"MAX_LENGTH_ADDED", description:"The keyword at path \'#/maxLength\' in the '
        "old schema is not present in the new schema'}"
    ]


def test_policy_as_constructor_default_and_as_call_argument() -> None:
    writer, reader = _parse(obj({"a": S})), _parse(obj({"a": S, "b": S}))
    assert FMT.compatibility_errors(reader, writer) != []
    assert FMT.compatibility_errors(reader, writer, policy="lenient") == []
    lenient_format = JsonSchemaFormat(policy="LENIENT")
    assert lenient_format.compatibility_errors(reader, writer) == []
    assert lenient_format.compatibility_errors(reader, writer, policy="STRICT") != []
    with pytest.raises(ValueError, match="unknown compatibility policy"):
        JsonSchemaFormat(policy="LOOSE")


def test_other_format_is_a_different_schema_type() -> None:
    from registry.formats.avro import AvroFormat

    avro = AvroFormat().parse('"string"')
    assert FMT.compatibility_errors(_parse(S), avro) == [
        "Incompatible because of different schema type"
    ]


def test_change_in_a_referenced_subject_schema_is_found_through_the_reference() -> None:
    old_dep = Dependency("address.json", json.dumps(obj({"zip": S})))
    new_dep = Dependency("address.json", json.dumps(obj({"zip": I})))
    root = obj({"home": {"$ref": "address.json"}, "work": {"$ref": "address.json"}})
    writer, reader = _parse(root, (old_dep,)), _parse(root, (new_dep,))
    # Java HashSet order of the property names, as Confluent prints them
    assert [str(d) for d in FMT.differences(reader, writer)] == [
        "TYPE_CHANGED #/properties/work/properties/zip",
        "TYPE_CHANGED #/properties/home/properties/zip",
    ]


def _memo_trap(t0_id: str, t1_id: str) -> dict[str, Any]:
    """``T0 -> T2 -> T0`` is a cycle through singleton oneOfs; the root is ``oneOf[T0, T1]``."""

    def node(id_type: str, target: str) -> dict[str, Any]:
        return obj(
            {"id": {"type": id_type}, "ref": {"oneOf": [{"$ref": f"#/definitions/{target}"}]}}
        )

    return {
        "definitions": {
            "T0": node(t0_id, "T2"),
            "T1": node(t1_id, "T2"),
            "T2": node("string", "T0"),
        },
        "oneOf": [{"$ref": "#/definitions/T0"}, {"$ref": "#/definitions/T1"}],
    }


def test_recursive_cycle_assumption_does_not_mask_an_incompatibility() -> None:
    writer = _parse(_memo_trap("integer", "boolean"))
    reader = _parse(_memo_trap("boolean", "number"))
    assert FMT.compatibility_errors(reader, writer) != []
    same = _parse(_memo_trap("integer", "boolean"))
    assert FMT.compatibility_errors(same, writer) == []
