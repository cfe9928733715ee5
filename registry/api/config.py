"""``/config`` routes: global, context and subject compatibility configuration."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import configs
from registry.api import docs
from registry.api.bodies import config_body, flag, json_body
from registry.api.deps import registry_of, subject_param
from registry.api.responses import reply

router = APIRouter(tags=["Config (v1)"])


@router.get("/config", responses=docs.answers(docs.CONFIG))
async def get_global(request: Request, defaultToGlobal: str | None = None) -> Response:
    return reply(request, configs.get_config(registry_of(request), None, flag(defaultToGlobal)))


@router.put(
    "/config",
    openapi_extra=docs.body("ConfigUpdateRequest"),
    responses=docs.answers(docs.ref("ConfigUpdateRequest"), 400, 415, 422),
)
async def put_global(request: Request) -> Response:
    body = config_body(await json_body(request))
    return reply(
        request, await run_in_threadpool(configs.put_config, registry_of(request), None, body)
    )


@router.delete("/config", responses=docs.answers(docs.CONFIG))
async def delete_global(request: Request) -> Response:
    return reply(
        request, await run_in_threadpool(configs.delete_config, registry_of(request), None)
    )


@router.get("/config/{subject}", responses=docs.answers(docs.CONFIG, 404, 422))
async def get_subject(
    request: Request, subject: str, defaultToGlobal: str | None = None
) -> Response:
    return reply(
        request,
        configs.get_config(registry_of(request), subject_param(subject), flag(defaultToGlobal)),
    )


@router.put(
    "/config/{subject}",
    openapi_extra=docs.body("ConfigUpdateRequest"),
    responses=docs.answers(docs.ref("ConfigUpdateRequest"), 400, 415, 422),
)
async def put_subject(request: Request, subject: str) -> Response:
    body = config_body(await json_body(request))
    return reply(
        request,
        await run_in_threadpool(
            configs.put_config, registry_of(request), subject_param(subject), body
        ),
    )


@router.delete("/config/{subject}", responses=docs.answers(docs.CONFIG, 404, 422))
async def delete_subject(request: Request, subject: str) -> Response:
    return reply(
        request,
        await run_in_threadpool(
            configs.delete_config, registry_of(request), subject_param(subject)
        ),
    )
