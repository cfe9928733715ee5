"""The ``FileDescriptorProto`` Confluent answers ``format=serialized`` with.

Confluent does not serialize what a compiler made of the schema: ``ProtobufSchema.
formattedString("serialized")`` returns ``toDynamicSchema().getFileDescriptorProto()``, a
descriptor its ``dynamic`` package builds by hand from the elements Wire parsed out of the
stored (canonical) text. So it differs from protoc's in ways a client sees:

- types are named as the text spells them (``type_name`` ``"Inner"``, not ``".p.M.Inner"``;
  ``FieldDefinition.Builder.setType``), and ``type`` is set when the name resolves among the
  types Wire parsed. A ``map`` field's entry is not one of them, so Confluent's map field has
  no ``type``; we set ``TYPE_MESSAGE`` there (a deliberate difference): Confluent's
  JavaScript client (``@bufbuild/protobuf``'s ``createFileRegistry``) makes a map field only
  of a repeated field whose ``type`` is ``TYPE_MESSAGE`` and reads it as a list otherwise,
  while protobuf's C++/Python/Go/Java builders accept either, as they resolve the name;
- a field's label is the one written: none for a proto3 singular field; ``LABEL_OPTIONAL`` on
  oneof members; ``LABEL_REPEATED`` on maps (``toDynamicMessage``);
- a ``map<K, V> name`` field's entry message is named ``toMapEntry(name)`` (``my_map`` ->
  ``MyMapEntry`` but ``mymap`` -> ``mymapEntry``: only names with ``_`` are camel-cased),
  appended after the declared nested messages, its ``key`` and ``value`` fields unlabelled;
- oneof members come first (oneof by oneof), then the other fields; a proto3 ``optional``
  field gets its synthetic oneof ``_name`` after the real ones;
- every oneof and extension range carries an (empty) ``options`` message (``mergeOptions``
  of an empty builder sets it); an rpc's ``client_streaming`` / ``server_streaming`` are
  always set;
- only the options ``toDynamicSchema`` copies survive (``java_package`` ... ``ruby_package``,
  ``deprecated``, ``packed`` ..., ``map_entry``, ``confluent.*_meta``); other custom options,
  ``message_set_wire_format``, ``lazy`` and the oneofs' own options are left out;
- an import that no reference or bundled file provides is not a ``dependency``; groups are
  left out (Wire keeps them apart from the fields ``toDynamicMessage`` reads).

The schema was compiled by protoc already; this walks its descriptor and re-creates what
Confluent's builder would have made from the canonical text (the spelled names come from the
printer, which prints that text).
"""

from __future__ import annotations

from collections.abc import Iterable

from google.protobuf.descriptor_pb2 import (
    DescriptorProto,
    EnumDescriptorProto,
    FieldDescriptorProto,
    FileDescriptorProto,
    ServiceDescriptorProto,
)
from google.protobuf.message import Message

from registry.formats.protobuf.compiler import GOOGLE_TYPES
from registry.formats.protobuf.printer import Printer, real_oneofs
from registry.formats.protobuf.symbols import SCALAR_NAMES, Symbols

F = FieldDescriptorProto
#: the name Confluent gives the schema's own file (``ProtobufSchema.DEFAULT_NAME``)
DEFAULT_NAME = "default"
#: files an import resolves to without a reference (``ProtobufSchema.KNOWN_DEPENDENCIES``)
KNOWN_DEPENDENCIES = frozenset(
    {
        "confluent/meta.proto",
        "confluent/type/decimal.proto",
        "confluent/type/variant.proto",
        *(f"google/type/{name}.proto" for name in GOOGLE_TYPES),
        *(
            f"google/protobuf/{name}.proto"
            for name in (
                "any",
                "api",
                "descriptor",
                "duration",
                "empty",
                "field_mask",
                "source_context",
                "struct",
                "timestamp",
                "type",
                "wrappers",
            )
        ),
    }
)
#: the field number of ``confluent.file_meta`` ... ``confluent.enum_value_meta``
META_NUMBER = 1088
#: the options each element keeps (``toDynamicSchema`` / ``toDynamicMessage`` / ...)
_FILE_OPTIONS = (
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
    "deprecated",
    "cc_enable_arenas",
    "objc_class_prefix",
    "csharp_namespace",
    "swift_prefix",
    "php_class_prefix",
    "php_namespace",
    "php_metadata_namespace",
    "ruby_package",
    "features",
)
_MESSAGE_OPTIONS = ("no_standard_descriptor_accessor", "deprecated", "map_entry", "features")
_FIELD_OPTIONS = (
    "ctype",
    "packed",
    "jstype",
    "deprecated",
    "debug_redact",
    "retention",
    "targets",
    "edition_defaults",
    "features",
    "feature_support",
)
_ENUM_OPTIONS = ("allow_alias", "deprecated", "features")
_VALUE_OPTIONS = ("deprecated", "debug_redact", "features", "feature_support")
_SERVICE_OPTIONS = ("deprecated", "features")
_METHOD_OPTIONS = ("deprecated", "idempotency_level", "features")
_RANGE_OPTIONS = ("declaration", "features", "verification")


def to_map_entry(field_name: str) -> str:
    """``ProtobufSchema.toMapEntry``: Guava's ``LOWER_UNDERSCORE.to(UPPER_CAMEL, name)`` (each
    ``_``-separated word capitalised, the rest of it lower-cased) only when the name has an
    ``_``; then ``Entry``."""
    if "_" in field_name:
        field_name = "".join(w[:1].upper() + w[1:].lower() for w in field_name.split("_"))
    return field_name + "Entry"


def confluent_descriptor(
    fd: FileDescriptorProto, printer: Printer, references: Iterable[str]
) -> FileDescriptorProto:
    """What Confluent's ``toDynamicSchema`` builds for the schema protoc compiled into ``fd``;
    ``printer`` prints its canonical text, ``references`` are the import names its references
    provide."""
    return _Builder(fd, printer, frozenset(references)).file()


class _Builder:
    def __init__(self, fd: FileDescriptorProto, printer: Printer, references: frozenset[str]):
        self.fd = fd
        self.printer = printer
        self.references = references
        printer.begin(fd)

    def file(self) -> FileDescriptorProto:
        fd, out = self.fd, FileDescriptorProto()
        out.name = DEFAULT_NAME
        if fd.package:
            out.package = fd.package
        syntax = self.printer.syntax_of(fd)
        if syntax is not None:
            out.syntax = syntax
        public = set(fd.public_dependency)
        provided = self.references | KNOWN_DEPENDENCIES
        imports = [d for i, d in enumerate(fd.dependency) if i not in public and d in provided]
        for name in dict.fromkeys(imports):
            out.dependency.append(name)
        for name in [d for i, d in enumerate(fd.dependency) if i in public and d in provided]:
            if name in out.dependency:
                out.public_dependency.append(list(out.dependency).index(name))
            else:
                out.dependency.append(name)
                out.public_dependency.append(len(out.dependency) - 1)
        # protoc makes map entries inside messages only: every top-level message was written
        out.message_type.extend(self.message(m, fd.package) for m in fd.message_type)
        out.enum_type.extend(self.enum(e) for e in fd.enum_type)
        out.service.extend(self.service(s, fd.package) for s in fd.service)
        out.extension.extend(self.extension(f, fd.package) for f in fd.extension)
        if fd.HasField("options"):
            _copy(fd.options, out.options, _FILE_OPTIONS)
        return out

    # ---- messages ------------------------------------------------------------------------

    def message(self, message: DescriptorProto, parent: str) -> DescriptorProto:
        scope = _join(parent, message.name)
        out = DescriptorProto(name=message.name)
        groups = {f.type_name.rsplit(".", 1)[-1] for f in message.field if f.type == F.TYPE_GROUP}
        for nested in message.nested_type:
            full = _join(scope, nested.name)
            if nested.name in groups:
                continue
            if nested.options.map_entry and not self.printer.as_written(full):
                continue  # made for a map<> field: Confluent makes its own, below
            out.nested_type.append(self.message(nested, scope))
        out.enum_type.extend(self.enum(e) for e in message.enum_type)
        real = real_oneofs(message)
        for index in sorted(real):
            members = [
                f for f in message.field if f.HasField("oneof_index") and f.oneof_index == index
            ]
            decl = message.oneof_decl[index]
            oneof = out.oneof_decl.add(name=decl.name)
            oneof.options.SetInParent()
            _copy(decl.options, oneof.options, ("features",))
            for f in members:
                field = self.field(f, scope, "optional")
                field.oneof_index = len(out.oneof_decl) - 1
                out.field.append(field)
        for f in message.field:
            if (f.HasField("oneof_index") and f.oneof_index in real) or f.type == F.TYPE_GROUP:
                continue
            entry = self._map_entry(f, scope)
            if entry is not None:
                out.nested_type.append(entry)
                field = self.field(f, scope, "repeated", type_name=entry.name)
                # Confluent leaves ``type`` out here (the entry is not a type Wire parsed);
                # bufbuild then reads the map as a list of messages (module docstring)
                field.type = F.TYPE_MESSAGE
                out.field.append(field)
            elif f.proto3_optional:
                oneof = out.oneof_decl.add(name="_" + f.name)
                oneof.options.SetInParent()
                field = self.field(f, scope, "optional")
                field.proto3_optional = True
                field.oneof_index = len(out.oneof_decl) - 1
                out.field.append(field)
            else:
                out.field.append(self.field(f, scope, self.printer.written_label(f)))
        for r in message.reserved_range:
            out.reserved_range.add(start=r.start, end=r.end)
        out.reserved_name.extend(message.reserved_name)
        for r in message.extension_range:
            added = out.extension_range.add(start=r.start, end=r.end)
            added.options.SetInParent()
            _copy(r.options, added.options, _RANGE_OPTIONS)
        out.extension.extend(self.extension(f, scope) for f in message.extension)
        if message.HasField("options"):
            _copy(message.options, out.options, _MESSAGE_OPTIONS)
        return out

    def _map_entry(self, f: FieldDescriptorProto, scope: str) -> DescriptorProto | None:
        """The entry message Confluent makes for a field the text writes as ``map<K, V>``."""
        if f.type != F.TYPE_MESSAGE:
            return None
        symbols = self.printer.symbols
        info = symbols.get(symbols.resolve(f.type_name, scope) or f.type_name)
        if info is None or not info.is_map or self.printer.as_written(info.fullname):
            return None
        key, value = info.map_fields()
        entry = DescriptorProto(name=to_map_entry(f.name))
        entry.options.map_entry = True
        candidates = self._candidates(f)
        for part in (key, value):
            added = entry.field.add(name=part.name, number=part.number)
            self._type(added, part, scope, candidates)
        return entry

    # ---- fields ----------------------------------------------------------------------------

    def field(
        self,
        f: FieldDescriptorProto,
        scope: str,
        label: str | None,
        *,
        type_name: str | None = None,
    ) -> FieldDescriptorProto:
        out = FieldDescriptorProto(name=f.name, number=f.number)
        if label is not None:
            out.label = _LABELS[label]
        if type_name is not None:
            out.type_name = type_name  # a map's entry: the caller sets its ``type``
        else:
            self._type(out, f, scope, self._candidates(f))
        if f.HasField("extendee"):
            candidates = self.printer.hints.extends if self.printer.hints else ()
            out.extendee = self.printer.type_name(f.extendee, scope, candidates)
        if f.HasField("default_value") and not self.printer.proto3:
            out.default_value = f.default_value
        if f.HasField("json_name"):
            out.json_name = f.json_name
        if f.HasField("options"):
            _copy(f.options, out.options, _FIELD_OPTIONS)
        return out

    def extension(self, f: FieldDescriptorProto, scope: str) -> FieldDescriptorProto:
        return self.field(f, scope, self.printer.written_label(f))

    def _candidates(self, f: FieldDescriptorProto) -> list[str]:
        hints = self.printer.hints
        return hints.fields.get((f.name, f.number), []) if hints else []

    def _type(
        self,
        out: FieldDescriptorProto,
        f: FieldDescriptorProto,
        scope: str,
        candidates: list[str],
    ) -> None:
        """A scalar's ``type``; a message's or enum's name as the text spells it, and its
        ``type`` (``FieldDefinition.Builder.setType``)."""
        if f.type in SCALAR_NAMES:
            out.type = f.type
            return
        out.type_name = self.printer.type_name(f.type_name, scope, candidates)
        if f.type in (F.TYPE_MESSAGE, F.TYPE_ENUM):
            out.type = f.type

    # ---- enums and services ------------------------------------------------------------------

    def enum(self, enum: EnumDescriptorProto) -> EnumDescriptorProto:
        out = EnumDescriptorProto(name=enum.name)
        if enum.HasField("options"):
            _copy(enum.options, out.options, _ENUM_OPTIONS)
        for value in enum.value:
            added = out.value.add(name=value.name, number=value.number)
            if value.HasField("options"):
                _copy(value.options, added.options, _VALUE_OPTIONS)
        for r in enum.reserved_range:
            out.reserved_range.add(start=r.start, end=r.end)
        out.reserved_name.extend(enum.reserved_name)
        return out

    def service(self, service: ServiceDescriptorProto, scope: str) -> ServiceDescriptorProto:
        out = ServiceDescriptorProto(name=service.name)
        hints = self.printer.hints
        for method in service.method:
            spelled = hints.rpcs.get(method.name, []) if hints else []
            added = out.method.add(name=method.name)
            added.input_type = self.printer.type_name(
                method.input_type, scope, [h[0] for h in spelled]
            )
            added.output_type = self.printer.type_name(
                method.output_type, scope, [h[1] for h in spelled]
            )
            # Wire's RpcElement streams are booleans, never null: always set
            added.client_streaming = method.client_streaming
            added.server_streaming = method.server_streaming
            if method.HasField("options"):
                _copy(method.options, added.options, _METHOD_OPTIONS)
        if service.HasField("options"):
            _copy(service.options, out.options, _SERVICE_OPTIONS)
        return out


_LABELS = {
    "optional": F.LABEL_OPTIONAL,
    "required": F.LABEL_REQUIRED,
    "repeated": F.LABEL_REPEATED,
}


def _copy(source: Message, target: Message, names: Iterable[str]) -> None:
    """The ``names`` options ``source`` sets, and its ``confluent.*_meta`` option, set on
    ``target`` (which is left unset when there are none)."""
    for name in names:
        if name not in source.DESCRIPTOR.fields_by_name:
            continue
        value = getattr(source, name)
        if isinstance(value, Message):
            if source.HasField(name):
                getattr(target, name).CopyFrom(value)
        elif isinstance(value, (bool, int, float, str, bytes)):
            if source.HasField(name):
                setattr(target, name, value)
        elif len(value):  # a repeated option (``targets``, ``edition_defaults``, ...)
            getattr(target, name).extend(value)
    meta = _raw_fields(source.SerializeToString(), META_NUMBER)
    if meta:
        target.MergeFromString(meta)


def _raw_fields(data: bytes, number: int) -> bytes:
    """The encoded occurrences of field ``number`` in the message encoding ``data``."""
    out = bytearray()
    i = 0
    while i < len(data):
        start = i
        key, i = _varint(data, i)
        wire_type = key & 7
        if wire_type == 0:
            _, i = _varint(data, i)
        elif wire_type == 1:
            i += 8
        elif wire_type == 2:
            size, i = _varint(data, i)
            i += size
        elif wire_type == 5:
            i += 4
        else:  # groups (3, 4): not in an options message protoc wrote
            return bytes(out)
        if key >> 3 == number:
            out += data[start:i]
    return bytes(out)


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def fill_types(fd: FileDescriptorProto, symbols: Symbols) -> None:
    """Set the ``type`` of every field of ``fd`` that names a type without saying what it is
    (Confluent's descriptors leave it out when the name is not a type Wire parsed, e.g. a map's
    entry; protobuf's ``FileDescriptor.buildFrom`` works it out the same way)."""

    def fields(fs: Iterable[FieldDescriptorProto], scope: str) -> None:
        for f in fs:
            if f.type_name and not f.HasField("type"):
                info = symbols.get(symbols.resolve(f.type_name, scope) or "")
                if info is not None:
                    f.type = F.TYPE_MESSAGE if info.message is not None else F.TYPE_ENUM

    def messages(ms: Iterable[DescriptorProto], scope: str) -> None:
        for m in ms:
            inner = _join(scope, m.name)
            fields(m.field, inner)
            fields(m.extension, inner)
            messages(m.nested_type, inner)

    fields(fd.extension, fd.package)
    messages(fd.message_type, fd.package)
