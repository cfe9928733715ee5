"""The ``/associations`` API's documents: which subjects a resource (a Kafka topic) uses.

Same classes, fields and JSON names as confluent-kafka's (``Association``,
``AssociationInfo``, ``AssociationCreateOrUpdateInfo``, ``AssociationCreateOrUpdateRequest``,
``AssociationResponse``); the client methods that send them are
``SchemaRegistryClient.create_association``, ``delete_associations`` and
``get_associations_by_resource_name``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from serdes.schema import Schema

__all__ = [
    "Association",
    "AssociationCreateOrUpdateInfo",
    "AssociationCreateOrUpdateRequest",
    "AssociationInfo",
    "AssociationResponse",
]


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


# The resource's four fields: (attribute, JSON name), shared by every document that names one.
_RESOURCE_FIELDS = (
    ("resource_name", "resourceName"),
    ("resource_namespace", "resourceNamespace"),
    ("resource_id", "resourceId"),
    ("resource_type", "resourceType"),
)


def _put_resource(out: dict[str, Any], doc: Any) -> None:
    for attr, key in _RESOURCE_FIELDS:
        _put(out, key, getattr(doc, attr))


def _resource_args(src: dict[str, Any]) -> dict[str, Any]:
    return {attr: src.get(key) for attr, key in _RESOURCE_FIELDS}


def _resource_doc(doc: Any) -> dict[str, Any]:
    """A request's or response's JSON: the resource's fields, then its associations."""
    out: dict[str, Any] = {}
    _put_resource(out, doc)
    if doc.associations is not None:
        out["associations"] = [a.to_dict() for a in doc.associations]
    return out


def _put_info(out: dict[str, Any], doc: Any) -> None:
    """An association's own fields (subject, type, lifecycle), as both info documents write them."""
    _put(out, "subject", doc.subject)
    _put(out, "associationType", doc.association_type)
    _put(out, "lifecycle", doc.lifecycle)


def _info_args(src: dict[str, Any]) -> dict[str, Any]:
    schema = src.get("schema")
    return {
        "subject": src.get("subject"),
        "association_type": src.get("associationType"),
        "lifecycle": src.get("lifecycle"),
        "schema": Schema.from_dict(schema) if schema else None,
    }


@dataclass(frozen=True)
class Association:
    """A subject associated with a resource (a topic), as ``/associations`` answers."""

    subject: str | None
    guid: str | None
    resource_name: str | None
    resource_namespace: str | None
    resource_id: str | None
    resource_type: str | None
    association_type: str | None
    frozen: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        _put(out, "subject", self.subject)
        _put(out, "guid", self.guid)
        _put_resource(out, self)
        _put(out, "associationType", self.association_type)
        out["frozen"] = self.frozen
        return out

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> Association:
        return cls(
            subject=src.get("subject"),
            guid=src.get("guid"),
            **_resource_args(src),
            association_type=src.get("associationType"),
            frozen=bool(src.get("frozen", False)),
        )


@dataclass
class AssociationInfo:
    """One association in an ``AssociationResponse``."""

    subject: str | None = None
    association_type: str | None = None
    lifecycle: str | None = None
    frozen: bool = False
    schema: Schema | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        _put_info(out, self)
        out["frozen"] = self.frozen
        if self.schema is not None:
            out["schema"] = self.schema.to_dict()
        return out

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> AssociationInfo:
        return cls(**_info_args(src), frozen=bool(src.get("frozen", False)))


@dataclass
class AssociationCreateOrUpdateInfo:
    """One association to create or update (subject, type, lifecycle, optional schema)."""

    subject: str | None = None
    association_type: str | None = None
    lifecycle: str | None = None
    frozen: bool | None = None
    schema: Schema | None = None
    normalize: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        _put_info(out, self)
        _put(out, "frozen", self.frozen)
        if self.schema is not None:
            out["schema"] = self.schema.to_dict()
        _put(out, "normalize", self.normalize)
        return out

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> AssociationCreateOrUpdateInfo:
        return cls(**_info_args(src), frozen=src.get("frozen"), normalize=src.get("normalize"))


@dataclass
class AssociationCreateOrUpdateRequest:
    """The body of ``POST /associations``: a resource and the associations to give it."""

    resource_name: str | None = None
    resource_namespace: str | None = None
    resource_id: str | None = None
    resource_type: str | None = None
    associations: list[AssociationCreateOrUpdateInfo] | None = None

    def to_dict(self) -> dict[str, Any]:
        return _resource_doc(self)

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> AssociationCreateOrUpdateRequest:
        found = src.get("associations")
        return cls(
            **_resource_args(src),
            associations=[AssociationCreateOrUpdateInfo.from_dict(a) for a in found]
            if found
            else None,
        )


@dataclass
class AssociationResponse:
    """The answer to ``POST /associations``: the resource and the associations it now has."""

    resource_name: str | None = None
    resource_namespace: str | None = None
    resource_id: str | None = None
    resource_type: str | None = None
    associations: list[AssociationInfo] | None = None

    def to_dict(self) -> dict[str, Any]:
        return _resource_doc(self)

    @classmethod
    def from_dict(cls, src: dict[str, Any]) -> AssociationResponse:
        found = src.get("associations")
        return cls(
            **_resource_args(src),
            associations=[AssociationInfo.from_dict(a) for a in found] if found else None,
        )


def association_query(
    resource_type: str | None, association_types: Iterable[str] | None
) -> list[tuple[str, Any]]:
    """The ``resourceType`` / repeated ``associationType`` query of the association calls."""
    query: list[tuple[str, Any]] = []
    if resource_type is not None:
        query.append(("resourceType", resource_type))
    for kind in association_types or ():
        query.append(("associationType", kind))
    return query
