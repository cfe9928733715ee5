"""Confluent's JSON Schema difference types, which of them are compatible under each policy, and
how a difference is printed (``Difference.toString()`` of ``json-schema-provider``, including the
mismatched closing quote of its description)."""

from __future__ import annotations

from typing import NamedTuple

STRICT = "STRICT"
LENIENT = "LENIENT"
POLICIES = (STRICT, LENIENT)

COMPATIBLE_STRICT = frozenset(
    {
        "ID_CHANGED",
        "DESCRIPTION_CHANGED",
        "TITLE_CHANGED",
        "DEFAULT_CHANGED",
        "SCHEMA_REMOVED",
        "TYPE_EXTENDED",
        "MAX_LENGTH_INCREASED",
        "MAX_LENGTH_REMOVED",
        "MIN_LENGTH_DECREASED",
        "MIN_LENGTH_REMOVED",
        "PATTERN_REMOVED",
        "MAXIMUM_INCREASED",
        "MAXIMUM_REMOVED",
        "MINIMUM_DECREASED",
        "MINIMUM_REMOVED",
        "EXCLUSIVE_MAXIMUM_INCREASED",
        "EXCLUSIVE_MAXIMUM_REMOVED",
        "EXCLUSIVE_MINIMUM_DECREASED",
        "EXCLUSIVE_MINIMUM_REMOVED",
        "MULTIPLE_OF_REDUCED",
        "MULTIPLE_OF_REMOVED",
        "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED",
        "REQUIRED_ATTRIBUTE_REMOVED",
        "DEPENDENCY_ARRAY_NARROWED",
        "DEPENDENCY_ARRAY_REMOVED",
        "DEPENDENCY_SCHEMA_REMOVED",
        "MAX_PROPERTIES_INCREASED",
        "MAX_PROPERTIES_REMOVED",
        "MIN_PROPERTIES_DECREASED",
        "MIN_PROPERTIES_REMOVED",
        "ADDITIONAL_PROPERTIES_ADDED",
        "ADDITIONAL_PROPERTIES_EXTENDED",
        "UNEVALUATED_PROPERTIES_ADDED",
        "UNEVALUATED_PROPERTIES_EXTENDED",
        "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL",
        "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL",
        "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL",
        "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "MAX_ITEMS_INCREASED",
        "MAX_ITEMS_REMOVED",
        "MIN_ITEMS_DECREASED",
        "MIN_ITEMS_REMOVED",
        "MAX_CONTAINS_INCREASED",
        "MAX_CONTAINS_REMOVED",
        "MIN_CONTAINS_DECREASED",
        "MIN_CONTAINS_REMOVED",
        "UNIQUE_ITEMS_REMOVED",
        "ADDITIONAL_ITEMS_ADDED",
        "ADDITIONAL_ITEMS_EXTENDED",
        "UNEVALUATED_ITEMS_ADDED",
        "UNEVALUATED_ITEMS_EXTENDED",
        "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL",
        "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ENUM_ARRAY_EXTENDED",
        "COMBINED_TYPE_EXTENDED",
        "PRODUCT_TYPE_NARROWED",
        "SUM_TYPE_EXTENDED",
        "NOT_TYPE_NARROWED",
    }
)

#: Confluent 8.2's ``compatibilityPolicy: LENIENT`` tolerates these as well
LENIENT_ADDITIONS = frozenset(
    {
        "ADDITIONAL_PROPERTIES_NARROWED",
        "ADDITIONAL_PROPERTIES_REMOVED",
        "UNEVALUATED_PROPERTIES_NARROWED",
        "UNEVALUATED_PROPERTIES_REMOVED",
        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL",
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
        "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    }
)
COMPATIBLE_LENIENT = COMPATIBLE_STRICT | LENIENT_ADDITIONS


def compatible_changes(policy: str | None) -> frozenset[str]:
    """The compatible difference types of a ``compatibilityPolicy`` (STRICT when unset)."""
    if policy is not None and policy.strip().upper() == LENIENT:
        return COMPATIBLE_LENIENT
    return COMPATIBLE_STRICT


_KEYWORD_ADDED_OR_REMOVED = frozenset(
    {
        "MAXIMUM_ADDED",
        "MINIMUM_ADDED",
        "EXCLUSIVE_MAXIMUM_ADDED",
        "EXCLUSIVE_MINIMUM_ADDED",
        "MULTIPLE_OF_ADDED",
        "MAX_LENGTH_ADDED",
        "MIN_LENGTH_ADDED",
        "PATTERN_ADDED",
        "REQUIRED_ATTRIBUTE_ADDED",
        "MAX_PROPERTIES_ADDED",
        "MIN_PROPERTIES_ADDED",
        "DEPENDENCY_ARRAY_ADDED",
        "DEPENDENCY_SCHEMA_ADDED",
        "MAX_ITEMS_ADDED",
        "MIN_ITEMS_ADDED",
        "MAX_CONTAINS_ADDED",
        "MIN_CONTAINS_ADDED",
        "UNIQUE_ITEMS_ADDED",
        "ADDITIONAL_ITEMS_REMOVED",
        "ADDITIONAL_PROPERTIES_REMOVED",
        "UNEVALUATED_PROPERTIES_REMOVED",
        "UNEVALUATED_ITEMS_REMOVED",
    }
)
_VALUE_INCREASED = frozenset(
    {
        "MIN_LENGTH_INCREASED",
        "MINIMUM_INCREASED",
        "EXCLUSIVE_MINIMUM_INCREASED",
        "MIN_PROPERTIES_INCREASED",
        "MULTIPLE_OF_EXPANDED",
        "MIN_ITEMS_INCREASED",
        "MIN_CONTAINS_INCREASED",
    }
)
_VALUE_DECREASED = frozenset(
    {
        "MAX_LENGTH_DECREASED",
        "MAXIMUM_DECREASED",
        "MAX_ITEMS_DECREASED",
        "MAX_CONTAINS_DECREASED",
        "EXCLUSIVE_MAXIMUM_DECREASED",
        "MAX_PROPERTIES_DECREASED",
    }
)
_TYPE_NARROWED = frozenset(
    {
        "ADDITIONAL_ITEMS_NARROWED",
        "ENUM_ARRAY_NARROWED",
        "SUM_TYPE_NARROWED",
        "ADDITIONAL_PROPERTIES_NARROWED",
        "UNEVALUATED_PROPERTIES_NARROWED",
        "UNEVALUATED_ITEMS_NARROWED",
    }
)
_VALUE_CHANGED = frozenset({"PATTERN_CHANGED", "MULTIPLE_OF_CHANGED", "DEPENDENCY_ARRAY_CHANGED"})
_TYPE_CHANGED = frozenset(
    {
        "TYPE_CHANGED",
        "TYPE_NARROWED",
        "COMBINED_TYPE_CHANGED",
        "COMBINED_TYPE_SUBSCHEMAS_CHANGED",
        "ENUM_ARRAY_CHANGED",
    }
)
_TYPE_EXTENDED = frozenset(
    {"DEPENDENCY_ARRAY_EXTENDED", "PRODUCT_TYPE_EXTENDED", "SUM_TYPE_EXTENDED", "NOT_TYPE_EXTENDED"}
)
_ADDED_TO_OPEN = frozenset(
    {
        "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
        "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
        "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL",
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_TO_OPEN_CONTENT_MODEL",
    }
)


def description_template(kind: str, path: str) -> str:
    """Confluent's description with ``%s`` slots: the first for the reader's label ("new" in a
    backward check), the second for the writer's."""
    if kind in _KEYWORD_ADDED_OR_REMOVED:
        return f"The keyword at path '{path}' in the %s schema is not present in the %s schema"
    if kind in _VALUE_INCREASED:
        return (
            f"The value at path '{path}' in the %s schema is more than its value in the %s schema"
        )
    if kind in _VALUE_DECREASED:
        return (
            f"The value at path '{path}' in the %s schema is less than its value in the %s schema"
        )
    if kind in _VALUE_CHANGED:
        return f"The value at path '{path}' is different between the %s and %s schema"
    if kind in _TYPE_NARROWED:
        return (
            f"An array or combined type at path '{path}' has fewer elements in the %s schema "
            "than the %s schema"
        )
    if kind in _TYPE_EXTENDED:
        return (
            f"An array or combined type at path '{path}' has more elements in the %s schema "
            "than the %s schema"
        )
    if kind in _TYPE_CHANGED:
        return f"A type at path '{path}' is different between the %s schema and the %s schema"
    if kind in _ADDED_TO_OPEN:
        return (
            f"The %s schema has an open content model and has a property or item at path "
            f"'{path}' which is missing in the %s schema"
        )
    if kind == "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL":
        return (
            f"The %s schema has an unopen content model and has a required property at path "
            f"'{path}' which is missing in the %s schema"
        )
    if kind in (
        "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL",
        "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL",
    ):
        return (
            "The %s has a closed content model and is missing a property or item present at "
            f"path '{path}' in the %s schema"
        )
    if kind in (
        "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    ):
        return (
            f"A property or item is missing in the %s schema but present at path '{path}' in "
            "the %s schema and is not covered by its partially open content model"
        )
    if kind in (
        "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
        "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL",
    ):
        return (
            f"The %s schema has a property or item at path '{path}' which is missing in the %s "
            "schema and is not covered by its partially open content model"
        )
    return ""


class Difference(NamedTuple):
    """One change between the writer ("original") and the reader ("update") schema."""

    type: str
    path: str

    def message(self, reader_label: str = "new", writer_label: str = "old") -> str:
        """Confluent's string: ``{errorType:"T", description:"...'}`` with the labels filled."""
        template = description_template(self.type, self.path)
        head, sep, rest = template.partition("%s")
        if sep:
            middle, sep2, tail = rest.partition("%s")
            text = head + reader_label + middle + (writer_label + tail if sep2 else "")
        else:
            text = template
        return f'{{errorType:"{self.type}", description:"{text}\'}}'

    def __str__(self) -> str:
        return f"{self.type} {self.path}"
