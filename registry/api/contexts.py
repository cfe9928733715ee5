"""``/contexts`` routes. The ``/contexts/{ctx}/...`` URL form is rewritten by the app's
middleware before routing (``registry.api.app.rewrite_context_path``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import configs
from registry.api import docs
from registry.api.bodies import page
from registry.api.deps import registry_of
from registry.api.responses import reply
from registry.auth import visibility

router = APIRouter(tags=["Contexts (v1)"])


@router.get("/contexts", responses=docs.answers(docs.STRINGS))
async def list_contexts(
    request: Request,
    contextPrefix: str | None = None,
    offset: str | None = None,
    limit: str | None = None,
) -> Response:
    reg = registry_of(request)
    found = visibility.contexts(request, reg, configs.list_contexts(reg, contextPrefix or ""))
    return reply(request, page(found, offset, limit))


@router.delete(
    "/contexts/{context}", status_code=204, responses=docs.answers(None, 400, 422, status=204)
)
async def delete_context(request: Request, context: str) -> Response:
    await run_in_threadpool(configs.delete_context, registry_of(request), context)
    return Response(status_code=204)
