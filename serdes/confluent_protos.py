"""Confluent's two well-known Protobuf files (``confluent/meta.proto``,
``confluent/type/decimal.proto``) without importing ``confluent_kafka.schema_registry``.

confluent-kafka ships them as generated modules inside its ``schema_registry`` package, whose
``__init__`` needs its ``[schemaregistry]`` extra; serdes depends on the Kafka client alone. So
serdes holds the two descriptors itself (the registry's copies, ``registry/formats/protobuf/
proto/confluent/``) and puts them only into its own descriptor pools, never into protobuf's
default pool: there a file name may be registered once, and an application that imports
confluent-kafka's generated modules (whose ``meta.proto`` is a newer revision) must still be
able to. When the default pool already holds a file (the application imported confluent's
module, or its own generated code), that one is used, so values pass between the libraries.
"""

from __future__ import annotations

import threading
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, text_format
from google.protobuf.message_factory import GetMessageClass

__all__ = ["META_FIELD", "decimal_class", "file_proto", "meta_tags"]

_META = 'name: "confluent/meta.proto" package: "confluent"\n' + (
    'dependency: "google/protobuf/descriptor.proto" syntax: "proto3"\n'
    'options { java_package: "io.confluent.protobuf" java_outer_classname: "MetaProto" }\n'
    'message_type { name: "Meta"\n'
    '  field { name: "doc" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "doc" }\n'
    '  field { name: "params" number: 2 label: LABEL_REPEATED type: TYPE_MESSAGE\n'
    '          type_name: ".confluent.Meta.ParamsEntry" json_name: "params" }\n'
    '  field { name: "tags" number: 3 label: LABEL_REPEATED type: TYPE_STRING json_name: "tags" }\n'
    '  nested_type { name: "ParamsEntry" options { map_entry: true }\n'
    '    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "key" }\n'
    '    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING\n'
    '            json_name: "value" } } }\n'
    + "".join(
        f'extension {{ name: "{_snake}_meta" extendee: ".google.protobuf.{kind}Options"\n'
        '  number: 1088 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".confluent.Meta"\n'
        f'  json_name: "{_json}Meta" }}\n'
        for kind, _snake, _json in (
            ("File", "file", "file"),
            ("Message", "message", "message"),
            ("Field", "field", "field"),
            ("Enum", "enum", "enum"),
            ("EnumValue", "enum_value", "enumValue"),
        )
    )
)
_DECIMAL = (
    'name: "confluent/type/decimal.proto" package: "confluent.type" syntax: "proto3"\n'
    'options { java_package: "io.confluent.protobuf.type" java_multiple_files: true\n'
    '          java_outer_classname: "DecimalProto" }\n'
    'message_type { name: "Decimal"\n'
    '  field { name: "value" number: 1 label: LABEL_OPTIONAL type: TYPE_BYTES\n'
    '          json_name: "value" }\n'
    '  field { name: "precision" number: 2 label: LABEL_OPTIONAL type: TYPE_UINT32\n'
    '          json_name: "precision" }\n'
    '  field { name: "scale" number: 3 label: LABEL_OPTIONAL type: TYPE_INT32\n'
    '          json_name: "scale" }\n'
    "}\n"
)
_TEXTS = {"confluent/meta.proto": _META, "confluent/type/decimal.proto": _DECIMAL}

# the field number of ``(confluent.file_meta)``, ``(confluent.field_meta)``, ... in the options
META_FIELD = 1088


def file_proto(name: str) -> descriptor_pb2.FileDescriptorProto | None:
    """serdes' ``FileDescriptorProto`` of ``confluent/meta.proto`` or
    ``confluent/type/decimal.proto``; ``None`` for any other name."""
    text = _TEXTS.get(name)
    if text is None:
        return None
    return text_format.Parse(text, descriptor_pb2.FileDescriptorProto())


_lock = threading.Lock()
_own_decimal: Any = None


def decimal_class() -> Any:
    """The ``confluent.type.Decimal`` message class: the default pool's when an application
    (or confluent-kafka) registered the file there, else serdes' own."""
    global _own_decimal
    try:
        found = descriptor_pool.Default().FindMessageTypeByName("confluent.type.Decimal")
    except KeyError:
        pass
    else:
        return GetMessageClass(found)
    with _lock:
        if _own_decimal is None:
            pool = descriptor_pool.DescriptorPool()
            proto = file_proto("confluent/type/decimal.proto")
            pool.Add(proto)
            _own_decimal = GetMessageClass(pool.FindMessageTypeByName("confluent.type.Decimal"))
        return _own_decimal


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        out |= (byte & 0x7F) << shift
        if byte < 0x80:
            return out, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of each field of a serialized message (values of wire type
    2 as bytes; others as int or skipped bytes)."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            value, pos = data[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:  # groups: not used by options that carry confluent's meta
            raise ValueError(f"unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def meta_tags(options: Any) -> set[str]:
    """The ``tags`` of an options message's ``(confluent.*_meta)`` extension, read from its
    bytes, so it works whichever ``meta.proto`` (confluent's, serdes', none) is loaded."""
    tags: set[str] = set()
    for number, wire, value in _fields(options.SerializeToString()):
        if number == META_FIELD and wire == 2:
            for inner, inner_wire, item in _fields(value):
                if inner == 3 and inner_wire == 2:
                    tags.add(item.decode("utf-8"))
    return tags
