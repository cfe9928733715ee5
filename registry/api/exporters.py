"""``/exporters`` routes (Confluent's ``SchemaExporterResource``): thin wrappers over
``registry.exporters.service``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import errors
from registry.api import docs
from registry.api.bodies import json_body
from registry.api.deps import decoded, registry_of
from registry.api.responses import reply
from registry.exporters import service

router = APIRouter(prefix="/exporters", tags=["Exporters (v1)"])

_STR = {"type": "string"}
_CONFIG = {"type": "object", "additionalProperties": _STR}
docs.COMPONENTS.update(
    {
        "ExporterRequest": {
            "type": "object",
            "properties": {
                "name": _STR,
                "contextType": {"type": "string", "enum": ["AUTO", "CUSTOM", "NONE"]},
                "context": _STR,
                "subjects": {"type": "array", "items": _STR},
                "subjectRenameFormat": _STR,
                "config": _CONFIG,
            },
        },
        "ExporterReference": {"type": "object", "properties": {"name": _STR}},
        "ExporterStatus": {
            "type": "object",
            "properties": {
                "name": _STR,
                "state": {"type": "string", "enum": ["STARTING", "RUNNING", "PAUSED", "ERROR"]},
                "offset": {"type": "integer", "format": "int64"},
                "ts": {"type": "integer", "format": "int64"},
                "trace": _STR,
            },
        },
        "ExporterConfig": _CONFIG,
    }
)
NAME = docs.ref("ExporterReference")
ACTION = docs.answers(NAME, 404, 409)


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.RegistryError(400, "The request body must be a JSON object")
    return body


@router.get("", responses=docs.answers(docs.STRINGS))
async def list_exporters(request: Request) -> Response:
    return reply(request, service.list_exporters(registry_of(request)))


@router.post(
    "", openapi_extra=docs.body("ExporterRequest"), responses=docs.answers(NAME, 400, 409, 415, 422)
)
async def create(request: Request) -> Response:
    body = _object(await json_body(request))
    return reply(request, await run_in_threadpool(service.create, registry_of(request), body))


@router.get("/{name}", responses=docs.answers(docs.ref("ExporterRequest"), 404))
async def describe(request: Request, name: str) -> Response:
    return reply(request, service.describe(registry_of(request), decoded(name)))


@router.put(
    "/{name}",
    openapi_extra=docs.body("ExporterRequest"),
    responses=docs.answers(NAME, 400, 404, 409, 415, 422),
)
async def update(request: Request, name: str) -> Response:
    body = _object(await json_body(request))
    reg = registry_of(request)
    return reply(request, await run_in_threadpool(service.update, reg, decoded(name), body))


@router.delete("/{name}", status_code=204, responses=docs.answers(None, 404, status=204))
async def delete(request: Request, name: str) -> Response:
    await run_in_threadpool(service.delete, registry_of(request), decoded(name))
    return Response(status_code=204)


@router.get("/{name}/config", responses=docs.answers(docs.ref("ExporterConfig"), 404))
async def get_config(request: Request, name: str) -> Response:
    return reply(request, service.get_config(registry_of(request), decoded(name)))


@router.put(
    "/{name}/config",
    openapi_extra=docs.body("ExporterConfig"),
    responses=docs.answers(NAME, 400, 404, 409, 415, 422),
)
async def update_config(request: Request, name: str) -> Response:
    body = await json_body(request)
    reg = registry_of(request)
    return reply(request, await run_in_threadpool(service.update_config, reg, decoded(name), body))


@router.get("/{name}/status", responses=docs.answers(docs.ref("ExporterStatus"), 404))
async def status(request: Request, name: str) -> Response:
    return reply(request, service.status(registry_of(request), decoded(name)))


@router.put("/{name}/pause", responses=ACTION)
async def pause(request: Request, name: str) -> Response:
    return reply(
        request, await run_in_threadpool(service.pause, registry_of(request), decoded(name))
    )


@router.put("/{name}/resume", responses=ACTION)
async def resume(request: Request, name: str) -> Response:
    reg = registry_of(request)
    return reply(request, await run_in_threadpool(service.resume, reg, decoded(name)))


@router.put("/{name}/reset", responses=ACTION)
async def reset(request: Request, name: str) -> Response:
    return reply(
        request, await run_in_threadpool(service.reset, registry_of(request), decoded(name))
    )
