"""``POST /associations:batchGet`` and ``POST /associations:batchMutate`` (Confluent 8.x).

Both answer 207 with one ``result`` or ``error`` per request, in request order
(``AbstractSchemaRegistry.batchGetAssociations`` / ``mutateAssociations``). A batch mutate
request is validated as ``AssociationOpRequest.validate`` does, then its ops run in order: each
run of adjacent ``CREATE`` (or ``UPSERT``) ops is one create-or-update (the single-request path
of :mod:`registry.association_changes`), each ``DELETE`` op deletes one association type (no
40410 when there is none). A failing request stops at its failing op (earlier ops stay applied,
as in Confluent) and reports Confluent's error code for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from registry import association_changes, errors
from registry.associations import (
    LIFECYCLES,
    TOPIC,
    TYPES,
    AssocRequest,
    Info,
    _apply_defaults,
    _check_subject,
    by_resource_id,
    by_resource_name,
    invalid,
    parse_request,
    settle_subject,
    validate_resource,
)
from registry.core import Registry, iter_live
from registry.state import Association, SchemaVersion

CREATE, UPSERT, DELETE = "CREATE", "UPSERT", "DELETE"
OP_TYPES = (CREATE, DELETE, UPSERT)
#: ``RestServerErrorException.DEFAULT_ERROR_CODE`` (rest-utils): the HTTP status 500
SERVER_ERROR = 500
#: error codes a failed batch mutate request reports as they are (the rest become 500)
_KEPT = (40901, 40903, 40904, 40905, 40907, 40908, 42206, 42209, 42212)


def _mapping_error(message: str) -> errors.RegistryError:
    """Jackson's failure to read the body: rest-utils' ``JsonMappingExceptionMapper`` (400)."""
    return errors.RegistryError(400, message)


def _requests(body: Any, entity: str) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        raise _mapping_error(f"Cannot deserialize value of type `{entity}` from non-object value")
    requests = body.get("requests")
    if requests is not None and not isinstance(requests, list):
        raise _mapping_error("Cannot deserialize value of type `java.util.ArrayList` (requests)")
    if not requests:
        raise invalid("requests", "cannot be null or empty")
    for item in requests:
        if not isinstance(item, dict):
            raise _mapping_error(f"Cannot deserialize request of {entity} from non-object value")
    return requests


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _filled(value: str | None) -> bool:
    return value is not None and value != ""


# ---- batch get ------------------------------------------------------------------------------


@dataclass
class GetQuery:
    """One ``AssociationGetRequest``."""

    resource_name: str | None
    resource_namespace: str | None
    resource_id: str | None
    resource_type: str | None
    association_types: list[str]
    lifecycle: str | None


def parse_get(body: Any) -> list[GetQuery]:
    """An ``AssociationBatchGetRequest``: 42212 for no ``requests``."""
    queries = []
    for item in _requests(body, "AssociationBatchGetRequest"):
        lifecycle = item.get("lifecycle")
        if lifecycle is not None and lifecycle not in LIFECYCLES:
            raise _mapping_error(
                f"Cannot deserialize value of type `LifecyclePolicy` from String {lifecycle!r}: "
                "not one of the values accepted for Enum class: [STRONG, WEAK]"
            )
        types = item.get("associationTypes")
        if types is not None and not isinstance(types, list):
            types = [types]  # Jackson's ACCEPT_SINGLE_VALUE_AS_ARRAY is off: still a list here
        queries.append(
            GetQuery(
                resource_name=_opt_str(item.get("resourceName")),
                resource_namespace=_opt_str(item.get("resourceNamespace")),
                resource_id=_opt_str(item.get("resourceId")),
                resource_type=_opt_str(item.get("resourceType")),
                association_types=[str(t) for t in types or []],
                lifecycle=lifecycle,
            )
        )
    return queries


def _check_query(query: GetQuery) -> None:
    """``AssociationGetRequest.validate``; its ``IllegalPropertyException`` message."""
    if not _filled(query.resource_id) and not _filled(query.resource_name):
        raise errors.RegistryError(
            SERVER_ERROR,
            "property: resourceId; detail: either resourceId or resourceName must be specified",
        )
    if _filled(query.resource_name) and not _filled(query.resource_namespace):
        raise errors.RegistryError(
            SERVER_ERROR,
            "property: resourceNamespace; detail: "
            "resourceNamespace is required when resourceName is specified",
        )


def latest_live(reg: Registry, subject: str) -> SchemaVersion | None:
    live = iter_live(reg.state.versions(subject).values())
    return max(live, key=lambda v: v.version) if live else None


@dataclass
class Result:
    """One ``AssociationResult``: the resource and its associations, or an error."""

    error: dict[str, Any] | None = None
    resource: dict[str, str | None] = field(default_factory=dict)
    associations: list[Association] = field(default_factory=list)
    schemas: dict[str, SchemaVersion] = field(default_factory=dict)


def _result(
    name: str | None,
    namespace: str | None,
    resource_id: str | None,
    resource_type: str | None,
    found: list[Association],
    schemas: dict[str, SchemaVersion],
) -> Result:
    """``Association.toAssociationResponse``: every association must belong to the resource."""
    for a in found:
        if (a.resource_name, a.resource_namespace, a.resource_id, a.resource_type) != (
            name,
            namespace,
            resource_id,
            resource_type,
        ):
            raise errors.RegistryError(
                SERVER_ERROR,
                "All associations must have the same resourceName, resourceNamespace, "
                "resourceId, and resourceType.",
            )
    resource = {
        "resourceName": name,
        "resourceNamespace": namespace,
        "resourceId": resource_id,
        "resourceType": resource_type,
    }
    return Result(resource=resource, associations=found, schemas=schemas)


def _error(code: int, message: str) -> Result:
    return Result(error={"error_code": code, "message": message})


def batch_get(reg: Registry, queries: list[GetQuery], *, include_schemas: bool) -> list[Result]:
    results = []
    for query in queries:
        try:
            _check_query(query)
            kind = query.resource_type or TOPIC
            name, namespace, resource_id = (
                query.resource_name,
                query.resource_namespace,
                query.resource_id,
            )
            types, lifecycle = query.association_types, query.lifecycle
            if _filled(resource_id):
                found = by_resource_id(reg, resource_id, kind, types, lifecycle)
            else:
                # the name is matched literally here ('-' is a wildcard only in the GET path)
                found = [
                    a
                    for a in by_resource_name(
                        reg, str(name), str(namespace), kind, types, lifecycle
                    )
                    if a.resource_name == name
                ]
            if found:
                first = found[0]
                name = first.resource_name if name is None else name
                namespace = first.resource_namespace if namespace is None else namespace
                resource_id = first.resource_id if resource_id is None else resource_id
            schemas: dict[str, SchemaVersion] = {}
            if include_schemas:
                for a in found:
                    latest = latest_live(reg, a.subject)
                    if latest is not None:
                        schemas[a.association_type] = latest
            results.append(_result(name, namespace, resource_id, kind, found, schemas))
        except errors.RegistryError as exc:
            results.append(_error(SERVER_ERROR, f"Error while getting associations: {exc.message}"))
    return results


# ---- batch mutate ---------------------------------------------------------------------------


@dataclass
class Op:
    """One ``AssociationOp``: a create or upsert (``info``) or a delete."""

    op_type: str
    info: Info
    cascade: bool = False


@dataclass
class OpRequest:
    """One ``AssociationOpRequest``."""

    request: AssocRequest
    ops: list[Op]
    error: dict[str, Any] | None


def _parse_op(item: Any) -> Op:
    if not isinstance(item, dict):
        raise _mapping_error("Cannot deserialize value of type `AssociationOp` from non-object")
    op_type = item.get("opType")
    if op_type is None:
        raise _mapping_error(
            "Could not resolve subtype of [simple type, class io.confluent.kafka.schemaregistry."
            "client.rest.entities.requests.AssociationOp]: missing type id property 'opType'"
        )
    if op_type not in OP_TYPES:
        raise _mapping_error(
            f"Could not resolve type id '{op_type}' as a subtype of `io.confluent.kafka."
            "schemaregistry.client.rest.entities.requests.AssociationOp`: known type ids = "
            "[CREATE, DELETE, UPSERT]"
        )
    if op_type == DELETE:
        kind = item.get("associationType")
        cascade = item.get("cascadeLifecycle")
        info = Info(None, _opt_str(kind), None, None, None, None)
        return Op(DELETE, info, cascade is True or str(cascade).lower() == "true")
    # the same fields, coercions and refusals as the single-request body
    info = parse_request({"associations": [item]}).infos[0]
    return Op(str(op_type), info)


def parse_mutate(body: Any) -> list[OpRequest]:
    """An ``AssociationBatchRequest``: 42212 for no ``requests``."""
    parsed = []
    for item in _requests(body, "AssociationBatchRequest"):
        ops_body = item.get("associations")
        if ops_body is not None and not isinstance(ops_body, list):
            raise _mapping_error("Cannot deserialize value of type `java.util.ArrayList`")
        request = parse_request({k: v for k, v in item.items() if k != "associations"})
        error = item.get("error")
        parsed.append(
            OpRequest(
                request=request,
                ops=[_parse_op(op) for op in ops_body or []],
                error=_error_message(error) if isinstance(error, dict) else None,
            )
        )
    return parsed


def _error_message(error: dict[str, Any]) -> dict[str, Any]:
    """An ``ErrorMessage`` given in the request, answered back as it is (Confluent's batch
    carries errors found while forwarding this way)."""
    code = error.get("error_code")
    return {"error_code": code if isinstance(code, int) else 0, "message": error.get("message")}


def validate(req: OpRequest, *, dry_run: bool) -> None:
    """``AssociationOpRequest.validate``: the resource, then each op in order."""
    r = req.request
    validate_resource(r, dry_run=dry_run, has_items=bool(req.ops))
    seen: set[str] = set()
    for op in req.ops:
        info = op.info
        if op.op_type == CREATE:
            _apply_defaults(info, True)
        if op.op_type != DELETE and info.subject is not None:
            _check_subject(info.subject)
        if info.association_type:
            if info.association_type not in TYPES:
                raise invalid("associationType", "must be either 'key' or 'value'")
        else:
            info.association_type = "value"
        if op.op_type != DELETE and info.lifecycle == "WEAK":
            if info.schema is not None:
                raise invalid("lifecycle", "cannot be WEAK when schema is provided")
            if info.frozen:
                raise invalid("frozen", "association with lifecycle of WEAK cannot be frozen")
        if op.op_type == CREATE and info.subject is None and info.lifecycle == "WEAK":
            raise invalid("subject", "must be provided for WEAK associations")
        if info.association_type in seen:
            raise invalid(
                "associationType",
                f"may only appear once per request, but '{info.association_type}' appears "
                "more than once",
            )
        seen.add(info.association_type)
        if op.op_type == CREATE:
            settle_subject(r, info)


def _apply(reg: Registry, req: OpRequest, context: str | None, dry_run: bool) -> Result:
    validate(req, dry_run=dry_run)
    r = req.request
    schemas: dict[str, SchemaVersion] = {}
    ops, index = req.ops, 0
    while index < len(ops):
        op = ops[index]
        if op.op_type == DELETE:
            types = [str(op.info.association_type)]
            if by_resource_id(reg, r.resource_id, str(r.resource_type), types):
                association_changes.delete(
                    reg,
                    str(r.resource_id),
                    str(r.resource_type),
                    types,
                    cascade=op.cascade,
                    dry_run=dry_run,
                )
            index += 1
            continue
        end = index + 1
        while end < len(ops) and ops[end].op_type == op.op_type:
            end += 1
        run = AssocRequest(
            resource_name=r.resource_name,
            resource_namespace=r.resource_namespace,
            resource_id=r.resource_id,
            resource_type=r.resource_type,
            infos=[o.info for o in ops[index:end]],
        )
        outcome = association_changes.create_or_update(
            reg, run, context=context, dry_run=dry_run, is_create=op.op_type == CREATE
        )
        schemas.update(outcome.schemas)
        index = end
    found = [] if dry_run else by_resource_id(reg, r.resource_id, str(r.resource_type))
    return _result(
        r.resource_name, r.resource_namespace, r.resource_id, r.resource_type, found, schemas
    )


def batch_mutate(
    reg: Registry, requests: list[OpRequest], *, context: str | None, dry_run: bool
) -> list[Result]:
    results = []
    for req in requests:
        if req.error is not None:
            results.append(Result(error=req.error))
            continue
        try:
            results.append(_apply(reg, req, context, dry_run))
        except errors.RegistryError as exc:
            if exc.error_code in _KEPT:
                results.append(_error(exc.error_code, exc.message))
            elif exc.error_code == 42201:  # InvalidSchemaException: reported as 42212
                results.append(_error(42212, exc.message))
            else:
                results.append(
                    _error(SERVER_ERROR, f"Error while creating association: {exc.message}")
                )
    return results
