"""``POST /subjects/{subject}/versions``: registration, IMPORT-mode ids and versions,
metadata and rule sets carried over from the previous version and the subject's config.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from registry import errors, records
from registry.budget import WorkLimitExceeded
from registry.compat_checks import check_against
from registry.configs import validates_new_schemas
from registry.core import (
    LATEST,
    READ_ONLY_MODES,
    Draft,
    Registry,
    SchemaRequest,
    iter_live,
)
from registry.formats.base import InvalidSchemaError
from registry.lookups import (
    CONFLUENT_VERSION,
    can_lookup,
    lookup_in_subject,
    make_candidate,
    stored_as_canonical,
)
from registry.rulesets import merge_metadata, merge_rule_sets, validate_rule_set
from registry.state import SchemaVersion
from registry.subjects import DEFAULT_CONTEXT, parse_subject


@dataclass
class Registered:
    """The outcome of a registration: the stored version and whether the server changed the
    requested schema (then Confluent 7.9 answers with the whole schema, else only the id)."""

    schema: SchemaVersion | None
    id: int
    modified: bool


def register(reg: Registry, subject: str, req: SchemaRequest, *, normalize: bool) -> Registered:
    """``POST /subjects/{subject}/versions``."""
    found = before_lock(reg, subject, req, normalize)
    return found if isinstance(found, Registered) else reg.write(found)


#: the largest schema text :func:`cheap` lets the event loop parse
INLINE_SCHEMA_CHARS = 8192
#: the most versions a subject may hold for :func:`cheap` to let the event loop look it up
INLINE_VERSIONS = 64
#: the most text those versions may hold together (a look-up may parse each once)
INLINE_STORED_CHARS = 262_144


def cheap(reg: Registry, subject: str, req: SchemaRequest) -> bool:
    """Whether a registration's work is small enough to be looked up on the event loop and
    decided inside the group commit without being prepared in a worker thread first: a
    reference-free Avro schema of at most :data:`INLINE_SCHEMA_CHARS` characters for a
    subject of at most :data:`INLINE_VERSIONS` versions holding at most
    :data:`INLINE_STORED_CHARS` characters of schema text (tens of microseconds; a parse of
    each stored version at worst, once)."""
    text = req.schema
    if (
        req.references
        or text is None
        or len(text) > INLINE_SCHEMA_CHARS
        or (req.schema_type or "AVRO").upper() != "AVRO"
    ):
        return False
    versions = reg.state.versions(subject)
    if len(versions) > INLINE_VERSIONS:
        return False
    return sum(len(sv.schema) for sv in versions.values()) <= INLINE_STORED_CHARS


def before_lock(
    reg: Registry, subject: str, req: SchemaRequest, normalize: bool, *, prepare: bool = True
) -> Registered | Callable[[], tuple[list[Draft], Registered]]:
    """What a registration does before the write lock: the answer when the subject already
    holds the schema, else the decision to make inside it (``Registry.write``), after
    :func:`_prepare` (not for a :func:`cheap` request: deciding it twice, here and inside the
    lock, would cost more than the little it makes the lock wait)."""
    subject = reg.valid_subject(subject)
    if req.rule_set is not None:
        validate_rule_set(req.rule_set)
    config = reg.effective_config(subject)
    normalize = normalize or bool(config.get("normalize"))
    if not _has_defaults_or_overrides(config) and req.schema and req.schema.strip():
        _parse_strictly_first(reg, subject, req, config, normalize)
        existing = lookup_in_subject(
            reg, subject, req, normalize=normalize, latest_only=req.version == LATEST
        )
        # a version with timestamp -1 is a tentative record of a batch being committed
        # (``Registry.write``): answering with it could acknowledge what is never stored
        if existing is not None and existing.ts >= 0:
            if req.version in (None, 0, LATEST):
                if req.id is None or req.id < 0 or req.id == existing.id:
                    return Registered(existing, existing.id, modified=False)
            elif req.id == existing.id and req.version == existing.version:
                return Registered(existing, existing.id, modified=True)
    if prepare:
        _prepare(reg, subject, req, normalize)
    return lambda: register_locked(reg, subject, req, normalize)


def _parse_strictly_first(
    reg: Registry, subject: str, req: SchemaRequest, config: dict[str, Any], normalize: bool
) -> None:
    """Parse a registration's schema with the strict checks before the look-up asks for it
    without them: a text that passes parses the same either way (``Registry.parse`` then
    answers the look-up from this parse), so it is parsed once, not twice. Only where the
    look-up parses at all (the subject has versions, and the text is not one the context
    stores as its own canonical form: ``lookups.stored_as_canonical``) and the registration
    is strict."""
    if req.references or not reg.state.versions(subject):
        return
    if (req.id is not None and req.id >= 0) or not validates_new_schemas(config):
        return
    if not normalize and stored_as_canonical(reg, subject, req, []) is not None:
        return
    try:
        reg.parse(
            subject, req.schema_type, req.schema or "", (), strict=True, include_deleted_refs=False
        )
    except WorkLimitExceeded:
        raise
    except (InvalidSchemaError, errors.RegistryError):
        return  # the look-up parses leniently, and the registration answers the error


def _prepare(reg: Registry, subject: str, req: SchemaRequest, normalize: bool) -> None:
    """Do a registration's expensive work before the write lock, in the request's own thread
    and under its work allowance: parse the schema with its references, canonicalise it and
    check its compatibility against the subject's versions as they are now. The outcome is
    thrown away (the state may change before the write lock is ours, and a batch being decided
    may show records that are never committed); what stays is in the parse cache and the
    verdict cache, so the registration decided inside the lock (:func:`register_locked`,
    against the state as it then is) finds it there and a concurrent unrelated registration
    does not wait for it. Only a spent allowance is answered from here: that is this
    request's limit, whatever the state."""
    try:
        register_locked(reg, subject, req, normalize)
    except WorkLimitExceeded:
        raise
    except Exception:
        pass  # whatever it was (the state may be mid-batch), the decision inside the lock answers


def register_locked(
    reg: Registry, subject: str, req: SchemaRequest, normalize: bool
) -> tuple[list[Draft], Registered]:
    mode = reg.effective_mode(subject)
    requested_id = req.id if req.id is not None and req.id >= 0 else -1
    if mode in READ_ONLY_MODES:
        raise errors.operation_not_permitted(f"Subject {subject} is in read-only mode")
    if requested_id >= 0 and mode != "IMPORT":
        raise errors.operation_not_permitted(f"Subject {subject} is not in import mode")
    if requested_id < 0 and mode != "READWRITE":
        raise errors.operation_not_permitted(f"Subject {subject} is not in read-write mode")
    importing = mode == "IMPORT"
    config = reg.effective_config(subject)

    all_versions = sorted(reg.state.versions(subject).values(), key=lambda v: -v.version)
    new_version = max((v.version for v in all_versions), default=0) + 1
    undeleted = iter_live(all_versions)
    deleted = [v for v in all_versions if v.deleted]

    req = SchemaRequest(**vars(req))
    modified = False
    if not importing:
        modified = _populate_from_previous(
            config, req, undeleted[0] if undeleted else None, new_version
        )
    # Confluent's validateAsNew; references may name soft-deleted versions when it is off
    strict = requested_id < 0 and validates_new_schemas(config)
    cand = make_candidate(
        reg, subject, req, normalize=normalize, strict=strict, include_deleted_refs=not strict
    )
    _refuse_strongly_associated_references(reg, subject, cand.references)
    ctx = reg.state.context_view(subject)
    schema_id = requested_id
    explicit_version = req.version not in (None, 0)
    known_id = ctx.hashes.get(cand.digest)
    if known_id is not None and (schema_id < 0 or schema_id == known_id):
        mine = [v for v in undeleted if v.id == known_id]
        if not explicit_version and mine:
            return [], Registered(mine[0], known_id, modified)
        schema_id = known_id
    if not explicit_version:
        for sv in undeleted:
            if (schema_id < 0 or schema_id == sv.id) and can_lookup(reg, cand, sv, normalize):
                return [], Registered(sv, sv.id, modified)

    if not importing:
        messages = check_against(
            reg, config, cand.parsed, list(reversed(undeleted)), metadata=cand.metadata
        )
        if messages:
            raise errors.incompatible_schema(subject, messages)

    drafts: list[Draft] = []
    qs = parse_subject(subject)
    if qs.context != DEFAULT_CONTEXT and qs.context not in reg.state.context_records:
        drafts.append(
            (records.context_key(qs.context), {"tenant": "default", "context": qs.context})
        )
    if not explicit_version or req.version == LATEST:
        version = new_version
    else:
        version = int(req.version or 0)
        if version != new_version and not importing:
            raise errors.invalid_schema("Version is not one more than previous version")
        # IMPORT may rewrite an existing version (Confluent 8.x puts the key whatever it held);
        # only an id that already names other content is refused, below
    if schema_id >= 0:
        owner = ctx.any_version_of(schema_id)
        if owner is not None and owner.digest != cand.digest:
            raise errors.operation_not_permitted(
                f"Overwrite new schema with id {schema_id} is not permitted."
            )
    else:
        schema_id = ctx.max_id + 1
        while schema_id in ctx.ids:
            schema_id += 1
    for old in deleted:
        if old.id == schema_id and old.version < version:
            drafts.append((records.schema_key(old.subject, old.version), None))
    value = {
        "subject": subject,
        "version": version,
        "id": schema_id,
        "schemaType": cand.schema_type,
        "references": cand.references or None,
        "metadata": cand.metadata,
        "ruleSet": cand.rule_set,
        "schema": cand.text,
        "deleted": False,
    }
    drafts.append((records.schema_key(subject, version), value))
    return drafts, Registered(None, schema_id, modified)


def _refuse_strongly_associated_references(
    reg: Registry, subject: str, references: list[dict[str, Any]]
) -> None:
    """Confluent 8.x: a subject a topic owns (STRONG association) is no reference target, in
    every mode."""
    if not reg.state.associations:
        return
    strong = {a.subject for a in reg.state.associations.values() if a.lifecycle == "STRONG"}
    for ref in references:
        if parse_subject(subject).sibling(str(ref["subject"])).qualified in strong:
            raise errors.operation_not_permitted(
                f"Subject '{ref['subject']}' has a strong association and cannot be referenced"
            )


def _has_defaults_or_overrides(config: dict[str, Any]) -> bool:
    return any(
        config.get(k)
        for k in ("defaultMetadata", "overrideMetadata", "defaultRuleSet", "overrideRuleSet")
    )


def _populate_from_previous(
    config: dict[str, Any], req: SchemaRequest, previous: SchemaVersion | None, new_version: int
) -> bool:
    modified = False
    if req.schema is None or not req.schema.strip():
        if previous is None:
            raise errors.invalid_schema("Empty schema")
        req.schema = previous.schema
        req.schema_type = previous.schema_type
        req.references = [dict(r) for r in previous.references]
        modified = True
    specific_md = (
        req.metadata if req.metadata is not None else (previous.metadata if previous else None)
    )
    metadata = merge_metadata(
        merge_metadata(config.get("defaultMetadata"), specific_md), config.get("overrideMetadata")
    )
    specific_rs = (
        req.rule_set if req.rule_set is not None else (previous.rule_set if previous else None)
    )
    rule_set = merge_rule_sets(
        merge_rule_sets(config.get("defaultRuleSet"), specific_rs), config.get("overrideRuleSet")
    )
    if req.version not in (None, 0) or (
        metadata and CONFLUENT_VERSION in (metadata.get("properties") or {})
    ):
        metadata = dict(metadata or {})
        metadata["properties"] = {
            **(metadata.get("properties") or {}),
            CONFLUENT_VERSION: str(
                new_version if req.version in (None, 0, LATEST) else req.version
            ),
        }
    if metadata is not None or rule_set is not None:
        req.metadata = metadata
        req.rule_set = rule_set
        modified = True
    return modified
