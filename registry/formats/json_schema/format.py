"""The JSON :class:`~registry.formats.base.SchemaFormat`: parse, print, check compatibility."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from registry.formats.base import Dependency, InvalidSchemaError, ParsedSchema, SchemaFormat
from registry.formats.json_schema import drafts, jsontext
from registry.formats.json_schema.compare import compare
from registry.formats.json_schema.differences import (
    POLICIES,
    STRICT,
    Difference,
    compatible_changes,
)
from registry.formats.json_schema.loader import Loader
from registry.formats.json_schema.model import Schema

_PLAIN = json.JSONDecoder()


class JsonSchema(ParsedSchema):
    """A parsed JSON Schema document with its references (as Confluent's ``JsonSchema``)."""

    schema_type = "JSON"

    __slots__ = ("_canonical", "_normalized", "dependencies", "document", "draft", "root")

    def __init__(
        self, document: Any, root: Schema, draft: int, dependencies: tuple[Dependency, ...]
    ) -> None:
        self.document = document
        self.root = root
        self.draft = draft
        self.dependencies = dependencies
        self._canonical: str | None = None
        self._normalized: str | None = None

    def canonical(self) -> str:
        """Jackson's compact re-serialisation, key order preserved."""
        if self._canonical is None:
            self._canonical = jsontext.dumps(self.document)
        return self._canonical

    def normalized(self) -> str:
        """The canonical text with object keys sorted recursively (Confluent's ``normalize()``)."""
        if self._normalized is None:
            self._normalized = jsontext.dumps(self.document, sort_keys=True)
        return self._normalized

    def name(self) -> str | None:
        """Confluent's ``name()``: the top-level ``title``."""
        if isinstance(self.document, dict):
            title = self.document.get("title")
            return title if isinstance(title, str) else None
        return None

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"JsonSchema({self.canonical()})"


def parse_document(text: str) -> Any:
    try:
        return jsontext.loads(text)
    except jsontext.JsonTextError as exc:
        raise InvalidSchemaError(f"Invalid JSON: {exc}") from None


#: what Confluent 8.x says of a text Jackson cannot read (``JsonSchema``'s constructor)
UNREADABLE = "Invalid JSON schema"
#: what it says of a schema its validator library cannot load (``JsonSchema.rawSchema`` wraps
#: every failure of everit / json-sKema so)
UNLOADABLE = "Invalid JSON"


class JsonSchemaFormat(SchemaFormat):
    """JSON Schema: drafts 4, 6, 7, 2019-09 and 2020-12; Confluent 7.9 texts and diff rules,
    with Confluent 8.2's ``compatibilityPolicy`` (``STRICT`` by default, or ``LENIENT``)."""

    schema_type = "JSON"

    def __init__(self, policy: str = STRICT) -> None:
        policy = policy.strip().upper()
        if policy not in POLICIES:
            raise ValueError(f"unknown compatibility policy {policy!r}; expected one of {POLICIES}")
        self.policy = policy

    def parse(
        self, text: str, dependencies: Sequence[Dependency] = (), *, strict: bool = True
    ) -> JsonSchema:
        try:
            document = parse_document(text)
        except InvalidSchemaError as exc:
            raise InvalidSchemaError(str(exc), confluent=UNREADABLE) from None
        if not isinstance(document, dict | bool):
            # Confluent 8.x (JsonSchema.rawSchema) refuses any other root, in its own words
            message = "Invalid JSON schema: expected an object or boolean at the root, found "
            raise InvalidSchemaError(message + _jackson_node_type(document), validation=True)
        try:
            return self._load(text, document, dependencies, strict)
        except InvalidSchemaError as exc:
            if exc.validation:
                raise
            raise InvalidSchemaError(str(exc), validation=True, confluent=UNLOADABLE) from None

    def _load(
        self, text: str, document: Any, dependencies: Sequence[Dependency], strict: bool
    ) -> JsonSchema:
        draft = drafts.draft_of(document)
        if strict:
            start = len(text) - len(text.lstrip(" \t\n\r"))
            plain, _end = _PLAIN.raw_decode(text, start)
            drafts.validate_against_meta_schema(plain, draft)
            _check_property_names(document)
        deps = tuple(dependencies)
        loaded = [(dep.name, parse_document(dep.schema)) for dep in deps]
        root = Loader(document, loaded, draft).load_root()
        return JsonSchema(document, root, draft, deps)

    def differences(
        self, reader: JsonSchema, writer: JsonSchema, policy: str | None = None
    ) -> list[Difference]:
        """Every difference (compatible or not) from ``writer`` to ``reader``."""
        compatible = compatible_changes(policy or self.policy)
        return compare(writer.root, reader.root, compatible, writer.draft == reader.draft)

    def compatibility_errors(
        self,
        reader: ParsedSchema,
        writer: ParsedSchema,
        reader_label: str = "new",
        writer_label: str = "old",
        *,
        policy: str | None = None,
    ) -> list[str]:
        """Confluent's ``reader.isBackwardCompatible(policy, writer)`` messages; ``policy`` is
        the subject's ``compatibilityPolicy`` (``None`` uses this format's default)."""
        if not isinstance(reader, JsonSchema) or not isinstance(writer, JsonSchema):
            return ["Incompatible because of different schema type"]
        compatible = compatible_changes(policy or self.policy)
        return [
            diff.message(reader_label, writer_label)
            for diff in compare(writer.root, reader.root, compatible, writer.draft == reader.draft)
            if diff.type not in compatible
        ]


def _check_property_names(document: Any) -> None:
    """Confluent's strict validation: top-level property names must not start with ``$$``."""
    if not isinstance(document, dict):
        return
    properties = document.get("properties")
    if isinstance(properties, dict):
        for name in properties:
            if name.startswith("$$"):
                # JsonSchema.validate's own ValidationException, its message as everit words it
                raise InvalidSchemaError(
                    f"#/properties/{name}: Field names cannot start with $$ prefix",
                    validation=True,
                )


def _jackson_node_type(value: object) -> str:
    """Jackson's ``JsonNodeType`` name for a JSON value."""
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list):
        return "ARRAY"
    return "NUMBER"
