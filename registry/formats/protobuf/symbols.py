"""The types a compiled schema can see, and protobuf's name resolution over them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf.descriptor_pb2 import (
    DescriptorProto,
    EnumDescriptorProto,
    FieldDescriptorProto,
    FileDescriptorProto,
)

T = FieldDescriptorProto
SCALAR_NAMES = {
    T.TYPE_DOUBLE: "double",
    T.TYPE_FLOAT: "float",
    T.TYPE_INT64: "int64",
    T.TYPE_UINT64: "uint64",
    T.TYPE_INT32: "int32",
    T.TYPE_FIXED64: "fixed64",
    T.TYPE_FIXED32: "fixed32",
    T.TYPE_BOOL: "bool",
    T.TYPE_STRING: "string",
    T.TYPE_BYTES: "bytes",
    T.TYPE_UINT32: "uint32",
    T.TYPE_SFIXED32: "sfixed32",
    T.TYPE_SFIXED64: "sfixed64",
    T.TYPE_SINT32: "sint32",
    T.TYPE_SINT64: "sint64",
}


@dataclass(frozen=True)
class TypeInfo:
    """A message or enum: where it is defined and, for a map entry, its key and value."""

    fullname: str  # without the leading dot
    package: str
    file: str
    message: DescriptorProto | None
    enum: EnumDescriptorProto | None

    @property
    def is_map(self) -> bool:
        return self.message is not None and self.message.options.map_entry

    def map_fields(self) -> tuple[FieldDescriptorProto, FieldDescriptorProto]:
        assert self.message is not None
        by_name = {f.name: f for f in self.message.field}
        return by_name["key"], by_name["value"]


class Symbols:
    """Every message and enum of a set of files by full name, with protobuf scoping rules."""

    def __init__(self, files: Iterable[FileDescriptorProto]) -> None:
        self.types: dict[str, TypeInfo] = {}
        self.aggregates: set[str] = set()
        for fd in files:
            parts = fd.package.split(".") if fd.package else []
            for i in range(1, len(parts) + 1):
                self.aggregates.add(".".join(parts[:i]))
            self._add(fd, fd.package, fd.message_type, fd.enum_type)
            for service in fd.service:
                self.aggregates.add(_join(fd.package, service.name))

    def _add(
        self,
        fd: FileDescriptorProto,
        scope: str,
        messages: Iterable[DescriptorProto],
        enums: Iterable[EnumDescriptorProto],
    ) -> None:
        for message in messages:
            name = _join(scope, message.name)
            self.types[name] = TypeInfo(name, fd.package, fd.name, message, None)
            self.aggregates.add(name)
            self._add(fd, name, message.nested_type, message.enum_type)
        for enum in enums:
            name = _join(scope, enum.name)
            self.types[name] = TypeInfo(name, fd.package, fd.name, None, enum)
            self.aggregates.add(name)

    def get(self, name: str) -> TypeInfo | None:
        return self.types.get(name[1:] if name.startswith(".") else name)

    def resolve(self, name: str, scope: str) -> str | None:
        """The full name ``name`` denotes when written inside ``scope`` (protoc's rules)."""
        if name.startswith("."):
            return name[1:] if name[1:] in self.types else None
        first, _, rest = name.partition(".")
        scope_parts = scope.split(".") if scope else []
        while True:
            candidate = ".".join([*scope_parts, first])
            if rest:
                if candidate in self.aggregates:
                    full = f"{candidate}.{rest}"
                    return full if full in self.types else None
            elif candidate in self.types:
                return candidate
            if not scope_parts:
                return None
            scope_parts.pop()

    def shortest(self, fullname: str, scope: str) -> str:
        """The shortest relative name that resolves to ``fullname`` from ``scope``."""
        parts = fullname.split(".")
        for i in range(len(parts) - 1, -1, -1):
            candidate = ".".join(parts[i:])
            if self.resolve(candidate, scope) == fullname:
                return candidate
        return "." + fullname


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name
