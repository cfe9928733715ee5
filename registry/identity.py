"""Schema identity: the MD5 hash Confluent uses for "same schema" and for the schema GUID.

MD5 over the canonical schema text, then each reference (name, subject, 4-byte big-endian
version), then metadata and rule set when present. ``schemaType`` is not part of it (as in
Confluent). The GUID is that hash formatted as a UUID.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any


def schema_hash(
    schema: str,
    references: Sequence[Mapping[str, Any]] = (),
    metadata: Mapping[str, Any] | None = None,
    rule_set: Mapping[str, Any] | None = None,
) -> bytes:
    md5 = hashlib.md5(usedforsecurity=False)
    md5.update(schema.encode())
    for ref in references:
        md5.update(str(ref.get("name", "")).encode())
        md5.update(str(ref.get("subject", "")).encode())
        md5.update(int(ref.get("version", 0)).to_bytes(4, "big", signed=True))
    if metadata is not None:  # an empty one too (Confluent hashes any non-null Metadata)
        md5.update(b"\x01")
        tags = metadata.get("tags") or {}
        for key in sorted(tags):
            md5.update(key.encode())
            for tag in sorted(tags[key]):
                md5.update(tag.encode())
        props = metadata.get("properties") or {}
        for key in sorted(props):
            md5.update(key.encode())
            md5.update(str(props[key]).encode())
        for name in sorted(metadata.get("sensitive") or []):
            md5.update(name.encode())
    if rule_set is not None:
        md5.update(b"\x01")
        try:
            for group in ("migrationRules", "domainRules", "encodingRules"):
                for rule in rule_set.get(group) or []:
                    _hash_rule(md5, rule)
        except (AttributeError, TypeError, ValueError):
            # a look-up's rule set not shaped as rules (registration refuses those first): any
            # fixed value will do, as no stored rule set is shaped so
            md5.update(b"\x02" + json.dumps(rule_set, sort_keys=True, default=repr).encode())
        if rule_set.get("enableAt"):
            md5.update(str(rule_set["enableAt"]).encode())
    return md5.digest()


def _hash_rule(md5: Any, rule: Mapping[str, Any]) -> None:
    for field in ("name", "doc", "kind", "mode", "type"):
        if rule.get(field) is not None:
            md5.update(str(rule[field]).encode())
    for tag in sorted(rule.get("tags") or []):
        md5.update(tag.encode())
    params = rule.get("params") or {}
    for key in sorted(params):
        md5.update(key.encode())
        md5.update(str(params[key]).encode())
    for field in ("expr", "onSuccess", "onFailure"):
        if rule.get(field) is not None:
            md5.update(str(rule[field]).encode())
    if rule.get("disabled"):
        md5.update(b"\x01")


def guid_of(digest: bytes) -> str:
    return str(uuid.UUID(bytes=digest))
