"""An in-memory Schema Registry for unit tests: ``SchemaRegistryClient({"url": "mock://..."})``.

As confluent-kafka's ``MockSchemaRegistryClient``: registering a schema a subject already has
answers its registration; otherwise the subject gets the next version and the schema the next
id (ids count up per registry, a new id per registration, GUIDs are random UUIDs); lookups,
versions, latest (with metadata), deletes and associations answer from memory, and what is not
found raises ``SchemaRegistryError`` 404. Beyond confluent-kafka's mock: the global and
per-subject config (compatibility level, ...) and mode are kept and answered.

One registry per URL scope (as Confluent's Java ``MockSchemaRegistry``): every client built
with ``mock://orders`` sees the same registry, ``mock://other`` another one, and
:func:`drop_scope` forgets one (between tests). A bare ``mock://`` gives each client its own
registry, as confluent-kafka's mock does (tests written for it count ids from 1 per client).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable
from typing import Any, Literal

from serdes.associations import (
    Association,
    AssociationCreateOrUpdateRequest,
    AssociationInfo,
    AssociationResponse,
)
from serdes.client import SchemaRegistryClient
from serdes.client_schemes import register_scheme
from serdes.errors import SchemaRegistryError
from serdes.schema import RegisteredSchema, Schema, SchemaVersion, ServerConfig

__all__ = ["MockSchemaRegistryClient", "drop_scope", "mock_scope"]

MOCK_PREFIX = "mock://"


def mock_scope(url: str) -> str:
    """The scope of a ``mock://`` URL (the text after the scheme, without a trailing slash)."""
    return url.split(",", 1)[0].strip()[len(MOCK_PREFIX) :].rstrip("/")


def _not_found(what: str, code: int) -> SchemaRegistryError:
    return SchemaRegistryError(404, code, f"{what} not found")


class _Registry:
    """One scope's schemas, config, modes and associations (one lock)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.max_id = 0
        self.by_id: dict[int, RegisteredSchema] = {}
        self.by_guid: dict[str, RegisteredSchema] = {}
        self.subjects: dict[str, list[RegisteredSchema]] = {}
        self.config: dict[str | None, ServerConfig] = {}
        self.modes: dict[str | None, str] = {}
        self.associations: dict[str, list[Association]] = {}

    def versions(self, subject: str) -> list[RegisteredSchema]:
        return self.subjects.get(subject, [])

    def register(self, subject: str, schema: Schema) -> RegisteredSchema:
        with self.lock:
            for rs in self.versions(subject):
                if rs.schema == schema:
                    return rs
            versions = self.subjects.setdefault(subject, [])
            self.max_id += 1
            rs = RegisteredSchema(
                schema_id=self.max_id,
                guid=str(uuid.uuid4()),
                schema=schema,
                subject=subject,
                version=(versions[-1].version or 0) + 1 if versions else 1,
            )
            versions.append(rs)
            self.by_id[self.max_id] = rs
            assert rs.guid is not None
            self.by_guid[rs.guid] = rs
            return rs


_SCOPES: dict[str, _Registry] = {}
_SCOPES_LOCK = threading.Lock()


def _registry_for(scope: str) -> _Registry:
    with _SCOPES_LOCK:
        found = _SCOPES.get(scope)
        if found is None:
            found = _SCOPES[scope] = _Registry()
        return found


def drop_scope(scope: str) -> None:
    """Forget the registry of ``mock://<scope>`` (the next client starts empty)."""
    with _SCOPES_LOCK:
        _SCOPES.pop(scope, None)


def _page(items: list[Any], offset: int, limit: int) -> list[Any]:
    if offset > 0:
        items = items[offset:]
    if limit >= 0:
        items = items[:limit]
    return items


class MockSchemaRegistryClient(SchemaRegistryClient):
    """``SchemaRegistryClient`` answering from an in-memory registry (see the module doc)."""

    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        url = conf.get("url")
        self.scope = mock_scope(url) if isinstance(url, str) else ""
        self._store = _registry_for(self.scope) if self.scope else _Registry()

    # -- schemas ---------------------------------------------------------------------------

    # register_schema is SchemaRegistryClient's: it asks register_schema_full_response below.

    def register_schema_full_response(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> RegisteredSchema:
        return self._store.register(subject_name, schema)

    def get_schema(
        self,
        schema_id: int,
        subject_name: str | None = None,
        fmt: str | None = None,
        reference_format: str | None = None,
    ) -> Schema:
        return self.get_schema_full_response(schema_id, subject_name, fmt).schema

    def get_schema_full_response(
        self, schema_id: int, subject_name: str | None = None, fmt: str | None = None
    ) -> RegisteredSchema:
        rs = self._store.by_id.get(schema_id)
        if rs is None:
            raise _not_found("Schema", 40403)
        return RegisteredSchema(schema_id, rs.guid, rs.schema, subject_name, None)

    def get_schema_by_guid(self, guid: str, fmt: str | None = None) -> Schema:
        rs = self._store.by_guid.get(str(guid))
        if rs is None:
            raise _not_found("Schema", 40403)
        return rs.schema

    def get_schema_types(self) -> list[str]:
        return ["JSON", "PROTOBUF", "AVRO"]

    def get_subjects_by_schema_id(
        self,
        schema_id: int,
        subject_name: str | None = None,
        deleted: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[str]:
        return [v.subject or "" for v in self.get_schema_versions(schema_id, subject_name)][
            offset:
        ][: limit if limit >= 0 else None]

    def get_schema_versions(
        self,
        schema_id: int,
        subject_name: str | None = None,
        deleted: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[SchemaVersion]:
        rs = self._store.by_id.get(schema_id)
        if rs is None:
            raise _not_found("Schema", 40403)
        with self._store.lock:
            found = [
                SchemaVersion(s.subject, s.version)
                for versions in self._store.subjects.values()
                for s in versions
                if s.schema == rs.schema and subject_name in (None, s.subject)
            ]
        return _page(found, offset, limit)

    def lookup_schema(
        self,
        subject_name: str,
        schema: Schema,
        normalize_schemas: bool = False,
        fmt: str | None = None,
        deleted: bool = False,
    ) -> RegisteredSchema:
        with self._store.lock:
            for rs in self._store.versions(subject_name):
                if rs.schema == schema:
                    return rs
        raise _not_found("Schema", 40403)

    def get_registered_by_subject_id(self, subject: str, schema_id: int) -> RegisteredSchema | None:
        with self._store.lock:
            for rs in self._store.versions(subject):
                if rs.schema_id == schema_id:
                    return rs
        return None

    # -- subjects and versions -------------------------------------------------------------

    def get_subjects(
        self,
        subject_prefix: str | None = None,
        deleted: bool = False,
        deleted_only: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[str]:
        with self._store.lock:
            subjects = [s for s, versions in self._store.subjects.items() if versions]
        if subject_prefix is not None:
            subjects = [s for s in subjects if s.startswith(subject_prefix)]
        return _page(subjects, offset, limit)

    def delete_subject(self, subject_name: str, permanent: bool = False) -> list[int]:
        with self._store.lock:
            versions = self._store.subjects.pop(subject_name, [])
            for rs in versions:
                # As confluent-kafka's mock: the subject's schemas go with it.
                if rs.schema_id is not None:
                    self._store.by_id.pop(rs.schema_id, None)
                if rs.guid is not None:
                    self._store.by_guid.pop(rs.guid, None)
        self.clear_caches()
        return [rs.version for rs in versions if rs.version is not None]

    def _existing_versions(self, subject_name: str) -> list[RegisteredSchema]:
        """The subject's versions (the caller holds the lock); 40401 when it has none."""
        versions = self._store.versions(subject_name)
        if not versions:
            raise _not_found(f"Subject '{subject_name}'", 40401)
        return versions

    def get_latest_version(self, subject_name: str, fmt: str | None = None) -> RegisteredSchema:
        with self._store.lock:
            versions = self._existing_versions(subject_name)
            return versions[-1]

    def get_latest_with_metadata(
        self,
        subject_name: str,
        metadata: dict[str, str],
        deleted: bool = False,
        fmt: str | None = None,
    ) -> RegisteredSchema:
        wanted = dict(metadata or {})
        with self._store.lock:
            for rs in reversed(self._store.versions(subject_name)):
                meta = rs.schema.metadata
                props = getattr(meta, "properties", None) or {}
                props = getattr(props, "properties", props)  # a MetadataProperties object
                if wanted.items() <= dict(props).items():
                    return rs
        raise _not_found("Schema", 40403)

    def get_version(
        self,
        subject_name: str,
        version: int | Literal["latest"] = "latest",
        deleted: bool = False,
        fmt: str | None = None,
    ) -> RegisteredSchema:
        if version == "latest" or version == -1:
            return self.get_latest_version(subject_name)
        with self._store.lock:
            versions = self._existing_versions(subject_name)
            for rs in versions:
                if rs.version == version:
                    return rs
        raise _not_found(f"Version {version}", 40402)

    def get_versions(
        self,
        subject_name: str,
        deleted: bool = False,
        deleted_only: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[int]:
        with self._store.lock:
            found = [rs.version for rs in self._store.versions(subject_name)]
        return _page([v for v in found if v is not None], offset, limit)

    def delete_version(self, subject_name: str, version: int, permanent: bool = False) -> int:
        with self._store.lock:
            rs = self.get_version(subject_name, version)
            self._store.subjects[subject_name].remove(rs)
        self.clear_caches()
        assert rs.version is not None
        return rs.version

    def get_referenced_by(
        self,
        subject_name: str,
        version: int | Literal["latest"] = "latest",
        offset: int = 0,
        limit: int = -1,
    ) -> list[int]:
        target = self.get_version(subject_name, version)
        with self._store.lock:
            found = sorted(
                rs.schema_id
                for versions in self._store.subjects.values()
                for rs in versions
                if rs.schema_id is not None
                and any(
                    getattr(ref, "subject", None) == target.subject
                    and getattr(ref, "version", None) == target.version
                    for ref in rs.schema.references or ()
                )
            )
        return _page(found, offset, limit)

    # -- config and mode -------------------------------------------------------------------

    def set_compatibility(self, subject_name: str | None = None, level: str | None = None) -> Any:
        if level is None:
            raise ValueError("level must be set")
        level = str(getattr(level, "value", level)).upper()
        with self._store.lock:
            current = self._store.config.get(subject_name) or ServerConfig()
            doc = {**current.to_dict(), "compatibilityLevel": level}
            doc.pop("compatibility", None)
            self._store.config[subject_name] = ServerConfig.from_dict(doc)
        return {"compatibility": level}

    def get_compatibility(self, subject_name: str | None = None) -> str:
        config = self.get_config(subject_name)
        level = config.compatibility_level or config.compatibility
        return str(getattr(level, "value", level) or "BACKWARD")

    def set_config(
        self, subject_name: str | None = None, config: ServerConfig | None = None
    ) -> ServerConfig:
        if config is None:
            raise ValueError("config must be set")
        with self._store.lock:
            self._store.config[subject_name] = config
        return config

    def get_config(self, subject_name: str | None = None) -> ServerConfig:
        with self._store.lock:
            found = self._store.config.get(subject_name)
            if found is None and subject_name is not None:
                found = self._store.config.get(None)
        return found or ServerConfig.from_dict({"compatibilityLevel": "BACKWARD"})

    def delete_config(self, subject_name: str | None = None) -> ServerConfig:
        with self._store.lock:
            found = self._store.config.pop(subject_name, None)
        if found is None:
            raise _not_found(f"Subject '{subject_name}'", 40401)
        return found

    def get_mode(self, subject_name: str) -> str:
        with self._store.lock:
            return self._store.modes.get(subject_name) or self._store.modes.get(None, "READWRITE")

    def update_mode(self, subject_name: str, mode: str, force: bool = False) -> str:
        with self._store.lock:
            self._store.modes[subject_name] = mode
        return mode

    def delete_mode(self, subject_name: str) -> str:
        with self._store.lock:
            return self._store.modes.pop(subject_name, None) or "READWRITE"

    def get_global_mode(self) -> str:
        with self._store.lock:
            return self._store.modes.get(None, "READWRITE")

    def update_global_mode(self, mode: str, force: bool = False) -> str:
        with self._store.lock:
            self._store.modes[None] = mode
        return mode

    def get_contexts(self, offset: int = 0, limit: int = -1) -> list[str]:
        return ["."]

    def test_compatibility(self, *args: Any, **kwargs: Any) -> bool:
        raise NotImplementedError(
            "the mock:// registry does not check compatibility (as confluent-kafka's mock); "
            "test against a running registry"
        )

    def test_compatibility_all_versions(self, *args: Any, **kwargs: Any) -> bool:
        return self.test_compatibility(*args, **kwargs)

    # -- associations ----------------------------------------------------------------------

    def create_association(self, request: AssociationCreateOrUpdateRequest) -> AssociationResponse:
        created: list[AssociationInfo] = []
        with self._store.lock:
            if request.associations and request.resource_id is not None:
                bucket = self._store.associations.setdefault(request.resource_id, [])
                for info in request.associations:
                    frozen = bool(info.frozen)
                    bucket.append(
                        Association(
                            subject=info.subject,
                            guid=None,
                            resource_name=request.resource_name,
                            resource_namespace=request.resource_namespace,
                            resource_id=request.resource_id,
                            resource_type=request.resource_type,
                            association_type=info.association_type,
                            frozen=frozen,
                        )
                    )
                    created.append(
                        AssociationInfo(
                            subject=info.subject,
                            association_type=info.association_type,
                            lifecycle=info.lifecycle,
                            frozen=frozen,
                            schema=info.schema,
                        )
                    )
        return AssociationResponse(
            resource_name=request.resource_name,
            resource_namespace=request.resource_namespace,
            resource_id=request.resource_id,
            resource_type=request.resource_type,
            associations=created,
        )

    def delete_associations(
        self,
        resource_id: str,
        resource_type: str | None = None,
        association_types: Iterable[str] | None = None,
        cascade_lifecycle: bool = False,
    ) -> None:
        kinds = list(association_types) if association_types is not None else None
        with self._store.lock:
            if resource_id not in self._store.associations:
                return
            if kinds is None and resource_type is None:
                del self._store.associations[resource_id]
                return
            self._store.associations[resource_id] = [
                a
                for a in self._store.associations[resource_id]
                if (resource_type is not None and a.resource_type != resource_type)
                or (kinds is not None and a.association_type not in kinds)
            ]

    def get_associations_by_resource_name(
        self,
        resource_name: str,
        resource_namespace: str,
        resource_type: str | None = None,
        association_types: Iterable[str] | None = None,
        offset: int = 0,
        limit: int = -1,
    ) -> list[Association]:
        kinds = list(association_types) if association_types is not None else None
        with self._store.lock:
            found = [
                a
                for bucket in self._store.associations.values()
                for a in bucket
                if (resource_namespace == "-" or a.resource_namespace == resource_namespace)
                and a.resource_name == resource_name
                and (resource_type is None or a.resource_type == resource_type)
                and (kinds is None or a.association_type in kinds)
            ]
        return _page(found, offset, limit)


register_scheme(SchemaRegistryClient, "mock", MockSchemaRegistryClient)
