"""Text forms of a parsed Avro schema.

* :func:`schema_json` is Avro Java 1.11's compact ``Schema.toString`` (the canonical text when
  given the referenced type names, the "resolved" text when given none).
* :func:`normalized_source` is Confluent's ``AvroSchemaUtils.toNormalizedString`` (a text that
  is parsed again and printed with :func:`schema_json` to give the normalised canonical text).
* :func:`json_text` writes JSON values the way Jackson does (compact, non-ASCII kept, control
  characters escaped with upper-case hex, doubles in ``Double.toString`` form).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Collection
from decimal import Decimal

from registry.formats.avro.model import (
    ALL_TYPE_NAMES,
    ArraySchema,
    EnumSchema,
    Field,
    FixedSchema,
    JsonValue,
    MapSchema,
    NamedSchema,
    RecordSchema,
    Schema,
    UnionSchema,
)
from registry.formats.jackson import quote as json_string

# ---- JSON values, Jackson style ---------------------------------------------------------------


def _java_format(digits: str, exp10: int, negative: bool) -> str:
    """Format ``0.digits * 10**exp10`` like Java's ``Double.toString`` / ``Float.toString``.

    ``exp10`` is the decimal exponent of the first digit (``d.ddd x 10^exp10``).
    """
    sign = "-" if negative else ""
    if -3 <= exp10 < 7:
        if exp10 >= 0:
            int_part = digits[: exp10 + 1].ljust(exp10 + 1, "0")
            frac = digits[exp10 + 1 :] or "0"
        else:
            int_part = "0"
            frac = "0" * (-exp10 - 1) + digits
        return f"{sign}{int_part}.{frac}"
    frac = digits[1:] or "0"
    return f"{sign}{digits[0]}.{frac}E{exp10}"


def _shortest_digits(text: str) -> tuple[str, int]:
    """Significant digits (no trailing zeros) and first-digit exponent of a decimal text."""
    dec = Decimal(text)
    _, digit_tuple, exponent = dec.as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    exp10 = len(digit_tuple) + exponent - 1
    return digits, exp10


def java_double(value: float) -> str:
    """Java's ``Double.toString`` for a finite double (shortest round-trip digits)."""
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, exp10 = _shortest_digits(repr(abs(value)))
    return _java_format(digits, exp10, value < 0)


def _to_float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def java_float(value: float) -> str:
    """Java's ``Float.toString`` of ``(float) value`` (shortest float32 round-trip digits)."""
    f32 = _to_float32(value)
    if math.isnan(f32):
        return "NaN"
    if math.isinf(f32):
        return "Infinity" if f32 > 0 else "-Infinity"
    if f32 == 0.0:
        return "-0.0" if math.copysign(1.0, f32) < 0 else "0.0"
    text = ""
    for precision in range(1, 10):
        text = f"{abs(f32):.{precision}e}"
        if _to_float32(float(text)) == abs(f32):
            break
    digits, exp10 = _shortest_digits(text)
    return _java_format(digits, exp10, f32 < 0)


class Float32(float):
    """A float that Jackson would write as a Java ``float`` (``Float.toString``)."""

    __slots__ = ()


def _write_number(value: float, out: list[str]) -> None:
    if math.isnan(value):
        out.append('"NaN"')  # Jackson QUOTE_NON_NUMERIC_NUMBERS
    elif math.isinf(value):
        out.append('"Infinity"' if value > 0 else '"-Infinity"')
    elif isinstance(value, Float32):
        out.append(java_float(value))
    else:
        out.append(java_double(value))


def write_json(value: JsonValue, out: list[str], sort_keys: bool = False) -> None:
    """Append the compact JSON text of ``value`` to ``out``."""
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        _write_number(value, out)
    elif isinstance(value, dict):
        out.append("{")
        first = True
        items = sorted(value.items()) if sort_keys else value.items()
        for key, item in items:
            if first:
                first = False
            else:
                out.append(",")
            out.append(json_string(key))
            out.append(":")
            write_json(item, out, sort_keys)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        first = True
        for item in value:
            if first:
                first = False
            else:
                out.append(",")
            write_json(item, out, sort_keys)
        out.append("]")
    else:  # pragma: no cover - json.loads never produces anything else
        raise TypeError(f"not a JSON value: {value!r}")


def json_text(value: JsonValue, sort_keys: bool = False) -> str:
    """Compact JSON text of a value, Jackson style."""
    out: list[str] = []
    write_json(value, out, sort_keys)
    return "".join(out)


# ---- Schema.toString ------------------------------------------------------------------------


def _qualified(name: str, space: str | None, full: str, current: str | None) -> str:
    """``Name.getQualified``: the short name inside its own namespace, else the full name."""
    if space is not None and space == current and name not in ALL_TYPE_NAMES:
        return name
    return full


def _write_props(props: dict[str, JsonValue], out: list[str]) -> None:
    for key, value in props.items():
        out.append(",")
        out.append(json_string(key))
        out.append(":")
        write_json(value, out)


def _write_name(schema: NamedSchema, current: str | None, out: list[str]) -> None:
    out.append(',"name":')
    out.append(json_string(schema.name))
    if schema.namespace is not None:
        if schema.namespace != current:
            out.append(',"namespace":')
            out.append(json_string(schema.namespace))
    elif current is not None:
        out.append(',"namespace":""')


def _write_aliases(schema: NamedSchema, out: list[str]) -> None:
    if not schema.aliases:
        return
    out.append(',"aliases":[')
    out.append(
        ",".join(
            json_string(_qualified(a.name, a.space, a.full, schema.namespace))
            for a in schema.aliases
        )
    )
    out.append("]")


def _write_field(field: Field, known: set[str], current: str | None, out: list[str]) -> None:
    out.append('{"name":')
    out.append(json_string(field.name))
    out.append(',"type":')
    _write_schema(field.schema, known, current, out)
    if field.doc is not None:
        out.append(',"doc":')
        out.append(json_string(field.doc))
    if field.has_default:
        out.append(',"default":')
        write_json(field.default, out)
    if field.order != "ascending":
        out.append(',"order":')
        out.append(json_string(field.order))
    if field.aliases:
        out.append(',"aliases":[')
        out.append(",".join(json_string(a) for a in field.aliases))
        out.append("]")
    _write_props(field.props, out)
    out.append("}")


def _write_schema(schema: Schema, known: set[str], current: str | None, out: list[str]) -> None:
    if isinstance(schema, NamedSchema):
        full = schema.fullname
        if full in known:
            out.append(json_string(_qualified(schema.name, schema.namespace, full, current)))
            return
        known.add(full)
        out.append('{"type":')
        if isinstance(schema, RecordSchema):
            out.append('"error"' if schema.is_error else '"record"')
            _write_name(schema, current, out)
            if schema.doc is not None:
                out.append(',"doc":')
                out.append(json_string(schema.doc))
            out.append(',"fields":[')
            inner = schema.namespace
            first = True
            for field in schema.fields:
                if first:
                    first = False
                else:
                    out.append(",")
                _write_field(field, known, inner, out)
            out.append("]")
        elif isinstance(schema, EnumSchema):
            out.append('"enum"')
            _write_name(schema, current, out)
            if schema.doc is not None:
                out.append(',"doc":')
                out.append(json_string(schema.doc))
            out.append(',"symbols":[')
            out.append(",".join(json_string(s) for s in schema.symbols))
            out.append("]")
            if schema.default is not None:
                out.append(',"default":')
                out.append(json_string(schema.default))
        else:
            assert isinstance(schema, FixedSchema)
            out.append('"fixed"')
            _write_name(schema, current, out)
            if schema.doc is not None:
                out.append(',"doc":')
                out.append(json_string(schema.doc))
            out.append(f',"size":{schema.size}')
        _write_props(schema.props, out)
        _write_aliases(schema, out)
        out.append("}")
    elif isinstance(schema, UnionSchema):
        out.append("[")
        first = True
        for branch in schema.types:
            if first:
                first = False
            else:
                out.append(",")
            _write_schema(branch, known, current, out)
        out.append("]")
    elif isinstance(schema, ArraySchema):
        out.append('{"type":"array","items":')
        _write_schema(schema.items, known, current, out)
        _write_props(schema.props, out)
        out.append("}")
    elif isinstance(schema, MapSchema):
        out.append('{"type":"map","values":')
        _write_schema(schema.values, known, current, out)
        _write_props(schema.props, out)
        out.append("}")
    elif schema.props:
        out.append('{"type":"')
        out.append(schema.type)
        out.append('"')
        _write_props(schema.props, out)
        out.append("}")
    else:
        out.append('"')
        out.append(schema.type)
        out.append('"')


def schema_json(schema: Schema, known_names: Collection[str] = ()) -> str:
    """Avro Java's ``Schema.toString(referencedSchemas, false)``.

    ``known_names`` are the full names of types printed by name only (the referenced schemas);
    every other named type is written in full at its first occurrence.
    """
    out: list[str] = []
    _write_schema(schema, set(known_names), None, out)
    return "".join(out)


# ---- Confluent's normalised form ------------------------------------------------------------

# Avro Java's JacksonUtils.toObject(node, schema) followed by Jackson writing the object: the
# value printed for a field default in the normalised form. ``_SKIP`` is Java's ``null`` result
# (the default is then left out).
_SKIP = object()


def _default_object(value: JsonValue, schema: Schema | None) -> JsonValue:
    if isinstance(schema, UnionSchema):
        return _default_object(value, schema.types[0]) if schema.types else _SKIP
    stype = schema.type if schema is not None else None
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:  # BigIntegerNode: no branch of toObject takes it
            return _SKIP
        if stype is None or stype in ("int", "long"):  # IntNode / LongNode
            return value
        if stype == "float":
            return Float32(float(value))
        if stype == "double":
            return float(value)
        return _SKIP
    if isinstance(value, float):
        if stype is None or stype == "double":
            return value
        if stype == "float":
            return Float32(value)
        return _SKIP
    if isinstance(value, str):
        if stype is None or stype in ("string", "enum"):
            return value
        if stype in ("bytes", "fixed"):
            # String.getBytes(ISO_8859_1) then new String(bytes, ISO_8859_1)
            return "".join(c if ord(c) < 256 else "?" for c in value)
        return _SKIP
    if isinstance(value, list):
        items = schema.items if isinstance(schema, ArraySchema) else None
        result = []
        for element in value:
            converted = _default_object(element, items)
            result.append(None if converted is _SKIP else converted)
        return result
    if isinstance(value, dict):
        obj: dict[str, JsonValue] = {}
        for key, item in value.items():
            sub: Schema | None = None
            if isinstance(schema, MapSchema):
                sub = schema.values
            elif isinstance(schema, RecordSchema):
                field = schema.field_map.get(key)
                sub = field.schema if field is not None else None
            converted = _default_object(item, sub)
            obj[key] = None if converted is _SKIP else converted
        return obj
    return _SKIP  # pragma: no cover


def _norm_simple_props(props: dict[str, JsonValue], out: list[str]) -> None:
    for key in sorted(props):
        out.append(",")
        out.append(json_string(key))
        out.append(":")
        write_json(props[key], out, sort_keys=True)


def _norm_logical_props(schema: Schema, out: list[str]) -> None:
    logical = schema.logical
    assert logical is not None
    out.append(',"logicalType":')
    out.append(json_string(logical.name))
    if logical.name == "decimal":
        out.append(f',"precision":{logical.precision}')
        if logical.scale != 0:
            out.append(f',"scale":{logical.scale}')


def _norm_field(field: Field, env: dict[str, str], out: list[str]) -> None:
    out.append('{"name":"')
    out.append(field.name)
    out.append('","type":')
    _norm(field.schema, env, out)
    out.append(',"order":"')
    out.append(field.order.upper())
    out.append('"')
    if field.doc is not None:
        out.append(',"doc":')
        out.append(json_string(field.doc))
    if field.aliases:
        out.append(',"aliases":')
        write_json(sorted(set(field.aliases)), out)
    if field.has_default:
        converted = _default_object(field.default, field.schema)
        if converted is not _SKIP:
            out.append(',"default":')
            write_json(converted, out, sort_keys=True)
    _norm_simple_props(field.props, out)
    out.append("}")


def _norm(schema: Schema, env: dict[str, str], out: list[str]) -> None:
    if isinstance(schema, UnionSchema):
        out.append("[")
        first = True
        for branch in schema.types:
            if first:
                first = False
            else:
                out.append(",")
            _norm(branch, env, out)
        out.append("]")
    elif isinstance(schema, ArraySchema | MapSchema):
        if isinstance(schema, ArraySchema):
            out.append('{"type":"array","items":')
            _norm(schema.items, env, out)
        else:
            out.append('{"type":"map","values":')
            _norm(schema.values, env, out)
        _norm_simple_props(schema.props, out)
        out.append("}")
    elif isinstance(schema, NamedSchema):
        full = schema.fullname
        ref = env.get(full)
        if ref is not None:
            out.append(ref)
            return
        qname = f'"{full}"'
        env[full] = qname
        out.append('{"name":')
        out.append(qname)
        out.append(',"type":"')
        out.append(schema.type)
        out.append('"')
        if isinstance(schema, EnumSchema):
            out.append(',"symbols":[')
            out.append(",".join(f'"{s}"' for s in schema.symbols))
            out.append("]")
        elif isinstance(schema, FixedSchema):
            out.append(f',"size":{schema.size}')
            if schema.logical is not None:
                _norm_logical_props(schema, out)
        else:
            assert isinstance(schema, RecordSchema)
            out.append(',"fields":[')
            first = True
            for field in schema.fields:
                if first:
                    first = False
                else:
                    out.append(",")
                _norm_field(field, env, out)
            out.append("]")
        if schema.doc:
            out.append(',"doc":')
            out.append(json_string(schema.doc))
        if schema.aliases:
            out.append(',"aliases":')
            write_json(sorted(set(schema.alias_fullnames())), out)
        if isinstance(schema, EnumSchema) and schema.default is not None:
            out.append(',"default":')
            out.append(json_string(schema.default))
        _norm_simple_props(schema.props, out)
        out.append("}")
    elif schema.logical is not None:
        out.append('{"type":"')
        out.append(schema.type)
        out.append('"')
        _norm_logical_props(schema, out)
        _norm_simple_props(schema.props, out)
        out.append("}")
    elif schema.props:
        out.append('{"type":"')
        out.append(schema.type)
        out.append('"')
        _norm_simple_props(schema.props, out)
        out.append("}")
    else:
        out.append('"')
        out.append(schema.type)
        out.append('"')


def normalized_source(schema: Schema, referenced_names: Collection[str] = ()) -> str:
    """Confluent's ``toNormalizedString``: named types as ``{"name":"<full>","type":...}``,
    every field with its ``order``, then doc, sorted aliases, default and sorted properties.

    The result may repeat keys (logical-type attributes also appear among the properties);
    like Jackson, the parser keeps the first position and the last value.
    """
    env = {name: f'"{name}"' for name in referenced_names}
    out: list[str] = []
    _norm(schema, env, out)
    return "".join(out)
