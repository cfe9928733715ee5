"""``POST /subjects/{subject}/versions/{version}/tags`` (Confluent 8.x): a thin wrapper over
``registry.tags``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import tags
from registry.api import docs
from registry.api.bodies import json_body
from registry.api.deps import registry_of, subject_param
from registry.api.responses import reply, schema_entity
from registry.api.tag_bodies import tag_request
from registry.core import parse_version

router = APIRouter(tags=["Subjects (v1)"])

_S = {"type": "string"}
_ENTITY_TAGS = {
    "type": "object",
    "properties": {
        "schemaEntity": {
            "type": "object",
            "properties": {
                "entityPath": _S,
                "entityType": {"type": "string", "enum": list(tags.ENTITY_TYPES)},
            },
        },
        "tags": {"type": "array", "items": _S},
    },
}
docs.COMPONENTS["TagSchemaRequest"] = {
    "type": "object",
    "properties": {
        "newVersion": {"type": "integer", "format": "int32"},
        "tagsToAdd": {"type": "array", "items": _ENTITY_TAGS},
        "tagsToRemove": {"type": "array", "items": _ENTITY_TAGS},
        "metadata": docs.ref("Metadata"),
        "ruleSet": docs.ref("RuleSet"),
        "rulesToMerge": docs.ref("RuleSet"),
        "rulesToRemove": {"type": "array", "items": _S},
    },
}


@router.post(
    "/subjects/{subject}/versions/{version}/tags",
    openapi_extra=docs.body("TagSchemaRequest"),
    responses=docs.answers(docs.ref("RegisterSchemaResponse"), 400, 404, 409, 415, 422),
)
async def modify_tags(request: Request, subject: str, version: str) -> Response:
    reg = registry_of(request)
    # Jersey binds and checks the @NotNull body before the version is parsed
    body = tag_request(await json_body(request))
    number = parse_version(version)
    result = await run_in_threadpool(tags.modify_tags, reg, subject_param(subject), number, body)
    sv = result.schema or max(
        (
            v
            for v in reg.state.versions(reg.valid_subject(subject_param(subject))).values()
            if v.id == result.id
        ),
        key=lambda v: v.version,
    )
    entity = schema_entity(sv, None, True)
    for dropped in ("subject", "ts", "deleted"):
        entity.pop(dropped, None)
    return reply(request, {"id": entity.pop("id"), **entity})
