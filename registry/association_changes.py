"""Creating, updating and deleting associations (``POST /associations``, ``PUT
/associations/resources/{id}``, ``DELETE /associations/resources/{id}``), with ``dryRun``.

The checks run in Confluent 8.x's order (``AbstractSchemaRegistry.createOrUpdateAssociation``),
so the first failing rule decides the error code. Schemas carried by a request are registered
first (each through the registration path), then the ASSOC records are written in one
:meth:`Registry.write`, whose decision re-runs the checks against the state it writes to.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from registry import aliases, compat_checks, deletion, errors, lookups, records, registration
from registry.associations import (
    AssocRequest,
    Info,
    _apply_defaults,
    _default_subject,
    _java_bool,
    by_resource_id,
    by_resource_name,
    by_subject,
    invalid,
)
from registry.core import READ_ONLY_MODES, Draft, Registry, SchemaRequest, iter_live
from registry.state import Association, SchemaVersion
from registry.subjects import DEFAULT_CONTEXT, parse_subject

STRONG, WEAK = "STRONG", "WEAK"


@dataclass
class Outcome:
    """What a create or update wrote: the associations and the schemas it registered (by
    association type). A dry run writes nothing."""

    request: AssocRequest
    written: list[Association]
    schemas: dict[str, SchemaVersion]


def create_or_update(
    reg: Registry, req: AssocRequest, *, context: str | None, dry_run: bool, is_create: bool
) -> Outcome:
    _place_subjects(reg, req, context)
    _check(reg, req, dry_run=dry_run, is_create=is_create, with_schemas=True)
    if dry_run:
        return Outcome(req, [], {})
    registered: dict[str, SchemaVersion] = {}
    for info in req.infos:
        if info.schema is None or reg.effective_mode(str(info.subject)) == "IMPORT":
            continue
        subject = str(info.subject)
        result = registration.register(
            reg, subject, _schema_request(info.schema), normalize=bool(info.normalize)
        )
        registered[str(info.association_type)] = result.schema or _version_with_id(
            reg, subject, result.id
        )

    def decide() -> tuple[list[Draft], list[Association]]:
        by_type, skip = _check(reg, req, dry_run=False, is_create=is_create, with_schemas=False)
        written = _values(req, by_type, skip)
        drafts: list[Draft] = [
            (records.association_key(a.resource, a.subject), a.value()) for a in written
        ]
        return drafts, written

    written = reg.write(decide)
    return Outcome(req, written, registered)


def delete(
    reg: Registry,
    resource_id: str,
    resource_type: str,
    types: list[str] | None,
    *,
    cascade: bool,
    dry_run: bool,
) -> None:
    """``DELETE /associations/resources/{resourceId}``: 40410 when nothing matches; frozen
    ones only with ``cascadeLifecycle``, which also deletes a STRONG association's subject."""
    if not by_resource_id(reg, resource_id, resource_type, types):
        raise errors.association_not_found(resource_id)

    def decide() -> tuple[list[Draft], list[Association]]:
        found = by_resource_id(reg, resource_id, resource_type, types)
        for assoc in found:
            if reg.effective_mode(assoc.subject) in READ_ONLY_MODES:
                raise _read_only(assoc.subject)
            if not cascade and assoc.frozen:
                raise errors.association_frozen(assoc.association_type, assoc.subject)
        if dry_run:
            return [], []
        return [(records.decode_key(a.key), None) for a in found], found

    removed = reg.write(decide)
    for assoc in removed:
        if (
            cascade
            and assoc.lifecycle == STRONG
            and reg.effective_mode(assoc.subject) != "IMPORT"
            and reg.state.versions(assoc.subject)
        ):
            if iter_live(reg.state.versions(assoc.subject).values()):
                deletion.delete_subject(reg, assoc.subject, False)
            deletion.delete_subject(reg, assoc.subject, True)


# ---- the checks -----------------------------------------------------------------------------


def _place_subjects(reg: Registry, req: AssocRequest, context: str | None) -> None:
    """Subjects named in the request: into ``context``, through aliases, not read-only."""
    for info in req.infos:
        if info.subject is None:
            continue
        subject = info.subject
        if context and not subject.startswith(":"):
            ctx = context.strip(":") or DEFAULT_CONTEXT
            subject = f":{ctx}:{subject}" if ctx != DEFAULT_CONTEXT else subject
        subject = aliases.resolve(reg.state, parse_subject(subject).qualified)
        if reg.effective_mode(subject) in READ_ONLY_MODES:
            raise _read_only(subject)
        info.subject = subject


def _read_only(subject: str) -> errors.RegistryError:
    qs = parse_subject(subject)
    return errors.operation_not_permitted(
        f"Subject {qs.name} in context {qs.context} is in read-only mode"
    )


def _check(
    reg: Registry, req: AssocRequest, *, dry_run: bool, is_create: bool, with_schemas: bool
) -> tuple[dict[str, Association], set[str]]:
    types: list[str] = []
    for info in req.infos:
        kind = str(info.association_type)
        if kind in types:
            raise invalid(
                "associationType",
                f"may only appear once per request, but '{kind}' appears more than once",
            )
        types.append(kind)
    existing = by_resource_id(reg, req.resource_id, req.resource_type, types)
    if not existing and is_create and dry_run and req.resource_id is None:
        named = by_resource_name(
            reg, str(req.resource_name), str(req.resource_namespace), req.resource_type, types
        )
        existing = _most_recent_resource(named)
    by_type = {a.association_type: a for a in existing}
    skip: set[str] = set()
    for info in req.infos:
        if _check_one(reg, req, info, by_type.get(str(info.association_type)), is_create):
            skip.add(str(info.association_type))
    _check_uniform_lifecycle(reg, req)
    for info in req.infos:
        _check_subject_claims(reg, req, info, by_type.get(str(info.association_type)))
    if with_schemas:
        for info in req.infos:
            if info.schema is None:
                continue
            ok, messages = compat_checks.test_compatibility(
                reg,
                str(info.subject),
                None,
                _schema_request(info.schema),
                normalize=bool(info.normalize),
                verbose=False,
            )
            if not ok:
                raise errors.incompatible_schema(str(info.subject), messages)
    return by_type, skip


def _check_one(
    reg: Registry, req: AssocRequest, info: Info, assoc: Association | None, is_create: bool
) -> bool:
    """The per-association rules; True when the stored association already says the same."""
    kind = str(info.association_type)
    if assoc is None and not is_create:
        _apply_defaults(info, False)
    default = _default_subject(req, kind)
    if info.subject is None:
        if assoc is not None:
            info.subject = assoc.subject
        elif info.lifecycle == STRONG:
            info.subject = parse_subject(default).qualified
        else:
            raise invalid("subject", "must be provided for WEAK associations")
    subject = info.subject
    default_q = parse_subject(default).qualified
    effective = info.lifecycle or (assoc.lifecycle if assoc is not None else None)
    if effective is None:
        raise invalid("lifecycle", "lifecycle must be set")
    if effective == WEAK:
        if info.schema is not None:
            raise invalid("lifecycle", "cannot be WEAK when schema is provided")
        if subject == default_q:
            raise invalid("subject", f"WEAK associations cannot use subject '{default}'")
    is_frozen = assoc.frozen if assoc is not None else bool(info.frozen)
    requested = info.frozen if info.frozen is not None else is_frozen
    if requested != (effective == STRONG):
        raise invalid(
            "frozen",
            f"association with lifecycle of {effective} cannot be frozen={_java_bool(requested)}",
        )
    if is_frozen and subject != default_q:
        raise invalid("subject", f"frozen associations must use subject '{default}'")
    if assoc is None:
        importing = reg.effective_mode(subject) == "IMPORT"
        if not is_create and effective == STRONG and not importing:
            raise invalid(
                "lifecycle",
                "cannot be STRONG when creating an association; "
                "STRONG associations must be created with the topic",
            )
        if info.frozen and not importing:
            if is_create and info.schema is None:
                raise invalid(
                    "schema", "schema must be provided when creating a frozen association"
                )
            latest = _latest(reg, subject)
            if latest is not None and (
                info.schema is None or latest.version != 1 or not _has_schema(reg, subject, info)
            ):
                raise invalid(
                    "frozen",
                    "cannot create a frozen association when schemas already exist in the subject",
                )
        return False
    if _equivalent(assoc, info):
        if is_create and info.schema is not None and not _has_schema(reg, subject, info):
            raise errors.association_for_resource_exists(
                assoc.association_type, assoc.resource_name
            )
        return True
    if is_create:
        raise errors.association_for_resource_exists(assoc.association_type, assoc.resource_name)
    if info.lifecycle is None and info.schema is None:
        raise invalid("lifecycle", "at least lifecycle or schema must be provided for update")
    if assoc.subject != subject:
        raise invalid(
            "subject",
            f"subject of association cannot be changed from '{assoc.subject}' to '{subject}'",
        )
    if assoc.lifecycle == STRONG and info.lifecycle == WEAK and assoc.subject == default_q:
        raise invalid(
            "lifecycle", f"cannot change to WEAK when subject matches default format '{default}'"
        )
    if info.frozen is not None and assoc.frozen != info.frozen:
        raise invalid("frozen", "frozen attribute of association cannot be changed")
    if assoc.frozen:
        raise errors.association_frozen(assoc.association_type, assoc.subject)
    return False


def _check_uniform_lifecycle(reg: Registry, req: AssocRequest) -> None:
    if req.resource_id is not None:
        stored = by_resource_id(reg, req.resource_id, req.resource_type)
    else:
        stored = _most_recent_resource(
            by_resource_name(
                reg, str(req.resource_name), str(req.resource_namespace), req.resource_type
            )
        )
    lifecycles = {a.association_type: a.lifecycle for a in stored}
    for info in req.infos:
        lifecycle = info.lifecycle or lifecycles.get(str(info.association_type))
        if lifecycle is not None:
            lifecycles[str(info.association_type)] = lifecycle
    if len(set(lifecycles.values())) > 1:
        detail = ", ".join(f"{k}={v}" for k, v in lifecycles.items())
        raise invalid(
            "lifecycle",
            f"all associations for a resource must have the same lifecycle, but got {detail}",
        )


def _check_subject_claims(
    reg: Registry, req: AssocRequest, info: Info, assoc: Association | None
) -> None:
    subject = str(info.subject)
    if info.schema is not None and reg.effective_mode(subject) == "IMPORT":
        raise invalid("schema", f"cannot be provided while subject '{subject}' is in IMPORT mode")
    if info.schema is None and _latest(reg, subject) is None:
        raise errors.no_active_subject_version(subject)
    others = [
        a
        for a in by_subject(reg, subject)
        if assoc is None
        or not (
            a.resource_id == assoc.resource_id
            and a.resource_type == assoc.resource_type
            and a.association_type == assoc.association_type
        )
    ]
    lifecycle = info.lifecycle or (assoc.lifecycle if assoc is not None else None)
    if lifecycle is None:
        raise invalid("lifecycle", "lifecycle must be set")
    if lifecycle == STRONG:
        if others:
            raise errors.association_for_subject_exists(subject)
        if _is_referenced(reg, subject) or _request_references(req, subject):
            raise errors.reference_exists(subject)
    else:
        if info.frozen:
            raise invalid("frozen", "association with lifecycle of WEAK cannot be frozen")
        if any(a.lifecycle == STRONG for a in others):
            raise errors.strong_association_exists(subject)


# ---- helpers --------------------------------------------------------------------------------


def _equivalent(assoc: Association, info: Info) -> bool:
    return (
        assoc.subject == info.subject
        and assoc.association_type == info.association_type
        and (info.lifecycle is None or info.lifecycle == assoc.lifecycle)
        and (info.frozen is None or info.frozen == assoc.frozen)
    )


def _most_recent_resource(found: list[Association]) -> list[Association]:
    if not found:
        return found
    newest = max(found, key=lambda a: (a.update_ts, a.create_ts, a.resource_id))
    return [a for a in found if a.resource_id == newest.resource_id]


def _latest(reg: Registry, subject: str) -> SchemaVersion | None:
    live = iter_live(reg.state.versions(subject).values())
    return max(live, key=lambda v: v.version) if live else None


def _has_schema(reg: Registry, subject: str, info: Info) -> bool:
    if info.schema is None:
        return False
    found = lookups.lookup_in_subject(
        reg, subject, _schema_request(info.schema), normalize=bool(info.normalize)
    )
    return found is not None


def _is_referenced(reg: Registry, subject: str) -> bool:
    ctx = reg.state.context_of(subject)
    return any(ctx.referrers.get((subject, v)) for v in reg.state.versions(subject))


def _request_references(req: AssocRequest, strong_subject: str) -> bool:
    for other in req.infos:
        if other.schema is None or other.subject is None:
            continue
        for ref in other.schema.get("references") or []:
            if not isinstance(ref, dict) or ref.get("subject") is None:
                continue
            target = parse_subject(other.subject).sibling(str(ref["subject"])).qualified
            if target == strong_subject:
                return True
    return False


def _schema_request(body: dict[str, Any]) -> SchemaRequest:
    return SchemaRequest(
        schema=body.get("schema"),
        schema_type=str(body.get("schemaType") or "AVRO"),
        references=body.get("references"),
        metadata=body.get("metadata"),
        rule_set=body.get("ruleSet"),
        id=body.get("id"),
        version=body.get("version"),
    )


def _version_with_id(reg: Registry, subject: str, schema_id: int) -> SchemaVersion:
    versions = reg.state.versions(subject).values()
    return max((v for v in versions if v.id == schema_id), key=lambda v: v.version)


def _values(
    req: AssocRequest, by_type: dict[str, Association], skip: set[str]
) -> list[Association]:
    """``AssociationValue.fromAssociationCreateOrUpdateRequest``: new ones get a fresh GUID;
    updates keep the stored resource, GUID and subject."""
    out = []
    for info in req.infos:
        kind = str(info.association_type)
        if kind in skip:
            continue
        old = by_type.get(kind)
        if old is None:
            out.append(
                Association(
                    subject=str(info.subject),
                    guid=str(uuid.uuid4()),
                    resource_name=str(req.resource_name),
                    resource_namespace=str(req.resource_namespace),
                    resource_id=str(req.resource_id),
                    resource_type=str(req.resource_type),
                    association_type=kind,
                    lifecycle=STRONG if info.lifecycle == STRONG else WEAK,
                    frozen=bool(info.frozen),
                    create_ts=0,
                    update_ts=0,
                    key=b"",
                )
            )
        else:
            out.append(
                Association(
                    subject=old.subject,
                    guid=old.guid,
                    resource_name=old.resource_name,
                    resource_namespace=old.resource_namespace,
                    resource_id=old.resource_id,
                    resource_type=old.resource_type,
                    association_type=kind,
                    lifecycle=info.lifecycle or old.lifecycle,
                    frozen=info.frozen if info.frozen is not None else old.frozen,
                    create_ts=old.create_ts,
                    update_ts=0,
                    key=old.key,
                )
            )
    return out
