"""Reading subjects, versions and schemas with Confluent's semantics (context fallback,
soft-deleted versions, ids, GUIDs, listings). Each function takes the
:class:`~registry.core.Registry` and raises :class:`~registry.errors.RegistryError`.
"""

from __future__ import annotations

import uuid
from typing import Any

from registry import errors
from registry.core import (
    LATEST,
    Registry,
    iter_live,
)
from registry.state import SchemaVersion
from registry.subjects import (
    DEFAULT_CONTEXT,
    WILDCARD,
    QualifiedSubject,
    matches_prefix,
    parse_subject,
)


def list_subjects(
    reg: Registry, prefix: str = ":*:", deleted: bool = False, deleted_only: bool = False
) -> list[str]:
    out = set()
    for ctx in list(reg.state.contexts.values()):
        for subject, versions in list(ctx.subjects.items()):
            if not matches_prefix(subject, prefix):
                continue
            values = list(versions.values())
            all_deleted = all(v.deleted for v in values)
            if (
                (deleted_only and all_deleted)
                or (not deleted_only and (deleted or not all_deleted))
                or (deleted_only and deleted and any(v.deleted for v in values))
            ):
                out.add(subject)
    return sorted(out)


def list_versions(
    reg: Registry,
    subject: str,
    deleted: bool = False,
    deleted_only: bool = False,
    deleted_as_negative: bool = False,
) -> list[int]:
    versions = _own_versions(reg, subject, deleted or deleted_only)
    if not versions:
        raise errors.subject_not_found(subject)
    if deleted_as_negative:
        # every version, soft-deleted ones negated, whatever ``deleted``/``deletedOnly`` say
        every = reg.state.versions(versions[0].subject).values()
        ordered = sorted(every, key=lambda v: v.version)
        return [-sv.version if sv.deleted else sv.version for sv in ordered]
    out: list[int] = []
    for sv in sorted(versions, key=lambda v: v.version):
        if deleted_only:
            if sv.deleted:
                out.append(sv.version)
        elif deleted or not sv.deleted:
            out.append(sv.version)
    return out


def get_version(reg: Registry, subject: str, version: int, deleted: bool = False) -> SchemaVersion:
    """``GET /subjects/{subject}/versions/{version}`` with Confluent's context fallback."""
    found = _get_version_in(reg, subject, version, deleted)
    if isinstance(found, SchemaVersion):
        return found
    qs = parse_subject(subject)
    if qs.context == DEFAULT_CONTEXT:
        for name in reg.state.context_names():
            if name == DEFAULT_CONTEXT:
                continue
            other = _get_version_in(reg, f":{name}:{qs.name}", version, deleted)
            if isinstance(other, SchemaVersion):
                return other
    raise found


def _get_version_in(
    reg: Registry, subject: str, version: int, deleted: bool
) -> SchemaVersion | errors.RegistryError:
    versions = reg.state.versions(subject)
    visible = [v for v in versions.values() if deleted or not v.deleted]
    if not visible:
        return errors.subject_not_found(subject)
    if version == LATEST:
        live = iter_live(versions.values())
        if not live:
            return errors.version_not_found(version)
        return max(live, key=lambda v: v.version)
    sv = versions.get(version)
    if sv is None or (sv.deleted and not deleted):
        return errors.version_not_found(version)
    return sv


def _own_versions(reg: Registry, subject: str, deleted: bool) -> list[SchemaVersion]:
    """``subject``'s own versions: listing them (``listVersions``) and the latest with metadata
    look in the subject's context only (Confluent 8.x's ``getAllVersions`` and
    ``getAllSchemaKeysDescending``; only ``/versions/{v}`` and lookups try other contexts)."""
    return [v for v in reg.state.versions(subject).values() if deleted or not v.deleted]


def referenced_by(reg: Registry, subject: str, version: int, deleted: bool = False) -> list[int]:
    sv = get_version(reg, subject, version, deleted=True)
    ctx = reg.state.context_of(sv.subject)
    ids = set()
    for ref_subject, ref_version in list(ctx.referrers.get((sv.subject, sv.version), ())):
        referrer = ctx.versions(ref_subject).get(ref_version)
        if referrer is None:
            continue
        if not deleted and _all_deleted(ctx, referrer.id):
            continue
        ids.add(referrer.id)
    return sorted(ids)


def _all_deleted(ctx: Any, schema_id: int) -> bool:
    holders = ctx.ids.get(schema_id, {})
    return all(ctx.versions(s)[v].deleted for s, v in holders.items())


def schema_by_id(reg: Registry, schema_id: int, subject: str | None = None) -> SchemaVersion:
    """The content of an id, as Confluent 8.x's ``getSchemaKeyUsingContexts`` finds it (soft-
    deleted versions count): without a subject name, any version of the id in the subject's
    context (the default context when absent); a subject qualified with another context, only
    that subject's own version; an unqualified name, that subject's version in the default
    context, then the same name's in each other context, then any version in the default
    context. The version found is the one ``?subject=`` answers name."""
    qs = parse_subject(subject or "")

    def own(context: str) -> SchemaVersion | None:
        ctx = reg.state.find_context(context)
        if ctx is None:
            return None
        name = QualifiedSubject(context, qs.name).qualified
        version = (ctx.ids.get(schema_id) or {}).get(name)
        return ctx.subjects[name][version] if version else None

    found: SchemaVersion | None = None
    if qs.name:
        found = own(qs.context)
        if found is None and qs.context == DEFAULT_CONTEXT:
            others = (n for n in reg.state.context_names() if n != DEFAULT_CONTEXT)
            found = next((sv for sv in map(own, others) if sv is not None), None)
    if found is None and (not qs.name or qs.context == DEFAULT_CONTEXT):
        ctx = reg.state.find_context(qs.context)
        found = ctx.any_version_of(schema_id) if ctx is not None else None
    if found is None:
        raise errors.schema_not_found(schema_id)
    return found


def subject_versions_for_id(
    reg: Registry, schema_id: int, subject: str | None = None, deleted: bool = False
) -> list[tuple[str, int]]:
    try:
        sv = schema_by_id(reg, schema_id, subject)
    except errors.RegistryError:
        raise errors.schema_not_found() from None  # 7.9 says "Schema not found" here
    ctx = reg.state.context_of(sv.subject)
    out = []
    for subj, versions in list(ctx.subjects.items()):
        for version, item in list(versions.items()):
            if item.id == schema_id and (deleted or not item.deleted):
                out.append((subj, version))
    return sorted(out)


def schemas_by_guid(reg: Registry, guid: str) -> list[SchemaVersion]:
    """Every context's schema whose identity hash is ``guid`` (the hash printed as a UUID)."""
    try:
        digest = uuid.UUID(guid).bytes
    except ValueError:
        return []
    out = []
    for ctx in list(reg.state.contexts.values()):
        schema_id = ctx.hashes.get(digest)
        if schema_id is not None:
            sv = ctx.any_version_of(schema_id)
            if sv is not None:
                out.append(sv)
    return out


def list_schemas(
    reg: Registry,
    prefix: str = "",
    deleted: bool = False,
    latest_only: bool = False,
    rule_type: str = "",
) -> list[SchemaVersion]:
    """``GET /schemas``; a ``rule_type`` keeps the versions (after ``latest_only`` picked them)
    whose rule set has a rule of that type, as Confluent 8.x's post-filter does."""
    out: list[SchemaVersion] = []
    # Confluent scans the keys starting with the prefix: an empty one matches every context
    prefix = prefix or WILDCARD
    for ctx in list(reg.state.contexts.values()):
        for subject, versions in sorted(list(ctx.subjects.items())):
            if not matches_prefix(subject, prefix):
                continue
            visible = sorted(
                (v for v in versions.values() if deleted or not v.deleted),
                key=lambda v: v.version,
            )
            if latest_only and visible:
                visible = [visible[-1]]
            if rule_type:
                visible = [v for v in visible if _has_rule_type(v, rule_type)]
            out.extend(visible)
    out.sort(key=lambda v: (v.subject, v.version))
    return out


def _has_rule_type(sv: SchemaVersion, rule_type: str) -> bool:
    groups = ("domainRules", "migrationRules", "encodingRules")
    rule_set = sv.rule_set or {}
    return any(r.get("type") == rule_type for g in groups for r in rule_set.get(g) or [])


def latest_with_metadata(
    reg: Registry, subject: str, wanted: dict[str, str], deleted: bool = False
) -> SchemaVersion:
    versions = _own_versions(reg, subject, deleted)
    if not versions:
        raise errors.subject_not_found(subject)
    for sv in sorted(versions, key=lambda v: v.version, reverse=True):
        props = (sv.metadata or {}).get("properties") or {}
        if all(props.get(k) == v for k, v in wanted.items()):
            return sv
    raise errors.schema_not_found()
