"""``/mode`` routes: READWRITE, READONLY, READONLY_OVERRIDE, IMPORT."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import configs
from registry.api import docs
from registry.api.bodies import flag, json_body, mode_body
from registry.api.deps import registry_of, subject_param
from registry.api.responses import reply

router = APIRouter(tags=["Modes (v1)"])


@router.get("/mode", responses=docs.answers(docs.MODE))
async def get_global(request: Request, defaultToGlobal: str | None = None) -> Response:
    mode = configs.get_mode(registry_of(request), None, flag(defaultToGlobal))
    return reply(request, {"mode": mode})


@router.put(
    "/mode",
    openapi_extra=docs.body("ModeUpdateRequest"),
    responses=docs.answers(docs.MODE, 400, 415, 422),
)
async def put_global(request: Request, force: str | None = None) -> Response:
    value = mode_body(await json_body(request))
    await run_in_threadpool(configs.put_mode, registry_of(request), None, value, flag(force))
    return reply(request, {"mode": value})  # Confluent echoes the request


@router.delete("/mode", responses=docs.answers(docs.MODE, 422))
async def delete_global(request: Request) -> Response:
    mode = await run_in_threadpool(configs.delete_mode, registry_of(request), None)
    return reply(request, {"mode": mode})


@router.get("/mode/{subject}", responses=docs.answers(docs.MODE, 404, 422))
async def get_subject(
    request: Request, subject: str, defaultToGlobal: str | None = None
) -> Response:
    mode = configs.get_mode(registry_of(request), subject_param(subject), flag(defaultToGlobal))
    return reply(request, {"mode": mode})


@router.put(
    "/mode/{subject}",
    openapi_extra=docs.body("ModeUpdateRequest"),
    responses=docs.answers(docs.MODE, 400, 415, 422),
)
async def put_subject(request: Request, subject: str, force: str | None = None) -> Response:
    value = mode_body(await json_body(request))
    await run_in_threadpool(
        configs.put_mode, registry_of(request), subject_param(subject), value, flag(force)
    )
    return reply(request, {"mode": value})  # Confluent echoes the request


@router.delete("/mode/{subject}", responses=docs.answers(docs.MODE, 404, 422))
async def delete_subject(request: Request, subject: str) -> Response:
    mode = await run_in_threadpool(
        configs.delete_mode, registry_of(request), subject_param(subject)
    )
    return reply(request, {"mode": mode})
