"""The interface every schema format (AVRO, PROTOBUF, JSON) implements.

A format is a set of pure functions: parse text (with the texts of its references) into a
:class:`ParsedSchema`, print canonical and normalised text, and list the differences that make a
reader schema unable to read data written with a writer schema. Nothing here knows about
subjects, versions, storage or HTTP.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass


class InvalidSchemaError(Exception):
    """The text is not a valid schema of this format; the message says why (becomes 42201).

    ``validation``: the text parsed but the schema did not load or validate, where Confluent
    8.x fails in ``ParsedSchema.validate`` and words the 42201 ``Invalid schema <Schema>,
    details: <confluent>`` instead of its provider's parse message; ``confluent`` is that
    detail in Confluent's words when they differ from the message (JSON Schema's ``Invalid
    JSON``), the message staying ours for logs and the offline checker."""

    def __init__(
        self, message: str = "", *, validation: bool = False, confluent: str | None = None
    ) -> None:
        super().__init__(message)
        self.validation = validation
        self.confluent = confluent


@dataclass(frozen=True)
class Dependency:
    """A referenced schema, already resolved from its subject and version.

    ``name`` is the reference name: for Avro the full name of a named type it defines, for
    Protobuf the import path, for JSON Schema the ``$ref`` URL. ``schema`` is the stored text.
    """

    name: str
    schema: str


class ParsedSchema(ABC):
    """A successfully parsed schema of one format."""

    schema_type: str

    @abstractmethod
    def canonical(self) -> str:
        """The canonical text stored and compared for identity (Confluent's canonical string)."""

    @abstractmethod
    def normalized(self) -> str:
        """The canonical text of the normalised schema (used when ``normalize=true``)."""

    def formatted(self, fmt: str | None) -> str:
        """The text for a ``?format=`` query value; unknown formats give the canonical text."""
        return self.canonical()


class SchemaFormat(ABC):
    """One schema type's parser and compatibility rules."""

    schema_type: str

    @abstractmethod
    def parse(
        self, text: str, dependencies: Sequence[Dependency] = (), *, strict: bool = True
    ) -> ParsedSchema:
        """Parse ``text``; ``dependencies`` are the transitive references, dependencies first.

        ``strict`` is Confluent's validation of *new* schemas (names, defaults); already stored
        schemas are parsed with ``strict=False``. Raises :class:`InvalidSchemaError`.
        """

    @abstractmethod
    def compatibility_errors(
        self,
        reader: ParsedSchema,
        writer: ParsedSchema,
        reader_label: str = "new",
        writer_label: str = "old",
        *,
        policy: str | None = None,
    ) -> list[str]:
        """Why ``reader`` cannot read data written with ``writer``; an empty list if it can.

        ``policy`` is the subject's ``compatibilityPolicy`` (``STRICT``, ``LENIENT``,
        ``LOGICAL``; ``None`` = the format's default); formats without policies ignore it.

        Each string is one Confluent-style difference, e.g. for Avro
        ``{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'f2' at path
        '/fields/1' in the new schema has no default value and is missing in the old schema',
        additionalInfo:'f2'}``. The labels fill the "new"/"old" slots of the descriptions.
        """
