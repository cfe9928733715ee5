"""``/associations`` (Confluent 8.x): explicit topic-subject associations.

An association ties a resource (a Kafka topic: name, namespace = cluster id, id) to a subject for
its ``key`` or ``value``. ``STRONG`` associations are owned by the topic (frozen, on the default
subject ``:.{namespace}:{topic}-{type}``, deleted with it when ``cascadeLifecycle``); ``WEAK``
ones share an existing subject. The rules and messages follow Confluent 8.x's
``AbstractSchemaRegistry.createOrUpdateAssociation`` and ``AssociationCreateOrUpdateRequest``.
Each association is an ASSOC record written through :meth:`Registry.write`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from registry import errors
from registry.core import Registry
from registry.state import Association
from registry.subjects import parse_subject

TOPIC = "topic"
WILDCARD = "-"
TYPES = ("key", "value")
LIFECYCLES = ("STRONG", "WEAK")
NAME_MAX_LENGTH = 256


@dataclass
class Info:
    """One ``AssociationCreateOrUpdateInfo`` of a request."""

    subject: str | None
    association_type: str | None
    lifecycle: str | None
    frozen: bool | None
    schema: dict[str, Any] | None
    normalize: bool | None


@dataclass
class AssocRequest:
    """An ``AssociationCreateOrUpdateRequest``."""

    resource_name: str | None
    resource_namespace: str | None
    resource_id: str | None
    resource_type: str | None
    infos: list[Info] = field(default_factory=list)


def invalid(prop: str, detail: str) -> errors.RegistryError:
    return errors.invalid_association(prop, detail)


# ---- reading --------------------------------------------------------------------------------


def entity(assoc: Association) -> dict[str, Any]:
    """Confluent's ``Association`` JSON (empty fields omitted)."""
    out: dict[str, Any] = {
        "subject": assoc.subject,
        "guid": assoc.guid,
        "resourceName": assoc.resource_name,
        "resourceNamespace": assoc.resource_namespace,
        "resourceId": assoc.resource_id,
        "resourceType": assoc.resource_type,
        "associationType": assoc.association_type,
        "lifecycle": assoc.lifecycle,
        "frozen": assoc.frozen,
        "createTs": assoc.create_ts,
        "updateTs": assoc.update_ts,
    }
    return {k: v for k, v in out.items() if v not in (None, "")}


def _sort_key(a: Association) -> tuple[str, str, str, str, str]:
    return (a.resource_name, a.resource_namespace, a.resource_type, a.association_type, a.subject)


def _filtered(
    found: Iterable[Association],
    resource_type: str | None,
    types: list[str] | None,
    lifecycle: str | None,
) -> list[Association]:
    return sorted(
        (
            a
            for a in found
            if (resource_type is None or a.resource_type == resource_type)
            and (not types or a.association_type in types)
            and (lifecycle is None or a.lifecycle == lifecycle)
        ),
        key=_sort_key,
    )


def by_subject(
    reg: Registry,
    subject: str,
    resource_type: str | None = None,
    types: list[str] | None = None,
    lifecycle: str | None = None,
) -> list[Association]:
    qualified = parse_subject(subject).qualified
    found = (a for a in reg.state.associations.values() if a.subject == qualified)
    return _filtered(found, resource_type, types, lifecycle)


def by_resource_id(
    reg: Registry,
    resource_id: str | None,
    resource_type: str | None = None,
    types: list[str] | None = None,
    lifecycle: str | None = None,
) -> list[Association]:
    if resource_id is None:
        return []
    found = (a for a in reg.state.associations.values() if a.resource_id == resource_id)
    return _filtered(found, resource_type, types, lifecycle)


def by_resource_name(
    reg: Registry,
    name: str,
    namespace: str,
    resource_type: str | None = None,
    types: list[str] | None = None,
    lifecycle: str | None = None,
) -> list[Association]:
    """``GET /associations/resources/{namespace}/{name}``: ``-`` as the name matches every
    resource of the namespace, ``-`` as the namespace every namespace."""
    found = (
        a
        for a in reg.state.associations.values()
        if (name == WILDCARD or a.resource_name == name)
        and (namespace == WILDCARD or a.resource_namespace == namespace)
    )
    return _filtered(found, resource_type, types, lifecycle)


def lifecycle_param(value: str | None) -> str | None:
    """The ``lifecycle`` query parameter; Jersey answers 404 for a value the enum lacks."""
    if value is None:
        return None
    if value not in LIFECYCLES:
        raise errors.RegistryError(404, "HTTP 404 Not Found")
    return value


# ---- parsing and validating a request -------------------------------------------------------


def parse_request(body: Any) -> AssocRequest:
    if not isinstance(body, dict):
        raise errors.RegistryError(422, "Unrecognized request body")
    infos = body.get("associations")
    parsed = []
    for item in infos if isinstance(infos, list) else []:
        if not isinstance(item, dict):
            raise errors.RegistryError(422, "Unrecognized association")
        lifecycle = item.get("lifecycle")
        if lifecycle is not None and lifecycle not in LIFECYCLES:
            raise errors.RegistryError(
                422,
                f"Cannot deserialize LifecyclePolicy from {lifecycle!r}: not one of STRONG, WEAK",
            )
        schema = item.get("schema")
        parsed.append(
            Info(
                subject=_opt_str(item.get("subject")),
                association_type=_opt_str(item.get("associationType")),
                lifecycle=lifecycle,
                frozen=_opt_bool(item.get("frozen")),
                schema=schema if isinstance(schema, dict) else None,
                normalize=_opt_bool(item.get("normalize")),
            )
        )
    return AssocRequest(
        resource_name=_opt_str(body.get("resourceName")),
        resource_namespace=_opt_str(body.get("resourceNamespace")),
        resource_id=_opt_str(body.get("resourceId")),
        resource_type=_opt_str(body.get("resourceType")),
        infos=parsed if isinstance(infos, list) else [],
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _opt_bool(value: Any) -> bool | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


def _java_bool(value: bool | None) -> str:
    return "null" if value is None else str(value).lower()


def _check_name(name: str | None, prop: str) -> None:
    if not name:
        raise invalid(prop, "cannot be null or empty")
    if len(name) > NAME_MAX_LENGTH:
        raise invalid(prop, f"exceeds max length of {NAME_MAX_LENGTH}")
    for char in name:
        if not (char.isalnum() or char in "_-"):
            raise invalid(prop, f"illegal character '{char}'")


def _check_subject(subject: str) -> None:
    if not subject or any(unicodedata.category(c) == "Cc" for c in subject):
        raise invalid("subject", "must not be empty")


def _default_subject(req: AssocRequest, association_type: str) -> str:
    return f":.{req.resource_namespace}:{req.resource_name}-{association_type}"


def _apply_defaults(info: Info, is_create: bool) -> None:
    if not is_create and info.schema is not None:
        raise invalid(
            "schema",
            "cannot be provided when adding an association to an existing topic; "
            "an association with a schema must be created with the topic",
        )
    if info.schema is not None:
        if info.lifecycle == "WEAK":
            raise invalid("lifecycle", "cannot be WEAK when schema is provided")
        if info.frozen is False:
            raise invalid("frozen", "cannot be false when a schema is provided")
        info.lifecycle = "STRONG"
    elif info.lifecycle is None:
        info.lifecycle = "WEAK"
    desired = info.lifecycle == "STRONG"
    if info.frozen is not None and info.frozen != desired:
        raise invalid(
            "frozen",
            f"association with lifecycle of {info.lifecycle} cannot be frozen="
            f"{_java_bool(info.frozen)}",
        )
    info.frozen = desired


def settle_subject(req: AssocRequest, info: Info) -> None:
    """A created association's subject: the topic's default when none is given; a frozen one
    must use it, a WEAK one must not (42212)."""
    default = _default_subject(req, info.association_type)
    if info.subject is None:
        info.subject = default
    if info.frozen and info.subject != default:
        raise invalid("subject", f"frozen associations must use subject '{default}'")
    if info.lifecycle == "WEAK" and info.subject == default:
        raise invalid("subject", f"WEAK associations cannot use subject '{default}'")


def validate_resource(req: AssocRequest, *, dry_run: bool, has_items: bool) -> None:
    """The resource half of Confluent's request checks (single and batch requests alike):
    42212 for the first bad property; a missing ``resourceType`` becomes ``topic``."""
    _check_name(req.resource_name, "resourceName")
    _check_name(req.resource_namespace, "resourceNamespace")
    if not dry_run and not req.resource_id:
        raise invalid("resourceId", "cannot be null or empty")
    if req.resource_type:
        if req.resource_type != TOPIC:
            raise invalid("resourceType", f"must be '{TOPIC}'")
    else:
        req.resource_type = TOPIC
    if not has_items:
        raise invalid("associations", "cannot be null or empty")


def validate(req: AssocRequest, *, is_create: bool, dry_run: bool) -> None:
    """``AssociationCreateOrUpdateRequest.validate``: 42212 for the first bad property."""
    validate_resource(req, dry_run=dry_run, has_items=bool(req.infos))
    for info in req.infos:
        if info.subject is not None:
            _check_subject(info.subject)
        if is_create:
            _apply_defaults(info, True)
        if info.association_type:
            if info.association_type not in TYPES:
                raise invalid("associationType", "must be either 'key' or 'value'")
        else:
            info.association_type = "value"
        if info.lifecycle == "WEAK":
            if info.schema is not None:
                raise invalid("lifecycle", "cannot be WEAK when schema is provided")
            if info.frozen:
                raise invalid("frozen", "association with lifecycle of WEAK cannot be frozen")
            if is_create and info.subject is None:
                raise invalid("subject", "must be provided for WEAK associations")
        if is_create:
            settle_subject(req, info)
