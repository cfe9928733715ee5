"""Options of a descriptor as Confluent's printer sees them, and how they are written.

Confluent turns each descriptor's options into Wire ``OptionElement``s: the standard options it
knows in a fixed order, then its ``confluent.*_meta`` option as a map (doc, params, tags), then
every other custom option (extension) ordered by field number. Custom options are extensions
that protobuf's default descriptor pool does not know, so they arrive as unknown fields; they are
decoded with a pool built from the schema's own files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.descriptor_pb2 import FileDescriptorProto
from google.protobuf.message import Message

CONFLUENT_PREFIX = "confluent."
META_OPTIONS = {
    "FileOptions": "confluent.file_meta",
    "MessageOptions": "confluent.message_meta",
    "FieldOptions": "confluent.field_meta",
    "EnumOptions": "confluent.enum_meta",
    "EnumValueOptions": "confluent.enum_value_meta",
}
#: the standard options Confluent copies from a descriptor, in its order; "*" = repeated
STANDARD_OPTIONS: dict[str, tuple[str, ...]] = {
    "FileOptions": (
        "java_package",
        "java_outer_classname",
        "java_multiple_files",
        "java_generate_equals_and_hash",
        "java_string_check_utf8",
        "optimize_for",
        "go_package",
        "cc_generic_services",
        "java_generic_services",
        "py_generic_services",
        "php_generic_services",
        "deprecated",
        "cc_enable_arenas",
        "objc_class_prefix",
        "csharp_namespace",
        "swift_prefix",
        "php_class_prefix",
        "php_namespace",
        "php_metadata_namespace",
        "ruby_package",
    ),
    "MessageOptions": (
        "message_set_wire_format",
        "no_standard_descriptor_accessor",
        "deprecated",
        "map_entry",
    ),
    "FieldOptions": (
        "ctype",
        "packed",
        "jstype",
        "lazy",
        "deprecated",
        "debug_redact",
        "retention",
        "targets*",
    ),
    "EnumOptions": ("allow_alias", "deprecated"),
    "EnumValueOptions": ("deprecated", "debug_redact"),
    "ServiceOptions": ("deprecated",),
    "MethodOptions": ("deprecated", "idempotency_level"),
    "OneofOptions": (),
    "ExtensionRangeOptions": (),
}
_KEY_FIRST_EXCEPTIONS = ("precision", "scale")


@dataclass(frozen=True)
class Prim:
    """A primitive inside an option map (Wire's ``OptionPrimitive``)."""

    kind: str
    value: Any


@dataclass(frozen=True)
class Option:
    """Wire's ``OptionElement``: ``kind`` is STRING, BOOLEAN, ENUM, NUMBER, MAP or LIST."""

    name: str
    kind: str
    value: Any
    parenthesized: bool = False


class OptionReader:
    """Turns descriptor options messages into :class:`Option` lists."""

    def __init__(self, files: Sequence[FileDescriptorProto], *, value_first: bool = False) -> None:
        """``value_first``: write ``precision``/``scale`` params value first, as Confluent does
        for a schema it read from a descriptor."""
        self._files = files
        self._value_first = value_first
        self._pool: descriptor_pool.DescriptorPool | None = None
        self._classes: dict[str, type[Message]] = {}

    def options(self, opts: Message) -> list[Option]:
        kind = opts.DESCRIPTOR.name
        result: list[Option] = []
        fields = opts.DESCRIPTOR.fields_by_name
        for spec in STANDARD_OPTIONS.get(kind, ()):
            name = spec.rstrip("*")
            field = fields.get(name)
            if field is None:
                continue
            if spec.endswith("*"):
                for value in getattr(opts, name):
                    result.append(Option(name, "ENUM", _enum_name(field, value)))
            elif opts.HasField(name):
                result.append(_standard(field, getattr(opts, name)))
        if _has_custom(opts):
            result.extend(self._custom(opts, kind))
        return result

    def _custom(self, opts: Message, kind: str) -> list[Option]:
        decoded = self._decode(opts, kind)
        if decoded is None:
            return []
        result: list[Option] = []
        meta: Option | None = None
        for field, value in decoded.ListFields():
            if not field.is_extension:
                continue
            if field.full_name == META_OPTIONS.get(kind):
                meta = _meta_option(field.full_name, value, self._value_first)
            elif not field.full_name.startswith(CONFLUENT_PREFIX):
                values = list(value) if _is_repeated(field) else [value]
                result.extend(
                    Option(field.full_name, _kind(field, v), _value(field, v, False), True)
                    for v in values
                )
        return ([meta] if meta is not None else []) + result

    def _decode(self, opts: Message, kind: str) -> Message | None:
        cls = self._classes.get(kind)
        if cls is None:
            if self._pool is None:
                pool = descriptor_pool.DescriptorPool()
                try:
                    for fd in self._files:
                        pool.AddSerializedFile(fd.SerializeToString())
                except Exception:  # a pool that cannot be built: custom options are left out
                    return None
                self._pool = pool
            try:
                descriptor = self._pool.FindMessageTypeByName(f"google.protobuf.{kind}")
            except KeyError:
                return None
            cls = message_factory.GetMessageClass(descriptor)
            self._classes[kind] = cls
        return cls.FromString(opts.SerializeToString())


def _has_custom(opts: Message) -> bool:
    """Whether ``opts`` holds custom options: unknown fields, or extensions the default pool
    happens to know (a generated ``_pb2`` module imported in this process registers them)."""
    if any(field.is_extension for field, _ in opts.ListFields()):
        return True
    known = type(opts)()
    known.CopyFrom(opts)
    known.DiscardUnknownFields()
    return known.ByteSize() != opts.ByteSize()


def _is_repeated(field: FieldDescriptor) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf 6+; ``label`` is gone in 7
    if repeated is not None:
        return bool(repeated)
    return bool(field.label == FieldDescriptor.LABEL_REPEATED)


def _enum_name(field: FieldDescriptor, number: int) -> str:
    value = field.enum_type.values_by_number.get(number)
    return value.name if value is not None else str(number)


def _standard(field: FieldDescriptor, value: Any) -> Option:
    if field.type == FieldDescriptor.TYPE_ENUM:
        return Option(field.name, "ENUM", _enum_name(field, value))
    if field.type == FieldDescriptor.TYPE_BOOL:
        return Option(field.name, "BOOLEAN", value)
    if field.type == FieldDescriptor.TYPE_STRING:
        return Option(field.name, "STRING", value)
    return Option(field.name, "NUMBER", value)


def _kind(field: FieldDescriptor, value: Any) -> str:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return "MAP"
    if field.type == FieldDescriptor.TYPE_ENUM:
        return "ENUM"
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "BOOLEAN"
    if field.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return "STRING"
    return "NUMBER"


def _value(field: FieldDescriptor, value: Any, in_map: bool) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _message_map(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        name = _enum_name(field, value)
        return Prim("ENUM", name) if in_map else name
    if field.type == FieldDescriptor.TYPE_BOOL:
        return Prim("BOOLEAN", value) if in_map else value
    if field.type == FieldDescriptor.TYPE_STRING:
        return value
    if field.type == FieldDescriptor.TYPE_BYTES:
        return value.decode("latin-1")
    return Prim("NUMBER", value) if in_map else value


def _message_map(message: Message) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for field, value in message.ListFields():
        key = f"[{field.full_name}]" if field.is_extension else field.name
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key_field = field.message_type.fields_by_name["key"]
            value_field = field.message_type.fields_by_name["value"]
            result[key] = [
                {"key": _value(key_field, k, True), "value": _value(value_field, value[k], True)}
                for k in sorted(value)
            ]
        elif _is_repeated(field):
            result[key] = [_value(field, v, False) for v in value]
        else:
            result[key] = _value(field, value, True)
    return result


def _meta_option(name: str, meta: Message, value_first: bool) -> Option | None:
    value: dict[str, Any] = {}
    if meta.doc:
        value["doc"] = meta.doc
    if len(meta.params):
        params = []
        for key in sorted(meta.params):  # sorted: map order is not the source order here
            if value_first and key in _KEY_FIRST_EXCEPTIONS:
                params.append({"value": meta.params[key], "key": key})
            else:
                params.append({"key": key, "value": meta.params[key]})
        value["params"] = params
    if len(meta.tags):
        value["tags"] = list(meta.tags)
    return Option(name, "MAP", value, True) if value else None


# ---- writing -------------------------------------------------------------------------------


def escape(text: str) -> str:
    """``ProtobufSchemaUtils.escapeChars``."""
    out = []
    for ch in text:
        out.append(_ESCAPES.get(ch, ch))
    return "".join(out)


_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    "'": "\\'",
    '"': '\\"',
}


def indented(text: str) -> str:
    """``appendIndented``: every line of ``text`` prefixed by two spaces (Java ``split``)."""
    lines = text.split("\n")
    while len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return "".join(f"  {line}\n" for line in lines)


def java_number(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        text = repr(value)
        if "e" in text:
            mantissa, _, exponent = text.partition("e")
            if "." not in mantissa:
                mantissa += ".0"
            return f"{mantissa}E{int(exponent)}"
        return text
    return str(value)


def normalized_number(value: Any) -> str:
    """Java ``DecimalFormat`` without grouping (at most three fraction digits)."""
    try:
        number = Decimal(str(value))
    except ArithmeticError:
        return str(value)
    if not number.is_finite():
        return str(value)
    number = number.quantize(Decimal("0.001"), rounding=ROUND_HALF_EVEN)
    text = format(number, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


class OptionWriter:
    """Confluent's option formatting (``toOptionString``, ``appendOptions``, maps and lists)."""

    def __init__(
        self, normalize: bool, resolve_extension: Callable[[str], str | None] | None = None
    ) -> None:
        self.normalize = normalize
        self.resolve_extension = resolve_extension

    def number(self, value: Any) -> str:
        if self.normalize and not isinstance(value, bool):
            return normalized_number(value)
        return java_number(value)

    def option(self, option: Option) -> str:
        name = f"({option.name})" if option.parenthesized else option.name
        value = option.value
        if option.kind == "STRING":
            return f'{name} = "{escape(str(value))}"'
        if option.kind in ("BOOLEAN", "ENUM"):
            return f"{name} = {java_number(value) if isinstance(value, bool) else value}"
        if option.kind == "NUMBER":
            return f"{name} = {self.number(value)}"
        if option.kind == "BYTES":  # a bytes default, already C-escaped by protoc
            return f'{name} = "{value}"'
        if option.kind == "MAP":
            return f"{name} = {{\n{self.option_map(value)}}}"
        if option.kind == "LIST":
            return f"{name} = {self.options_list(value)}"
        if option.kind == "OPTION":  # ``(a.b).c = 1``: the nested part is never parenthesized
            return f"{name}.{self.option(value)}"
        return name

    def statement(self, option: Option) -> str:
        return f"option {self.option(option)};\n"

    def option_map(self, value: dict[str, Any]) -> str:
        items = list(value.items())
        if self.normalize:
            items = sorted((k, v) for k, v in items if not (isinstance(v, list) and not v))
        out = []
        for index, (key, item) in enumerate(items):
            end = "," if index != len(items) - 1 else ""
            out.append(indented(f"{key}: {self.value(item)}{end}"))
        return "".join(out)

    def value(self, value: Any) -> str:
        if isinstance(value, str):
            return f'"{escape(value)}"'
        if isinstance(value, dict):
            return f"{{\n{self.option_map(value)}}}"
        if isinstance(value, list):
            if self.normalize and len(value) == 1:
                return self.value(value[0])
            out = ["[\n"]
            for index, item in enumerate(value):
                end = "," if index != len(value) - 1 else ""
                out.append(indented(f"{self.value(item)}{end}"))
            out.append("]")
            return "".join(out)
        if isinstance(value, Prim):
            if value.kind in ("BOOLEAN", "ENUM"):
                return (
                    java_number(value.value) if isinstance(value.value, bool) else str(value.value)
                )
            if value.kind == "NUMBER":
                return self.number(value.value)
            return self.value(value.value)
        if isinstance(value, Option):
            return self.option(value)
        return java_number(value)

    def options_list(self, options: Sequence[Any]) -> str:
        if len(options) == 1:
            return f"[{self.value(options[0])}]"
        out = ["[\n"]
        for index, item in enumerate(options):
            end = "," if index < len(options) - 1 else ""
            out.append(indented(f"{self.value(item)}{end}"))
        out.append("]")
        return "".join(out)

    def filter(self, options: Sequence[Option], ignore_extensions: bool) -> list[Option]:
        result = list(options)
        if ignore_extensions:
            result = [
                o for o in result if not o.parenthesized or o.name.startswith(CONFLUENT_PREFIX)
            ]
        if self.normalize:
            result = sorted(result, key=lambda o: o.name)
        return result
