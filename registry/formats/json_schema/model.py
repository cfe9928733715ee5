"""The schema model the compatibility rules work on, shaped like the Everit JSON Schema model
Confluent uses: one class per kind of schema (string, number, object, array, enum, const,
combined, not, reference, ...), so "the schema type changed" is "the class changed".
"""

from __future__ import annotations

from typing import Any


class Schema:
    """Common properties of every schema (Everit's ``Schema``)."""

    __slots__ = (
        "default",
        "description",
        "fingerprint",
        "has_default",
        "id",
        "source",
        "title",
        "unprocessed",
    )

    def __init__(self, source: Any = None) -> None:
        self.source = source
        #: the sorted JSON text of a reference-free ``source`` ("" when not usable), computed on
        #: first use by the comparison to skip structurally identical subtrees
        self.fingerprint: str | None = None
        self.id: str | None = None
        self.title: str | None = None
        self.description: str | None = None
        self.has_default = False
        self.default: Any = None
        self.unprocessed: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.source!r})"


class EmptySchema(Schema):
    """``{}`` or an object with no validation keyword: accepts everything."""

    __slots__ = ()


class TrueSchema(EmptySchema):
    """The boolean schema ``true``."""

    __slots__ = ()


class FalseSchema(Schema):
    """The boolean schema ``false``: accepts nothing."""

    __slots__ = ()


class BooleanSchema(Schema):
    __slots__ = ()


class NullSchema(Schema):
    __slots__ = ()


class StringSchema(Schema):
    __slots__ = ("max_length", "min_length", "pattern")

    def __init__(self, source: Any = None) -> None:
        super().__init__(source)
        self.min_length: int | None = None
        self.max_length: int | None = None
        self.pattern: str | None = None


class NumberSchema(Schema):
    __slots__ = (
        "exclusive_maximum",
        "exclusive_minimum",
        "maximum",
        "minimum",
        "multiple_of",
        "requires_integer",
    )

    def __init__(self, source: Any = None) -> None:
        super().__init__(source)
        self.requires_integer = False
        self.minimum: Any = None
        self.maximum: Any = None
        self.exclusive_minimum: Any = None
        self.exclusive_maximum: Any = None
        self.multiple_of: Any = None


class ObjectSchema(Schema):
    __slots__ = (
        "additional_permitted",
        "additional_schema",
        "max_properties",
        "min_properties",
        "pattern_properties",
        "properties",
        "property_dependencies",
        "required",
        "schema_dependencies",
        "unevaluated",
    )

    def __init__(self, source: Any = None) -> None:
        super().__init__(source)
        self.properties: dict[str, Schema] = {}
        self.required: list[str] = []
        self.additional_permitted = True
        self.additional_schema: Schema | None = None
        self.pattern_properties: list[tuple[Any, Schema]] = []
        self.property_dependencies: dict[str, set[str]] = {}
        self.schema_dependencies: dict[str, Schema] = {}
        self.min_properties: int | None = None
        self.max_properties: int | None = None
        self.unevaluated: Schema | None = None


class ArraySchema(Schema):
    __slots__ = (
        "additional_permitted",
        "additional_schema",
        "all_items",
        "item_schemas",
        "max_contains",
        "max_items",
        "min_contains",
        "min_items",
        "unevaluated",
        "unique_items",
    )

    def __init__(self, source: Any = None) -> None:
        super().__init__(source)
        self.all_items: Schema | None = None
        self.item_schemas: list[Schema] | None = None
        self.additional_permitted = True
        self.additional_schema: Schema | None = None
        self.min_items: int | None = None
        self.max_items: int | None = None
        self.unique_items = False
        self.min_contains: Any = None
        self.max_contains: Any = None
        self.unevaluated: Schema | None = None


class EnumSchema(Schema):
    __slots__ = ("values",)

    def __init__(self, source: Any = None, values: list[Any] | None = None) -> None:
        super().__init__(source)
        self.values: list[Any] = values or []


class ConstSchema(Schema):
    __slots__ = ("value",)

    def __init__(self, source: Any = None, value: Any = None) -> None:
        super().__init__(source)
        self.value = value


class CombinedSchema(Schema):
    """``allOf``/``anyOf``/``oneOf``; also Everit's synthetic forms (a ``type`` list is an
    ``anyOf``, several kinds of keyword in one object are an ``allOf``)."""

    __slots__ = ("criterion", "subschemas", "synthetic")

    def __init__(
        self, source: Any, criterion: str, subschemas: list[Schema], synthetic: bool = False
    ) -> None:
        super().__init__(source)
        self.criterion = criterion
        self.subschemas = subschemas
        self.synthetic = synthetic


class NotSchema(Schema):
    __slots__ = ("must_not_match",)

    def __init__(self, source: Any = None, must_not_match: Schema | None = None) -> None:
        super().__init__(source)
        self.must_not_match = must_not_match


class ConditionalSchema(Schema):
    """``if``/``then``/``else`` (not compared, as in Confluent)."""

    __slots__ = ()


class ReferenceSchema(Schema):
    """A ``$ref``; ``target`` is the referred schema."""

    __slots__ = ("ref", "target")

    def __init__(self, source: Any, ref: str) -> None:
        super().__init__(source)
        self.ref = ref
        self.target: Schema | None = None


def deref(schema: Schema) -> Schema:
    """The schema a reference (or a chain of references) points to."""
    seen = 0
    while isinstance(schema, ReferenceSchema):
        if schema.target is None or seen > 64:
            return EmptySchema(schema.source)
        schema = schema.target
        seen += 1
    return schema
