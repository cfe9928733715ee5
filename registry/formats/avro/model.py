"""The parsed form of an Avro schema: a small graph of slotted nodes.

The graph mirrors Apache Avro Java's ``Schema`` objects closely enough that printing and
compatibility checking behave the same way:

* every occurrence of a primitive, array, map or union in the text is its own node object
  (Avro creates a new ``Schema`` for each), while a named type referenced by name is the *same*
  node object as its definition. Compatibility memoisation is keyed on node identity, so this
  distinction decides which incompatibilities Avro reports (and at which path).
* properties (``props``) keep the JSON values of all non-reserved attributes in text order.
* ``logical`` is the logical type Avro Java 1.11 recognises as *valid* (``None`` otherwise); it
  only influences the normalised form.
"""

from __future__ import annotations

from typing import Any

JsonValue = Any
"""A value produced by :func:`json.loads` (dict, list, str, int, float, bool or None)."""

PRIMITIVE_TYPES: frozenset[str] = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
"""Avro's primitive type names (``Schema.PRIMITIVES``)."""

ALL_TYPE_NAMES: frozenset[str] = PRIMITIVE_TYPES | {
    "record",
    "enum",
    "array",
    "map",
    "union",
    "fixed",
}
"""Every ``Schema.Type`` name; a reference printed with one of these as its short name is
always written fully qualified (``Name.shouldWriteFull``)."""


class _NoDefault:
    """Marker for a field without a ``default`` attribute (``null`` is a valid default)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


class LogicalType:
    """A logical type Avro Java accepts for its schema (``decimal`` carries its parameters)."""

    __slots__ = ("name", "precision", "scale")

    def __init__(self, name: str, precision: int = 0, scale: int = 0) -> None:
        self.name = name
        self.precision = precision
        self.scale = scale

    def __repr__(self) -> str:
        if self.name == "decimal":
            return f"LogicalType(decimal({self.precision},{self.scale}))"
        return f"LogicalType({self.name})"


class Schema:
    """Base of all schema nodes. ``type`` is Avro's lower-case type name."""

    __slots__ = ("logical", "props", "type")

    def __init__(self, type_: str, props: dict[str, JsonValue] | None = None) -> None:
        self.type = type_
        self.props: dict[str, JsonValue] = props if props is not None else {}
        self.logical: LogicalType | None = None

    @property
    def type_upper(self) -> str:
        """The Java enum constant name (``INT``, ``RECORD``...) used in Avro's messages."""
        return self.type.upper()

    @property
    def fullname(self) -> str:
        """``getFullName()``: the full name for named types, the type name otherwise."""
        return self.type

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.fullname}>"


class PrimitiveSchema(Schema):
    __slots__ = ()


class ArraySchema(Schema):
    __slots__ = ("items",)

    def __init__(self, items: Schema, props: dict[str, JsonValue] | None = None) -> None:
        super().__init__("array", props)
        self.items = items


class MapSchema(Schema):
    __slots__ = ("values",)

    def __init__(self, values: Schema, props: dict[str, JsonValue] | None = None) -> None:
        super().__init__("map", props)
        self.values = values


class UnionSchema(Schema):
    __slots__ = ("types",)

    def __init__(self, types: list[Schema]) -> None:
        super().__init__("union")
        self.types = types


class Alias:
    """An alias of a named type, resolved against the type's namespace (Avro's ``Name``)."""

    __slots__ = ("full", "name", "space")

    def __init__(self, name: str, space: str | None) -> None:
        self.name = name
        self.space = space
        self.full = name if space is None else f"{space}.{name}"


class NamedSchema(Schema):
    """record, error, enum and fixed."""

    __slots__ = ("_fullname", "aliases", "doc", "name", "namespace")

    def __init__(
        self,
        type_: str,
        name: str,
        namespace: str | None,
        doc: str | None,
        props: dict[str, JsonValue] | None = None,
    ) -> None:
        super().__init__(type_, props)
        self.name = name
        self.namespace = namespace
        self._fullname = name if namespace is None else f"{namespace}.{name}"
        self.doc = doc
        self.aliases: list[Alias] = []

    @property
    def fullname(self) -> str:
        return self._fullname

    def alias_fullnames(self) -> list[str]:
        """``getAliases()``: the aliases' full names."""
        return [a.full for a in self.aliases]


class Field:
    """A record field. ``default`` is :data:`NO_DEFAULT` when absent."""

    __slots__ = ("aliases", "default", "doc", "name", "order", "pos", "props", "schema")

    def __init__(
        self,
        name: str,
        schema: Schema,
        doc: str | None,
        default: JsonValue,
        order: str,
        pos: int,
    ) -> None:
        self.name = name
        self.schema = schema
        self.doc = doc
        self.default = default
        self.order = order  # "ascending", "descending" or "ignore"
        self.pos = pos
        self.aliases: list[str] = []
        self.props: dict[str, JsonValue] = {}

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def __repr__(self) -> str:
        # Avro's Field.toString, used in some error messages.
        return f"{self.name} type:{self.schema.type_upper} pos:{self.pos}"


class RecordSchema(NamedSchema):
    __slots__ = ("field_map", "fields", "is_error")

    def __init__(
        self,
        name: str,
        namespace: str | None,
        doc: str | None,
        is_error: bool = False,
        props: dict[str, JsonValue] | None = None,
    ) -> None:
        super().__init__("record", name, namespace, doc, props)
        self.is_error = is_error
        self.fields: list[Field] = []
        self.field_map: dict[str, Field] = {}


class EnumSchema(NamedSchema):
    __slots__ = ("default", "symbol_set", "symbols")

    def __init__(
        self,
        name: str,
        namespace: str | None,
        doc: str | None,
        symbols: list[str],
        default: str | None,
        props: dict[str, JsonValue] | None = None,
    ) -> None:
        super().__init__("enum", name, namespace, doc, props)
        self.symbols = symbols
        self.symbol_set = frozenset(symbols)
        self.default = default


class FixedSchema(NamedSchema):
    __slots__ = ("size",)

    def __init__(
        self,
        name: str,
        namespace: str | None,
        doc: str | None,
        size: int,
        props: dict[str, JsonValue] | None = None,
    ) -> None:
        super().__init__("fixed", name, namespace, doc, props)
        self.size = size
