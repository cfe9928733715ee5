"""Server-level routes: ``/``, ``/v1/metadata/*``, and the 404 for ``/associations``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from registry import __version__
from registry.api import docs
from registry.api.bodies import json_body, string_map
from registry.api.deps import registry_of
from registry.api.responses import reply

router = APIRouter(tags=["Server (v1)"])


@router.get("/", responses=docs.answers({"type": "object"}))
async def root_get(request: Request) -> Response:
    return reply(request, {})


@router.post("/", responses=docs.answers({"type": "object"}), openapi_extra=docs.READ_ONLY)
async def root_post(request: Request) -> Response:
    # Confluent's no-op takes a ``Map<String, String>``: a body must still be such JSON (400)
    if (await request.body()).strip():
        body = await json_body(request)
        if body is not None:
            string_map(body)
    return reply(request, {})


@router.get("/v1/metadata/id", responses=docs.answers(docs.ref("ServerClusterId")))
async def cluster_id(request: Request) -> Response:
    reg = registry_of(request)
    clusters = {
        "kafka-cluster": reg.store.cluster_id(),
        "schema-registry-cluster": reg.settings.group_id,
    }
    return reply(request, {"scope": {"path": [], "clusters": clusters}})


@router.get("/v1/metadata/version", responses=docs.answers(docs.ref("ServerVersion")))
async def server_version(request: Request) -> Response:
    return reply(request, {"version": __version__, "commitId": "unknown"})
