"""Confluent's ``_schemas`` record format: the keys and values every store backend holds.

The registry's state is a log of these records (see DESIGN.md). Keys are written with exactly
the bytes Confluent writes (compact JSON, fixed field order) and read in any field order; a
tombstone (value ``None``) must reuse the key bytes of the record it deletes, so the parsed key
keeps its raw bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

SCHEMA = "SCHEMA"
CONFIG = "CONFIG"
MODE = "MODE"
NOOP = "NOOP"
DELETE_SUBJECT = "DELETE_SUBJECT"
CLEAR_SUBJECT = "CLEAR_SUBJECT"
CONTEXT = "CONTEXT"
ASSOC = "ASSOC"
#: schema exporters (``registry.exporters``): an exporter's definition, its progress (state
#: and offset), and the lease that lets one instance at a time run exporters on a SQL store.
#: Keys carry the exporter's ``name`` (kept in :attr:`RecordKey.subject`)
EXPORTER = "EXPORTER"
EXPORTER_STATE = "EXPORTER_STATE"
EXPORTER_LEASE = "EXPORTER_LEASE"
EXPORTER_KEY_TYPES = frozenset({EXPORTER, EXPORTER_STATE, EXPORTER_LEASE})
KEY_TYPES = frozenset(
    {SCHEMA, CONFIG, MODE, NOOP, DELETE_SUBJECT, CLEAR_SUBJECT, CONTEXT, ASSOC} | EXPORTER_KEY_TYPES
)
#: the fields of an ASSOC key between ``tenant`` and ``subject``, in Confluent's order
ASSOC_FIELDS = ("resourceName", "resourceNamespace", "resourceType", "associationType")
#: DEK registry records (Confluent's ``_dek_registry_keys`` format: keys carry ``type``, not
#: ``keytype``); parsed further by :mod:`registry.dek_records`
KEK = "KEK"
DEK = "DEK"
ENCRYPTION_KEY_TYPES = frozenset({KEK, DEK})
KEYS_LOG = "keys"


class RecordFormatError(ValueError):
    """A key or value that is not a record of Confluent's format."""


@dataclass(frozen=True)
class RecordKey:
    """A parsed key. ``subject`` is qualified (``:.ctx:name``) outside the default context;
    ``None`` for global CONFIG/MODE keys and NOOP."""

    keytype: str
    subject: str | None = None
    version: int | None = None
    context: str | None = None
    raw: bytes = field(default=b"", compare=False, hash=False)
    #: ASSOC keys: resource name, namespace, type and association type
    resource: tuple[str, str, str, str] | None = None

    @property
    def identity(self) -> tuple[str, str | None, int | None, str | None]:
        return (self.keytype, self.subject, self.version, self.context)

    def to_bytes(self) -> bytes:
        """The raw bytes this key was read with, or Confluent's bytes for a new key."""
        return self.raw or encode_key(self)


@dataclass(frozen=True)
class Record:
    """One log entry: key bytes, value bytes (``None`` = tombstone), offset and timestamp (ms).
    ``log`` is ``""`` for the record log; :data:`KEYS_LOG` for a record of a store's separate
    DEK registry log (the Kafka store's keys topic), whose offsets are its own."""

    key: bytes
    value: bytes | None
    offset: int = -1
    timestamp: int = 0
    log: str = ""


def schema_key(subject: str, version: int) -> RecordKey:
    return RecordKey(SCHEMA, subject, version)


def config_key(subject: str | None) -> RecordKey:
    return RecordKey(CONFIG, subject)


def mode_key(subject: str | None) -> RecordKey:
    return RecordKey(MODE, subject)


def delete_subject_key(subject: str) -> RecordKey:
    return RecordKey(DELETE_SUBJECT, subject)


def clear_subject_key(subject: str) -> RecordKey:
    return RecordKey(CLEAR_SUBJECT, subject)


def context_key(context: str) -> RecordKey:
    return RecordKey(CONTEXT, context=context)


def association_key(resource: tuple[str, str, str, str], subject: str) -> RecordKey:
    """Confluent 8.x's ``AssociationKey``: (resource name, namespace, type, association type)
    and the qualified subject."""
    return RecordKey(ASSOC, subject, resource=resource)


NOOP_KEY = RecordKey(NOOP)


def exporter_key(keytype: str, name: str) -> RecordKey:
    """An EXPORTER, EXPORTER_STATE or EXPORTER_LEASE key (the lease's name is ``""``)."""
    return RecordKey(keytype, name)


def encode_key(key: RecordKey) -> bytes:
    """Confluent's exact key bytes (field order matters for compaction)."""
    subject = _json_str(key.subject) if key.subject is not None else None
    if key.keytype == SCHEMA:
        return (
            f'{{"keytype":"SCHEMA","subject":{subject},"version":{key.version},"magic":1}}'
        ).encode()
    if key.keytype == CONTEXT:
        return (
            f'{{"keytype":"CONTEXT","tenant":"default","context":{_json_str(key.context or "")},'
            '"magic":0}'
        ).encode()
    if key.keytype == ASSOC and key.resource is not None:
        fields = "".join(
            f"{_json_str(name)}:{_json_str(value)},"
            for name, value in zip(ASSOC_FIELDS, key.resource, strict=True)
        )
        return (
            f'{{"keytype":"ASSOC","tenant":"default",{fields}"subject":{subject},"magic":0}}'
        ).encode()
    if key.keytype in EXPORTER_KEY_TYPES:
        return f'{{"keytype":"{key.keytype}","name":{subject or _json_str("")},"magic":0}}'.encode()
    if subject is None:
        return f'{{"keytype":"{key.keytype}","magic":0}}'.encode()
    return f'{{"keytype":"{key.keytype}","subject":{subject},"magic":0}}'.encode()


def decode_key(raw: bytes) -> RecordKey:
    """Parse key bytes in any field order; raises :class:`RecordFormatError`."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RecordFormatError(f"key is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise RecordFormatError("key is not a JSON object")
    keytype = data.get("keytype")
    if keytype is None and data.get("type") in ENCRYPTION_KEY_TYPES:
        return RecordKey(str(data["type"]), raw=bytes(raw))
    if keytype not in KEY_TYPES:
        raise RecordFormatError(f"unknown keytype {keytype!r}")
    magic = data.get("magic", 0)
    if keytype == SCHEMA:
        if magic not in (0, 1):
            raise RecordFormatError(f"unsupported SCHEMA key magic byte {magic!r}")
        subject, version = data.get("subject"), data.get("version")
        if not isinstance(subject, str) or not isinstance(version, int):
            raise RecordFormatError("SCHEMA key needs a subject and an integer version")
        return RecordKey(SCHEMA, subject, version, raw=bytes(raw))
    if keytype == CONTEXT:
        context = data.get("context")
        if not isinstance(context, str):
            raise RecordFormatError("CONTEXT key needs a context")
        return RecordKey(CONTEXT, context=context, raw=bytes(raw))
    if keytype in EXPORTER_KEY_TYPES:
        name = data.get("name")
        if not isinstance(name, str):
            raise RecordFormatError(f"{keytype} key needs a name")
        return RecordKey(keytype, name, raw=bytes(raw))
    subject = data.get("subject")
    if subject is not None and not isinstance(subject, str):
        raise RecordFormatError(f"{keytype} key subject is not a string")
    if keytype == ASSOC:
        parts = tuple(data.get(name) for name in ASSOC_FIELDS)
        if subject is None or not all(isinstance(p, str) for p in parts):
            raise RecordFormatError("ASSOC key needs a subject, resource and association type")
        return RecordKey(ASSOC, subject, resource=parts, raw=bytes(raw))  # type: ignore[arg-type]
    if keytype in (DELETE_SUBJECT, CLEAR_SUBJECT) and subject is None:
        raise RecordFormatError(f"{keytype} key needs a subject")
    return RecordKey(keytype, subject, raw=bytes(raw))


def encode_value(value: dict[str, Any] | None) -> bytes | None:
    """Compact JSON with null and empty fields omitted (but an empty ``metadata`` or
    ``ruleSet``, which Confluent writes and tells from none); ``None`` stays a tombstone."""
    if value is None:
        return None
    return orjson.dumps(
        {
            k: v
            for k, v in value.items()
            if v is not None and v != [] and (v != {} or k in _KEPT_EMPTY)
        }
    )


#: fields whose empty object means something (a schema's ``Metadata``/``RuleSet`` given empty)
_KEPT_EMPTY = frozenset({"metadata", "ruleSet"})


def decode_value(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RecordFormatError(f"value is not JSON: {exc}") from exc
    if data is None:
        return None
    if not isinstance(data, dict):
        raise RecordFormatError("value is not a JSON object")
    return data


def _json_str(text: str) -> str:
    return orjson.dumps(text).decode()
