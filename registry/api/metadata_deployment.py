"""``GET /v1/metadata/deployment`` (Confluent 8.x ``ServerMetadataResource``): the
deployment's attributes, ``{"attributes": [...]}``.

Confluent reads them from ``schema.registry.metadata.deployment.attributes`` among the
registry's runtime properties, which only Confluent's own extensions set, so Confluent Platform
answers ``{"attributes": []}``; here the ``deployment_attributes`` setting (comma-separated,
each trimmed as Confluent trims them) gives the list.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from registry.api import docs
from registry.api.deps import registry_of
from registry.api.responses import reply

router = APIRouter(tags=["Server (v1)"])

docs.COMPONENTS["SchemaRegistryDeployment"] = {
    "type": "object",
    "properties": {"attributes": docs.array_of({"type": "string"})},
}


def attributes(setting: str) -> list[str]:
    """The configured attributes: comma-separated, each trimmed, empty ones dropped."""
    return [a.strip() for a in setting.split(",") if a.strip()]


@router.get(
    "/v1/metadata/deployment",
    responses=docs.answers(docs.ref("SchemaRegistryDeployment")),
)
async def deployment(request: Request) -> Response:
    setting = registry_of(request).settings.deployment_attributes
    return reply(request, {"attributes": attributes(setting)})
