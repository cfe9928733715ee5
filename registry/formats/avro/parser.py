"""Avro schema text -> :mod:`registry.formats.avro.model` graph.

Follows Apache Avro Java ``Schema.parse``: the same attribute handling, the same order of checks
and, where Avro has one, the same error message.

What is validated is a :class:`Validation`. :data:`NEW_SCHEMA` is what Confluent 8.x (Avro
1.12.1, ``schema.validate.new.schemas=true``) applies to *new* schemas: names, namespaces, enum
symbols and aliases must match ``[A-Za-z_][A-Za-z0-9_]*`` (per dotted part) and field defaults
must match the field type (for a union, any of its branches). :data:`NEW_SCHEMA_7_9` is
Confluent 7.9 (Avro 1.11.4) without ``normalize``: names checked with Avro 1.11's Unicode
validator, namespaces and defaults not checked. :data:`STORED` (already stored schemas) checks
none of it, like Avro with ``NameValidator.NO_VALIDATION`` and ``setValidateDefaults(false)``.
Invalid logical types are ignored in every mode, as Avro Java does
(``LogicalTypes.fromSchemaIgnoreInvalid``).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from registry import budget
from registry.formats.avro.model import (
    NO_DEFAULT,
    PRIMITIVE_TYPES,
    Alias,
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    JsonValue,
    LogicalType,
    MapSchema,
    NamedSchema,
    PrimitiveSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from registry.formats.avro.printer import json_string, json_text, schema_json
from registry.formats.base import Dependency, InvalidSchemaError

_MISSING: Any = object()

_SCHEMA_RESERVED = frozenset(
    {"doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"}
)
_ENUM_RESERVED = _SCHEMA_RESERVED | {"default"}
_FIELD_RESERVED = frozenset({"default", "doc", "name", "order", "type", "aliases"})
_ORDERS = {"ASCENDING": "ascending", "DESCENDING": "descending", "IGNORE": "ignore"}
_NAMED_TYPES = frozenset({"record", "error", "enum", "fixed"})

_VALID_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VALID_FIRST = re.compile(r"[A-Za-z_]")

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

# Properties that Avro Java's LogicalType.validate refuses next to any logical type.
_LOGICAL_INCOMPATIBLE = ("avro.java.string", "java-class", "java-key-class", "java-element-class")
# Logical types Avro Java 1.11 knows, with the primitive type each must annotate.
_JAVA_LOGICAL_BASE = {
    "uuid": "string",
    "date": "int",
    "time-millis": "int",
    "time-micros": "long",
    "timestamp-millis": "long",
    "timestamp-micros": "long",
    "local-timestamp-millis": "long",
    "local-timestamp-micros": "long",
    "big-decimal": "bytes",
}


@dataclass(frozen=True)
class Validation:
    """Which checks a parse applies beyond the structure of the schema."""

    #: simple names, field names, enum symbols and aliases
    names: bool
    #: Avro 1.11's validator (Java ``Character.isLetter``/``isLetterOrDigit``) for names
    #: instead of Avro 1.12's ASCII ``STRICT_VALIDATOR``
    unicode_names: bool
    #: each dotted part of a namespace is a valid name
    namespaces: bool
    #: field defaults match the field type
    defaults: bool
    #: a union's default may match any branch (Avro 1.12) rather than only the first (1.11)
    union_default_any_branch: bool


#: Confluent 8.x: a new schema (registration without an explicit id)
NEW_SCHEMA = Validation(True, False, True, True, True)
#: Confluent 7.9: a new schema registered without ``normalize``
NEW_SCHEMA_7_9 = Validation(True, True, False, False, False)
#: Confluent 7.9: a new schema registered with ``normalize`` (defaults are then validated)
NEW_SCHEMA_7_9_NORMALIZED = Validation(True, True, False, True, False)
#: a stored schema, a lookup, an import with an explicit id
STORED = Validation(False, False, False, False, True)

_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))[fFdD]?")


def _fail(message: str) -> InvalidSchemaError:
    return InvalidSchemaError(message)


def _is_int(value: JsonValue) -> bool:
    return type(value) is int


def _is_int32(value: JsonValue) -> bool:
    return type(value) is int and _INT_MIN <= value <= _INT_MAX


# ---- JSON ------------------------------------------------------------------------------------


def _reject_constant(token: str) -> Any:
    raise InvalidSchemaError(f"Invalid JSON: non-standard token '{token}' is not allowed")


def _strip_comments(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments outside strings (Avro's Jackson allows them) up to
    the end of the first JSON value; what follows is kept as it is (dangling content)."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    depth = 0
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            i += 1
            if ch == '"':
                in_string = False
                if depth == 0:
                    break
        elif ch == '"':
            in_string = True
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise InvalidSchemaError("Invalid JSON: unterminated comment")
            out.append(" ")
            i = end + 2
        else:
            out.append(ch)
            i += 1
            if ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    break
    out.append(text[i:])
    return "".join(out)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JAVA_TRIM = "".join(map(chr, range(33)))


def _decode(text: str) -> JsonValue:
    value, end = _DECODER.raw_decode(text, _JSON_SPACE.match(text).end())  # type: ignore[union-attr]
    dangling = text[end:].strip(_JAVA_TRIM)
    if dangling:
        raise InvalidSchemaError(f"dangling content after end of schema: {dangling}")
    return value


def load_json(text: str) -> JsonValue:
    """Parse the JSON text of a schema like Avro's Jackson parser: comments allowed, nothing
    but whitespace after the schema, no NaN/Infinity literals."""
    if not isinstance(text, str):
        raise InvalidSchemaError(f"Invalid schema: expected a JSON text, got {type(text).__name__}")
    try:
        return _decode(text)
    except json.JSONDecodeError as exc:
        if "/" in text:
            try:
                return _decode(_strip_comments(text))
            except json.JSONDecodeError:
                pass
        if not text.strip():
            raise InvalidSchemaError("Invalid schema: empty schema text") from None
        raise InvalidSchemaError(
            f"Invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise InvalidSchemaError("Invalid JSON: nested too deeply") from None


# ---- names -----------------------------------------------------------------------------------


def _java_letter(ch: str) -> bool:
    return unicodedata.category(ch).startswith("L")


def _unicode_name_error(name: str) -> str | None:
    """Avro 1.11's name validator (``Character.isLetter``, ``isLetterOrDigit``)."""
    if not name:
        return "Empty name"
    if not (_java_letter(name[0]) or name[0] == "_"):
        return f"Illegal initial character: {name}"
    for ch in name[1:]:
        if not (_java_letter(ch) or ch == "_" or unicodedata.category(ch) == "Nd"):
            return f"Illegal character in: {name}"
    return None


def _name_error(name: str) -> str | None:
    """Avro's STRICT_VALIDATOR message for an invalid simple name, ``None`` if valid."""
    if not name:
        return "Empty name"
    if _VALID_NAME.fullmatch(name) is not None:
        return None
    if _VALID_FIRST.match(name) is None:
        return f"Illegal initial character: {name}"
    return f"Illegal character in: {name}"


class _Context:
    """The parser state shared by a schema and its references (Avro's ``Names``)."""

    __slots__ = ("building", "field", "names", "space", "valid_spaces", "validation")

    def __init__(self, validation: Validation) -> None:
        self.names: dict[str, NamedSchema] = {}
        self.space: str | None = None
        self.validation = validation
        self.field: str | None = None
        self.valid_spaces: set[str] = set()
        self.building: set[int] = set()

    def check_name(self, name: str) -> None:
        if self.validation.names:
            check = _unicode_name_error if self.validation.unicode_names else _name_error
            error = check(name)
            if error is not None:
                raise _fail(error)

    def check_space(self, space: str) -> None:
        if not self.validation.namespaces or space in self.valid_spaces:
            return
        for part in space.split("."):
            error = _name_error(part)
            if error is not None:
                # Avro 1.12's ParseContext.requireValidFullName
                raise _fail(f'Namespace part "{part}" is invalid: {error}')
        self.valid_spaces.add(space)

    def make_name(self, raw: str, space: str | None) -> tuple[str, str | None]:
        """Avro's ``new Name(raw, space)``: a dotted name carries its own namespace."""
        dot = raw.rfind(".")
        if dot >= 0:
            space = raw[:dot]
            raw = raw[dot + 1 :]
        self.check_name(raw)
        if not space:
            return raw, None
        self.check_space(space)
        return raw, space

    def lookup(self, ref: str) -> Schema | None:
        """Avro's ``Names.get``: a primitive (new node), or a named type in the current
        namespace, or in the null namespace."""
        if ref in PRIMITIVE_TYPES:
            return PrimitiveSchema(ref)
        dot = ref.rfind(".")
        if dot >= 0:
            full = ref[dot + 1 :] if dot == 0 else ref
            return self.names.get(full)
        if self.space:
            found = self.names.get(f"{self.space}.{ref}")
            if found is not None:
                return found
        return self.names.get(ref)

    def register(self, schema: NamedSchema) -> None:
        full = schema.fullname
        if full in self.names:
            raise _fail(f"Can't redefine: {full}")
        self.names[full] = schema


# ---- defaults --------------------------------------------------------------------------------


def is_valid_default(
    schema: Schema,
    value: JsonValue,
    building: Collection[int] = frozenset(),
    any_branch: bool = True,
) -> bool:
    """Avro ``Schema.isValidDefault``: with ``any_branch`` (Avro 1.12) a union's default may
    match any branch, without it (Avro 1.11) only the first.

    ``building`` holds the ids of records whose fields are still being parsed: Avro cannot
    check a default against them ("Schema fields not set yet").
    """
    stype = schema.type
    if stype in ("string", "bytes", "enum", "fixed"):
        return isinstance(value, str)
    if stype == "int":
        return _is_int32(value)
    if stype == "long":
        return type(value) is int and _LONG_MIN <= value <= _LONG_MAX
    if stype in ("float", "double"):
        return type(value) in (int, float)
    if stype == "boolean":
        return isinstance(value, bool)
    if stype == "null":
        return value is None
    if isinstance(schema, ArraySchema):
        return isinstance(value, list) and all(
            is_valid_default(schema.items, v, building, any_branch) for v in value
        )
    if isinstance(schema, MapSchema):
        return isinstance(value, dict) and all(
            is_valid_default(schema.values, v, building, any_branch) for v in value.values()
        )
    if isinstance(schema, UnionSchema):
        branches = schema.types if any_branch else schema.types[:1]
        return any(is_valid_default(t, value, building, any_branch) for t in branches)
    if isinstance(schema, RecordSchema):
        if not isinstance(value, dict):
            return False
        if id(schema) in building:
            raise _fail(
                f"Cannot check a default value against record {schema.fullname} inside its own "
                "definition (Schema fields not set yet)"
            )
        for field in schema.fields:
            if field.name in value:
                sub = value[field.name]
            elif field.has_default:
                sub = field.default
            else:
                return False
            if not is_valid_default(field.schema, sub, building, any_branch):
                return False
        return True
    return False


def _java_double_value(text: str, field: str, stype: str) -> float:
    """``Double.valueOf(text)``: Avro turns a string default of a float/double field into a
    number."""
    stripped = text.strip()
    if _JAVA_DOUBLE.fullmatch(stripped) is None:
        raise _fail(
            f"Invalid default for field {field}: {json_string(text)} is not a number "
            f'(a string default of a "{stype}" field must be a number)'
        )
    body = stripped.rstrip("fFdD") if not stripped.endswith("Infinity") else stripped
    if body.endswith("NaN"):
        return math.nan
    if body.endswith("Infinity"):
        return -math.inf if body.startswith("-") else math.inf
    return float(body)


# ---- logical types ---------------------------------------------------------------------------


def _max_decimal_precision(schema: Schema) -> int:
    if isinstance(schema, FixedSchema):
        return math.floor(math.log10(2) * (8 * schema.size - 1))
    return _INT_MAX


def _decimal_error(schema: Schema) -> tuple[str | None, int, int]:
    """Avro's ``LogicalTypes.Decimal`` checks: (error, precision, scale)."""
    props = schema.props
    precision = props.get("precision", _MISSING)
    if precision is _MISSING:
        return "Invalid decimal: missing precision", 0, 0
    if not _is_int32(precision):
        return f"Expected int precision: {json_text(precision)}", 0, 0
    scale = props.get("scale", _MISSING)
    if scale is _MISSING:
        scale = 0
    elif not _is_int32(scale):
        return f"Expected int scale: {json_text(scale)}", 0, 0
    if schema.type not in ("fixed", "bytes"):
        return "Logical type decimal must be backed by fixed or bytes", 0, 0
    if precision <= 0:
        return f"Invalid decimal precision: {precision} (must be positive)", 0, 0
    max_precision = _max_decimal_precision(schema)
    if precision > max_precision:
        size = schema.size if isinstance(schema, FixedSchema) else 0
        return (f"fixed({size}) cannot store {precision} digits (max {max_precision})", 0, 0)
    if scale < 0:
        return f"Invalid decimal scale: {scale} (must be positive)", 0, 0
    if scale > precision:
        return f"Invalid decimal scale: {scale} (greater than precision: {precision})", 0, 0
    return None, precision, scale


def _incompatible_prop(schema: Schema) -> str | None:
    for prop in _LOGICAL_INCOMPATIBLE:
        if isinstance(schema.props.get(prop), str):
            return f"logicalType cannot be used with {prop}"
    return None


def _java_logical(schema: Schema) -> LogicalType | None:
    """The logical type Avro Java 1.11 recognises as valid (``fromSchemaIgnoreInvalid``)."""
    name = schema.props.get("logicalType")
    if not isinstance(name, str):
        return None
    if name == "decimal":
        error, precision, scale = _decimal_error(schema)
        if error is not None or _incompatible_prop(schema) is not None:
            return None
        return LogicalType("decimal", precision, scale)
    base = _JAVA_LOGICAL_BASE.get(name)
    if base is None or schema.type != base or _incompatible_prop(schema) is not None:
        return None
    return LogicalType(name)


# ---- schema nodes ----------------------------------------------------------------------------


def _parse_aliases(node: dict[str, JsonValue]) -> list[str] | None:
    aliases = node.get("aliases", _MISSING)
    if aliases is _MISSING:
        return None
    if not isinstance(aliases, list):
        raise _fail(f"aliases not an array: {json_text(node)}")
    result: dict[str, None] = {}
    for alias in aliases:
        if not isinstance(alias, str):
            raise _fail(f"alias not a string: {json_text(alias)}")
        result[alias] = None
    return list(result)


def _parse(node: JsonValue, ctx: _Context) -> Schema:
    budget.charge()
    if isinstance(node, str):
        found = ctx.lookup(node)
        if found is None:
            raise _fail(f"Undefined name: {json_string(node)}")
        return found
    if isinstance(node, dict):
        return _parse_object(node, ctx)
    if isinstance(node, list):
        types = [_parse(item, ctx) for item in node]
        seen: set[str] = set()
        for branch in types:
            if isinstance(branch, UnionSchema):
                raise _fail(
                    f"Nested union: {schema_json(UnionSchema(types))} "
                    "(a union may not immediately contain another union)"
                )
            name = branch.fullname
            if name in seen:
                raise _fail(f"Duplicate in union:{name}")
            seen.add(name)
        return UnionSchema(types)
    raise _fail(f"Schema not yet supported: {json_text(node)}")


def _parse_fields(
    record: RecordSchema, node: dict[str, JsonValue], fields_node: list[JsonValue], ctx: _Context
) -> None:
    validation = ctx.validation
    fields: list[Field] = []
    saved_field = ctx.field
    for pos, field_node in enumerate(fields_node):
        if not isinstance(field_node, dict):
            raise _fail(f"No field name: {json_text(field_node)}")
        name = field_node.get("name")
        if not isinstance(name, str):
            raise _fail(f"No field name: {json_text(field_node)}")
        doc = field_node.get("doc")
        if not isinstance(doc, str):
            doc = None
        type_node = field_node.get("type", _MISSING)
        if type_node is _MISSING:
            raise _fail(f"No field type: {json_text(field_node)}")
        if isinstance(type_node, str) and ctx.lookup(type_node) is None:
            raise _fail(
                f"{json_string(type_node)} is not a defined name. The type of the "
                f'"{name}" field must be a defined name or a {{"type": ...}} expression.'
            )
        ctx.field = name
        schema = _parse(type_node, ctx)
        ctx.field = saved_field
        order = "ascending"
        order_node = field_node.get("order", _MISSING)
        if order_node is not _MISSING:
            order = _ORDERS.get(order_node.upper()) if isinstance(order_node, str) else None
            if order is None:
                raise _fail(
                    f"Invalid order for field {name}: {json_text(order_node)} "
                    '(must be "ascending", "descending" or "ignore")'
                )
        default = field_node.get("default", _MISSING)
        if default is _MISSING:
            default = NO_DEFAULT
        elif schema.type in ("float", "double") and isinstance(default, str):
            default = _java_double_value(default, name, schema.type)
        ctx.check_name(name)
        if (
            validation.defaults
            and default is not NO_DEFAULT
            and not is_valid_default(
                schema, default, ctx.building, validation.union_default_any_branch
            )
        ):
            raise _fail(
                f"Invalid default for field {name}: {json_text(default)} "
                f"not a {schema_json(schema)}"
            )
        field = Field(name, schema, doc, default, order, pos)
        for key, value in field_node.items():
            if key not in _FIELD_RESERVED:
                field.props[key] = value
        aliases = _parse_aliases(field_node)
        if aliases:
            field.aliases = aliases
        fields.append(field)
    field_map: dict[str, Field] = {}
    for field in fields:
        existing = field_map.get(field.name)
        if existing is not None:
            raise _fail(
                f"Duplicate field {field.name} in record {record.fullname}: "
                f"{field!r} and {existing!r}."
            )
        field_map[field.name] = field
    record.fields = fields
    record.field_map = field_map


def _parse_object(node: dict[str, JsonValue], ctx: _Context) -> Schema:
    type_ = node.get("type")
    if not isinstance(type_, str):
        raise _fail(f"No type: {json_text(node)}")
    saved_space = ctx.space
    name = ""
    space: str | None = None
    doc: str | None = None
    if type_ in _NAMED_TYPES:
        space_node = node.get("namespace")
        space = space_node if isinstance(space_node, str) else saved_space
        doc_node = node.get("doc")
        doc = doc_node if isinstance(doc_node, str) else None
        raw_name = node.get("name")
        if not isinstance(raw_name, str):
            raise _fail(f"No name in schema: {json_text(node)}")
        name, space = ctx.make_name(raw_name, space)
        if space is None and name in PRIMITIVE_TYPES:
            raise _fail(f"Schemas may not be named after primitives: {name}")
        ctx.space = space

    result: Schema
    reserved = _SCHEMA_RESERVED
    if type_ in PRIMITIVE_TYPES:
        result = PrimitiveSchema(type_)
    elif type_ == "record" or type_ == "error":
        record = RecordSchema(name, space, doc, type_ == "error")
        ctx.register(record)
        fields_node = node.get("fields")
        if not isinstance(fields_node, list):
            raise _fail(f"Record has no fields: {json_text(node)}")
        ctx.building.add(id(record))
        _parse_fields(record, node, fields_node, ctx)
        ctx.building.discard(id(record))
        result = record
    elif type_ == "enum":
        reserved = _ENUM_RESERVED
        symbols_node = node.get("symbols")
        if not isinstance(symbols_node, list):
            raise _fail(f"Enum has no symbols: {json_text(node)}")
        symbols: list[str] = []
        seen: set[str] = set()
        for symbol in symbols_node:
            if not isinstance(symbol, str):
                raise _fail(f"Enum symbol is not a string: {json_text(symbol)}")
            ctx.check_name(symbol)
            if symbol in seen:
                raise _fail(f"Duplicate enum symbol: {symbol}")
            seen.add(symbol)
            symbols.append(symbol)
        default_node = node.get("default")
        default = default_node if isinstance(default_node, str) else None
        if default is not None and default not in seen:
            raise _fail(
                f"The Enum Default: {default} is not in the enum symbol set: [{', '.join(symbols)}]"
            )
        result = EnumSchema(name, space, doc, symbols, default)
        ctx.register(result)
    elif type_ == "array":
        items = node.get("items", _MISSING)
        if items is _MISSING:
            raise _fail(f"Array has no items type: {json_text(node)}")
        result = ArraySchema(_parse(items, ctx))
    elif type_ == "map":
        values = node.get("values", _MISSING)
        if values is _MISSING:
            raise _fail(f"Map has no values type: {json_text(node)}")
        result = MapSchema(_parse(values, ctx))
    elif type_ == "fixed":
        size = node.get("size")
        if not _is_int32(size):
            raise _fail(f"Invalid or no size: {json_text(node)}")
        if size < 0:
            raise _fail(f"Invalid size of fixed {name}: Malformed data. Length is negative: {size}")
        result = FixedSchema(name, space, doc, size)
        ctx.register(result)
    else:
        # A named type given as {"type": "Name"}: Avro returns the type, ignoring the rest.
        dot = type_.rfind(".")
        full = type_ if dot > 0 else (f"{ctx.space}.{type_}" if ctx.space else type_)
        found = ctx.names.get(full)
        if found is not None:
            return found
        raise _fail(f"Type not supported: {type_}")

    props = result.props
    for key, value in node.items():
        if key not in reserved:
            props[key] = value
    if props:
        result.logical = _java_logical(result)
    ctx.space = saved_space
    if isinstance(result, NamedSchema):
        aliases = _parse_aliases(node)
        if aliases:
            by_full: dict[str, Alias] = {}
            for alias in aliases:
                alias_name, alias_space = ctx.make_name(alias, result.namespace)
                parsed = Alias(alias_name, alias_space)
                by_full.setdefault(parsed.full, parsed)
            result.aliases = list(by_full.values())
    return result


# ---- entry point -----------------------------------------------------------------------------


class ParseResult:
    """The parsed main schema and the full names of the referenced (top-level) named types."""

    __slots__ = ("names", "referenced", "root")

    def __init__(self, root: Schema, referenced: tuple[str, ...], names: dict[str, NamedSchema]):
        self.root = root
        self.referenced = referenced
        self.names = names


def parse_schema(
    text: str,
    dependencies: Sequence[Dependency] = (),
    *,
    strict: bool = True,
    validation: Validation | None = None,
) -> ParseResult:
    """Parse ``text`` after its dependencies (parsed leniently, they are stored schemas).

    ``validation`` says what is checked; without it ``strict`` picks :data:`NEW_SCHEMA` or
    :data:`STORED`."""
    if validation is None:
        validation = NEW_SCHEMA if strict else STORED
    ctx = _Context(STORED)
    referenced: list[str] = []
    for dependency in dependencies:
        ctx.space = None
        try:
            dep_schema = _parse(load_json(dependency.schema), ctx)
        except InvalidSchemaError as exc:
            raise InvalidSchemaError(f"Invalid reference {dependency.name}: {exc}") from None
        except RecursionError:
            raise InvalidSchemaError(
                f"Invalid reference {dependency.name}: schema nested too deeply"
            ) from None
        if isinstance(dep_schema, NamedSchema):
            referenced.append(dep_schema.fullname)
    ctx.validation = validation
    ctx.space = None
    try:
        root = _parse(load_json(text), ctx)
    except RecursionError:
        raise InvalidSchemaError("Invalid schema: nested too deeply") from None
    return ParseResult(root, tuple(referenced), ctx.names)
