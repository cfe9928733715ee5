"""``/schemas`` routes: by id, by GUID, listing, types."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from registry import errors, reads
from registry.api import docs
from registry.api.bodies import flag, page
from registry.api.deps import registry_of, subject_param
from registry.api.responses import raw_text, reply, schema_entity, schema_string, wants_v8
from registry.api.subjects import formatted, with_tags
from registry.auth import visibility
from registry.path_numbers import java_int

router = APIRouter(tags=["Schemas (v1)"])


def _schema_id(value: str) -> int:
    """Jersey answers 404 when an int path parameter does not convert (Java's parser)."""
    number = java_int(value)
    if number is None:
        raise errors.RegistryError(404, "HTTP 404 Not Found")
    return number


@router.get("/schemas", responses=docs.answers(docs.array_of(docs.SCHEMA)))
async def list_schemas(
    request: Request,
    subjectPrefix: str | None = None,
    deleted: str | None = None,
    latestOnly: str | None = None,
    ruleType: str | None = None,
    offset: str | None = None,
    limit: str | None = None,
) -> Response:
    found = reads.list_schemas(
        registry_of(request), subjectPrefix or "", flag(deleted), flag(latestOnly), ruleType or ""
    )
    found = visibility.versions(request, found)
    v8 = wants_v8(request)
    return reply(request, [schema_entity(sv, None, v8) for sv in page(found, offset, limit, 1000)])


@router.get("/schemas/types", responses=docs.answers(docs.STRINGS))
async def schema_types(request: Request) -> Response:
    return reply(request, sorted(registry_of(request).formats, reverse=True))


@router.get(
    "/schemas/ids/{schema_id}",
    responses=docs.answers(docs.SCHEMA_STRING, 404),
    openapi_extra=docs.parameters(("schema_id",), ("subject", "format", "fetchMaxId", "findTags")),
)
async def schema_by_id(request: Request) -> Response:
    # the deserializers' hot path: parameters are read directly, not through FastAPI
    reg = registry_of(request)
    query = request.query_params
    subject = query.get("subject")
    subj = subject_param(subject) if subject else None
    sv = reads.schema_by_id(reg, _schema_id(request.path_params["schema_id"]), subj)
    v8 = wants_v8(request)
    body = schema_string(sv, formatted(reg, sv, query.get("format")), v8)
    if v8 and subject is not None:
        # Confluent 8.x names the subject and version the id was found under when
        # ``?subject=`` is given (even empty); ``id`` is ours (see the README): confluent-kafka
        # 2.16 caches this answer as a RegisteredSchema, whose id its use.schema.id needs
        body = {"subject": sv.subject, "version": sv.version, "id": sv.id, **body}
    body = with_tags(body, sv, query.getlist("findTags"))
    if flag(query.get("fetchMaxId")):
        body["maxId"] = reg.state.context_of(sv.subject).max_id
    return reply(request, body)


@router.get("/schemas/ids/{schema_id}/schema", responses=docs.answers(docs.TEXT, 404))
async def schema_text_by_id(
    request: Request, schema_id: str, subject: str | None = None, format: str | None = None
) -> Response:
    reg = registry_of(request)
    sv = reads.schema_by_id(reg, _schema_id(schema_id), subject_param(subject or ""))
    return raw_text(request, formatted(reg, sv, format) or sv.schema)


@router.get("/schemas/ids/{schema_id}/subjects", responses=docs.answers(docs.STRINGS, 404))
async def subjects_by_id(
    request: Request,
    schema_id: str,
    subject: str | None = None,
    deleted: str | None = None,
    offset: str | None = None,
    limit: str | None = None,
) -> Response:
    pairs = reads.subject_versions_for_id(
        registry_of(request), _schema_id(schema_id), subject_param(subject or ""), flag(deleted)
    )
    # ``subject`` only picks the context (Confluent 7.9 does not filter by it)
    names = sorted({s for s, _ in visibility.pairs(request, pairs)})
    return reply(request, page(names, offset, limit))


@router.get(
    "/schemas/ids/{schema_id}/versions",
    responses=docs.answers(docs.array_of(docs.ref("SubjectVersion")), 404),
)
async def versions_by_id(
    request: Request,
    schema_id: str,
    subject: str | None = None,
    deleted: str | None = None,
    offset: str | None = None,
    limit: str | None = None,
) -> Response:
    pairs = reads.subject_versions_for_id(
        registry_of(request), _schema_id(schema_id), subject_param(subject or ""), flag(deleted)
    )
    body = [{"subject": s, "version": v} for s, v in visibility.pairs(request, pairs)]
    return reply(request, page(body, offset, limit))


@router.get("/schemas/guids/{guid}", responses=docs.answers(docs.SCHEMA_STRING, 404))
async def schema_by_guid(request: Request, guid: str, format: str | None = None) -> Response:
    reg = registry_of(request)
    found = reads.schemas_by_guid(reg, guid.lower())
    if not found:
        raise errors.schema_not_found(guid)
    sv = found[0]
    return reply(request, schema_string(sv, formatted(reg, sv, format), wants_v8(request)))


@router.get(
    "/schemas/guids/{guid}/ids",
    responses=docs.answers(docs.array_of(docs.ref("ContextId")), 404),
)
async def ids_by_guid(request: Request, guid: str) -> Response:
    reg = registry_of(request)
    found = visibility.by_guid(request, reg, reads.schemas_by_guid(reg, guid.lower()))
    if not found:
        raise errors.schema_not_found(guid)
    return reply(request, [{"context": sv.context, "id": sv.id} for sv in found])
