"""Confluent's ``.proto`` printer (``ProtobufSchemaUtils.toString``) over a compiled descriptor.

Three modes share one walk:

- canonical text of a schema sent as ``.proto`` text: types are written as the source wrote them
  (recovered from the source for each field, rpc and extend, checked to resolve to the same
  type; otherwise the shortest name that resolves), ``map<K, V>`` fields as maps;
- canonical text of a schema sent as a base64 ``FileDescriptorProto``: type names as the
  descriptor holds them (fully qualified with a leading dot), one ``reserved`` statement per
  range, as Confluent prints a descriptor;
- the normalised form (``normalize=True``): fully qualified names, sorted imports, options,
  fields, oneofs, reserved ranges and enum constants, no proto2 ``syntax`` line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.descriptor_pb2 import (
    DescriptorProto,
    EnumDescriptorProto,
    FieldDescriptorProto,
    FileDescriptorProto,
    ServiceDescriptorProto,
)

from registry import budget
from registry.formats.protobuf.options import Option, OptionReader, OptionWriter, escape, indented
from registry.formats.protobuf.source_hints import SourceHints
from registry.formats.protobuf.symbols import SCALAR_NAMES, Symbols

MAX_TAG_VALUE = 536_870_911
F = FieldDescriptorProto


class Printer:
    """One printing pass over a file; ``hints`` is ``None`` for a descriptor-sent schema."""

    def __init__(
        self,
        symbols: Symbols,
        options: OptionReader,
        *,
        hints: SourceHints | None,
        normalize: bool = False,
        ignore_extensions: bool = False,
    ) -> None:
        self.symbols = symbols
        self.reader = options
        self.hints = hints
        self.normalize = normalize
        self.ignore_extensions = ignore_extensions
        self.writer = OptionWriter(normalize)

    # ---- names --------------------------------------------------------------------------

    def type_name(self, written: str, scope: str, candidates: Sequence[str] = ()) -> str:
        """How a message/enum reference is printed (``written`` = the descriptor's name)."""
        full = self.symbols.resolve(written, scope) if written else None
        if full is None:
            return written
        if self.normalize:
            return "." + full
        if self.hints is None:
            return written
        for candidate in candidates:
            if self.symbols.resolve(candidate, scope) == full:
                return candidate
        return self.symbols.shortest(full, scope)

    def options(
        self, opts: object, extra: Sequence[Option] = (), written: list[Option] | None = None
    ) -> list[Option]:
        """The descriptor's options (``opts``), with the ``written`` ones the descriptor does
        not hold (custom options nothing declares)."""
        found = self._collect(opts, written)
        return self.writer.filter([*found, *extra], self.ignore_extensions)

    def _collect(self, opts: object, written: list[Option] | None) -> list[Option]:
        found = self.reader.options(opts) if opts is not None else []  # type: ignore[arg-type]
        if written and self.hints is not None and self.hints.unresolved:
            unresolved = self.hints.unresolved
            found += [o for o in written if o.name.lstrip(".") in unresolved]
        return found

    def _raw(self, table: str, key: Any) -> list[Option] | None:
        """What ``SourceHints.<table>`` holds for ``key`` (None without hints)."""
        if self.hints is None:
            return None
        if table == "file_written":
            return self.hints.file_written
        return getattr(self.hints, table).get(key)  # type: ignore[no-any-return]

    # ---- file -----------------------------------------------------------------------------

    _package = ""

    def begin(self, fd: FileDescriptorProto) -> None:
        """Set the file the names and labels that follow are printed for."""
        self._package = fd.package
        self._proto3 = fd.syntax == "proto3"

    @property
    def proto3(self) -> bool:
        return self._proto3

    def file(self, fd: FileDescriptorProto) -> str:
        self._package = fd.package
        out: list[str] = []
        syntax = self.syntax_of(fd)
        if syntax is not None and (not self.normalize or syntax == "proto3"):
            out.append(f'syntax = "{syntax}";\n')
        if fd.package:
            out.append(f"package {fd.package};\n")
        public = set(fd.public_dependency)
        imports = [d for i, d in enumerate(fd.dependency) if i not in public]
        public_imports = [d for i, d in enumerate(fd.dependency) if i in public]
        if imports or public_imports:
            out.append("\n")
            if self.normalize:
                imports = sorted(set(imports))
                public_imports = sorted(set(public_imports))
            out.extend(f'import "{name}";\n' for name in imports)
            out.extend(f'import public "{name}";\n' for name in public_imports)
        options = self.options(
            fd.options if fd.HasField("options") else None,
            written=self._raw("file_written", None),
        )
        if self.hints is not None and not self.normalize and self.hints.file_written:
            # Confluent prints a text schema's options as parsed
            options = self.writer.filter(self.hints.file_written, self.ignore_extensions)
        elif self.hints is not None and not self.normalize and self.hints.file_options:
            # Confluent prints a text schema's file options in the order written
            written = self.hints.file_options
            options.sort(key=lambda o: written.index(o.name) if o.name in written else len(written))
        if options:
            out.append("\n")
            out.extend(self.writer.statement(o) for o in options)
        # ``filterTypes``: the normalized text has the map, not the (explicit) entry message
        messages = [m for m in fd.message_type if not (self.normalize and m.options.map_entry)]
        if messages or fd.enum_type:
            out.append("\n")
            for message in messages:
                out.append(self.message(message, fd.package))
            for enum in fd.enum_type:
                out.append(self.enum(enum, fd.package))
        if not self.ignore_extensions and fd.extension:
            out.append("\n")
            out.extend(self.extends(fd.extension, fd.package))
        if fd.service:
            out.append("\n")
            out.extend(self.service(s, fd.package) for s in fd.service)
        return "".join(out)

    def syntax_of(self, fd: FileDescriptorProto) -> str | None:
        if fd.syntax == "editions":
            return None
        if self.hints is None:
            return fd.syntax or "proto2"
        if fd.syntax == "proto3" or self.hints.syntax_declared:
            return fd.syntax or "proto2"
        return None

    # ---- messages -------------------------------------------------------------------------

    def message(self, message: DescriptorProto, parent: str) -> str:
        scope = f"{parent}.{message.name}" if parent else message.name
        out = [f"message {message.name} {{"]
        reserved = self.reserved(message.reserved_range, message.reserved_name, exclusive=True)
        if reserved:
            out.append("\n")
            out.extend(indented(r) for r in reserved)
        path = scope[len(self._package) + 1 :] if self._package else scope
        written = self.hints.message_written.get(path) if self.hints else None
        if written is not None and not self.normalize:
            # Confluent prints a text schema's options as parsed
            options = self.writer.filter(written, self.ignore_extensions)
        else:
            options = self.options(
                message.options if message.HasField("options") else None, written=written
            )
        if options:
            out.append("\n")
            out.extend(indented(self.writer.statement(o)) for o in options)
        oneof_indexes = real_oneofs(message)
        group_types = {
            f.type_name.rsplit(".", 1)[-1] for f in message.field if f.type == F.TYPE_GROUP
        }
        plain = [
            f
            for f in message.field
            if not (f.HasField("oneof_index") and f.oneof_index in oneof_indexes)
            and f.type != F.TYPE_GROUP
        ]
        if plain:
            out.append("\n")
            if self.normalize:
                plain.sort(key=lambda f: f.number)
            out.extend(indented(self.field(f, scope, in_oneof=False)) for f in plain)
        oneofs = [
            (
                message.oneof_decl[i],
                [f for f in message.field if f.HasField("oneof_index") and f.oneof_index == i],
            )
            for i in sorted(oneof_indexes)
        ]
        oneofs = [(decl, members) for decl, members in oneofs if members]
        if oneofs:
            out.append("\n")
            if self.normalize:
                oneofs = [(n, sorted(m, key=lambda f: f.number)) for n, m in oneofs]
                oneofs.sort(key=lambda o: o[1][0].number)
            for decl, members in oneofs:
                body = [f"oneof {decl.name} {{"]
                # Confluent prints a oneof's options first (``ProtobufSchemaUtils.toString``)
                oneof_options = self._element_options(
                    "oneof_written",
                    (path, decl.name),
                    decl.options if decl.HasField("options") else None,
                )
                if oneof_options:
                    body.append("\n")
                    body.extend(indented(self.writer.statement(o)) for o in oneof_options)
                body.append("\n")
                body.extend(indented(self.field(f, scope, in_oneof=True)) for f in members)
                body.append("}\n")
                out.append(indented("".join(body)))
        groups = [f for f in message.field if f.type == F.TYPE_GROUP]
        if groups:
            out.append("\n")
            if self.normalize:
                groups.sort(key=lambda f: f.number)
            out.extend(indented(self.group(f, message, scope)) for f in groups)
        if not self.ignore_extensions and message.extension_range:
            out.append("\n")
            ranges = [(r.start, r.end - 1) for r in message.extension_range]
            if self.normalize:
                ranges.sort()
            out.extend(indented(f"extensions {self._range(s, e)};\n") for s, e in ranges)
        if not self.ignore_extensions and message.extension:
            out.append("\n")
            out.extend(indented(e) for e in self.extends(message.extension, scope))
        nested = [
            m
            for m in message.nested_type
            if (not m.options.map_entry or self.as_written(f"{scope}.{m.name}"))
            and m.name not in group_types
        ]
        if nested or message.enum_type:
            out.append("\n")
            out.extend(indented(self.message(m, scope)) for m in nested)
            out.extend(indented(self.enum(e, scope)) for e in message.enum_type)
        out.append("}\n")
        return "".join(out)

    def group(self, group: FieldDescriptorProto, message: DescriptorProto, scope: str) -> str:
        name = group.type_name.rsplit(".", 1)[-1]
        body = next((m for m in message.nested_type if m.name == name), None)
        label = _label_name(group.label)
        out = [f"{label} group {name} = {group.number} {{"]
        fields = list(body.field) if body is not None else []
        if fields:
            out.append("\n")
            if self.normalize:
                fields.sort(key=lambda f: f.number)
            out.extend(indented(self.field(f, f"{scope}.{name}", in_oneof=False)) for f in fields)
        out.append("}\n")
        return "".join(out)

    def field(
        self, f: FieldDescriptorProto, scope: str, *, in_oneof: bool, proto3: bool | None = None
    ) -> str:
        budget.tick()  # per field: printing a large schema stops when its client is gone
        label: str | None = None
        is_map = False
        if f.type in SCALAR_NAMES:
            type_text = SCALAR_NAMES[f.type]
        else:
            info = self.symbols.get(self.symbols.resolve(f.type_name, scope) or f.type_name)
            candidates = self.hints.fields.get((f.name, f.number), []) if self.hints else []
            if info is not None and info.is_map and not self.as_written(info.fullname):
                is_map = True
                key, value = info.map_fields()
                if value.type in SCALAR_NAMES:
                    value_text = SCALAR_NAMES[value.type]
                else:
                    value_text = self.type_name(value.type_name, scope, candidates)
                type_text = f"map<{SCALAR_NAMES[key.type]}, {value_text}>"
            else:
                type_text = self.type_name(f.type_name, scope, candidates)
        if not in_oneof and not is_map:
            label = self.written_label(f)
        options: list[Option] = []
        if f.HasField("default_value") and not self._proto3:
            options.append(self._default(f))
        if f.HasField("json_name"):
            options.append(Option("json_name", "STRING", f.json_name))
        written = (
            self.hints.field_options.get((self._path(scope), f.name, f.number))
            if self.hints
            else None
        )
        if written is not None and not self.normalize:
            # Confluent prints these as parsed, default and json_name last
            kept = [o for o in written if o.name not in ("default", "json_name")]
            opts = self.writer.filter([*kept, *options], self.ignore_extensions)
        else:
            opts = self.options(f.options if f.HasField("options") else None, options, written)
        text = f"{label} " if label else ""
        text += f"{type_text} {f.name} = {f.number}"
        if opts:
            text += " " + self.writer.options_list(opts)
        return text + ";\n"

    _proto3 = False

    def written_label(self, f: FieldDescriptorProto) -> str | None:
        if f.proto3_optional:
            return "optional"
        if f.label == F.LABEL_REPEATED:
            return "repeated"
        if self._proto3:
            return None
        return _label_name(f.label)

    def _default(self, f: FieldDescriptorProto) -> Option:
        if f.type == F.TYPE_BOOL:
            return Option("default", "BOOLEAN", f.default_value)
        if f.type == F.TYPE_STRING:
            return Option("default", "STRING", f.default_value)
        if f.type == F.TYPE_BYTES:  # already C-escaped by protoc
            return Option("default", "BYTES", f.default_value)
        if f.type == F.TYPE_ENUM:
            return Option("default", "ENUM", f.default_value)
        return Option("default", "NUMBER", f.default_value)

    def extends(self, fields: Sequence[FieldDescriptorProto], scope: str) -> list[str]:
        groups: dict[str, list[FieldDescriptorProto]] = {}
        for f in fields:
            groups.setdefault(f.extendee, []).append(f)
        out = []
        for extendee, members in groups.items():
            name = self.type_name(extendee, scope, self.hints.extends if self.hints else ())
            body = [f"extend {name} {{"]
            if members:
                body.append("\n")
                if self.normalize:
                    members = sorted(members, key=lambda f: f.number)
                body.extend(indented(self.field(f, scope, in_oneof=False)) for f in members)
            body.append("}\n")
            out.append("".join(body))
        return out

    def reserved(
        self, ranges: Sequence[object], names: Sequence[str], *, exclusive: bool
    ) -> list[str]:
        values: list[tuple[int, int]] = [
            (r.start, r.end - 1 if exclusive else r.end)  # type: ignore[attr-defined]
            for r in ranges
        ]
        if self.normalize:
            items: list[tuple[int, str, str]] = []
            for start, end in values:
                text = str(start) if start == end else f"{start} to {self._max(end)}"
                items.append((start, str(start) if start == end else f"{start}..{end}", text))
            items.extend((2**31 - 1, name, f'"{name}"') for name in names)
            items.sort(key=lambda i: (i[0], i[1]))
            return [f"reserved {text};\n" for _, _, text in items]
        texts = [self._range(start, end) for start, end in values]
        if self.hints is None:
            return [f"reserved {t};\n" for t in texts] + [f'reserved "{n}";\n' for n in names]
        out = []
        if texts:
            out.append(f"reserved {', '.join(texts)};\n")
        if names:
            out.append("reserved " + ", ".join(f'"{n}"' for n in names) + ";\n")
        return out

    def _range(self, start: int, end: int) -> str:
        if start == end and not self.normalize and self.hints is None:
            return str(start)
        if start == end:
            return str(start)
        return f"{start} to {self._max(end)}"

    @staticmethod
    def _max(end: int) -> str:
        return str(end) if end < MAX_TAG_VALUE else "max"

    # ---- enums and services -----------------------------------------------------------------

    def _path(self, scope: str) -> str:
        """``scope`` (a full name) without the file's package."""
        if not self._package:
            return scope
        return scope[len(self._package) + 1 :] if scope != self._package else ""

    def as_written(self, fullname: str) -> bool:
        """Whether the message ``fullname``, a map entry, is printed as a message (the text
        declared it with ``option map_entry = true``; Confluent prints what Wire parsed, and
        only its normalized text turns it into a ``map``)."""
        if self.hints is None or self.normalize:
            return False
        return self._path(fullname) in self.hints.explicit_maps

    def _written(self, table: dict[Any, list[Option]], key: Any) -> list[Option] | None:
        """Options as the source wrote them (Confluent prints what Wire parsed), if known."""
        if self.hints is None or self.normalize:
            return None
        return table.get(key)

    def _element_options(self, table: str, key: Any, opts: object) -> list[Option]:
        """An enum value's, service's or rpc's options: as the source wrote them, when known
        (:meth:`_written`), else the descriptor's with the written ones it does not hold."""
        written = self._raw(table, key)
        if written is not None and not self.normalize:
            return self.writer.filter(written, self.ignore_extensions)
        return self.options(opts, written=written)

    def enum(self, enum: EnumDescriptorProto, scope: str) -> str:
        path = self._path(f"{scope}.{enum.name}" if scope else enum.name)
        out = [f"enum {enum.name} {{"]
        reserved = self.reserved(enum.reserved_range, enum.reserved_name, exclusive=False)
        if reserved:
            out.append("\n")
            out.extend(indented(r) for r in reserved)
        raw_options = self._written(self.hints.enum_written, path) if self.hints else None
        if raw_options is None:
            # all of them: Confluent's blank line does not depend on ignore_extensions
            raw_options = self._collect(
                enum.options if enum.HasField("options") else None,
                self._raw("enum_written", path),
            )
        if not reserved and (raw_options or enum.value):
            out.append("\n")
        options = self.writer.filter(raw_options, self.ignore_extensions)
        out.extend(indented(self.writer.statement(o)) for o in options)
        values = list(enum.value)
        if self.normalize:
            values.sort(key=lambda v: (v.number, v.name))
        for value in values:
            text = f"{value.name} = {value.number}"
            opts = self._element_options(
                "constant_written",
                (path, value.name),
                value.options if value.HasField("options") else None,
            )
            if opts:
                text += " " + self.writer.options_list(opts)
            out.append(indented(text + ";\n"))
        out.append("}\n")
        return "".join(out)

    def service(self, service: ServiceDescriptorProto, scope: str) -> str:
        out = [f"service {service.name} {{"]
        options = self._element_options(
            "service_written",
            service.name,
            service.options if service.HasField("options") else None,
        )
        if options:
            out.append("\n")
            out.extend(indented(self.writer.statement(o)) for o in options)
        if service.method:
            out.append("\n")
            for method in service.method:
                hints = self.hints.rpcs.get(method.name, []) if self.hints else []
                request = self.type_name(method.input_type, scope, [h[0] for h in hints])
                response = self.type_name(method.output_type, scope, [h[1] for h in hints])
                text = f"rpc {method.name} ("
                text += "stream " if method.client_streaming else ""
                text += f"{request}) returns ("
                text += "stream " if method.server_streaming else ""
                text += f"{response})"
                opts = self._element_options(
                    "rpc_written",
                    (service.name, method.name),
                    method.options if method.HasField("options") else None,
                )
                if opts:
                    text += " {\n" + "".join(indented(self.writer.statement(o)) for o in opts)
                    text += "}"
                out.append(indented(text + ";\n"))
        out.append("}\n")
        return "".join(out)


def _label_name(label: int) -> str:
    return {
        F.LABEL_OPTIONAL: "optional",
        F.LABEL_REQUIRED: "required",
        F.LABEL_REPEATED: "repeated",
    }[label]


def real_oneofs(message: DescriptorProto) -> set[int]:
    """Indexes of oneofs that are not proto3 ``optional``'s synthetic ones."""
    synthetic = {f.oneof_index for f in message.field if f.proto3_optional}
    return {i for i in range(len(message.oneof_decl)) if i not in synthetic}


def print_file(
    fd: FileDescriptorProto,
    symbols: Symbols,
    options: OptionReader,
    *,
    hints: SourceHints | None,
    normalize: bool = False,
    ignore_extensions: bool = False,
) -> str:
    printer = Printer(
        symbols, options, hints=hints, normalize=normalize, ignore_extensions=ignore_extensions
    )
    printer.begin(fd)
    return printer.file(fd)


__all__ = ["Printer", "SourceHints", "escape", "print_file"]
