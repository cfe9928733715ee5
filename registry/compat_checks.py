"""``POST /compatibility/subjects/{subject}/versions[/{version}]`` and the check a
registration runs: a candidate against the versions the subject's level names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from registry import compatibility, errors
from registry.configs import validates_new_schemas
from registry.core import (
    LATEST,
    Registry,
    SchemaRequest,
    iter_live,
)
from registry.formats.base import ParsedSchema
from registry.lookups import make_candidate
from registry.reserved_fields import reserved_field_errors
from registry.state import SchemaVersion


def check_against(
    reg: Registry,
    config: dict[str, Any],
    new: ParsedSchema,
    previous: Sequence[SchemaVersion],
    level: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> list[str]:
    """Messages for ``new`` against ``previous`` (chronological) under the effective config:
    with ``validateFields`` on, first the reserved-field violations (whatever the level, against
    the latest of ``previous`` before any compatibility group filters them, as Confluent's
    ``isCompatibleWithPrevious``), then the compatibility differences."""
    level = level or str(config.get("compatibilityLevel") or reg.settings.compatibility_level)
    validate_fields = bool(config.get("validateFields"))
    reserved = (
        reserved_field_errors(
            new, metadata, previous[-1].metadata if previous else None, bool(previous)
        )
        if validate_fields
        else []
    )
    messages = _compatibility_messages(reg, config, new, previous, level, metadata)
    if reserved:
        return reserved + (messages or [compatibility.trailer(validate_fields, level)])
    return messages


def _compatibility_messages(
    reg: Registry,
    config: dict[str, Any],
    new: ParsedSchema,
    previous: Sequence[SchemaVersion],
    level: str,
    metadata: dict[str, Any] | None,
) -> list[str]:
    group = config.get("compatibilityGroup")
    prev = list(previous)
    if group:
        # only versions whose metadata property ``group`` equals the new schema's (maybe None)
        value = _property(metadata, group)
        prev = [v for v in prev if _property(v.metadata, group) == value]
    if level == "NONE" or not prev:  # nothing to compare with (``compatibility.check``)
        return []
    if not level.endswith("_TRANSITIVE"):
        prev = prev[-1:]  # the others are neither parsed nor compared (``compatibility.check``)
    olds = [compatibility.PreviousSchema(reg.parse_stored(v), v.version, v.schema) for v in prev]
    fmt = reg.formats.get(new.schema_type)
    validate_fields = bool(config.get("validateFields"))
    policy = config.get("compatibilityPolicy")
    # a registration checks before the write lock and again inside it: the second is a look-up
    # unless the subject's versions (or their parsed forms) changed meanwhile
    settings = (level, validate_fields, policy if isinstance(policy, str) else repr(policy))
    cached = reg.verdicts.get(new, olds, settings)
    if cached is not None:
        return cached
    messages = compatibility.check(
        fmt, level, new, olds, validate_fields=validate_fields, policy=policy
    )
    reg.verdicts.put(new, olds, settings, messages)
    return messages


def _property(metadata: dict[str, Any] | None, name: str) -> Any:
    return ((metadata or {}).get("properties") or {}).get(name)


def test_compatibility(
    reg: Registry,
    subject: str,
    version: int | None,
    req: SchemaRequest,
    *,
    normalize: bool,
    verbose: bool,
) -> tuple[bool, list[str]]:
    """``POST /compatibility/subjects/{subject}/versions[/{version}]``; ``version`` None means
    against every version the subject's level asks for."""
    subject = reg.valid_subject(subject)
    config = reg.effective_config(subject)
    normalize = normalize or bool(config.get("normalize"))
    live = sorted(iter_live(reg.state.versions(subject).values()), key=lambda v: v.version)
    if version is not None and version != LATEST:
        target = reg.state.versions(subject).get(version)
        if target is None or target.deleted:
            # Confluent 8.x: a missing version is 40402 even when the subject does not exist
            raise errors.version_not_found(version)
        previous = [target]
    elif version == LATEST:
        previous = live[-1:]
    else:
        previous = live
    try:
        cand = make_candidate(
            reg,
            subject,
            req,
            normalize=normalize,
            strict=validates_new_schemas(config),
            include_deleted_refs=not validates_new_schemas(config),
        )
    except errors.RegistryError as exc:
        if verbose and exc.error_code == 42201:
            return False, [exc.message]
        raise
    # the trailer names the configured level even when one version is compared (Confluent)
    level = str(config.get("compatibilityLevel") or reg.settings.compatibility_level)
    messages = check_against(reg, config, cand.parsed, previous, level, cand.metadata)
    return not messages, messages
