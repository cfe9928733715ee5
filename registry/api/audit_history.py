"""``GET /audit/subjects/{subject}``: a subject's history of changes from the audit file
(``registry.audit.reader``), newest first, for the web UI. Read-only; authenticated like every
other route, and needs read rights on the subject (``registry.auth.middleware.need_of``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from registry import errors
from registry.api import docs
from registry.api.deps import registry_of, subject_param
from registry.api.responses import reply
from registry.audit.reader import subject_history
from registry.subjects import parse_subject

router = APIRouter(tags=["Audit"])

#: most events answered
MAX_LIMIT = 1000


@router.get(
    "/audit/subjects/{subject}",
    responses=docs.answers({"type": "array", "items": {"type": "object"}}, 400, 404),
)
async def history(request: Request, subject: str, limit: int = 200) -> Response:
    path = registry_of(request).settings.audit_file
    if not path:
        raise errors.RegistryError(
            404, "No audit file is configured (SCHEMA_REGISTRY_AUDIT_FILE)", 404
        )
    qualified = parse_subject(subject_param(subject)).qualified
    limit = max(1, min(limit, MAX_LIMIT))
    events = await run_in_threadpool(subject_history, path, qualified, limit)
    return reply(request, events)
