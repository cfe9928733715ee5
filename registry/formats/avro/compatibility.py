"""Reader/writer compatibility, as Apache Avro Java 1.11 ``SchemaCompatibility`` computes it,
and the difference strings Confluent's Avro provider (``avro/Difference.java``) makes of it.

Behaviour that matters for matching Confluent's messages exactly:

* results are memoised per (reader node, writer node) *identity*; a pair met again while it is
  being checked is compatible (recursive types), and a pair met again later returns the first
  result, with the paths recorded the first time;
* a writer union read by a non-union reader, and every union branch probe, is checked from a
  fresh root (Avro calls the two-argument ``getCompatibility``), so the paths of those
  incompatibilities start again at ``/``;
* all incompatibilities are collected, in Avro's order.
"""

from __future__ import annotations

from registry import budget
from registry.formats.avro.model import (
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from registry.formats.avro.printer import schema_json

NAME_MISMATCH = "NAME_MISMATCH"
FIXED_SIZE_MISMATCH = "FIXED_SIZE_MISMATCH"
MISSING_ENUM_SYMBOLS = "MISSING_ENUM_SYMBOLS"
READER_FIELD_MISSING_DEFAULT_VALUE = "READER_FIELD_MISSING_DEFAULT_VALUE"
TYPE_MISMATCH = "TYPE_MISMATCH"
MISSING_UNION_BRANCH = "MISSING_UNION_BRANCH"

_PRIMITIVES_SAME = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
# writer types each reader type can be promoted from
_PROMOTIONS: dict[str, frozenset[str]] = {
    "long": frozenset({"int"}),
    "float": frozenset({"int", "long"}),
    "double": frozenset({"int", "long", "float"}),
    "bytes": frozenset({"string"}),
    "string": frozenset({"bytes"}),
}


class Incompatibility:
    """One of Avro's ``SchemaCompatibility.Incompatibility``: type, message, JSON pointer."""

    __slots__ = ("location", "message", "type")

    def __init__(self, type_: str, message: str, location: str) -> None:
        self.type = type_
        self.message = message
        self.location = location

    def __repr__(self) -> str:
        return f"Incompatibility({self.type}, {self.location!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Incompatibility)
            and self.type == other.type
            and self.message == other.message
            and self.location == other.location
        )

    def __hash__(self) -> int:
        return hash((self.type, self.message, self.location))


class _Result:
    """An immutable compatibility result (shared through the memo)."""

    __slots__ = ("compatible", "incompatibilities")

    def __init__(self, compatible: bool, incompatibilities: tuple[Incompatibility, ...]) -> None:
        self.compatible = compatible
        self.incompatibilities = incompatibilities

    def merged(self, other: _Result) -> _Result:
        if other is _COMPATIBLE:
            return self
        if self is _COMPATIBLE:
            return other
        return _Result(
            self.compatible and other.compatible,
            self.incompatibilities + other.incompatibilities,
        )


_COMPATIBLE = _Result(True, ())


class MultipleFieldMatchError(Exception):
    """A reader field matches several writer fields (by name and aliases): Avro throws."""


def _pointer(location: list[str]) -> str:
    # Avro's Incompatibility.getLocation: the root token is dropped, JSON pointer escaping.
    return "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in location[1:])


def _incompatible(type_: str, message: str, location: list[str]) -> _Result:
    return _Result(False, (Incompatibility(type_, message, _pointer(location)),))


def schema_name_equals(reader: NamedSchema, writer: NamedSchema) -> bool:
    """Unqualified names equal, or a reader alias equal to the writer's full name."""
    if reader.name == writer.name:
        return True
    full = writer.fullname
    return any(alias.full == full for alias in reader.aliases)


def lookup_writer_field(writer: RecordSchema, reader_field: Field) -> Field | None:
    """The writer field read by ``reader_field``: by name, else by one of its aliases."""
    matches: list[Field] = []
    direct = writer.field_map.get(reader_field.name)
    if direct is not None:
        matches.append(direct)
    for alias in reader_field.aliases:
        found = writer.field_map.get(alias)
        if found is not None:
            matches.append(found)
    if not matches:
        return None
    if len(matches) == 1:
        return matches[0]
    raise MultipleFieldMatchError(
        f"Reader record field {reader_field!r} matches multiple fields in writer record "
        f"schema {schema_json(writer)}"
    )


def _branch_keys(schema: Schema, *, as_reader: bool) -> list[tuple[str, str, str]]:
    if not isinstance(schema, NamedSchema):
        return [("type", schema.type, "")]
    if as_reader:  # schema_name_equals: same unqualified name, or an alias of the full name
        return [("name", schema.type, schema.name)] + [
            ("alias", schema.type, alias.full) for alias in schema.aliases
        ]
    return [("name", schema.type, schema.name), ("alias", schema.type, schema.fullname)]


class _Checker:
    __slots__ = ("memo", "unions")

    def __init__(self) -> None:
        # None marks a pair whose check is in progress (recursion).
        self.memo: dict[tuple[int, int], _Result | None] = {}
        self.unions: dict[int, dict[tuple[str, str, str], list[Schema]]] = {}

    def _likely_branches(self, reader: UnionSchema, writer: Schema) -> list[Schema]:
        """The reader branches of ``writer``'s type (and name), in union order."""
        index = self.unions.get(id(reader))
        if index is None:
            index = {}
            for branch in reader.types:
                for key in _branch_keys(branch, as_reader=True):
                    found = index.setdefault(key, [])
                    if not found or found[-1] is not branch:
                        found.append(branch)
            self.unions[id(reader)] = index
        out: list[Schema] = []
        for key in _branch_keys(writer, as_reader=False):
            out.extend(index.get(key, ()))
        return out

    def check(self, token: str, reader: Schema, writer: Schema, location: list[str]) -> _Result:
        budget.charge()
        location.append(token)
        key = (id(reader), id(writer))
        memo = self.memo
        if key in memo:
            result = memo[key]
            if result is None:
                result = _COMPATIBLE
        else:
            memo[key] = None
            result = self._calculate(reader, writer, location)
            memo[key] = result
        location.pop()
        return result

    def check_fresh(self, reader: Schema, writer: Schema) -> _Result:
        return self.check("", reader, writer, [])

    def _calculate(self, reader: Schema, writer: Schema, location: list[str]) -> _Result:
        rtype = reader.type
        wtype = writer.type
        if rtype == wtype:
            if rtype in _PRIMITIVES_SAME:
                return _COMPATIBLE
            if isinstance(reader, ArraySchema):
                assert isinstance(writer, ArraySchema)
                return self.check("items", reader.items, writer.items, location)
            if isinstance(reader, MapSchema):
                assert isinstance(writer, MapSchema)
                return self.check("values", reader.values, writer.values, location)
            if isinstance(reader, FixedSchema):
                assert isinstance(writer, FixedSchema)
                result = self._check_names(reader, writer, location)
                return result.merged(self._check_fixed_size(reader, writer, location))
            if isinstance(reader, EnumSchema):
                assert isinstance(writer, EnumSchema)
                result = self._check_names(reader, writer, location)
                return result.merged(self._check_enum_symbols(reader, writer, location))
            if isinstance(reader, RecordSchema):
                assert isinstance(writer, RecordSchema)
                result = self._check_names(reader, writer, location)
                return result.merged(self._check_record_fields(reader, writer, location))
            assert isinstance(reader, UnionSchema) and isinstance(writer, UnionSchema)
            result = _COMPATIBLE
            for index, branch in enumerate(writer.types):
                location.append(str(index))
                if not self.check_fresh(reader, branch).compatible:
                    result = result.merged(
                        _incompatible(
                            MISSING_UNION_BRANCH,
                            f"reader union lacking writer type: {branch.type_upper}",
                            location,
                        )
                    )
                location.pop()
            return result

        if isinstance(writer, UnionSchema):
            result = _COMPATIBLE
            for branch in writer.types:
                result = result.merged(self.check_fresh(reader, branch))
            return result
        if isinstance(reader, UnionSchema):
            # the branches of the writer's type and name first: a reordered union of n named
            # types is then matched in n probes, not n^2 (the verdict is the same: compatible
            # as soon as any branch is)
            for branch in self._likely_branches(reader, writer):
                if self.check_fresh(branch, writer).compatible:
                    return _COMPATIBLE
            for branch in reader.types:
                if self.check_fresh(branch, writer).compatible:
                    return _COMPATIBLE
            return _incompatible(
                MISSING_UNION_BRANCH,
                f"reader union lacking writer type: {writer.type_upper}",
                location,
            )
        promotable = _PROMOTIONS.get(rtype)
        if promotable is not None and wtype in promotable:
            return _COMPATIBLE
        return _incompatible(
            TYPE_MISMATCH,
            f"reader type: {reader.type_upper} not compatible with writer type: "
            f"{writer.type_upper}",
            location,
        )

    def _check_names(
        self, reader: NamedSchema, writer: NamedSchema, location: list[str]
    ) -> _Result:
        if schema_name_equals(reader, writer):
            return _COMPATIBLE
        location.append("name")
        result = _incompatible(NAME_MISMATCH, f"expected: {writer.fullname}", location)
        location.pop()
        return result

    def _check_fixed_size(
        self, reader: FixedSchema, writer: FixedSchema, location: list[str]
    ) -> _Result:
        if reader.size == writer.size:
            return _COMPATIBLE
        location.append("size")
        result = _incompatible(
            FIXED_SIZE_MISMATCH, f"expected: {writer.size}, found: {reader.size}", location
        )
        location.pop()
        return result

    def _check_enum_symbols(
        self, reader: EnumSchema, writer: EnumSchema, location: list[str]
    ) -> _Result:
        missing = [s for s in writer.symbols if s not in reader.symbol_set]
        if not missing:
            return _COMPATIBLE
        if reader.default is not None and reader.default in reader.symbol_set:
            return _COMPATIBLE
        location.append("symbols")
        # Java: TreeSet<String>.toString() (sorted, ", "-separated, in brackets)
        result = _incompatible(
            MISSING_ENUM_SYMBOLS, "[" + ", ".join(sorted(set(missing))) + "]", location
        )
        location.pop()
        return result

    def _check_record_fields(
        self, reader: RecordSchema, writer: RecordSchema, location: list[str]
    ) -> _Result:
        result = _COMPATIBLE
        location.append("fields")
        for reader_field in reader.fields:
            budget.charge()  # per field, compared or not
            location.append(str(reader_field.pos))
            writer_field = lookup_writer_field(writer, reader_field)
            if writer_field is None:
                if not reader_field.has_default:
                    field_schema = reader_field.schema
                    if isinstance(field_schema, EnumSchema) and field_schema.default is not None:
                        result = result.merged(self.check("type", field_schema, writer, location))
                    else:
                        result = result.merged(
                            _incompatible(
                                READER_FIELD_MISSING_DEFAULT_VALUE, reader_field.name, location
                            )
                        )
            else:
                result = result.merged(
                    self.check("type", reader_field.schema, writer_field.schema, location)
                )
            location.pop()
        location.pop()
        return result


def incompatibilities(reader: Schema, writer: Schema) -> list[Incompatibility]:
    """Everything that stops ``reader`` from reading data written with ``writer``.

    Raises :class:`MultipleFieldMatchError` where Avro throws.
    """
    return list(_Checker().check_fresh(reader, writer).incompatibilities)


_DESCRIPTIONS = {
    FIXED_SIZE_MISMATCH: (
        "The size of FIXED type field at path '{path}' in the {reader} schema does not match "
        "with the {writer} schema"
    ),
    TYPE_MISMATCH: (
        "The type (path '{path}') of a field in the {reader} schema does not match with the "
        "{writer} schema"
    ),
    NAME_MISMATCH: "The name of the schema has changed (path '{path}')",
    MISSING_ENUM_SYMBOLS: (
        "The {reader} schema is missing enum symbols '{message}' at path '{path}' in the "
        "{writer} schema"
    ),
    MISSING_UNION_BRANCH: (
        "The {reader} schema is missing a type inside a union field at path '{path}' in the "
        "{writer} schema"
    ),
    READER_FIELD_MISSING_DEFAULT_VALUE: (
        "The field '{message}' at path '{path}' in the {reader} schema has no default value "
        "and is missing in the {writer} schema"
    ),
}


def difference_string(item: Incompatibility, reader_label: str, writer_label: str) -> str:
    """Confluent's ``Difference.error()`` after ``String.format(msg, reader, writer)``."""
    template = _DESCRIPTIONS.get(item.type, "")
    description = template.format(
        path=item.location, message=item.message, reader=reader_label, writer=writer_label
    )
    return (
        f"{{errorType:'{item.type}', description:'{description}', additionalInfo:'{item.message}'}}"
    )


def compatibility_errors(
    reader: Schema, writer: Schema, reader_label: str = "new", writer_label: str = "old"
) -> list[str]:
    """Confluent-style difference strings; empty when ``reader`` can read ``writer`` data."""
    try:
        found = incompatibilities(reader, writer)
    except MultipleFieldMatchError as exc:
        return [f"Unexpected exception during compatibility check: {exc}"]
    return [difference_string(item, reader_label, writer_label) for item in found]
