"""``/associations`` routes (Confluent 8.x ``AssociationsResource``): thin wrappers over
``registry.associations`` (reads, validation) and ``registry.association_changes`` (writes)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import association_batches, association_changes, associations
from registry.api import docs
from registry.api.bodies import flag, json_body, page
from registry.api.deps import registry_of, subject_param
from registry.api.responses import reply, schema_entity
from registry.auth import visibility

router = APIRouter(tags=["Associations (v1)"])

_S, _B = {"type": "string"}, {"type": "boolean"}
_LIFECYCLE = {"type": "string", "enum": ["STRONG", "WEAK"]}
# Shared by the request and the response: the resource, and each association's own fields.
_RESOURCE = {"resourceName": _S, "resourceNamespace": _S, "resourceId": _S, "resourceType": _S}
_INFO = {"subject": _S, "associationType": _S, "lifecycle": _LIFECYCLE, "frozen": _B}


def _resource_with(item: dict[str, Any]) -> dict[str, Any]:
    """The request's and response's schema: the resource, and its associations' ``item``s."""
    return {
        "type": "object",
        "properties": {
            **_RESOURCE,
            "associations": {
                "type": "array",
                "items": {"type": "object", "properties": item},
            },
        },
    }


docs.COMPONENTS.update(
    {
        "Association": {
            "type": "object",
            "properties": {
                "subject": _S,
                "guid": _S,
                **_RESOURCE,
                "associationType": _S,
                "lifecycle": _LIFECYCLE,
                "frozen": _B,
                "createTs": {"type": "integer", "format": "int64"},
                "updateTs": {"type": "integer", "format": "int64"},
            },
        },
        "AssociationCreateOrUpdateRequest": _resource_with(
            {**_INFO, "schema": docs.ref("RegisterSchemaRequest"), "normalize": _B}
        ),
        "AssociationResponse": _resource_with({**_INFO, "schema": docs.ref("Schema")}),
        "AssociationBatchGetRequest": {
            "type": "object",
            "properties": {
                "requests": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            **_RESOURCE,
                            "associationTypes": {"type": "array", "items": _S},
                            "lifecycle": _LIFECYCLE,
                        },
                    },
                }
            },
        },
        "AssociationBatchRequest": {
            "type": "object",
            "properties": {
                "requests": {
                    "type": "array",
                    "items": _resource_with(
                        {
                            "opType": {"type": "string", "enum": ["CREATE", "UPSERT", "DELETE"]},
                            **_INFO,
                            "schema": docs.ref("RegisterSchemaRequest"),
                            "normalize": _B,
                            "cascadeLifecycle": _B,
                        }
                    ),
                }
            },
        },
        "AssociationBatchResponse": {
            "type": "object",
            "properties": {
                "results": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "result": docs.ref("AssociationResponse"),
                            "error": docs.ref("ErrorMessage"),
                        },
                    },
                }
            },
        },
    }
)

ASSOCIATIONS = docs.array_of(docs.ref("Association"))
FILTERS = ("resourceType", "associationType", "lifecycle", "offset", "limit")


def _listing(request: Request, found: list[Any]) -> Response:
    query = request.query_params
    grants = visibility.grants_of(request)
    if grants is not None:  # only the associations of subjects the caller may read
        found = [a for a in found if visibility.readable(grants, a.subject)]
    body = [associations.entity(a) for a in found]
    return reply(request, page(body, query.get("offset"), query.get("limit"), 1000))


def _filters(request: Request) -> tuple[str, list[str], str | None]:
    query = request.query_params
    resource_type = query.get("resourceType") or associations.TOPIC
    return (
        resource_type,
        query.getlist("associationType"),
        associations.lifecycle_param(query.get("lifecycle")),
    )


@router.get(
    "/associations/subjects/{subject}",
    responses=docs.answers(ASSOCIATIONS, 404),
    openapi_extra=docs.parameters(("subject",), FILTERS),
)
async def by_subject(request: Request, subject: str) -> Response:
    found = associations.by_subject(
        registry_of(request), subject_param(subject), *_filters(request)
    )
    return _listing(request, found)


@router.get(
    "/associations/resources/{namespace}/{name}",
    responses=docs.answers(ASSOCIATIONS, 404),
    openapi_extra=docs.parameters(("namespace", "name"), FILTERS),
)
async def by_resource_name(request: Request, namespace: str, name: str) -> Response:
    found = associations.by_resource_name(registry_of(request), name, namespace, *_filters(request))
    return _listing(request, found)


@router.get(
    "/associations/resources/{resource_id}",
    responses=docs.answers(ASSOCIATIONS, 404),
    openapi_extra=docs.parameters(("resource_id",), FILTERS),
)
async def by_resource_id(request: Request, resource_id: str) -> Response:
    found = associations.by_resource_id(registry_of(request), resource_id, *_filters(request))
    return _listing(request, found)


@router.post(
    "/associations",
    openapi_extra={
        **docs.body("AssociationCreateOrUpdateRequest"),
        **docs.parameters((), ("context", "dryRun")),
    },
    responses=docs.answers(docs.ref("AssociationResponse"), 400, 409, 415, 422),
)
async def create(request: Request) -> Response:
    req = associations.parse_request(await json_body(request))
    return await _write(request, req, is_create=True)


@router.put(
    "/associations/resources/{resource_id}",
    openapi_extra={
        **docs.body("AssociationCreateOrUpdateRequest"),
        **docs.parameters(("resource_id",), ("context", "dryRun")),
    },
    responses=docs.answers(docs.ref("AssociationResponse"), 400, 409, 415, 422),
)
async def create_or_update(request: Request, resource_id: str) -> Response:
    req = associations.parse_request(await json_body(request))
    if req.resource_id is None:
        req.resource_id = resource_id
    elif req.resource_id != resource_id:
        raise associations.invalid(
            "resourceId",
            "Resource ID in the path parameter does not match the resource ID in the request body",
        )
    return await _write(request, req, is_create=False)


async def _write(request: Request, req: associations.AssocRequest, *, is_create: bool) -> Response:
    query = request.query_params
    dry_run = flag(query.get("dryRun"))
    associations.validate(req, is_create=is_create, dry_run=dry_run)
    outcome = await run_in_threadpool(
        association_changes.create_or_update,
        registry_of(request),
        req,
        context=query.get("context"),
        dry_run=dry_run,
        is_create=is_create,
    )
    body: dict[str, Any] = {
        "resourceName": req.resource_name,
        "resourceNamespace": req.resource_namespace,
        "resourceId": req.resource_id,
        "resourceType": req.resource_type,
    }
    infos = []
    for assoc in outcome.written:
        item: dict[str, Any] = {
            "subject": assoc.subject,
            "associationType": assoc.association_type,
            "lifecycle": assoc.lifecycle,
            "frozen": assoc.frozen,
        }
        schema = outcome.schemas.get(assoc.association_type)
        if schema is not None:
            item["schema"] = schema_entity(schema, None, True)
        infos.append(item)
    if infos:
        body["associations"] = infos
    return reply(request, {k: v for k, v in body.items() if v is not None})


@router.delete(
    "/associations/resources/{resource_id}",
    status_code=204,
    openapi_extra=docs.parameters(
        ("resource_id",), ("resourceType", "associationType", "cascadeLifecycle", "dryRun")
    ),
    responses=docs.answers(None, 404, 409, 422, status=204),
)
async def delete(request: Request, resource_id: str) -> Response:
    query = request.query_params
    await run_in_threadpool(
        association_changes.delete,
        registry_of(request),
        resource_id,
        query.get("resourceType") or associations.TOPIC,
        query.getlist("associationType"),
        cascade=flag(query.get("cascadeLifecycle")),
        dry_run=flag(query.get("dryRun")),
    )
    return Response(status_code=204)


def _info_entity(assoc: Any, schema: Any) -> dict[str, Any]:
    """An ``AssociationInfo`` of a batch answer: ``frozen`` only where it is not the lifecycle's
    default (Confluent 8.x's ``AssociationInfo.getFrozen``)."""
    item: dict[str, Any] = {
        "subject": assoc.subject,
        "associationType": assoc.association_type,
        "lifecycle": assoc.lifecycle,
    }
    if assoc.frozen != (assoc.lifecycle == "STRONG"):
        item["frozen"] = assoc.frozen
    if schema is not None:
        item["schema"] = schema_entity(schema, None, True)
    return item


def _batch_answer(request: Request, results: list[association_batches.Result]) -> Response:
    """``AssociationBatchResponse``, 207; under an authorization file a result lists only the
    associations of subjects the caller may read."""
    grants = visibility.grants_of(request)
    out = []
    for result in results:
        if result.error is not None:
            out.append({"error": result.error})
            continue
        found = result.associations
        if grants is not None:
            found = [a for a in found if visibility.readable(grants, a.subject)]
        body: dict[str, Any] = {k: v for k, v in result.resource.items() if v}
        infos = [_info_entity(a, result.schemas.get(a.association_type)) for a in found]
        if infos:
            body["associations"] = infos
        out.append({"result": body})
    return reply(request, {"results": out}, status_code=207)


@router.post(
    "/associations:batchGet",
    openapi_extra={
        **docs.body("AssociationBatchGetRequest"),
        **docs.parameters((), ("includeSchemas",)),
        **docs.READ_ONLY,
    },
    responses=docs.answers(docs.ref("AssociationBatchResponse"), 400, 415, 422, status=207),
)
async def batch_get(request: Request) -> Response:
    queries = association_batches.parse_get(await json_body(request))
    results = association_batches.batch_get(
        registry_of(request),
        queries,
        include_schemas=flag(request.query_params.get("includeSchemas")),
    )
    return _batch_answer(request, results)


@router.post(
    "/associations:batchMutate",
    openapi_extra={
        **docs.body("AssociationBatchRequest"),
        **docs.parameters((), ("context", "dryRun")),
    },
    responses=docs.answers(docs.ref("AssociationBatchResponse"), 400, 415, 422, status=207),
)
async def batch_mutate(request: Request) -> Response:
    query = request.query_params
    requests = association_batches.parse_mutate(await json_body(request))
    results = await run_in_threadpool(
        association_batches.batch_mutate,
        registry_of(request),
        requests,
        context=query.get("context"),
        dry_run=flag(query.get("dryRun")),
    )
    return _batch_answer(request, results)
