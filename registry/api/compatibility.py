"""``/compatibility`` routes: test a schema against one version or against the subject."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import compat_checks
from registry.api import docs
from registry.api.bodies import flag, json_body, schema_request
from registry.api.deps import registry_of, subject_param
from registry.api.responses import reply
from registry.core import parse_version

router = APIRouter(tags=["Compatibility (v1)"])


@router.post(
    "/compatibility/subjects/{subject}/versions/{version}",
    openapi_extra={**docs.body("RegisterSchemaRequest"), **docs.READ_ONLY},
    responses=docs.answers(docs.ref("CompatibilityCheckResponse"), 400, 404, 415, 422),
)
async def against_version(
    request: Request,
    subject: str,
    version: str,
    normalize: str | None = None,
    verbose: str | None = None,
) -> Response:
    number = parse_version(version)
    return await _check(request, subject, number, normalize, verbose)


@router.post(
    "/compatibility/subjects/{subject}/versions",
    openapi_extra={**docs.body("RegisterSchemaRequest"), **docs.READ_ONLY},
    responses=docs.answers(docs.ref("CompatibilityCheckResponse"), 400, 415, 422),
)
async def against_subject(
    request: Request, subject: str, normalize: str | None = None, verbose: str | None = None
) -> Response:
    return await _check(request, subject, None, normalize, verbose)


async def _check(
    request: Request,
    subject: str,
    version: int | None,
    normalize: str | None,
    verbose: str | None,
) -> Response:
    req = schema_request(await json_body(request))
    ok, messages = await run_in_threadpool(
        compat_checks.test_compatibility,
        registry_of(request),
        subject_param(subject),
        version,
        req,
        normalize=flag(normalize),
        verbose=flag(verbose),
    )
    body: dict[str, object] = {"is_compatible": ok}
    if flag(verbose):
        body["messages"] = messages
    return reply(request, body)
