"""The PROTOBUF :class:`~registry.formats.base.SchemaFormat`: compile, print, compare."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Hashable, Sequence

from google.protobuf.descriptor_pb2 import FileDescriptorProto
from google.protobuf.message import DecodeError

from registry.formats.base import Dependency, ParsedSchema, SchemaFormat
from registry.formats.protobuf import compatibility as _compat
from registry.formats.protobuf.compiler import Compiled, compile_proto
from registry.formats.protobuf.options import OptionReader
from registry.formats.protobuf.printer import Printer, SourceHints, print_file
from registry.formats.protobuf.serialized import (
    DEFAULT_NAME,
    confluent_descriptor,
    fill_types,
)
from registry.formats.protobuf.symbols import Symbols

#: the file name Confluent gives the schema's own descriptor in ``format=serialized``
SERIALIZED_NAME = DEFAULT_NAME
_BASE64 = re.compile(r"[A-Za-z0-9+/\s]+={0,2}\s*")


class ProtobufSchema(ParsedSchema):
    """A compiled ``.proto`` schema with its dependencies (as Confluent's ``ProtobufSchema``)."""

    schema_type = "PROTOBUF"

    def __init__(
        self,
        compiled: Compiled,
        dependencies: tuple[Dependency, ...],
        hints: SourceHints | None,
    ) -> None:
        self.compiled = compiled
        self.dependencies = dependencies
        self.hints = hints
        self.symbols = Symbols(compiled.files)
        self._options = OptionReader(compiled.files, value_first=hints is None)
        self._canonical: str | None = None
        self._normalized: str | None = None
        self._model: _compat.FileModel | None = None

    @property
    def descriptor(self) -> FileDescriptorProto:
        """The schema's own ``FileDescriptorProto`` (as protoc compiled it)."""
        return self.compiled.main

    def _print(self, *, normalize: bool = False, ignore_extensions: bool = False) -> str:
        return print_file(
            self.compiled.main,
            self.symbols,
            self._options,
            hints=self.hints,
            normalize=normalize,
            ignore_extensions=ignore_extensions,
        )

    def canonical(self) -> str:
        """Confluent's canonical string (``ProtobufSchemaUtils.toString``)."""
        if self._canonical is None:
            self._canonical = self._print()
        return self._canonical

    def normalized(self) -> str:
        """The canonical text of Confluent's normalised schema (``ProtobufSchema.normalize()``)."""
        if self._normalized is None:
            self._normalized = self._print(normalize=True)
        return self._normalized

    def formatted(self, fmt: str | None) -> str:
        if fmt == "serialized":
            return self.serialized()
        if fmt == "ignore_extensions":
            return self._print(ignore_extensions=True)
        return self.canonical()

    def serialized(self) -> str:
        """Base64 of the ``FileDescriptorProto`` Confluent builds for the schema
        (``format=serialized``; see ``serialized.confluent_descriptor``)."""
        return base64.b64encode(self.confluent_descriptor().SerializeToString()).decode("ascii")

    def confluent_descriptor(self) -> FileDescriptorProto:
        """The schema's descriptor as Confluent's ``toDynamicSchema`` builds it."""
        printer = Printer(self.symbols, self._options, hints=self.hints)
        references = [dep.name for dep in self.dependencies]
        return confluent_descriptor(self.compiled.main, printer, references)

    def model(self) -> _compat.FileModel:
        if self._model is None:
            refs: dict[str, Hashable] = {
                dep.name: ("ref", dep.name, hashlib.sha256(dep.schema.encode()).hexdigest())
                for dep in self.dependencies
            }
            self._model = _compat.build_model(self.compiled.main, self.compiled.files, refs)
        return self._model

    def message_names(self) -> list[str]:
        """Full names of the top-level messages, in order (message index 0, 1, ...)."""
        package = self.compiled.main.package
        return [
            f"{package}.{m.name}" if package else m.name for m in self.compiled.main.message_type
        ]

    def name(self) -> str | None:
        """The first message's full name (Confluent's ``name()``), if any."""
        names = self.message_names()
        return names[0] if names else None

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"ProtobufSchema({self.canonical()!r})"


class ProtobufFormat(SchemaFormat):
    """Protobuf: protoc parsing, Confluent 7.9 texts and diff rules."""

    schema_type = "PROTOBUF"

    def parse(
        self, text: str, dependencies: Sequence[Dependency] = (), *, strict: bool = True
    ) -> ProtobufSchema:
        deps = tuple(dependencies)
        descriptor = _descriptor_from_base64(text)
        if descriptor is not None:
            return self._parse_descriptor(descriptor, deps)
        compiled = compile_proto(text, deps)
        hints = SourceHints.of(text, compiled.unresolved)
        return ProtobufSchema(compiled, deps, hints)

    def _parse_descriptor(
        self, descriptor: FileDescriptorProto, deps: tuple[Dependency, ...]
    ) -> ProtobufSchema:
        """A schema sent as a serialized descriptor: print it, then compile that text."""
        imported = compile_proto(
            'syntax = "proto3";\n' + "".join(f'import "{d}";\n' for d in descriptor.dependency),
            deps,
        )
        files = [*imported.files[:-1], descriptor]
        fill_types(descriptor, Symbols(files))
        text = print_file(
            descriptor, Symbols([descriptor]), OptionReader(files, value_first=True), hints=None
        )
        return ProtobufSchema(compile_proto(text, deps), deps, None)

    def compatibility_errors(
        self,
        reader: ParsedSchema,
        writer: ParsedSchema,
        reader_label: str = "new",
        writer_label: str = "old",
        *,
        policy: str | None = None,
    ) -> list[str]:
        """Confluent's ``ProtobufSchema.isBackwardCompatible``: diff(original = writer,
        update = reader); the incompatible differences, or none when all are compatible."""
        assert isinstance(reader, ProtobufSchema) and isinstance(writer, ProtobufSchema)
        diffs = self.differences(writer, reader)
        if _compat.is_compatible(diffs):
            return []
        return [
            d.message(reader_label, writer_label)
            for d in diffs
            if d.type not in _compat.COMPATIBLE_CHANGES
        ]

    @staticmethod
    def differences(original: ProtobufSchema, update: ProtobufSchema) -> list[_compat.Difference]:
        """Every difference (compatible or not) between two schemas, in Confluent's order."""
        return _compat.differences(original.model(), update.model())


def _descriptor_from_base64(text: str) -> FileDescriptorProto | None:
    """The descriptor when ``text`` is base64 of a serialized ``FileDescriptorProto``."""
    if not _BASE64.fullmatch(text) or not text.strip():
        return None
    try:
        data = base64.b64decode("".join(text.split()), validate=True)
        descriptor = FileDescriptorProto.FromString(data)
    except (binascii.Error, ValueError, DecodeError):
        return None
    if not descriptor.message_type and not descriptor.enum_type and not descriptor.service:
        return None
    return descriptor
