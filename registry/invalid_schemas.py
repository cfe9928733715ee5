"""The 42201 message for a schema that does not parse (or whose references do not resolve), as
Confluent 8.5 words it. Pure functions.

8.5's ``AbstractSchemaRegistry.loadSchema`` wraps what the format's provider threw:
``Invalid schema of type X, details: <the provider's message>``. The providers word theirs
differently: ``AvroSchemaProvider`` prints the request (``Invalid schema <Schema.toString> with
refs <references> of type AVRO, details: <reason>``), ``JsonSchemaProvider`` and
``ProtobufSchemaProvider`` print ``Invalid schema of type X, details: <reason>`` again. The
``Schema`` printed is the parse cache's key (``Schema.toHashKey``: no version, no id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from registry.identity import guid_of, schema_hash


def message(
    subject: str,
    schema_type: str,
    text: str | None,
    references: Sequence[Mapping[str, Any]],
    metadata: Mapping[str, Any] | None,
    rule_set: Mapping[str, Any] | None,
    reason: str,
) -> str:
    """``Invalid schema of type X, details: ...`` with the provider's message inside."""
    if schema_type == "AVRO":
        schema = _schema_text(subject, schema_type, text, references, metadata, rule_set)
        inner = (
            f"Invalid schema {schema} with refs {_references(references)} of type {schema_type}, "
            f"details: {reason}"
        )
    else:
        inner = f"Invalid schema of type {schema_type}, details: {reason}"
    return f"Invalid schema of type {schema_type}, details: {inner}"


def validation_message(
    subject: str,
    schema_type: str,
    text: str | None,
    references: Sequence[Mapping[str, Any]],
    metadata: Mapping[str, Any] | None,
    rule_set: Mapping[str, Any] | None,
    version: int | None,
    reason: str,
) -> str:
    """``Invalid schema <Schema>, details: ...``: a schema that parsed and then failed
    ``ParsedSchema.validate`` (8.x's ``maybeValidateAndNormalizeSchema`` prints the request's
    ``Schema``: its version, 0 when not given, and id -1)."""
    schema = _schema_text(
        subject,
        schema_type,
        text,
        references,
        metadata,
        rule_set,
        version="0" if version is None else str(version),
        schema_id="-1",
    )
    return f"Invalid schema {schema}, details: {reason}"


def _schema_text(
    subject: str,
    schema_type: str,
    text: str | None,
    references: Sequence[Mapping[str, Any]],
    metadata: Mapping[str, Any] | None,
    rule_set: Mapping[str, Any] | None,
    *,
    version: str = "null",
    schema_id: str = "null",
) -> str:
    """Java's ``Schema.toString`` (8.5): of the parse cache's key (no version, no id) unless
    given."""
    try:
        guid = guid_of(schema_hash(text or "", references, metadata, rule_set))
    except (TypeError, ValueError):  # a reference without a usable version
        guid = "null"
    return (
        f"{{subject={subject},version={version},id={schema_id},guid={guid},"
        f"schemaType={schema_type},"
        f"references={_references(references)},metadata={_metadata(metadata)},"
        f"ruleSet={_rule_set(rule_set)},schema={java(text)},schemaTags=null,ts=null,"
        "deleted=null}"
    )


def _references(references: Sequence[Mapping[str, Any]]) -> str:
    """A ``List<SchemaReference>`` as Java prints it."""
    return (
        "["
        + ", ".join(
            f"{{name='{java(r.get('name'))}', subject='{java(r.get('subject'))}', "
            f"version={java(r.get('version'))}}}"
            for r in references
        )
        + "]"
    )


def _metadata(metadata: Mapping[str, Any] | None) -> str:
    """``Metadata.toString``: its sorted maps and sets as Java's collections print them."""
    if metadata is None:
        return "null"
    tags = metadata.get("tags") or {}
    props = metadata.get("properties") or {}
    sensitive = metadata.get("sensitive") or []
    tag_text = ", ".join(f"{k}=[{', '.join(sorted(tags[k]))}]" for k in sorted(tags))
    prop_text = ", ".join(f"{k}={java(props[k])}" for k in sorted(props))
    return (
        f"Metadata{{tags={{{tag_text}}}, properties={{{prop_text}}}, "
        f"sensitive=[{', '.join(sorted(sensitive))}]}}"
    )


def _rule_set(rule_set: Mapping[str, Any] | None) -> str:
    """``RuleSet.toString`` (each rule as a Java map: an approximation of ``Rule.toString``)."""
    if rule_set is None:
        return "null"

    def rules(group: str) -> str:
        items = rule_set.get(group) or []
        return (
            "["
            + ", ".join(_java_map(r) if isinstance(r, Mapping) else java(r) for r in items)
            + "]"
        )

    return (
        f"Rules{{migrationRules={rules('migrationRules')}, domainRules={rules('domainRules')}, "
        f"encodingRules={rules('encodingRules')}, enableAt={java(rule_set.get('enableAt'))}}}"
    )


def _java_map(mapping: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={java(v)}" for k, v in mapping.items()) + "}"


def java(value: object) -> str:
    """``value`` as Java's string concatenation prints it (``null``, ``true``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
