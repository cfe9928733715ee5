"""The AVRO :class:`~registry.formats.base.SchemaFormat`: parse, print, check compatibility."""

from __future__ import annotations

from collections.abc import Sequence

from registry.formats.avro import compatibility as _compat
from registry.formats.avro.model import NamedSchema, RecordSchema, Schema
from registry.formats.avro.parser import (
    NEW_SCHEMA,
    NEW_SCHEMA_7_9,
    NEW_SCHEMA_7_9_NORMALIZED,
    STORED,
    parse_schema,
)
from registry.formats.avro.printer import normalized_source, schema_json
from registry.formats.base import Dependency, InvalidSchemaError, ParsedSchema, SchemaFormat


class AvroSchema(ParsedSchema):
    """A parsed Avro schema with its references (as Confluent's ``AvroSchema``)."""

    schema_type = "AVRO"

    __slots__ = (
        "_canonical",
        "_normalized",
        "dependencies",
        "legacy_7_9",
        "referenced",
        "root",
        "strict",
    )

    def __init__(
        self,
        root: Schema,
        referenced: tuple[str, ...],
        dependencies: tuple[Dependency, ...],
        strict: bool,
        legacy_7_9: bool = False,
    ) -> None:
        self.root = root
        self.referenced = referenced
        self.dependencies = dependencies
        self.strict = strict
        self.legacy_7_9 = legacy_7_9
        self._canonical: str | None = None
        self._normalized: str | None = None

    def canonical(self) -> str:
        """``Schema.toString(referencedSchemas, false)``: referenced types by name only."""
        if self._canonical is None:
            self._canonical = schema_json(self.root, self.referenced)
        return self._canonical

    def normalized(self) -> str:
        """The canonical text of Confluent's normalised schema (``AvroSchema.normalize()``)."""
        if self._normalized is None:
            if self.strict and self.legacy_7_9:
                # Confluent 7.9 validates the defaults of a new schema only when normalizing
                parse_schema(
                    self.canonical(), self.dependencies, validation=NEW_SCHEMA_7_9_NORMALIZED
                )
            source = normalized_source(self.root, self.referenced)
            try:
                again = parse_schema(source, self.dependencies, strict=False)
            except InvalidSchemaError as exc:
                raise InvalidSchemaError(f"Cannot normalize schema: {exc}") from None
            self._normalized = schema_json(again.root, again.referenced)
        return self._normalized

    def resolved(self) -> str:
        """``Schema.toString()``: every named type written in full at its first use."""
        return schema_json(self.root)

    def formatted(self, fmt: str | None) -> str:
        if fmt == "resolved":
            return self.resolved()
        return self.canonical()

    def name(self) -> str | None:
        """The full name of a record schema (Confluent's ``name()``), else ``None``."""
        return self.root.fullname if isinstance(self.root, RecordSchema) else None

    def top_level_name(self) -> str | None:
        """The full name of the top-level named type (record, enum or fixed), if any."""
        return self.root.fullname if isinstance(self.root, NamedSchema) else None

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"AvroSchema({self.canonical()})"


class AvroFormat(SchemaFormat):
    """Avro: Apache Avro Java parsing and resolution rules, Confluent texts.

    New schemas are validated as Confluent 8.x does (names, namespaces, defaults); with
    ``legacy_7_9`` as Confluent 7.9 did (names only; defaults only with ``normalize``), for
    registries migrated from 7.x whose clients register schemas 8.x would refuse."""

    schema_type = "AVRO"

    def __init__(self, legacy_7_9: bool = False) -> None:
        self.legacy_7_9 = legacy_7_9

    def parse(
        self, text: str, dependencies: Sequence[Dependency] = (), *, strict: bool = True
    ) -> AvroSchema:
        deps = tuple(dependencies)
        new = NEW_SCHEMA_7_9 if self.legacy_7_9 else NEW_SCHEMA
        validation = new if strict else STORED
        result = parse_schema(text, deps, validation=validation)
        return AvroSchema(result.root, result.referenced, deps, strict, self.legacy_7_9)

    def compatibility_errors(
        self,
        reader: ParsedSchema,
        writer: ParsedSchema,
        reader_label: str = "new",
        writer_label: str = "old",
        *,
        policy: str | None = None,
    ) -> list[str]:
        if not isinstance(reader, AvroSchema) or not isinstance(writer, AvroSchema):
            return ["Incompatible because of different schema type"]
        return _compat.compatibility_errors(reader.root, writer.root, reader_label, writer_label)
