"""Subject and schema operations with Confluent's semantics: register, look up, read, list,
soft and permanent delete, references, compatibility checks. Each function takes the
:class:`~registry.core.Registry` and raises :class:`~registry.errors.RegistryError`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from registry import compatibility, errors, records
from registry.core import (
    LATEST,
    READ_ONLY_MODES,
    Draft,
    Registry,
    SchemaRequest,
    iter_live,
)
from registry.formats.base import InvalidSchemaError, ParsedSchema
from registry.identity import schema_hash
from registry.state import SchemaVersion
from registry.subjects import DEFAULT_CONTEXT, WILDCARD, matches_prefix, parse_subject

CONFLUENT_VERSION = "confluent:version"


@dataclass
class Candidate:
    """A requested schema after parsing, canonicalisation and reference pinning."""

    parsed: ParsedSchema
    text: str
    schema_type: str
    references: list[dict[str, Any]]
    metadata: dict[str, Any] | None
    rule_set: dict[str, Any] | None

    @property
    def digest(self) -> bytes:
        return schema_hash(self.text, self.references, self.metadata, self.rule_set)


@dataclass
class Registered:
    """The outcome of a registration: the stored version and whether the server changed the
    requested schema (then Confluent 7.9 answers with the whole schema, else only the id)."""

    schema: SchemaVersion | None
    id: int
    modified: bool


# ---- reads ------------------------------------------------------------------------------


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
    versions = _versions_with_fallback(reg, subject, deleted or deleted_only)
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


def _versions_with_fallback(reg: Registry, subject: str, deleted: bool) -> list[SchemaVersion]:
    versions = [v for v in reg.state.versions(subject).values() if deleted or not v.deleted]
    if versions:
        return versions
    qs = parse_subject(subject)
    if qs.context == DEFAULT_CONTEXT:
        for name in reg.state.context_names():
            if name == DEFAULT_CONTEXT:
                continue
            found = [
                v
                for v in reg.state.versions(f":{name}:{qs.name}").values()
                if deleted or not v.deleted
            ]
            if found:
                return found
    return []


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
    """The content of an id: in ``subject``'s context (default context when absent), falling
    back to every context for an unqualified subject. Soft-deleted versions still count."""
    qs = parse_subject(subject or "")
    names = [qs.context]
    if qs.context == DEFAULT_CONTEXT:
        names += [n for n in reg.state.context_names() if n != DEFAULT_CONTEXT]
    for name in names:
        ctx = reg.state.find_context(name)
        sv = ctx.any_version_of(schema_id) if ctx is not None else None
        if sv is not None:
            return sv
    raise errors.schema_not_found(schema_id)


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
    reg: Registry, prefix: str = "", deleted: bool = False, latest_only: bool = False
) -> list[SchemaVersion]:
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
            out.extend(visible)
    out.sort(key=lambda v: (v.subject, v.version))
    return out


def latest_with_metadata(
    reg: Registry, subject: str, wanted: dict[str, str], deleted: bool = False
) -> SchemaVersion:
    versions = _versions_with_fallback(reg, subject, deleted)
    if not versions:
        raise errors.subject_not_found(subject)
    for sv in sorted(versions, key=lambda v: v.version, reverse=True):
        props = (sv.metadata or {}).get("properties") or {}
        if all(props.get(k) == v for k, v in wanted.items()):
            return sv
    raise errors.schema_not_found()


# ---- candidates and lookup --------------------------------------------------------------


def make_candidate(
    reg: Registry,
    subject: str,
    req: SchemaRequest,
    *,
    normalize: bool,
    strict: bool,
    include_deleted_refs: bool,
) -> Candidate:
    if req.schema is None or not req.schema.strip():
        raise errors.invalid_schema("Empty schema")
    references = [dict(r) for r in req.references or []]
    pinned = []
    for ref in references:
        target = reg.resolve_reference(subject, ref, include_deleted=include_deleted_refs)
        pinned.append({"name": ref["name"], "subject": ref["subject"], "version": target.version})
    if normalize:
        pinned = _sorted_unique(pinned)
    try:
        parsed = reg.parse(
            subject,
            req.schema_type,
            req.schema,
            pinned,
            strict=strict,
            include_deleted_refs=include_deleted_refs,
        )
        text = parsed.normalized() if normalize else parsed.canonical()
    except InvalidSchemaError as exc:
        refs = (
            "["
            + ", ".join(
                f"{{name='{r['name']}', subject='{r['subject']}', version={r['version']}}}"
                for r in pinned
            )
            + "]"
        )
        raise errors.invalid_schema(
            f"Invalid schema {req.describe(subject)} with refs {refs} of type "
            f"{req.schema_type}, details: {exc}"
        ) from exc
    return Candidate(
        parsed=parsed,
        text=text,
        schema_type=parsed.schema_type,
        references=pinned,
        metadata=req.metadata,
        rule_set=req.rule_set,
    )


def _sorted_unique(refs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = {}
    for ref in refs:
        seen[(ref["name"], ref["subject"], ref["version"])] = ref
    return [seen[k] for k in sorted(seen)]


def can_lookup(reg: Registry, cand: Candidate, sv: SchemaVersion, normalize: bool) -> bool:
    """Confluent's "same schema" test beyond the identity hash: equal canonical text (of the
    stored schema re-parsed, for texts another registry wrote), equal references, metadata equal
    ignoring ``confluent:version``; or a reference-free candidate equal to the stored schema with
    its references inlined."""
    if cand.schema_type != sv.schema_type:
        return False
    if cand.metadata is not None and _without_version(cand.metadata) != _without_version(
        sv.metadata
    ):
        return False
    if cand.rule_set is not None and cand.rule_set != sv.rule_set:
        return False
    same_refs = _ref_keys(cand.references) == _ref_keys(sv.references)
    if same_refs and cand.text == sv.schema:
        return True
    try:
        stored = reg.parse_stored(sv)
    except errors.RegistryError:
        return False
    if same_refs:
        stored_text = stored.normalized() if normalize else stored.canonical()
        return stored_text == cand.text
    if not cand.references and sv.references:
        return cand.parsed.formatted("resolved") == stored.formatted("resolved")
    return False


def _ref_keys(refs: Sequence[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
    return [(r.get("name"), r.get("subject"), r.get("version")) for r in refs]


def _without_version(metadata: dict[str, Any] | None) -> dict[str, Any]:
    if not metadata:
        return {}
    props = dict(metadata.get("properties") or {})
    props.pop(CONFLUENT_VERSION, None)
    out = {k: v for k, v in metadata.items() if v}
    if props:
        out["properties"] = props
    else:
        out.pop("properties", None)
    return out


def lookup_in_subject(
    reg: Registry,
    subject: str,
    req: SchemaRequest,
    *,
    normalize: bool,
    deleted: bool = False,
    latest_only: bool = False,
) -> SchemaVersion | None:
    """Find ``req`` among the subject's versions (3.5 of the reference); None if absent."""
    versions = reg.state.versions(subject)
    if not versions:
        return None
    cand = make_candidate(
        reg, subject, req, normalize=normalize, strict=False, include_deleted_refs=True
    )
    ctx = reg.state.context_of(subject)
    if not latest_only:
        schema_id = ctx.hashes.get(cand.digest)
        if schema_id is not None:
            for sv in sorted(versions.values(), key=lambda v: -v.version):
                if sv.id == schema_id and (deleted or not sv.deleted):
                    return sv
    ordered = sorted(versions.values(), key=lambda v: -v.version)
    if latest_only:
        live = iter_live(ordered)
        ordered = live[:1]
    for sv in ordered:
        if (deleted or not sv.deleted) and can_lookup(reg, cand, sv, normalize):
            return sv
    return None


def lookup(
    reg: Registry, subject: str, req: SchemaRequest, *, normalize: bool, deleted: bool = False
) -> SchemaVersion:
    """``POST /subjects/{subject}``. Like Confluent 7.9 the name is not validated: an
    invalid one simply has no versions (40401)."""
    subject = parse_subject(subject).qualified
    normalize = normalize or bool(reg.effective_config(subject).get("normalize"))
    candidates = [subject]
    qs = parse_subject(subject)
    if qs.context == DEFAULT_CONTEXT:
        candidates += [
            f":{name}:{qs.name}" for name in reg.state.context_names() if name != DEFAULT_CONTEXT
        ]
    any_versions = False
    for name in candidates:
        versions = reg.state.versions(name)
        if not [v for v in versions.values() if deleted or not v.deleted]:
            continue
        any_versions = True
        found = lookup_in_subject(reg, name, req, normalize=normalize, deleted=deleted)
        if found is not None:
            return found
    if not any_versions:
        raise errors.subject_not_found(subject)
    raise errors.schema_not_found()


# ---- register ---------------------------------------------------------------------------


def register(reg: Registry, subject: str, req: SchemaRequest, *, normalize: bool) -> Registered:
    """``POST /subjects/{subject}/versions``."""
    subject = reg.valid_subject(subject)
    if req.rule_set is not None:
        validate_rule_set(req.rule_set)
    config = reg.effective_config(subject)
    normalize = normalize or bool(config.get("normalize"))
    if not _has_defaults_or_overrides(config) and req.schema and req.schema.strip():
        existing = lookup_in_subject(
            reg, subject, req, normalize=normalize, latest_only=req.version == LATEST
        )
        if existing is not None:
            if req.version in (None, 0, LATEST):
                if req.id is None or req.id < 0 or req.id == existing.id:
                    return Registered(existing, existing.id, modified=False)
            elif req.id == existing.id and req.version == existing.version:
                return Registered(existing, existing.id, modified=True)
    return reg.write(lambda: _register_locked(reg, subject, req, normalize))


def _register_locked(
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
    cand = make_candidate(
        reg,
        subject,
        req,
        normalize=normalize,
        strict=requested_id < 0,
        include_deleted_refs=requested_id >= 0,
    )
    ctx = reg.state.context_of(subject)
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
        existing = ctx.versions(subject).get(version)
        if existing is not None and existing.digest != cand.digest:
            raise errors.operation_not_permitted(
                f"Overwrite new schema with version {version} is not permitted."
            )
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


def merge_metadata(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any] | None:
    if old is None:
        return new
    if new is None:
        return old
    tags = {**(old.get("tags") or {}), **(new.get("tags") or {})}
    props = {**(old.get("properties") or {}), **(new.get("properties") or {})}
    sensitive = sorted(set(old.get("sensitive") or []) | set(new.get("sensitive") or []))
    out: dict[str, Any] = {}
    if tags:
        out["tags"] = {k: tags[k] for k in sorted(tags)}
    if props:
        out["properties"] = {k: props[k] for k in sorted(props)}
    if sensitive:
        out["sensitive"] = sensitive
    return out


def merge_rule_sets(
    old: dict[str, Any] | None, new: dict[str, Any] | None
) -> dict[str, Any] | None:
    if old is None:
        return new
    if new is None:
        return old
    out: dict[str, Any] = {}
    for group in ("migrationRules", "domainRules", "encodingRules"):
        merged = {r.get("name"): r for r in old.get(group) or []}
        for rule in new.get(group) or []:
            merged[rule.get("name")] = rule
        if merged:
            out[group] = list(merged.values())
    enable_at = new.get("enableAt") or old.get("enableAt")
    if enable_at:
        out["enableAt"] = enable_at
    return out


RULE_KINDS = ("TRANSFORM", "CONDITION")
MIGRATION_MODES = ("UPGRADE", "DOWNGRADE", "UPDOWN")
DOMAIN_MODES = ("WRITE", "READ", "WRITEREAD")


def validate_rule_set(rule_set: dict[str, Any]) -> None:
    """Confluent's rule-set validation (42210)."""
    import re

    names: set[str] = set()
    for group, modes in (
        ("migrationRules", MIGRATION_MODES),
        ("domainRules", DOMAIN_MODES),
        ("encodingRules", DOMAIN_MODES),
    ):
        rules = rule_set.get(group)
        if rules is None:
            rules = []
        if not isinstance(rules, list):  # an empty object too (it is falsy, still not a list)
            raise errors.invalid_ruleset(f"{group} must be a list")
        for rule in rules:
            if not isinstance(rule, dict):
                raise errors.invalid_ruleset("A rule must be an object")
            name = rule.get("name")
            if not name or not isinstance(name, str):
                raise errors.invalid_ruleset("Missing rule name")
            if len(name) > 256 or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", name):
                raise errors.invalid_ruleset(f"Invalid rule name {name}")
            if name in names:
                raise errors.invalid_ruleset(f"Found rule with duplicate name '{name}'")
            names.add(name)
            if not rule.get("type"):
                raise errors.invalid_ruleset("Missing rule type")
            kind = str(rule.get("kind") or "TRANSFORM").upper()
            if kind not in RULE_KINDS:
                raise errors.invalid_ruleset(f"Invalid rule kind {rule.get('kind')}")
            mode = str(rule.get("mode") or ("UPGRADE" if group == "migrationRules" else "WRITE"))
            if mode.upper() not in modes:
                kind_name = "Migration" if group == "migrationRules" else "Domain"
                raise errors.invalid_ruleset(f"{kind_name} rules can only be {', '.join(modes)}")
            for action in ("onSuccess", "onFailure"):
                value = rule.get(action)
                if value and "," in str(value) and mode.upper() not in ("WRITEREAD", "UPDOWN"):
                    raise errors.invalid_ruleset(
                        "Multiple actions can only be specified for WRITEREAD or UPDOWN rules"
                    )


# ---- compatibility ----------------------------------------------------------------------


def check_against(
    reg: Registry,
    config: dict[str, Any],
    new: ParsedSchema,
    previous: Sequence[SchemaVersion],
    level: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> list[str]:
    """Messages for ``new`` against ``previous`` (chronological) under the effective config."""
    level = level or str(config.get("compatibilityLevel") or reg.settings.compatibility_level)
    group = config.get("compatibilityGroup")
    prev = list(previous)
    if group:
        # only versions whose metadata property ``group`` equals the new schema's (maybe None)
        value = _property(metadata, group)
        prev = [v for v in prev if _property(v.metadata, group) == value]
    olds = [compatibility.PreviousSchema(reg.parse_stored(v), v.version, v.schema) for v in prev]
    fmt = reg.formats.get(new.schema_type)
    return compatibility.check(
        fmt,
        level,
        new,
        olds,
        validate_fields=bool(config.get("validateFields")),
        policy=config.get("compatibilityPolicy"),
    )


def _property(metadata: dict[str, Any] | None, name: str) -> Any:
    return ((metadata or {}).get("properties") or {}).get(name)


def test_compatibility(
    reg: Registry,
    subject: str,
    version: int | None,
    req: SchemaRequest,
    *,
    normalize: bool,
    verbose: bool,
) -> tuple[bool, list[str]]:
    """``POST /compatibility/subjects/{subject}/versions[/{version}]``; ``version`` None means
    against every version the subject's level asks for."""
    subject = reg.valid_subject(subject)
    config = reg.effective_config(subject)
    normalize = normalize or bool(config.get("normalize"))
    live = sorted(iter_live(reg.state.versions(subject).values()), key=lambda v: v.version)
    if version is not None and version != LATEST:
        target = reg.state.versions(subject).get(version)
        if target is None or target.deleted:
            if not reg.state.versions(subject):
                raise errors.subject_not_found(subject)
            raise errors.version_not_found(version)
        previous = [target]
    elif version == LATEST:
        previous = live[-1:]
    else:
        previous = live
    try:
        cand = make_candidate(
            reg, subject, req, normalize=normalize, strict=True, include_deleted_refs=False
        )
    except errors.RegistryError as exc:
        if verbose and exc.error_code == 42201:
            return False, [exc.message]
        raise
    # the trailer names the configured level even when one version is compared (Confluent)
    level = str(config.get("compatibilityLevel") or reg.settings.compatibility_level)
    messages = check_against(reg, config, cand.parsed, previous, level, cand.metadata)
    return not messages, messages


# ---- delete -----------------------------------------------------------------------------


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
