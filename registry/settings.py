"""The registry's one settings object: defaults, environment variables, command-line flags.

Every setting ``name`` can be given as the environment variable ``SCHEMA_REGISTRY_<NAME>``
(upper case); a command-line flag wins over the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any

ENV_PREFIX = "SCHEMA_REGISTRY_"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8081
    #: store URL: sqlite:///path.db (default, in the working directory) or postgresql://...
    store: str = "sqlite:///schema-registry.db"
    #: default compatibility level when no config is stored (schema.compatibility.level)
    compatibility_level: str = "BACKWARD"
    #: validate new Avro schemas as Confluent 7.9 did, for registries migrated from 7.x: field
    #: defaults only with ``normalize=true`` (8.x: always), namespaces not at all (8.x: each
    #: dotted part must be a valid name), Unicode letters allowed in names, a union's default
    #: checked against its first branch only (8.x: any branch)
    avro_7_9_validation: bool = False
    #: answer the fields Confluent 8.0 added to its schema entities (``guid``, ``schemaType``
    #: for Avro, ``ts``, ``deleted``) only to requests that carry
    #: ``Confluent-Accept-Unknown-Properties: true`` or ``Confluent-Client-Version``, as
    #: Confluent Cloud does; off (default): to every request, as self-managed Confluent
    #: Platform 8.x does
    v8_fields_by_header: bool = False
    #: whether PUT/DELETE /mode are allowed (mode.mutability)
    mode_mutability: bool = True
    #: seconds between polls for records written by other processes sharing the store
    poll_interval: float = 1.0
    #: this instance's URL as other instances reach it (forwarding to the leader); empty: built
    #: from host and port
    advertised_url: str = ""
    #: id reported by /v1/metadata/id (schema.registry.group.id)
    group_id: str = "schema-registry"
    #: comma-separated attributes reported by /v1/metadata/deployment
    #: (schema.registry.metadata.deployment.attributes); empty: ``[]``, as Confluent Platform
    deployment_attributes: str = ""
    #: parsed schemas kept in memory at most (lookups of a cached text need no parsing)
    parse_cache_size: int = 20_000
    #: estimated memory of the parsed schemas kept, at most (12x each text's length + 1 KB)
    parse_cache_bytes: int = 64 * 1024 * 1024
    #: largest request body accepted, in bytes
    max_request_bytes: int = 16 * 1024 * 1024
    #: bytes of answers to ``GET /schemas/ids/{id}``, ``GET /subjects/{s}/versions/{v}`` and
    #: lookups kept ready to send until the state changes (``registry.api.fast_reads``); 0: none
    read_cache_bytes: int = 64 * 1024 * 1024
    log_level: str = "INFO"
    #: ``text`` or ``json`` (one JSON object a line, with the request id)
    log_format: str = "text"
    #: log one line per request (method, route, status, duration, principal, request id)
    access_log: bool = False
    #: largest schema text accepted by register, lookup and compatibility checks (42209 above)
    max_schema_bytes: int = 1024 * 1024
    #: deepest nesting of brackets in a schema text (42201 above)
    max_schema_depth: int = 200
    #: seconds (CPU, and wall-clock since the work began) one request may spend parsing and
    #: checking schemas before it is refused (422 naming this setting); 0: unlimited
    max_schema_work_seconds: float = 1.5
    #: most KEKs, and most DEKs, the DEK registry holds (Confluent's dek.registry.max.keys;
    #: soft-deleted keys count): a create beyond it is refused with 409, error_code 40972
    dek_registry_max_keys: int = 20_000
    #: Protobuf texts of at least this many bytes are compiled by protoc in a child process,
    #: killed when the request's schema work allowance runs out or its client goes away (protoc
    #: in-process cannot be interrupted and holds the GIL); 0: every text in-process
    protoc_subprocess_bytes: int = 64 * 1024
    #: seconds a connection has to send one whole request (headers and body) from its first
    #: byte, and a new connection to start one; then 408 and closed
    read_timeout: float = 30.0
    #: longest request target (path and query) accepted: 414 above
    max_url_bytes: int = 8192
    #: largest request header block accepted: 431 above
    max_header_bytes: int = 16384
    # ---- authentication and authorisation (off unless a users file or JWT keys are set) ----
    #: HTTP Basic users, ``name:scrypt$...`` lines (``schema-registry user add``); reloaded
    auth_users_file: str = ""
    #: public keys for bearer JWTs: PEM keys/certificates or a JWKS document; reloaded
    auth_jwt_keys_file: str = ""
    #: URL of a JWKS document with the keys for bearer JWTs (fetched, cached 5 minutes)
    auth_jwt_jwks_url: str = ""
    #: required ``iss`` claim (not checked when empty)
    auth_jwt_issuer: str = ""
    #: required ``aud`` claim (not checked when empty)
    auth_jwt_audience: str = ""
    #: accepted signature algorithms (asymmetric only)
    auth_jwt_algorithms: str = "RS256,RS384,RS512,PS256,PS384,PS512,ES256,ES384,ES512,EdDSA"
    #: claim naming the principal
    auth_jwt_principal_claim: str = "sub"
    #: claims listing the caller's groups (``groups``, ``roles``, ``realm_access.roles``; comma
    #: separated), usable in rules as ``group:NAME``; none when empty
    auth_jwt_groups_claim: str = ""
    #: a request without credentials whose TLS client certificate the server verified is the
    #: certificate subject's common name (needs ``tls_client_auth`` optional or required)
    auth_client_cert_principal: bool = False
    #: common names (globs, comma separated) of the client certificates other instances present
    #: when they forward a write (``forward_tls_certfile``): only their ``X-Forwarded-Principal``
    #: (the certificate principal of the original caller) is believed
    auth_trusted_forwarders: str = ""
    #: seconds of clock skew allowed for ``exp``/``nbf``/``iat``
    auth_jwt_leeway: float = 30.0
    #: per-subject rules (YAML, see registry/auth/rules.py); everything allowed when empty
    auth_rules_file: str = ""
    #: serve the web UI at /ui (static files; it uses the REST API with the user's credentials)
    ui: bool = True
    #: paths served without authentication (``/live`` and ``/metrics`` always are)
    auth_public_paths: str = "/ready"
    #: failed HTTP Basic attempts per (user, client address) within ``auth_failure_window``
    #: seconds before that pair is locked out (429 + Retry-After, no hashing); 0: no lock-out
    auth_max_failures: int = 5
    auth_failure_window: float = 300.0
    #: seconds of the first lock-out; each further one of the same pair doubles, up to the max
    auth_lockout: float = 60.0
    auth_lockout_max: float = 900.0
    #: failure counters kept in memory (least recently used forgotten first)
    auth_throttle_entries: int = 100_000
    #: password hashes (scrypt) computed at once; more attempts wait without taking a thread
    auth_hash_concurrency: int = 2
    # ---- audit trail (registry/audit; docs/audit.md) ----
    #: JSON-lines file every change and every refused request is written to; empty: none
    audit_file: str = ""
    #: size past which the audit file is rotated (``path.1``, ``path.2``, ...); 0: never
    audit_file_max_bytes: int = 100 * 1024 * 1024
    #: rotated audit files kept
    audit_file_backups: int = 10
    #: fsync the audit file after each event (durable across a power loss; slower)
    audit_file_fsync: bool = False
    #: audit events also to standard output (one JSON line each)
    audit_stdout: bool = False
    #: audit events also to a Kafka topic as CloudEvents: kafka://host:9092/?topic=NAME
    audit_kafka: str = ""
    #: refuse changes (503) while an audit sink is unavailable, and answer a change whose
    #: event could not be written with 500; off: serve, counting dropped events
    audit_fail_closed: bool = False
    #: audit reads too (GET/HEAD and read-only POSTs such as look-ups)
    audit_reads: bool = False
    # ---- TLS ----
    #: PEM certificate chain; with ``tls_keyfile`` the server speaks HTTPS
    tls_certfile: str = ""
    tls_keyfile: str = ""
    tls_keyfile_password: str = ""
    #: CA bundle client certificates are verified against
    tls_ca_file: str = ""
    #: client certificates: ``none``, ``optional`` or ``required`` (mTLS)
    tls_client_auth: str = "none"
    #: CA bundle the leader's certificate must chain to when a follower forwards a write over
    #: HTTPS; empty: ``tls_ca_file`` when set, else the system's CAs
    forward_tls_ca_file: str = ""
    #: client certificate and key a follower presents to a leader that asks for one (mTLS)
    forward_tls_certfile: str = ""
    forward_tls_keyfile: str = ""
    #: seconds SIGTERM waits for open connections before closing them (idle TLS keep-alive
    #: connections otherwise hold the shutdown until the client goes away)
    shutdown_timeout: float = 30.0
    # ---- schema exporters (registry/exporters) ----
    #: run the exporters defined here (on the leader only); off: they are kept, not run
    exporters: bool = True
    #: passphrase from which the key encrypting exporter credentials at rest is derived
    #: (HKDF-SHA256 to an AES-256-GCM key); empty: exporters may not carry credentials
    exporter_secret: str = ""
    #: most exporters a registry holds (409, error_code 40964 above)
    exporters_max: int = 50
    #: seconds an SQL store's exporter lease lasts (renewed at a third of it)
    exporter_lease_seconds: float = 30.0

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides: Any) -> Settings:
        env = dict(os.environ) if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV_PREFIX + f.name.upper())
            if raw is not None:
                values[f.name] = _convert(f.type, raw, f.name)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return replace(cls(), **values)


def _convert(kind: object, raw: str, name: str) -> Any:
    kind = str(kind)
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "bool":
            if raw.strip().lower() in ("1", "true", "yes", "on"):
                return True
            if raw.strip().lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
    except ValueError as exc:
        raise ValueError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a valid {kind}") from exc
    return raw
