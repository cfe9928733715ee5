"""``/subjects`` routes: thin wrappers over the operation modules (``registry.reads``, ``lookups``,
``registration``, ``deletion``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import deletion, errors, lookups, reads, registration, tags
from registry.api import docs
from registry.api.bodies import flag, json_body, page, schema_request
from registry.api.deps import registry_of, subject_param
from registry.api.responses import raw_text, reply, schema_entity, wants_v8
from registry.auth import visibility
from registry.core import Registry, SchemaRequest, parse_version
from registry.identity import guid_of
from registry.state import SchemaVersion
from registry.subjects import parse_subject

router = APIRouter(tags=["Subjects (v1)"])


@router.get("/subjects", responses=docs.answers(docs.STRINGS))
async def list_subjects(
    request: Request,
    subjectPrefix: str | None = None,
    deleted: str | None = None,
    deletedOnly: str | None = None,
    offset: str | None = None,
    limit: str | None = None,
) -> Response:
    reg = registry_of(request)
    # an empty prefix, like the default ``:*:``, matches every subject of every context
    found = reads.list_subjects(reg, subjectPrefix or ":*:", flag(deleted), flag(deletedOnly))
    return reply(request, page(visibility.subjects(request, found), offset, limit))


@router.get("/subjects/{subject}/versions", responses=docs.answers(docs.INTS, 404))
async def list_versions(
    request: Request,
    subject: str,
    deleted: str | None = None,
    deletedOnly: str | None = None,
    deletedAsNegative: str | None = None,
    offset: str | None = None,
    limit: str | None = None,
) -> Response:
    versions = reads.list_versions(
        registry_of(request),
        subject_param(subject),
        flag(deleted),
        flag(deletedOnly),
        flag(deletedAsNegative),
    )
    return reply(request, page(versions, offset, limit))


@router.post(
    "/subjects/{subject}/versions",
    openapi_extra=docs.body("RegisterSchemaRequest"),
    responses=docs.answers(docs.ref("RegisterSchemaResponse"), 400, 409, 415, 422),
)
async def register(
    request: Request, subject: str, normalize: str | None = None, format: str | None = None
) -> Response:
    reg = registry_of(request)
    req = schema_request(await json_body(request))
    result = await _register(reg, subject_param(subject), req, flag(normalize))
    v8 = wants_v8(request)
    if not result.modified and not v8:
        return reply(request, {"id": result.id})
    sv = result.schema or _registered(reg, subject_param(subject), result.id)
    if not result.modified:
        # Confluent 8.x echoes the whole schema, but confluent-kafka's client then caches that
        # text for the id, replacing the form it sent (a serialized Protobuf descriptor it
        # later decodes): id, version and guid are what clients read
        return reply(request, {"id": result.id, "version": sv.version, "guid": guid_of(sv.digest)})
    body = schema_entity(sv, formatted(reg, sv, format), v8)
    for dropped in ("subject", "ts", "deleted"):
        body.pop(dropped, None)
    return reply(request, {"id": body.pop("id"), **body})


@router.get("/subjects/{subject}/versions/{version}", responses=docs.answers(docs.SCHEMA, 404, 422))
async def get_version(
    request: Request,
    subject: str,
    version: str,
    deleted: str | None = None,
    format: str | None = None,
    findTags: str | None = None,  # repeatable; read from the query below
) -> Response:
    reg = registry_of(request)
    sv = reads.get_version(reg, subject_param(subject), parse_version(version), flag(deleted))
    body = schema_entity(sv, formatted(reg, sv, format), wants_v8(request))
    return reply(request, with_tags(body, sv, request.query_params.getlist("findTags")))


@router.get(
    "/subjects/{subject}/versions/{version}/schema",
    responses=docs.answers(docs.TEXT, 404, 422),
)
async def get_version_schema(
    request: Request,
    subject: str,
    version: str,
    deleted: str | None = None,
    format: str | None = None,
) -> Response:
    reg = registry_of(request)
    sv = reads.get_version(reg, subject_param(subject), parse_version(version), flag(deleted))
    return raw_text(request, formatted(reg, sv, format) or sv.schema)


@router.get(
    "/subjects/{subject}/versions/{version}/referencedby",
    responses=docs.answers(docs.INTS, 404, 422),
)
async def referenced_by(
    request: Request,
    subject: str,
    version: str,
    deleted: str | None = None,
    offset: str | None = None,
    limit: str | None = None,
) -> Response:
    reg, name, number = registry_of(request), subject_param(subject), parse_version(version)
    ids = reads.referenced_by(reg, name, number, flag(deleted))
    if ids and visibility.grants_of(request) is not None:
        found = reads.get_version(reg, name, number, deleted=True).subject
        ids = visibility.ids_in(request, reg, found, ids)
    return reply(request, page(ids, offset, limit, 1000))


@router.delete("/subjects/{subject}/versions/{version}", responses=docs.answers(docs.INT, 404, 422))
async def delete_version(
    request: Request, subject: str, version: str, permanent: str | None = None
) -> Response:
    reg = registry_of(request)
    number = parse_version(version)
    deleted = await run_in_threadpool(
        deletion.delete_version, reg, subject_param(subject), number, flag(permanent)
    )
    return reply(request, deleted)


@router.post(
    "/subjects/{subject}",
    openapi_extra={
        **docs.body("RegisterSchemaRequest"),
        **docs.parameters(("subject",), ("normalize", "deleted", "format")),
        **docs.READ_ONLY,
    },
    responses=docs.answers(docs.SCHEMA, 400, 404, 415, 422),
)
async def lookup(request: Request) -> Response:
    # the serializers' hot path: parameters are read directly, not through FastAPI
    query = request.query_params
    subject: str = request.path_params["subject"]
    normalize, deleted, format = query.get("normalize"), query.get("deleted"), query.get("format")
    reg = registry_of(request)
    req = schema_request(await json_body(request))
    args = (reg, subject_param(subject), req)
    kwargs = {"normalize": flag(normalize), "deleted": flag(deleted)}
    if not req.references and (
        reg.has_parsed(req.schema_type, req.schema or "")
        or _stored_canonical(reg, args[1], req, kwargs["normalize"])
    ):
        sv = lookups.lookup(*args, **kwargs)  # memory only: no need for a worker thread
    else:
        sv = await run_in_threadpool(lookups.lookup, *args, **kwargs)
    return reply(request, schema_entity(sv, formatted(reg, sv, format), wants_v8(request)))


@router.delete("/subjects/{subject}", responses=docs.answers(docs.INTS, 404, 422))
async def delete_subject(request: Request, subject: str, permanent: str | None = None) -> Response:
    versions = await run_in_threadpool(
        deletion.delete_subject, registry_of(request), subject_param(subject), flag(permanent)
    )
    return reply(request, versions)


@router.get("/subjects/{subject}/metadata", responses=docs.answers(docs.SCHEMA, 404))
async def latest_with_metadata(
    request: Request, subject: str, deleted: str | None = None, format: str | None = None
) -> Response:
    reg = registry_of(request)
    keys = request.query_params.getlist("key")
    values = request.query_params.getlist("value")
    sv = reads.latest_with_metadata(
        reg, subject_param(subject), dict(zip(keys, values, strict=False)), flag(deleted)
    )
    return reply(request, schema_entity(sv, formatted(reg, sv, format), wants_v8(request)))


def _stored_canonical(reg: Registry, subject: str, req: SchemaRequest, normalize: bool) -> bool:
    """Whether the look-up finds ``req``'s text in ``subject`` itself, as the stored canonical
    form of a live version, known without parsing anything (``lookups.stored_as_canonical``;
    not when normalising): it is then answered from the identity hash, with no parse of the
    text, of other versions or in other contexts."""
    if not req.schema or normalize:
        return False
    qualified = parse_subject(subject).qualified
    if reg.effective_config(qualified).get("normalize"):
        return False
    try:
        sv = lookups.stored_as_canonical(reg, qualified, req, [], learn=False)
    except errors.RegistryError:  # (an unknown schema type): the look-up answers it
        return False
    if sv is None:
        return False
    return any(v.id == sv.id and not v.deleted for v in reg.state.versions(qualified).values())


async def _register(
    reg: Registry, subject: str, req: SchemaRequest, normalize: bool
) -> registration.Registered:
    """``registration.register`` without a worker thread: a cheap request is looked up on the
    event loop and decided once, inside the group commit (awaited, not waited for in a
    thread); anything else is looked up, parsed and checked in a worker thread first, as
    before, so that its work does not hold the write lock."""
    if registration.cheap(reg, subject, req):
        found = registration.before_lock(reg, subject, req, normalize, prepare=False)
    else:
        found = await run_in_threadpool(registration.before_lock, reg, subject, req, normalize)
    if isinstance(found, registration.Registered):
        return found
    return await reg.write_async(found)


def _registered(reg: Registry, subject: str, schema_id: int) -> SchemaVersion:
    """The version a registration just wrote (or found) under ``subject`` with ``schema_id``."""
    versions = reg.state.versions(reg.valid_subject(subject)).values()
    return max((v for v in versions if v.id == schema_id), key=lambda v: v.version)


def with_tags(body: dict[str, Any], sv: SchemaVersion, find: list[str]) -> dict[str, Any]:
    """``findTags`` (Confluent 8.x): the tagged entities of the schema as ``schemaTags``."""
    if find:
        found = tags.tagged_entities(sv, find)
        if found:
            body["schemaTags"] = found
    return body


def formatted(reg: Registry, sv: SchemaVersion, fmt: str | None) -> str | None:
    """The schema text for a ``format`` query value (None keeps the stored text)."""
    if not fmt or not fmt.strip():
        return None
    return reg.parse_stored(sv).formatted(fmt.strip())
