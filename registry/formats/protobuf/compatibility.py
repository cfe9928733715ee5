"""Confluent 7.9's Protobuf schema diff (``protobuf-provider/.../diff``), re-expressed.

``differences(original, update)`` walks two compiled schemas the way Confluent's ``SchemaDiff``
walks two Wire ``ProtoFileElement``s and returns ``(type, path)`` pairs in Confluent's order. The
order of Confluent's result comes from iterating Java ``HashSet``s of names and tags; it is
reproduced by :func:`java_hash_order`, so multi-difference messages read exactly as Confluent's.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from google.protobuf.descriptor_pb2 import (
    DescriptorProto,
    EnumDescriptorProto,
    FieldDescriptorProto,
    FileDescriptorProto,
)

from registry import budget
from registry.formats.protobuf.symbols import SCALAR_NAMES

F = FieldDescriptorProto

COMPATIBLE_CHANGES = frozenset(
    {
        "MESSAGE_ADDED",
        "MESSAGE_MOVED",
        "ENUM_ADDED",
        "ENUM_REMOVED",
        "ENUM_CONST_ADDED",
        "ENUM_CONST_CHANGED",
        "ENUM_CONST_REMOVED",
        "FIELD_ADDED",
        "FIELD_REMOVED",
        "FIELD_NAME_CHANGED",
        "FIELD_STRING_OR_BYTES_LABEL_CHANGED",
        "ONEOF_ADDED",
        "ONEOF_REMOVED",
        "ONEOF_FIELD_ADDED",
    }
)

#: ``Difference.error()`` templates; ``{path}`` is the difference's path, the two ``%s`` are the
#: labels of the schemas (update first, then original: "new"/"old" for a backward check)
DESCRIPTIONS = {
    "PACKAGE_CHANGED": "The package at '{path}' in the %s schema does not match the package in "
    "the %s schema",
    "MESSAGE_REMOVED": "The %s schema is missing a MESSAGE type at path '{path}' in the %s schema",
    "FIELD_KIND_CHANGED": "The type of a field at path '{path}' in the %s schema does not match "
    "the %s schema",
    "FIELD_SCALAR_KIND_CHANGED": "The kind of a SCALAR field at path '{path}' in the %s schema "
    "does not match its kind in the %s schema",
    "FIELD_NAMED_TYPE_CHANGED": "The type of a MESSAGE field at path '{path}' in the %s schema "
    "does not match its type in the %s schema",
    "FIELD_NUMERIC_LABEL_CHANGED": "The label for a NUMERIC field at path '{path}' in the %s "
    "schema does not match its label in the %s schema",
    "REQUIRED_FIELD_ADDED": "A required field  at path '{path}' in the %s schema is missing in "
    "the %s schema",
    "REQUIRED_FIELD_REMOVED": "The %s schema is missing a required field at path: '{path}' in "
    "the %s schema",
    "ONEOF_FIELD_REMOVED": "The %s schema is missing a oneof field at path '{path}' in the %s "
    "schema",
    "MULTIPLE_FIELDS_MOVED_TO_ONEOF": "Multiple fields in the oneof at path '{path}' in the %s "
    "schema are outside a oneof in the %s schema",
    "FIELD_MOVED_TO_EXISTING_ONEOF": "A field in the oneof at path '{path}' in the %s schema is "
    "outside an existing oneof in the %s schema",
}

SCALAR_KINDS = {
    "int32": "GENERAL_NUMBER",
    "int64": "GENERAL_NUMBER",
    "uint32": "GENERAL_NUMBER",
    "uint64": "GENERAL_NUMBER",
    "bool": "GENERAL_NUMBER",
    "sint32": "SIGNED_NUMBER",
    "sint64": "SIGNED_NUMBER",
    "string": "STRING_OR_BYTES",
    "bytes": "STRING_OR_BYTES",
    "fixed32": "FIXED32",
    "sfixed32": "FIXED32",
    "fixed64": "FIXED64",
    "sfixed64": "FIXED64",
    "float": "FLOAT",
    "double": "DOUBLE",
}
NUMERIC_KINDS = {"GENERAL_NUMBER", "SIGNED_NUMBER", "FIXED32", "FIXED64", "FLOAT", "DOUBLE"}


@dataclass(frozen=True)
class Difference:
    type: str
    path: str

    def message(self, update_label: str, original_label: str) -> str:
        """``Difference.toString()`` with the description's slots filled."""
        template = DESCRIPTIONS.get(self.type, "")
        description = template.replace("{path}", self.path)
        if description:
            description = description.replace("%s", update_label, 1).replace(
                "%s", original_label, 1
            )
        return f'{{errorType:"{self.type}", description:"{description}"}}'

    def __str__(self) -> str:
        return f"{self.type} {self.path}"


# ---- a Wire-like model of a compiled file -------------------------------------------------------


@dataclass(eq=False)
class FieldModel:
    name: str
    tag: int
    label: str | None  # as Wire parses it: None when the source wrote no label
    type: str  # scalar name, ".full.Name" or "map<K, V>"


@dataclass(eq=False)
class OneofModel:
    name: str
    fields: list[FieldModel]


@dataclass(eq=False)
class EnumModel:
    name: str
    constants: list[tuple[str, int]]


@dataclass(eq=False)
class MessageModel:
    name: str
    fields: list[FieldModel] = field(default_factory=list)
    oneofs: list[OneofModel] = field(default_factory=list)
    types: list[MessageModel | EnumModel] = field(default_factory=list)


@dataclass(frozen=True)
class TypeEntry:
    package: str
    ref: Hashable  # where the type comes from: the schema itself, or which dependency text
    element: MessageModel | EnumModel


@dataclass
class FileModel:
    package: str
    types: list[MessageModel | EnumModel]
    #: every type the schema can see (its own and its dependencies'), by full name
    all_types: dict[str, TypeEntry]


def build_model(
    main: FileDescriptorProto,
    files: Sequence[FileDescriptorProto],
    refs: dict[str, Hashable],
) -> FileModel:
    """``refs`` maps a dependency file name to its identity (same identity = same content)."""
    all_types: dict[str, TypeEntry] = {}
    own: list[MessageModel | EnumModel] = []
    for fd in files:
        proto3 = fd.syntax == "proto3"
        ref: Hashable = "" if fd is main else refs.get(fd.name, ("builtin", fd.name))
        entries = _types(fd.message_type, fd.enum_type, fd.package, proto3, all_types, fd, ref)
        if fd is main:
            own = entries
    return FileModel(main.package, own, all_types)


def _types(
    messages: Iterable[DescriptorProto],
    enums: Iterable[EnumDescriptorProto],
    scope: str,
    proto3: bool,
    table: dict[str, TypeEntry],
    fd: FileDescriptorProto,
    ref: Hashable,
) -> list[MessageModel | EnumModel]:
    result: list[MessageModel | EnumModel] = []
    maps: dict[str, DescriptorProto] = {}
    for message in messages:
        if message.options.map_entry:
            maps[_join(scope, message.name)] = message
    for message in messages:
        full = _join(scope, message.name)
        if message.options.map_entry:
            continue
        model = MessageModel(message.name)
        table[full] = TypeEntry(fd.package, ref, model)
        groups = {f.type_name.rsplit(".", 1)[-1] for f in message.field if f.type == F.TYPE_GROUP}
        nested_maps = {_join(full, m.name): m for m in message.nested_type if m.options.map_entry}
        synthetic = {f.oneof_index for f in message.field if f.proto3_optional}
        oneofs: dict[int, OneofModel] = {}
        for f in message.field:
            if f.type == F.TYPE_GROUP:
                continue
            in_oneof = f.HasField("oneof_index") and f.oneof_index not in synthetic
            type_text, is_map = _field_type(f, nested_maps)
            label = None if in_oneof or is_map else _label(f, proto3)
            fm = FieldModel(f.name, f.number, label, type_text)
            if in_oneof:
                if f.oneof_index not in oneofs:
                    oneofs[f.oneof_index] = OneofModel(message.oneof_decl[f.oneof_index].name, [])
                oneofs[f.oneof_index].fields.append(fm)
            else:
                model.fields.append(fm)
        model.oneofs = [oneofs[i] for i in sorted(oneofs)]
        model.types = _types(
            [m for m in message.nested_type if m.name not in groups],
            message.enum_type,
            full,
            proto3,
            table,
            fd,
            ref,
        )
        result.append(model)
    for enum in enums:
        em = EnumModel(enum.name, [(v.name, v.number) for v in enum.value])
        table[_join(scope, enum.name)] = TypeEntry(fd.package, ref, em)
        result.append(em)
    return result


def _field_type(f: FieldDescriptorProto, maps: dict[str, DescriptorProto]) -> tuple[str, bool]:
    if f.type in SCALAR_NAMES:
        return SCALAR_NAMES[f.type], False
    entry = maps.get(f.type_name.lstrip("."))
    if entry is not None and f.label == F.LABEL_REPEATED:
        by_name = {x.name: x for x in entry.field}
        key, value = by_name["key"], by_name["value"]
        value_type = SCALAR_NAMES.get(value.type) or value.type_name
        return f"map<{SCALAR_NAMES[key.type]}, {value_type}>", True
    return f.type_name, False


def _label(f: FieldDescriptorProto, proto3: bool) -> str | None:
    if f.proto3_optional:
        return "optional"
    if f.label == F.LABEL_REPEATED:
        return "repeated"
    if proto3:
        return None
    return "required" if f.label == F.LABEL_REQUIRED else "optional"


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


# ---- Java HashSet iteration order -------------------------------------------------------------


def _java_string_hash(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def _java_hash(key: object) -> int:
    h = _java_string_hash(key) if isinstance(key, str) else int(key) & 0xFFFFFFFF  # type: ignore[call-overload]
    return h ^ (h >> 16)


def java_hash_order(first: Sequence[object], then: Iterable[object]) -> list[object]:
    """Iteration order of ``new HashSet<>(first)`` after ``addAll(then)`` (Java 8+)."""
    capacity = 1
    while capacity < max(int(len(first) / 0.75) + 1, 16):
        capacity *= 2
    keys: list[object] = []
    seen: set[object] = set()
    for key in [*first, *then]:
        if key in seen:
            continue
        seen.add(key)
        keys.append(key)
        if len(keys) > capacity * 0.75:
            capacity *= 2
    mask = capacity - 1
    return sorted(keys, key=lambda k: _java_hash(k) & mask)  # stable: insertion order in a bucket


# ---- the diff ------------------------------------------------------------------------------


class Context:
    def __init__(self, original: FileModel, update: FileModel) -> None:
        self.original = original
        self.update = update
        self.path: list[str] = []
        self.schemas: set[int] = set()
        self.diffs: list[Difference] = []

    def sub(self, path: list[str]) -> Context:
        ctx = Context(self.original, self.update)
        ctx.schemas = set(self.schemas)
        ctx.path = path
        return ctx

    def add(self, kind: str) -> None:
        self.diffs.append(Difference(kind, "#/" + "/".join(self.path)))

    def compatible(self) -> bool:
        return all(d.type in COMPATIBLE_CHANGES for d in self.diffs)

    def type(self, name: str, original: bool) -> TypeEntry | None:
        table = (self.original if original else self.update).all_types
        return table.get(name[1:] if name.startswith(".") else name)


def differences(original: FileModel, update: FileModel) -> list[Difference]:
    ctx = Context(original, update)
    if original.package != update.package:
        ctx.add("PACKAGE_CHANGED")
    _compare_types(ctx, original.types, update.types)
    return ctx.diffs


def _index(
    types: Sequence[MessageModel | EnumModel],
) -> tuple[dict[str, MessageModel], dict[str, int], dict[str, EnumModel]]:
    messages: dict[str, MessageModel] = {}
    indexes: dict[str, int] = {}
    enums: dict[str, EnumModel] = {}
    for element in types:
        if isinstance(element, MessageModel):
            messages[element.name] = element
            indexes[element.name] = len(indexes)
        else:
            enums[element.name] = element
    return messages, indexes, enums


def _compare_types(
    ctx: Context,
    original: Sequence[MessageModel | EnumModel],
    update: Sequence[MessageModel | EnumModel],
) -> None:
    o_messages, o_indexes, o_enums = _index(original)
    u_messages, u_indexes, u_enums = _index(update)
    for name in java_hash_order(list(o_messages), u_messages):
        ctx.path.append(str(name))
        o, u = o_messages.get(str(name)), u_messages.get(str(name))
        if u is None:
            ctx.add("MESSAGE_REMOVED")
        elif o is None:
            ctx.add("MESSAGE_ADDED")
        else:
            _compare_messages(ctx, o, u)
            if o_indexes.get(str(name)) != u_indexes.get(str(name)):
                ctx.add("MESSAGE_MOVED")
        ctx.path.pop()
    for name in java_hash_order(list(o_enums), u_enums):
        ctx.path.append(str(name))
        oe, ue = o_enums.get(str(name)), u_enums.get(str(name))
        if ue is None:
            ctx.add("ENUM_REMOVED")
        elif oe is None:
            ctx.add("ENUM_ADDED")
        else:
            _compare_enums(ctx, oe, ue)
        ctx.path.pop()


def _compare_enums(ctx: Context, original: EnumModel, update: EnumModel) -> None:
    o_by_tag: dict[int, str] = {}
    for name, tag in original.constants:
        o_by_tag[tag] = name
    u_by_tag: dict[int, str] = {}
    for name, tag in update.constants:
        u_by_tag[tag] = name
    for tag in java_hash_order(list(o_by_tag), u_by_tag):
        ctx.path.append(str(tag))
        if tag not in u_by_tag:
            ctx.add("ENUM_CONST_REMOVED")
        elif tag not in o_by_tag:
            ctx.add("ENUM_CONST_ADDED")
        elif o_by_tag[tag] != u_by_tag[tag]:  # type: ignore[index]
            ctx.add("ENUM_CONST_CHANGED")
        ctx.path.pop()


def _compare_messages(ctx: Context, original: MessageModel, update: MessageModel) -> None:
    budget.charge()
    if id(original) not in ctx.schemas:
        ctx.schemas.add(id(original))
        try:
            _compare_message_fields(ctx, original, update)
        finally:
            ctx.schemas.discard(id(original))
    _compare_types(ctx, original.types, update.types)


def _compare_message_fields(ctx: Context, original: MessageModel, update: MessageModel) -> None:
    o_by_tag = {f.tag: f for f in original.fields}
    u_by_tag = {f.tag: f for f in update.fields}
    o_oneofs = {o.name: o for o in original.oneofs}
    u_oneofs: dict[str, OneofModel] = {}
    o_oneof_tags = {f.tag for o in original.oneofs for f in o.fields}
    for oneof in update.oneofs:
        u_oneofs[oneof.name] = oneof
        ctx.path.append(oneof.name)
        moved = existing = 0
        for f in oneof.fields:
            if o_by_tag.pop(f.tag, None) is not None:
                moved += 1
            elif f.tag in o_oneof_tags:
                existing += 1
        if moved > 1:
            ctx.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF")
        elif moved == 1 and existing > 0:
            ctx.add("FIELD_MOVED_TO_EXISTING_ONEOF")
        ctx.path.pop()
    for name in java_hash_order(list(o_oneofs), u_oneofs):
        ctx.path.append(str(name))
        oo, uo = o_oneofs.get(str(name)), u_oneofs.get(str(name))
        if uo is None:
            ctx.add("ONEOF_REMOVED")
        elif oo is None:
            ctx.add("ONEOF_ADDED")
        else:
            _compare_oneofs(ctx, oo, uo)
        ctx.path.pop()
    for tag in java_hash_order(list(o_by_tag), u_by_tag):
        budget.charge()  # per field: a client gone or the allowance spent stops a long message
        ctx.path.append(str(tag))
        of, uf = o_by_tag.get(tag), u_by_tag.get(tag)  # type: ignore[call-overload]
        if uf is None:
            assert of is not None
            ctx.add("REQUIRED_FIELD_REMOVED" if of.label == "required" else "FIELD_REMOVED")
        elif of is None:
            ctx.add("REQUIRED_FIELD_ADDED" if uf.label == "required" else "FIELD_ADDED")
        else:
            _compare_fields(ctx, of, uf)
        ctx.path.pop()


def _compare_oneofs(ctx: Context, original: OneofModel, update: OneofModel) -> None:
    o_by_tag = {f.tag: f for f in original.fields}
    u_by_tag = {f.tag: f for f in update.fields}
    for tag in java_hash_order(list(o_by_tag), u_by_tag):
        ctx.path.append(str(tag))
        of, uf = o_by_tag.get(tag), u_by_tag.get(tag)  # type: ignore[call-overload]
        if uf is None:
            ctx.add("ONEOF_FIELD_REMOVED")
        elif of is None:
            ctx.add("ONEOF_FIELD_ADDED")
        else:
            _compare_fields(ctx, of, uf)
        ctx.path.pop()


def _compare_fields(ctx: Context, original: FieldModel, update: FieldModel) -> None:
    if original.name != update.name:
        ctx.add("FIELD_NAME_CHANGED")
    _compare_labels_and_types(ctx, original.label, update.label, original.type, update.type)


def _map_parts(type_text: str) -> tuple[str, str]:
    key, _, value = type_text[4:-1].partition(", ")
    return key, value


def _kind(ctx: Context, type_text: str, original: bool) -> str:
    if type_text in SCALAR_KINDS:
        return "SCALAR"
    if type_text.startswith("map<"):
        return "MAP"
    entry = ctx.type(type_text, original)
    if entry is not None and isinstance(entry.element, EnumModel):
        return "SCALAR"
    return "MESSAGE"


def _scalar_kind(ctx: Context, type_text: str, original: bool) -> str:
    entry = ctx.type(type_text, original)
    if entry is not None and isinstance(entry.element, EnumModel):
        return "GENERAL_NUMBER"
    return SCALAR_KINDS[type_text]


def _compare_labels_and_types(
    ctx: Context,
    o_label: str | None,
    u_label: str | None,
    o_type: str,
    u_type: str,
) -> None:
    o_kind = _kind(ctx, o_type, True)
    u_kind = _kind(ctx, u_type, False)
    if o_kind != u_kind:
        ctx.add("FIELD_KIND_CHANGED")
    elif o_kind == "SCALAR":
        o_scalar = _scalar_kind(ctx, o_type, True)
        u_scalar = _scalar_kind(ctx, u_type, False)
        if o_scalar != u_scalar:
            ctx.add("FIELD_SCALAR_KIND_CHANGED")
        elif o_label is not None and u_label is not None and o_label != u_label:
            if o_scalar in NUMERIC_KINDS:
                ctx.add("FIELD_NUMERIC_LABEL_CHANGED")
            elif o_scalar == "STRING_OR_BYTES":
                ctx.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED")
    elif o_kind == "MESSAGE":
        _compare_message_types(ctx, o_type, u_type)
    else:
        o_key, o_value = _map_parts(o_type)
        u_key, u_value = _map_parts(u_type)
        _compare_labels_and_types(ctx, None, None, o_key, u_key)
        _compare_labels_and_types(ctx, None, None, o_value, u_value)


def _local_name(full: str, package: str) -> str:
    return full[len(package) + 1 :] if package and full.startswith(package + ".") else full


def _compare_message_types(ctx: Context, o_type: str, u_type: str) -> None:
    o_entry = ctx.type(o_type, True)
    u_entry = ctx.type(u_type, False)
    if o_entry is None or u_entry is None:
        if o_type != u_type:
            ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    o_local = _local_name(o_type.lstrip("."), o_entry.package)
    u_local = _local_name(u_type.lstrip("."), u_entry.package)
    if o_local != u_local:
        ctx.add("FIELD_NAMED_TYPE_CHANGED")
        return
    if o_entry.ref == u_entry.ref:
        return  # both the schema's own types, or the same dependency content
    sub = ctx.sub(o_local.split("."))
    assert isinstance(o_entry.element, MessageModel) and isinstance(u_entry.element, MessageModel)
    _compare_messages(sub, o_entry.element, u_entry.element)
    ctx.diffs.extend(sub.diffs)
    if not sub.compatible():
        ctx.add("FIELD_NAMED_TYPE_CHANGED")


def is_compatible(diffs: Iterable[Difference]) -> bool:
    return all(d.type in COMPATIBLE_CHANGES for d in diffs)
