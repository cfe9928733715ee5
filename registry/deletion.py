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
    """Confluent's order: 40401, 40404, read-only 42205, then per version (ascending) a
    referrer in another subject 42206 (when permanent, a soft-deleted one counts too: 8.x
    ``getReferencedBySubjects(key, permanentDelete)``) or, when permanent, a version not
    soft-deleted 40405. Only a permanent delete drops the subject's own config and mode
    (8.x ``KafkaSchemaRegistry.deleteSubject``; 7.9 dropped them on the soft delete)."""
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
            if [r for r in _referrers(reg, sv, permanent) if r.subject != subject]:
                raise errors.reference_exists(_schema_key_text(subject, sv.version))
            if permanent and not sv.deleted:
                raise errors.subject_not_soft_deleted(subject)
        if permanent:
            drafts: list[Draft] = [(records.decode_key(v.key), None) for v in reversed(versions)]
            return drafts + _settings_tombstones(reg, subject), [v.version for v in versions]
        value = {"subject": subject, "version": versions[-1].version}
        return [(records.delete_subject_key(subject), value)], [v.version for v in targets]

    return reg.write(decide)


def _referrers(reg: Registry, sv: SchemaVersion, include_deleted: bool) -> list[SchemaVersion]:
    """Versions referencing ``sv``; soft-deleted ones only with ``include_deleted`` (8.x
    ``getReferencedBy(key, lookupDeletedSchema)``: a permanent delete counts them)."""
    ctx = reg.state.context_of(sv.subject)
    out = []
    for ref_subject, ref_version in list(ctx.referrers.get((sv.subject, sv.version), ())):
        referrer = ctx.versions(ref_subject).get(ref_version)
        if referrer is not None and (include_deleted or not referrer.deleted):
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
    """Confluent's order: 40406 (soft delete of a soft-deleted version), 40401, 40402, then
    read-only 42205, a referrer 42206 (a live one; for a permanent delete a soft-deleted one
    too, Confluent 8.x), and 40407 for a permanent delete of a live version. Permanently
    deleting the subject's last version drops its config and mode (8.x; 7.9 dropped them when
    the last live version was soft-deleted)."""
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
        if _referrers(reg, sv, permanent):
            raise errors.reference_exists(_schema_key_text(subject, sv.version))
        if permanent and not sv.deleted:
            raise errors.version_not_soft_deleted(subject, sv.version)
        key = records.decode_key(sv.key)
        if permanent:
            drafts: list[Draft] = [(key, None)]
            if all(v.version == sv.version for v in versions.values()):
                drafts += _settings_tombstones(reg, subject)
            return drafts, sv.version
        value = sv.value()
        value["deleted"] = True
        return [(key, value)], sv.version

    return reg.write(decide)
