"""A Schema Registry REST client with confluent-kafka's configuration keys and method names.

Transport (``serdes.transport``): urllib3 connection pools (measured ~1.3-1.6x the request rate
of httpx against our server on loopback; the REST calls are off the hot path anyway), failover
across URLs, retries with backoff, auth and TLS.

Caches (thread-safe: one lock for writes, lock-free dict reads):
- id -> schema, GUID -> schema, (subject, schema) -> registered id, (subject, version) -> schema:
  unbounded, like confluent-kafka's (ids and versions are immutable);
- latest version and latest-with-metadata: ``cache.capacity`` entries (LRU), and
  ``cache.latest.ttl.sec`` when set.
Steady-state serializing and deserializing therefore makes no HTTP call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any, Literal

from serdes._bearer import normalize_identity_pool
from serdes.associations import (
    Association,
    AssociationCreateOrUpdateInfo,
    AssociationCreateOrUpdateRequest,
    AssociationInfo,
    AssociationResponse,
    association_query,
)
from serdes.bounded_cache import BoundedCache
from serdes.client_schemes import client_class
from serdes.schema import (
    ConfigCompatibilityLevel,
    Metadata,
    RegisteredSchema,
    RuleSet,
    Schema,
    SchemaReference,
    SchemaVersion,
    ServerConfig,
)
from serdes.transport import Transport, bool_param, quote_segment

__all__ = [
    "Association",
    "AssociationCreateOrUpdateInfo",
    "AssociationCreateOrUpdateRequest",
    "AssociationInfo",
    "AssociationResponse",
    "ConfigCompatibilityLevel",
    "Metadata",
    "RegisteredSchema",
    "RuleSet",
    "Schema",
    "SchemaReference",
    "SchemaRegistryClient",
    "SchemaVersion",
    "ServerConfig",
    "normalize_identity_pool",
]


def _body(schema: Any) -> dict[str, Any]:
    """The request body for a schema: ours or confluent-kafka's ``Schema`` (both ``to_dict``)."""
    out = schema.to_dict()
    out.setdefault("references", [])
    return out


def _as_schema(schema: Any) -> Schema:
    return schema if isinstance(schema, Schema) else Schema.from_dict(_body(schema))


class SchemaRegistryClient:
    """A Confluent Schema Registry client (configuration keys as confluent-kafka's).

    ``url`` (comma-separated list, tried in order), ``basic.auth.user.info`` (or userinfo in the
    URL), ``bearer.auth.credentials.source`` (STATIC_TOKEN with ``bearer.auth.token``,
    ``bearer.auth.logical.cluster``, ``bearer.auth.identity.pool.id``; OAUTHBEARER with
    ``bearer.auth.client.id/client.secret/scope/issuer.endpoint.url``; CUSTOM with
    ``bearer.auth.custom.provider.function/config``), ``ssl.ca.location`` (file, directory, or
    False to skip verification), ``ssl.certificate.location``, ``ssl.key.location``,
    ``ssl.key.password``, ``proxy``, ``timeout`` (seconds), ``max.retries`` (3),
    ``retries.wait.ms`` (1000), ``retries.max.wait.ms`` (20000), ``cache.capacity`` (1000),
    ``cache.latest.ttl.sec``. Unknown keys raise ``ValueError``.
    """

    def __new__(cls, conf: dict[str, Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        # ``mock://`` URLs give the in-memory registry (serdes.mock_client registers itself)
        if cls is SchemaRegistryClient:
            return super().__new__(client_class(cls, conf))
        return super().__new__(cls)

    def __init__(self, conf: dict[str, Any]) -> None:
        self._conf = conf
        rest = dict(conf)
        self._rest = Transport(rest)
        if rest:
            raise ValueError(f"Unrecognized properties: {', '.join(rest)}")
        self._lock = threading.Lock()
        # (subject or None, id) -> (guid, Schema)
        self._by_id: dict[tuple[str | None, int], tuple[str | None, Schema]] = {}
        self._by_guid: dict[str, Schema] = {}
        # (subject, Schema, normalize) -> RegisteredSchema, from register and lookup
        self._registered: dict[tuple[str, Any, bool], RegisteredSchema] = {}
        self._looked_up: dict[tuple[str, Any, bool, bool], RegisteredSchema] = {}
        self._by_version: dict[tuple[str, int], RegisteredSchema] = {}
        # (subject, id) -> RegisteredSchema (for use.schema.id)
        self._by_subject_id: dict[tuple[str, int], RegisteredSchema] = {}
        capacity = self._rest.cache_capacity
        ttl = self._rest.cache_latest_ttl_sec
        self._latest = BoundedCache(capacity, ttl)
        self._latest_meta = BoundedCache(capacity, ttl)

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> SchemaRegistryClient:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def close(self) -> None:
        self._rest.close()

    def config(self) -> dict[str, Any]:
        return self._conf

    @staticmethod
    def new_client(conf: dict[str, Any]) -> SchemaRegistryClient:
        """A client for ``conf``: the in-memory ``MockSchemaRegistryClient`` for ``mock://``."""
        return SchemaRegistryClient(conf)

    def clear_latest_caches(self) -> None:
        with self._lock:
            self._latest.clear()
            self._latest_meta.clear()

    def clear_caches(self) -> None:
        with self._lock:
            self._latest.clear()
            self._latest_meta.clear()
            self._by_id.clear()
            self._by_guid.clear()
            self._registered.clear()
            self._looked_up.clear()
            self._by_version.clear()
            self._by_subject_id.clear()

    def _remember(self, subject: str | None, rs: RegisteredSchema) -> None:
        with self._lock:
            if rs.schema_id is not None:
                self._by_id[(subject, rs.schema_id)] = (rs.guid, rs.schema)
                if rs.subject is not None:
                    self._by_subject_id[(rs.subject, rs.schema_id)] = rs
            if rs.guid is not None:
                self._by_guid[rs.guid] = rs.schema
            if rs.subject is not None and rs.version is not None:
                self._by_version[(rs.subject, rs.version)] = rs

    # -- schemas ---------------------------------------------------------------------------

    def register_schema(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> int:
        rs = self.register_schema_full_response(subject_name, schema, normalize_schemas)
        assert rs.schema_id is not None
        return rs.schema_id

    def register_schema_full_response(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> RegisteredSchema:
        key = (subject_name, schema, normalize_schemas)
        cached = self._registered.get(key)
        if cached is not None:
            return cached
        resp = self._rest.request(
            "POST",
            f"subjects/{quote_segment(subject_name)}/versions",
            {"normalize": bool_param(normalize_schemas)},
            _body(schema),
        )
        answered = RegisteredSchema.from_dict(resp)
        rs = RegisteredSchema(
            schema_id=answered.schema_id,
            guid=answered.guid,
            schema=answered.schema
            if answered.schema.schema_str is not None
            else _as_schema(schema),
            subject=answered.subject or subject_name,
            version=answered.version,
        )
        with self._lock:
            self._registered[key] = rs
        with self._lock:
            if rs.schema_id is not None:
                self._by_id[(subject_name, rs.schema_id)] = (rs.guid, rs.schema)
            if rs.guid is not None:
                self._by_guid[rs.guid] = rs.schema
        return rs

    def get_schema(
        self,
        schema_id: int,
        subject_name: str | None = None,
        fmt: str | None = None,
        reference_format: str | None = None,
    ) -> Schema:
        key = (subject_name, schema_id) if fmt is None and reference_format is None else None
        if key is not None:
            hit = self._by_id.get(key)
            if hit is not None:
                return hit[1]
        query: dict[str, Any] = {}
        if subject_name is not None:
            query["subject"] = subject_name
        if fmt is not None:
            query["format"] = fmt
        if reference_format is not None:
            query["reference_format"] = reference_format
        resp = self._rest.request("GET", f"schemas/ids/{int(schema_id)}", query)
        rs = RegisteredSchema.from_dict(resp)
        if key is not None:
            with self._lock:
                self._by_id[key] = (rs.guid, rs.schema)
                if rs.guid is not None:
                    self._by_guid[rs.guid] = rs.schema
                # Confluent 8.x names the subject and version the id was found under when
                # ``?subject=`` is given: ``use.schema.id`` then needs no lookup (as confluent's)
                if subject_name is not None and rs.subject is not None and rs.version is not None:
                    self._by_subject_id[(rs.subject, schema_id)] = RegisteredSchema(
                        schema_id=schema_id,
                        guid=rs.guid,
                        schema=rs.schema,
                        subject=rs.subject,
                        version=rs.version,
                    )
        return rs.schema

    def get_schema_full_response(
        self, schema_id: int, subject_name: str | None = None, fmt: str | None = None
    ) -> RegisteredSchema:
        """The schema with its GUID (when the registry gives one); cached like ``get_schema``."""
        schema = self.get_schema(schema_id, subject_name, fmt)
        hit = self._by_id.get((subject_name, schema_id))
        guid = hit[0] if hit is not None else None
        return RegisteredSchema(
            schema_id=schema_id, guid=guid, schema=schema, subject=subject_name, version=None
        )

    def get_schema_by_guid(self, guid: str, fmt: str | None = None) -> Schema:
        guid = str(guid)
        if fmt is None:
            hit = self._by_guid.get(guid)
            if hit is not None:
                return hit
        query = {"format": fmt} if fmt is not None else None
        resp = self._rest.request("GET", f"schemas/guids/{quote_segment(guid)}", query)
        rs = RegisteredSchema.from_dict(resp)
        if fmt is None:
            with self._lock:
                self._by_guid[guid] = rs.schema
                if rs.schema_id is not None:
                    self._by_id.setdefault((None, rs.schema_id), (guid, rs.schema))
        return rs.schema

    def get_schema_types(self) -> list[str]:
        return self._rest.request("GET", "schemas/types")

    def get_subjects_by_schema_id(
        self,
        schema_id: int,
        subject_name: str | None = None,
        deleted: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[str]:
        query = _id_listing_query(subject_name, deleted, offset, limit)
        return self._rest.request("GET", f"schemas/ids/{int(schema_id)}/subjects", query)

    def get_schema_versions(
        self,
        schema_id: int,
        subject_name: str | None = None,
        deleted: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[SchemaVersion]:
        query = _id_listing_query(subject_name, deleted, offset, limit)
        resp = self._rest.request("GET", f"schemas/ids/{int(schema_id)}/versions", query)
        return [SchemaVersion.from_dict(item) for item in resp]

    def lookup_schema(
        self,
        subject_name: str,
        schema: Schema,
        normalize_schemas: bool = False,
        fmt: str | None = None,
        deleted: bool = False,
    ) -> RegisteredSchema:
        key = (subject_name, schema, normalize_schemas, deleted)
        if fmt is None:
            cached = self._looked_up.get(key)
            if cached is not None:
                return cached
        query: dict[str, Any] = {
            "normalize": bool_param(normalize_schemas),
            "deleted": bool_param(deleted),
        }
        if fmt is not None:
            query["format"] = fmt
        resp = self._rest.request(
            "POST", f"subjects/{quote_segment(subject_name)}", query, _body(schema)
        )
        answered = RegisteredSchema.from_dict(resp)
        rs = RegisteredSchema(
            schema_id=answered.schema_id,
            guid=answered.guid,
            schema=_as_schema(schema),
            subject=answered.subject,
            version=answered.version,
        )
        if fmt is None:
            with self._lock:
                self._looked_up[key] = rs
                if rs.schema_id is not None and rs.subject is not None:
                    self._by_subject_id[(rs.subject, rs.schema_id)] = rs
        return rs

    def get_registered_by_subject_id(self, subject: str, schema_id: int) -> RegisteredSchema | None:
        """A registration seen before (lookup, version fetch) of ``schema_id`` under ``subject``."""
        return self._by_subject_id.get((subject, schema_id))

    # -- subjects and versions -------------------------------------------------------------

    def get_subjects(
        self,
        subject_prefix: str | None = None,
        deleted: bool = False,
        deleted_only: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[str]:
        query: dict[str, Any] = {
            "deleted": bool_param(deleted),
            "deleted_only": bool_param(deleted_only),
            "offset": offset,
            "limit": limit,
        }
        if subject_prefix is not None:
            query["subjectPrefix"] = subject_prefix
        return self._rest.request("GET", "subjects", query)

    def delete_subject(self, subject_name: str, permanent: bool = False) -> list[int]:
        query = {"permanent": "true"} if permanent else None
        versions = self._rest.request("DELETE", f"subjects/{quote_segment(subject_name)}", query)
        with self._lock:
            self._latest.discard_where(lambda k: k == subject_name)
            self._latest_meta.discard_where(lambda k: k[0] == subject_name)
            if permanent:
                for cache in (
                    self._registered,
                    self._looked_up,
                    self._by_version,
                    self._by_subject_id,
                ):
                    for k in [k for k in cache if k[0] == subject_name]:
                        del cache[k]
                for k in [k for k in self._by_id if k[0] == subject_name]:
                    del self._by_id[k]
        return versions

    def get_latest_version(self, subject_name: str, fmt: str | None = None) -> RegisteredSchema:
        key = subject_name if fmt is None else (subject_name, fmt)
        with self._lock:
            cached = self._latest.get(key)
        if cached is not None:
            return cached
        query = {"format": fmt} if fmt is not None else None
        resp = self._rest.request(
            "GET", f"subjects/{quote_segment(subject_name)}/versions/latest", query
        )
        rs = RegisteredSchema.from_dict(resp)
        with self._lock:
            self._latest.put(key, rs)
        if fmt is None:
            self._remember(None, rs)
        return rs

    def get_latest_with_metadata(
        self,
        subject_name: str,
        metadata: dict[str, str],
        deleted: bool = False,
        fmt: str | None = None,
    ) -> RegisteredSchema:
        key = (subject_name, frozenset(metadata.items()), deleted, fmt)
        with self._lock:
            cached = self._latest_meta.get(key)
        if cached is not None:
            return cached
        query: list[tuple[str, Any]] = [("deleted", bool_param(deleted))]
        if fmt is not None:
            query.append(("format", fmt))
        query.extend(("key", k) for k in metadata)
        query.extend(("value", v) for v in metadata.values())
        resp = self._rest.request("GET", f"subjects/{quote_segment(subject_name)}/metadata", query)
        rs = RegisteredSchema.from_dict(resp)
        with self._lock:
            self._latest_meta.put(key, rs)
        return rs

    def get_version(
        self,
        subject_name: str,
        version: int | Literal["latest"] = "latest",
        deleted: bool = False,
        fmt: str | None = None,
    ) -> RegisteredSchema:
        cacheable = version != "latest" and fmt is None
        if cacheable:
            cached = self._by_version.get((subject_name, int(version)))
            if cached is not None:
                return cached
        query: dict[str, Any] = {"deleted": bool_param(deleted)}
        if fmt is not None:
            query["format"] = fmt
        resp = self._rest.request(
            "GET",
            f"subjects/{quote_segment(subject_name)}/versions/{quote_segment(str(version))}",
            query,
        )
        rs = RegisteredSchema.from_dict(resp)
        if fmt is None:
            self._remember(None, rs)
        return rs

    def get_referenced_by(
        self,
        subject_name: str,
        version: int | Literal["latest"] = "latest",
        offset: int = 0,
        limit: int = -1,
    ) -> list[int]:
        return self._rest.request(
            "GET",
            f"subjects/{quote_segment(subject_name)}/versions/{quote_segment(str(version))}/referencedby",
            {"offset": offset, "limit": limit},
        )

    def get_versions(
        self,
        subject_name: str,
        deleted: bool = False,
        deleted_only: bool = False,
        offset: int = 0,
        limit: int = -1,
    ) -> list[int]:
        query = {
            "deleted": bool_param(deleted),
            "deleted_only": bool_param(deleted_only),
            "offset": offset,
            "limit": limit,
        }
        return self._rest.request("GET", f"subjects/{quote_segment(subject_name)}/versions", query)

    def delete_version(self, subject_name: str, version: int, permanent: bool = False) -> int:
        query = {"permanent": "true"} if permanent else None
        resp = self._rest.request(
            "DELETE",
            f"subjects/{quote_segment(subject_name)}/versions/{quote_segment(str(version))}",
            query,
        )
        with self._lock:
            self._latest.discard_where(lambda k: k == subject_name)
            self._latest_meta.discard_where(lambda k: k[0] == subject_name)
            gone = self._by_version.pop((subject_name, int(version)), None)
            if gone is not None:
                for cache in (self._registered, self._looked_up):
                    for k in [k for k, v in cache.items() if k[0] == subject_name and v == gone]:
                        del cache[k]
                self._by_subject_id.pop((subject_name, gone.schema_id or -1), None)
        return resp

    # -- compatibility, config, mode, contexts ----------------------------------------------

    def test_compatibility(
        self,
        subject_name: str,
        schema: Schema,
        version: int | str = "latest",
        normalize: bool = False,
        verbose: bool = False,
    ) -> bool:
        subject, ver = quote_segment(subject_name), quote_segment(str(version))
        path = f"compatibility/subjects/{subject}/versions/{ver}"
        return self._is_compatible(path, schema, normalize, verbose)

    def test_compatibility_all_versions(
        self, subject_name: str, schema: Schema, normalize: bool = False, verbose: bool = False
    ) -> bool:
        path = f"compatibility/subjects/{quote_segment(subject_name)}/versions"
        return self._is_compatible(path, schema, normalize, verbose)

    def _is_compatible(self, path: str, schema: Schema, normalize: bool, verbose: bool) -> bool:
        """POST a compatibility check (against one version or all) and read its verdict."""
        resp = self._rest.request(
            "POST",
            path,
            {"normalize": bool_param(normalize), "verbose": bool_param(verbose)},
            _body(schema),
        )
        return bool(resp["is_compatible"])

    def set_compatibility(self, subject_name: str | None = None, level: str | None = None) -> Any:
        if level is None:
            raise ValueError("level must be set")
        path = _config_path(subject_name)
        return self._rest.request("PUT", path, body={"compatibility": str(level).upper()})

    def get_compatibility(self, subject_name: str | None = None) -> str:
        path = _config_path(subject_name)
        return self._rest.request("GET", path)["compatibilityLevel"]

    def set_config(
        self, subject_name: str | None = None, config: ServerConfig | None = None
    ) -> Any:
        if config is None:
            raise ValueError("config must be set")
        path = _config_path(subject_name)
        return self._rest.request("PUT", path, body=config.to_dict())

    def delete_config(self, subject_name: str | None = None) -> ServerConfig:
        path = _config_path(subject_name)
        return ServerConfig.from_dict(self._rest.request("DELETE", path))

    def get_config(self, subject_name: str | None = None) -> ServerConfig:
        path = _config_path(subject_name)
        return ServerConfig.from_dict(self._rest.request("GET", path))

    def get_mode(self, subject_name: str) -> str:
        return self._rest.request("GET", f"mode/{quote_segment(subject_name)}")["mode"]

    def update_mode(self, subject_name: str, mode: str, force: bool = False) -> str:
        return self._rest.request(
            "PUT",
            f"mode/{quote_segment(subject_name)}",
            {"force": bool_param(force)},
            {"mode": mode},
        )["mode"]

    def delete_mode(self, subject_name: str) -> str:
        return self._rest.request("DELETE", f"mode/{quote_segment(subject_name)}")["mode"]

    def get_global_mode(self) -> str:
        return self._rest.request("GET", "mode")["mode"]

    def update_global_mode(self, mode: str, force: bool = False) -> str:
        return self._rest.request("PUT", "mode", {"force": bool_param(force)}, {"mode": mode})[
            "mode"
        ]

    def get_contexts(self, offset: int = 0, limit: int = -1) -> list[str]:
        return self._rest.request("GET", "contexts", {"offset": offset, "limit": limit})

    def get_associations_by_resource_name(
        self,
        resource_name: str,
        resource_namespace: str,
        resource_type: str | None = None,
        association_types: Iterable[str] | None = None,
        offset: int = 0,
        limit: int = -1,
    ) -> list[Association]:
        query = association_query(resource_type, association_types)
        if offset > 0:
            query.append(("offset", offset))
        if limit >= 1:
            query.append(("limit", limit))
        resp = self._rest.request(
            "GET",
            f"associations/resources/{quote_segment(resource_namespace)}/{quote_segment(resource_name)}",
            query,
        )
        return [Association.from_dict(a) for a in resp or []]

    def create_association(self, request: AssociationCreateOrUpdateRequest) -> AssociationResponse:
        """``POST /associations``: give a resource (a topic) its subjects."""
        resp = self._rest.request("POST", "associations", body=request.to_dict())
        return AssociationResponse.from_dict(resp or {})

    def delete_associations(
        self,
        resource_id: str,
        resource_type: str | None = None,
        association_types: Iterable[str] | None = None,
        cascade_lifecycle: bool = False,
    ) -> None:
        """``DELETE /associations/resources/{id}`` (all, or only the given types)."""
        query = [("cascadeLifecycle", bool_param(cascade_lifecycle))]
        query += association_query(resource_type, association_types)
        self._rest.request("DELETE", f"associations/resources/{quote_segment(resource_id)}", query)


def _config_path(subject_name: str | None) -> str:
    """``config/{subject}``, or the global ``config`` when no subject is named."""
    return f"config/{quote_segment(subject_name)}" if subject_name is not None else "config"


def _id_listing_query(
    subject_name: str | None, deleted: bool, offset: int, limit: int
) -> dict[str, Any]:
    """Query of ``/schemas/ids/{id}/subjects`` and ``/versions``."""
    query: dict[str, Any] = {"offset": offset, "limit": limit}
    if subject_name is not None:
        query["subject"] = subject_name
    if deleted:
        query["deleted"] = "true"
    return query
