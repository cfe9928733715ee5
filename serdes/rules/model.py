"""The data-contract rule model: kinds, modes, phases, one rule and its parameters.

Same names, constructor arguments, attributes and ``to_dict``/``from_dict`` as
``confluent_kafka.schema_registry``'s ``Rule``, ``RuleKind``, ``RuleMode``, ``RulePhase``,
``RuleParams``, ``MetadataTags`` and ``MetadataProperties``. ``serdes.schema.RuleSet`` keeps a
rule set as the registry's JSON; :func:`rules_of` reads it into ``Rule`` objects (cached by
content, so each rule set is parsed once per process).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

__all__ = [
    "MetadataProperties",
    "MetadataTags",
    "ParsedRuleSet",
    "Rule",
    "RuleKind",
    "RuleMode",
    "RuleParams",
    "RulePhase",
    "rules_of",
]


class RuleKind(StrEnum):
    CONDITION = "CONDITION"
    TRANSFORM = "TRANSFORM"


class RulePhase(StrEnum):
    MIGRATION = "MIGRATION"
    DOMAIN = "DOMAIN"
    ENCODING = "ENCODING"


class RuleMode(StrEnum):
    UPGRADE = "UPGRADE"
    DOWNGRADE = "DOWNGRADE"
    UPDOWN = "UPDOWN"
    READ = "READ"
    WRITE = "WRITE"
    WRITEREAD = "WRITEREAD"


@dataclass
class RuleParams:
    """A rule's ``params`` (string to string)."""

    params: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> RuleParams:
        return cls(params=dict(src))

    def __hash__(self) -> int:
        return hash(frozenset(self.params.items()))


@dataclass
class MetadataTags:
    """Schema metadata ``tags``: a field path pattern (wildcards allowed) to tag names."""

    tags: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) for k, v in self.tags.items()}

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> MetadataTags:
        return cls(tags={k: list(v) for k, v in src.items()})


@dataclass
class MetadataProperties:
    """Schema metadata ``properties`` (string to string)."""

    properties: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.properties)

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> MetadataProperties:
        return cls(properties=dict(src))


@dataclass(frozen=True)
class Rule:
    """One data-contract rule as the registry stores it."""

    name: str | None
    doc: str | None
    kind: RuleKind | None
    mode: RuleMode | None
    type: str | None
    tags: list[str] | None = field(default=None, hash=False)
    params: RuleParams | None = None
    expr: str | None = None
    on_success: str | None = None
    on_failure: str | None = None
    disabled: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        pairs: dict[str, Any] = {
            "name": self.name,
            "doc": self.doc,
            "kind": self.kind.value if self.kind is not None else None,
            "mode": self.mode.value if self.mode is not None else None,
            "type": self.type,
            "tags": self.tags,
            "params": self.params.to_dict() if self.params is not None else None,
            "expr": self.expr,
            "onSuccess": self.on_success,
            "onFailure": self.on_failure,
            "disabled": self.disabled,
        }
        return {k: v for k, v in pairs.items() if v is not None}

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> Rule:
        kind = src.get("kind")
        mode = src.get("mode")
        params = src.get("params")
        return cls(
            name=src.get("name"),
            doc=src.get("doc"),
            kind=RuleKind(kind) if kind is not None else None,
            mode=RuleMode(mode) if mode is not None else None,
            type=src.get("type"),
            tags=list(src["tags"]) if src.get("tags") is not None else None,
            params=RuleParams.from_dict(params) if params is not None else None,
            expr=src.get("expr"),
            on_success=src.get("onSuccess"),
            on_failure=src.get("onFailure"),
            disabled=src.get("disabled"),
        )


@dataclass(frozen=True)
class ParsedRuleSet:
    """A rule set's three lists as ``Rule`` objects, and its ``enableAt``."""

    migration_rules: tuple[Rule, ...]
    domain_rules: tuple[Rule, ...]
    encoding_rules: tuple[Rule, ...]
    enable_at: str | None


def _rules(items: Any) -> tuple[Rule, ...]:
    return tuple(r if isinstance(r, Rule) else Rule.from_dict(r) for r in items or ())


@lru_cache(maxsize=1024)
def _parse(rule_set: Any) -> ParsedRuleSet:
    doc = rule_set.to_dict() if hasattr(rule_set, "to_dict") else dict(rule_set)
    return ParsedRuleSet(
        migration_rules=_rules(doc.get("migrationRules")),
        domain_rules=_rules(doc.get("domainRules")),
        encoding_rules=_rules(doc.get("encodingRules")),
        enable_at=doc.get("enableAt"),
    )


_EMPTY = ParsedRuleSet((), (), (), None)


def rules_of(schema: Any) -> ParsedRuleSet:
    """The rules a schema carries (empty when it has no rule set)."""
    rule_set = getattr(schema, "rule_set", None) if schema is not None else None
    if rule_set is None:
        return _EMPTY
    return _parse(rule_set)
