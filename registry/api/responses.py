"""Response shapes and the JSON response class.

Every request gets the fields Confluent 8.0 added to its entities (``guid``, ``schemaType``
even for Avro, ``ts``, ``deleted``), as self-managed Confluent Platform 8.x answers them: its
``Schema`` and ``SchemaString`` entities carry them whatever the request's headers
(``SchemaValue.toSchemaEntity``, ``KafkaSchemaRegistry.get``). With the setting
``v8_fields_by_header`` they go only to a request carrying
``Confluent-Accept-Unknown-Properties: true`` (Confluent's clients send it on requests with a
body) or ``Confluent-Client-Version`` (sent on the others), as Confluent Cloud does; other
callers then keep Confluent 7.x's shapes.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response

from registry.identity import guid_of
from registry.state import SchemaVersion

PREFERRED = "application/vnd.schemaregistry.v1+json"
PRODUCED = (
    (PREFERRED, 1.0),
    ("application/vnd.schemaregistry+json", 0.9),
    ("application/json", 0.5),
)


def negotiate(accept: str | None) -> str | None:
    """The response media type for an ``Accept`` header, or None if nothing acceptable."""
    if not accept or not accept.strip():
        return PREFERRED
    best: tuple[float, str] | None = None
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        media = pieces[0].lower()
        if media == "*" or media.startswith("*/"):
            # Jersey reads a bare "*" as "*/*", and a wildcard type matches any subtype
            media = "*/*"
        q = 1.0
        for param in pieces[1:]:
            if param.startswith("q="):
                try:
                    q = float(param[2:])
                except ValueError:
                    q = 0.0
        if q <= 0:
            continue
        for produced, weight in PRODUCED:
            if media in (produced, "*/*", "application/*"):
                score = q * weight
                if best is None or score > best[0]:
                    best = (score, produced)
    return best[1] if best else None


class SRResponse(Response):
    """JSON rendered with orjson; media type from content negotiation."""

    media_type = PREFERRED

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def reply(request: Request, content: Any, status_code: int = 200) -> Response:
    media = getattr(request.state, "media_type", PREFERRED)
    return SRResponse(content, status_code=status_code, media_type=media)


def raw_text(request: Request, text: str) -> Response:
    """The ``.../schema`` endpoints: the schema text itself as the body."""
    media = getattr(request.state, "media_type", PREFERRED)
    return Response(text.encode(), media_type=media)


ACCEPT_UNKNOWN = "confluent-accept-unknown-properties"


CLIENT_VERSION = "confluent-client-version"


def wants_v8(request: Request) -> bool:
    """Whether to answer the fields Confluent 8.0 added to its entities: always, unless the
    setting ``v8_fields_by_header`` asks for Confluent Cloud's gating on the client's headers."""
    if not request.app.state.registry.settings.v8_fields_by_header:
        return True
    headers = request.headers
    return headers.get(ACCEPT_UNKNOWN, "").strip().lower() == "true" or CLIENT_VERSION in headers


def schema_entity(sv: SchemaVersion, text: str | None = None, v8: bool = False) -> dict[str, Any]:
    """``Schema``: subject, version, id, schemaType (omitted for AVRO before 8.0), references,
    metadata, ruleSet, schema; empty fields omitted; ``v8`` adds guid, ts and deleted."""
    out: dict[str, Any] = {"subject": sv.subject, "version": sv.version, "id": sv.id}
    if v8:
        out["guid"] = guid_of(sv.digest)
    if sv.schema_type != "AVRO" or v8:
        out["schemaType"] = sv.schema_type
    if sv.references:
        out["references"] = sv.references
    # an empty metadata or rule set given at registration is echoed as ``{}``, as 8.x does
    if sv.metadata is not None:
        out["metadata"] = _non_empty(sv.metadata)
    if sv.rule_set is not None:
        out["ruleSet"] = _non_empty(sv.rule_set)
    out["schema"] = sv.schema if text is None else text
    if v8:
        out.update(_v8_trailer(sv))
    return out


def _non_empty(value: dict[str, Any]) -> dict[str, Any]:
    """Jackson's ``NON_EMPTY`` on ``Metadata`` and ``RuleSet``: empty fields are left out."""
    return {k: v for k, v in value.items() if v or v is False or v == 0}


def _v8_trailer(sv: SchemaVersion) -> dict[str, Any]:
    return {"ts": sv.ts, "deleted": sv.deleted}


def schema_string(sv: SchemaVersion, text: str | None = None, v8: bool = False) -> dict[str, Any]:
    """``SchemaString`` for ``/schemas/ids/{id}`` and ``/schemas/guids/{guid}``; ``v8`` adds
    guid, schemaType for Avro, ts and deleted."""
    out: dict[str, Any] = {"guid": guid_of(sv.digest)} if v8 else {}
    if sv.schema_type != "AVRO" or v8:
        out["schemaType"] = sv.schema_type
    out["schema"] = sv.schema if text is None else text
    if sv.references:
        out["references"] = sv.references
    # an empty metadata or rule set given at registration is echoed as ``{}``, as 8.x does
    if sv.metadata is not None:
        out["metadata"] = _non_empty(sv.metadata)
    if sv.rule_set is not None:
        out["ruleSet"] = _non_empty(sv.rule_set)
    if v8:
        out.update(_v8_trailer(sv))
    return out


def guid(sv: SchemaVersion) -> str:
    return guid_of(sv.digest)
