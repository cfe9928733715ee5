"""Soft and permanent deletion of subjects and versions, in Confluent's order of checks."""

from __future__ import annotations

from registry import errors, records
from registry.core import (
    LATEST,
    READ_ONLY_MODES,
    Draft,
    Registry,
    iter_live,
)
from registry.state import SchemaVersion


def delete_subject(reg: Registry, subject: str, permanent: bool) -> list[int]:
    """Confluent 7.9's order: 40401, 40404, read-only 42205, then per version (ascending) a
    live referrer 42206 or, when permanent, a version not soft-deleted 40405. A soft delete
    also drops the subject's own config and mode."""
    subject = reg.valid_subject(subject)

    def decide() -> tuple[list[Draft], list[int]]:
        versions = sorted(reg.state.versions(subject).values(), key=lambda v: v.version)
        if not versions:
            raise errors.subject_not_found(subject)
        if not permanent and all(v.deleted for v in versions):
            raise errors.subject_soft_deleted(subject)
        if reg.effective_mode(subject) in READ_ONLY_MODES:
            raise errors.operation_not_permitted(f"Subject {subject} is in read-only mode")
        targets = versions if permanent else iter_live(versions)
        for sv in targets:
            if _live_referrers(reg, sv):
                raise errors.reference_exists(_schema_key_text(subject, sv.version))
            if permanent and not sv.deleted:
                raise errors.subject_not_soft_deleted(subject)
        if permanent:
            drafts: list[Draft] = [(records.decode_key(v.key), None) for v in reversed(versions)]
            return drafts, [v.version for v in versions]
        value = {"subject": subject, "version": versions[-1].version}
        drafts = [(records.delete_subject_key(subject), value)]
        return drafts + _settings_tombstones(reg, subject), [v.version for v in targets]

    return reg.write(decide)


def _live_referrers(reg: Registry, sv: SchemaVersion) -> list[SchemaVersion]:
    """Versions referencing ``sv`` that are not soft-deleted (Confluent's referencedBy index
    forgets a referrer when it is soft-deleted)."""
    ctx = reg.state.context_of(sv.subject)
    out = []
    for ref_subject, ref_version in list(ctx.referrers.get((sv.subject, sv.version), ())):
        referrer = ctx.versions(ref_subject).get(ref_version)
        if referrer is not None and not referrer.deleted:
            out.append(referrer)
    return out


def _schema_key_text(subject: str, version: int) -> str:
    return f"{{magic=1,keytype=SCHEMA,subject={subject},version={version}}}"


def _settings_tombstones(reg: Registry, subject: str) -> list[Draft]:
    out: list[Draft] = []
    if subject in reg.state.configs:
        out.append((records.decode_key(reg.state.configs[subject].key), None))
    if subject in reg.state.modes:
        out.append((records.decode_key(reg.state.modes[subject].key), None))
    return out


def delete_version(reg: Registry, subject: str, version: int, permanent: bool) -> int:
    """Confluent 7.9's order: 40406 (soft delete of a soft-deleted version), 40401, 40402, then
    read-only 42205, a live referrer 42206, and 40407 for a permanent delete of a live version.
    Soft-deleting the last live version also drops the subject's config and mode."""
    subject = reg.valid_subject(subject)

    def decide() -> tuple[list[Draft], int]:
        versions = reg.state.versions(subject)
        if not versions:
            raise errors.subject_not_found(subject)
        if version == LATEST:
            live = iter_live(versions.values())
            if not live:
                raise errors.version_not_found(version)
            sv = max(live, key=lambda v: v.version)
        else:
            found = versions.get(version)
            if found is None:
                raise errors.version_not_found(version)
            sv = found
        if not permanent and sv.deleted:
            raise errors.version_soft_deleted(subject, sv.version)
        if reg.effective_mode(subject) in READ_ONLY_MODES:
            raise errors.operation_not_permitted(f"Subject {subject} is in read-only mode")
        if _live_referrers(reg, sv):
            raise errors.reference_exists(_schema_key_text(subject, sv.version))
        if permanent and not sv.deleted:
            raise errors.version_not_soft_deleted(subject, sv.version)
        key = records.decode_key(sv.key)
        if permanent:
            return [(key, None)], sv.version
        value = sv.value()
        value["deleted"] = True
        drafts: list[Draft] = [(key, value)]
        if not [v for v in versions.values() if not v.deleted and v.version != sv.version]:
            drafts += _settings_tombstones(reg, subject)
        return drafts, sv.version

    return reg.write(decide)
