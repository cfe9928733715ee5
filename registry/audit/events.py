"""The audit event: a CloudEvents 1.0 document (structured JSON mode) with Confluent's audit
log field names where they fit (``methodName``, ``resourceName``, ``authenticationInfo``,
``authorizationInfo``, ``requestMetadata``, ``result``). Pure functions: the middleware gathers
what happened (:class:`Happened`), :func:`build_event` shapes it.

An event never holds a schema text, a password or token, nor KEK or DEK material: it is built
only from the request line and headers named here, the route, the error answer's code and
message (with any schema text cut out, :func:`scrub_message`) and the write path's note
(:mod:`registry.audit.changes`).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Any

from registry.audit.changes import ChangeNote
from registry.subjects import DEFAULT_CONTEXT, parse_subject

SPEC_VERSION = "1.0"
#: CloudEvents ``type`` of a change or a failed attempt at one, as Confluent's Schema Registry
#: management events
TYPE_REQUEST = "io.confluent.sg.server/request"
#: a request refused because its credentials were missing or wrong (401, 429 locked out)
TYPE_AUTHENTICATION = "io.confluent.sg.server/authentication"
#: a request refused by the rules (403)
TYPE_AUTHORIZATION = "io.confluent.sg.server/authorization"
METHOD_PREFIX = "schema-registry."
#: longest error message kept in an event
MAX_MESSAGE = 300

SUCCESS, FAILURE, DENIED = "success", "failure", "denied"


@dataclass
class Happened:
    """What the middleware saw of one request."""

    method: str
    path: str
    request_id: str | None
    client_address: str | None
    user_agent: str | None
    principal: str | None
    auth_method: str
    #: ``module.function`` of the route's handler; None when no route matched
    operation: str | None
    #: the route's path parameters (``subject``, ``version``, ``name``, ...)
    params: dict[str, Any]
    status: int
    error_code: int | None
    message: str | None
    #: refused by authentication or authorisation
    refused: bool
    change: ChangeNote | None


def build_event(h: Happened, source: str) -> dict[str, Any]:
    """The event of ``h``, from the registry named ``source`` (a URI reference)."""
    subject, context = _subject_and_context(h)
    note = h.change
    version = note.version if note is not None and note.version is not None else None
    if version is None:
        version = _version(h.params.get("version"))
    outcome = DENIED if h.refused else SUCCESS if h.status < 400 else FAILURE
    if h.status in (401, 429) and h.refused:
        kind = TYPE_AUTHENTICATION
    elif h.refused:
        kind = TYPE_AUTHORIZATION
    else:
        kind = TYPE_REQUEST
    resource = _resource(h, subject)
    method_name = METHOD_PREFIX + (h.operation or "unmatched")
    return {
        "specversion": SPEC_VERSION,
        "id": _uuid4(),
        "source": source,
        "type": kind,
        "datacontenttype": "application/json",
        "subject": resource,
        "time": _now(),
        "data": {
            "serviceName": source,
            "methodName": method_name,
            "resourceName": resource,
            "authenticationInfo": {
                "principal": h.principal or "anonymous",
                "method": h.auth_method,
            },
            "authorizationInfo": {"granted": not h.refused},
            "requestMetadata": {
                "requestId": h.request_id,
                "clientAddress": h.client_address,
                "userAgent": h.user_agent,
            },
            "request": {
                "method": h.method,
                "path": h.path,
                "subject": subject,
                "context": context,
                "version": version,
                "schemaId": note.schema_id if note is not None else None,
                "schemaType": note.schema_type if note is not None else None,
            },
            "result": {
                "outcome": outcome,
                "status": h.status,
                "errorCode": h.error_code if h.status >= 400 else None,
                "message": scrub_message(h.message) if h.status >= 400 else None,
            },
            "state": _state(note),
        },
    }


def _state(note: ChangeNote | None) -> dict[str, Any]:
    hashes = note.state() if note is not None else None
    if hashes is None:
        return {"changed": False, "records": [], "before": None, "after": None}
    assert note is not None
    return {"changed": True, "records": list(note.keytypes), **hashes}


def _subject_and_context(h: Happened) -> tuple[str | None, str | None]:
    raw = None
    if h.change is not None and h.change.subject:
        raw = h.change.subject
    elif isinstance(h.params.get("subject"), str):
        raw = h.params["subject"]
    elif isinstance(h.params.get("context"), str):
        return None, h.params["context"].strip(":").lstrip(".") or DEFAULT_CONTEXT
    if not raw:
        return None, None
    qs = parse_subject(raw)
    return (qs.qualified if qs.name else None), (qs.context or DEFAULT_CONTEXT)


def _resource(h: Happened, subject: str | None) -> str:
    """Confluent's resource name form: ``subject=NAME``, ``kek=NAME``, else the path."""
    name = h.params.get("name")
    if isinstance(name, str) and h.path.startswith("/dek-registry/"):
        kek = f"kek={name}"
        return f"{kek}/subject={subject}" if subject else kek
    if subject:
        return f"subject={subject}"
    return h.path


def _version(raw: Any) -> int | str | None:
    if raw is None:
        return None
    text = str(raw)
    return int(text) if text.lstrip("-").isdigit() and len(text) < 11 else text


_SCHEMA_IN_MESSAGE = re.compile(r"schema=.*?(?=,schemaTags=|$)", re.DOTALL)


def scrub_message(message: str | None) -> str | None:
    """An error message without schema text (Confluent's invalid-schema messages print the
    request, text included), at most :data:`MAX_MESSAGE` characters."""
    if message is None:
        return None
    text = _SCHEMA_IN_MESSAGE.sub("schema=<omitted>", message)
    if len(text) > MAX_MESSAGE:
        text = text[: MAX_MESSAGE - 3] + "..."
    return text


def _now() -> str:
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def _uuid4() -> str:
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"
