"""The registry's data shapes as the client sees them: Schema, SchemaReference, RegisteredSchema...

Same names, constructor arguments and attributes as ``confluent_kafka.schema_registry``'s, so
code written against that package keeps working after changing its imports. ``Schema`` is
immutable and hashable (the caches key on it). Metadata and rule sets are carried as the
registry's JSON (``to_dict``/``from_dict``); ``serdes.rules`` reads the rules out of them
(``Rule``, ``RuleKind``, ``RuleMode``... are re-exported here, as confluent-kafka has them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

# The rule model, re-exported at the import path confluent-kafka has it.
from serdes.rules.model import (
    MetadataProperties,
    MetadataTags,
    Rule,
    RuleKind,
    RuleMode,
    RuleParams,
)

__all__ = [
    "ConfigCompatibilityLevel",
    "Metadata",
    "MetadataProperties",
    "MetadataTags",
    "RegisteredSchema",
    "Rule",
    "RuleKind",
    "RuleMode",
    "RuleParams",
    "RuleSet",
    "Schema",
    "SchemaReference",
    "SchemaVersion",
    "ServerConfig",
]


def _freeze(value: Any) -> Any:
    """A hashable, order-stable image of a JSON value (for hashing metadata and rule sets)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class SchemaReference:
    """A reference from one schema to a subject version: ``name`` is how the schema imports it."""

    name: str | None
    subject: str | None
    version: int | None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        if self.subject is not None:
            out["subject"] = self.subject
        if self.version is not None:
            out["version"] = self.version
        return out

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> SchemaReference:
        return cls(name=src.get("name"), subject=src.get("subject"), version=src.get("version"))


class _JsonDoc:
    """A piece of registry JSON kept as given, comparable and hashable by content."""

    __slots__ = ("_doc", "_key")

    def __init__(self, doc: dict[str, Any] | None = None, **fields: Any) -> None:
        merged = dict(doc or {})
        merged.update({k: v for k, v in fields.items() if v is not None})
        self._doc = merged
        self._key = _freeze(merged)

    def to_dict(self) -> dict[str, Any]:
        return json.loads(self._key)

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> Any:
        return cls(src)

    def __getattr__(self, name: str) -> Any:
        doc = object.__getattribute__(self, "_doc")
        camel = name.split("_")[0] + "".join(p.title() for p in name.split("_")[1:])
        if camel in doc:
            return doc[camel]
        if name in doc:
            return doc[name]
        return None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._key == self._key  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._doc!r})"


class Metadata(_JsonDoc):
    """Schema metadata: ``tags``, ``properties``, ``sensitive`` as the registry's JSON."""

    def __init__(
        self,
        tags: dict[str, Any] | None = None,
        properties: dict[str, str] | None = None,
        sensitive: list[str] | None = None,
        doc: dict[str, Any] | None = None,
    ) -> None:
        # confluent-kafka passes ``MetadataTags`` / ``MetadataProperties`` objects here.
        super().__init__(doc, tags=_plain(tags), properties=_plain(properties), sensitive=sensitive)

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> Metadata:
        return cls(doc=src)


class RuleSet(_JsonDoc):
    """A data-contract rule set (``migrationRules``, ``domainRules``, ``encodingRules``)."""

    def __init__(
        self,
        migration_rules: list[Any] | None = None,
        domain_rules: list[Any] | None = None,
        encoding_rules: list[Any] | None = None,
        doc: dict[str, Any] | None = None,
    ) -> None:
        def plain(rules: list[Any] | None) -> list[Any] | None:
            if rules is None:
                return None
            return [r.to_dict() if hasattr(r, "to_dict") else r for r in rules]

        super().__init__(
            doc,
            migrationRules=plain(migration_rules),
            domainRules=plain(domain_rules),
            encodingRules=plain(encoding_rules),
        )

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> RuleSet:
        return cls(doc=src)


def _plain(value: Any) -> Any:
    """A nested object (ours or confluent-kafka's) as JSON, by its ``to_dict``."""
    if value is None or isinstance(value, dict):
        return value
    return value.to_dict()


@dataclass(frozen=True, eq=True)
class Schema:
    """A schema to register or look up, or as fetched: text, type, references, metadata, rules."""

    schema_str: str | None
    schema_type: str | None = "AVRO"
    references: list[SchemaReference] | None = field(default_factory=list)
    metadata: Metadata | None = None
    rule_set: RuleSet | None = None

    def __hash__(self) -> int:
        refs = tuple(
            (r.name, r.subject, r.version) if not isinstance(r, dict) else _freeze(r)
            for r in (self.references or ())
        )
        return hash((self.schema_str, self.schema_type, refs, self.metadata, self.rule_set))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.schema_str is not None:
            out["schema"] = self.schema_str
        if self.schema_type is not None:
            out["schemaType"] = self.schema_type
        out["references"] = [_plain(r) for r in (self.references or [])]
        if self.metadata is not None:
            out["metadata"] = _plain(self.metadata)
        if self.rule_set is not None:
            out["ruleSet"] = _plain(self.rule_set)
        return out

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> Schema:
        metadata = src.get("metadata")
        rule_set = src.get("ruleSet")
        return cls(
            schema_str=src.get("schema"),
            schema_type=src.get("schemaType", "AVRO"),
            references=[SchemaReference.from_dict(r) for r in src.get("references") or []],
            metadata=Metadata.from_dict(metadata) if isinstance(metadata, dict) else None,
            rule_set=RuleSet.from_dict(rule_set) if isinstance(rule_set, dict) else None,
        )


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema as registered: its id (and GUID when the registry gives one), subject, version."""

    schema_id: int | None
    guid: str | None
    schema: Schema
    subject: str | None
    version: int | None

    def to_dict(self) -> dict[str, Any]:
        out = self.schema.to_dict() if self.schema is not None else {}
        if self.schema_id is not None:
            out["id"] = self.schema_id
        if self.guid is not None:
            out["guid"] = self.guid
        if self.subject is not None:
            out["subject"] = self.subject
        if self.version is not None:
            out["version"] = self.version
        return out

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> RegisteredSchema:
        return cls(
            schema_id=src.get("id"),
            guid=src.get("guid"),
            schema=Schema.from_dict(src),
            subject=src.get("subject"),
            version=src.get("version"),
        )


@dataclass(frozen=True)
class SchemaVersion:
    """One (subject, version) pair holding a schema id."""

    subject: str | None
    version: int | None

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> SchemaVersion:
        return cls(subject=src.get("subject"), version=src.get("version"))


class ConfigCompatibilityLevel(StrEnum):
    BACKWARD = "BACKWARD"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD = "FORWARD"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL = "FULL"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"
    NONE = "NONE"


@dataclass
class ServerConfig:
    """A global or subject config as ``/config`` reads and writes it."""

    compatibility: ConfigCompatibilityLevel | None = None
    compatibility_level: ConfigCompatibilityLevel | None = None
    compatibility_group: str | None = None
    default_metadata: Metadata | None = None
    override_metadata: Metadata | None = None
    default_rule_set: RuleSet | None = None
    override_rule_set: RuleSet | None = None

    def to_dict(self) -> dict[str, Any]:
        pairs = {
            "compatibility": self.compatibility,
            "compatibilityLevel": self.compatibility_level,
            "compatibilityGroup": self.compatibility_group,
            "defaultMetadata": _plain(self.default_metadata),
            "overrideMetadata": _plain(self.override_metadata),
            "defaultRuleSet": _plain(self.default_rule_set),
            "overrideRuleSet": _plain(self.override_rule_set),
        }
        out: dict[str, Any] = {}
        for key, value in pairs.items():
            if value is None:
                continue
            out[key] = value.value if isinstance(value, Enum) else value
        return out

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> ServerConfig:
        def level(value: Any) -> ConfigCompatibilityLevel | None:
            return ConfigCompatibilityLevel(value) if value is not None else None

        def meta(value: Any) -> Metadata | None:
            return Metadata.from_dict(value) if isinstance(value, dict) else None

        def rules(value: Any) -> RuleSet | None:
            return RuleSet.from_dict(value) if isinstance(value, dict) else None

        return cls(
            compatibility=level(src.get("compatibility")),
            compatibility_level=level(src.get("compatibilityLevel")),
            compatibility_group=src.get("compatibilityGroup"),
            default_metadata=meta(src.get("defaultMetadata")),
            override_metadata=meta(src.get("overrideMetadata")),
            default_rule_set=rules(src.get("defaultRuleSet")),
            override_rule_set=rules(src.get("overrideRuleSet")),
        )
