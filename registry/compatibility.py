"""Compatibility levels: which previous versions to compare with, in which direction, and the
Confluent-style message list a failed check produces. Pure functions; the per-format rules live
in ``registry.formats``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from registry.formats.base import ParsedSchema, SchemaFormat

LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
DIFFERENT_SCHEMA_TYPE = "Incompatible because of different schema type"
MAX_SCHEMA_SIZE_IN_MESSAGE = 10 * 1024


def parse_level(value: object) -> str | None:
    """The upper-case level name, or ``None`` when ``value`` is not a level."""
    if not isinstance(value, str):
        return None
    level = value.strip().upper()
    return level if level in LEVELS else None


@dataclass(frozen=True)
class PreviousSchema:
    """A version the new schema is compared with."""

    schema: ParsedSchema
    version: int | None
    text: str


def check(
    fmt: SchemaFormat | None,
    level: str,
    new: ParsedSchema,
    previous: Sequence[PreviousSchema],
    *,
    validate_fields: bool = False,
    policy: str | None = None,
) -> list[str]:
    """Messages explaining why ``new`` breaks ``level`` against ``previous`` (chronological
    order); an empty list when compatible. ``fmt`` is the format of ``new``."""
    if level == "NONE" or not previous:
        return []
    transitive = level.endswith("_TRANSITIVE")
    direction = level.removesuffix("_TRANSITIVE")
    candidates = list(reversed(previous)) if transitive else [previous[-1]]
    messages: list[str] = []
    for old in candidates:
        if old.schema.schema_type != new.schema_type or fmt is None:
            messages = [DIFFERENT_SCHEMA_TYPE]
        else:
            messages = _compare(fmt, direction, new, old, policy)
        if messages:
            break
    if messages:
        messages.append(trailer(validate_fields, level))
    return messages


def trailer(validate_fields: bool, level: str) -> str:
    """The last message of a failed check: the settings it ran under."""
    return f"{{validateFields: '{str(validate_fields).lower()}', compatibility: '{level}'}}"


def _compare(
    fmt: SchemaFormat,
    direction: str,
    new: ParsedSchema,
    old: PreviousSchema,
    policy: str | None = None,
) -> list[str]:
    messages: list[str] = []
    if direction in ("FORWARD", "FULL"):
        forward = fmt.compatibility_errors(
            old.schema, new, reader_label="old", writer_label="new", policy=policy
        )
        messages.extend(forward)
        if forward and direction == "FORWARD":
            messages.extend(_old_schema_trailer(old))
    if direction in ("BACKWARD", "FULL"):
        backward = fmt.compatibility_errors(
            new, old.schema, reader_label="new", writer_label="old", policy=policy
        )
        messages.extend(backward)
        if backward:
            messages.extend(_old_schema_trailer(old))
    return messages


def _old_schema_trailer(old: PreviousSchema) -> list[str]:
    trailer = []
    if old.version is not None:
        trailer.append(f"{{oldSchemaVersion: {old.version}}}")
    if len(old.text) <= MAX_SCHEMA_SIZE_IN_MESSAGE:
        trailer.append(f"{{oldSchema: '{old.text}'}}")
    else:
        trailer.append(f"{{oldSchema: <truncated> '{old.text[:MAX_SCHEMA_SIZE_IN_MESSAGE]}...'}}")
    return trailer
