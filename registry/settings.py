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
    #: whether PUT/DELETE /mode are allowed (mode.mutability)
    mode_mutability: bool = True
    #: seconds between polls for records written by other processes sharing the store
    poll_interval: float = 1.0
    #: id reported by /v1/metadata/id (schema.registry.group.id)
    group_id: str = "schema-registry"
    #: parsed schemas kept in memory (lookups of a cached text need no parsing; a few KB each)
    parse_cache_size: int = 20_000
    #: largest request body accepted, in bytes
    max_request_bytes: int = 16 * 1024 * 1024
    log_level: str = "INFO"

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
