"""The write-path hook: what a request's write decided, noted for its audit event.

The registry calls :func:`observe_change` (``Registry.change_observer``) for every write that
drafted records, in the writer's own context, just before the drafts are applied to the state;
the callback it returns runs just after. Both describe the keys the drafts touch from the state
(:func:`touched_state`), so an event carries a hash of that state before and after the change.
The hashes never take in KEK or DEK material, KMS properties or secrets; schema texts are only
hashed. A write made outside an audited request (no :data:`CURRENT` note) costs one context
variable read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import orjson

from registry import records
from registry.records import RecordKey
from registry.state import State

Draft = tuple[RecordKey, dict[str, Any] | None]


class ChangeNote:
    """What the writes of one request decided (several for a batch of associations)."""

    __slots__ = ("after", "before", "keytypes", "schema_id", "schema_type", "subject", "version")

    def __init__(self) -> None:
        self.before = hashlib.sha256()
        self.after = hashlib.sha256()
        #: record types drafted, in order, each once
        self.keytypes: list[str] = []
        self.subject: str | None = None
        self.version: int | None = None
        self.schema_id: int | None = None
        self.schema_type: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.keytypes)

    def state(self) -> dict[str, str] | None:
        """The hashes of the touched state before and after, when something was drafted."""
        if not self.keytypes:
            return None
        return {
            "before": "sha256:" + self.before.hexdigest(),
            "after": "sha256:" + self.after.hexdigest(),
        }


#: the note of the request being served (set by the audit middleware)
CURRENT: ContextVar[ChangeNote | None] = ContextVar("audit_change", default=None)


def observe_change(drafts: Sequence[Draft], state: State) -> Callable[[], None] | None:
    """Note ``drafts`` (about to be applied to ``state``) in the current request's note; the
    callback returned hashes the state they leave."""
    note = CURRENT.get()
    if note is None or not drafts:
        return None
    keys = [key for key, _ in drafts]
    note.before.update(touched_state(state, keys))
    for key, value in drafts:
        if key.keytype not in note.keytypes:
            note.keytypes.append(key.keytype)
        _describe(note, key, value)

    def after() -> None:
        note.after.update(touched_state(state, keys))

    return after


def _describe(note: ChangeNote, key: RecordKey, value: dict[str, Any] | None) -> None:
    """The subject, version, id and type of the first record that names them."""
    if key.keytype == records.SCHEMA and value is not None and note.schema_id is None:
        note.subject = str(value.get("subject") or key.subject or "") or None
        note.version = _int(value.get("version", key.version))
        note.schema_id = _int(value.get("id"))
        note.schema_type = str(value.get("schemaType") or "AVRO")
    elif note.subject is None and key.subject:
        note.subject = key.subject
        if key.version is not None:
            note.version = key.version


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def touched_state(state: State, keys: Sequence[RecordKey]) -> bytes:
    """The part of ``state`` the records at ``keys`` set, encoded (without schema texts' or
    keys' secrets: KEK and DEK material and KMS properties are left out)."""
    return orjson.dumps(
        [[key.to_bytes().decode("utf-8", "replace"), _at(state, key)] for key in keys]
    )


def _at(state: State, key: RecordKey) -> Any:
    kind = key.keytype
    if kind == records.SCHEMA and key.subject is not None and key.version is not None:
        sv = state.versions(key.subject).get(key.version)
        return None if sv is None else [sv.id, sv.schema_type, sv.digest.hex(), sv.deleted]
    if kind in (records.DELETE_SUBJECT, records.CLEAR_SUBJECT) and key.subject is not None:
        versions = state.versions(key.subject)
        return sorted((v.version, v.id, v.deleted) for v in list(versions.values()))
    if kind == records.CONFIG:
        setting = state.configs.get(key.subject)
        return None if setting is None else setting.value
    if kind == records.MODE:
        setting = state.modes.get(key.subject)
        return None if setting is None else setting.value
    if kind == records.CONTEXT:
        return (key.context or "") in state.context_records
    if kind == records.ASSOC and key.resource is not None and key.subject is not None:
        assoc = state.associations.get((*key.resource, key.subject))
        return None if assoc is None else assoc.value()
    if kind in records.ENCRYPTION_KEY_TYPES:
        return _encryption_key(state, key)
    if kind in records.EXPORTER_KEY_TYPES:
        return _exporter(state, key)
    return None


def _exporter(state: State, key: RecordKey) -> Any:
    """An exporter's definition (its config by name only: values may hold credentials, kept
    encrypted), its progress, or the exporters' lease."""
    index, name = state.exporters, key.subject or ""
    if key.keytype == records.EXPORTER:
        found = index.definitions.get(name)
        if found is None:
            return None
        value = found.value()
        return {**value, "config": sorted(value["config"])}
    if key.keytype == records.EXPORTER_STATE:
        progress = index.progress.get(name)
        return None if progress is None else [progress.state, progress.offset, progress.generation]
    return None if index.lease is None else [index.lease.owner, index.lease.expires]


def _encryption_key(state: State, key: RecordKey) -> Any:
    try:
        fields = orjson.loads(key.to_bytes())
    except orjson.JSONDecodeError:
        return None
    index = state.encryption_keys
    if key.keytype == records.KEK:
        kek = index.kek(str(fields.get("name")), deleted=True)
        if kek is None:
            return None
        return [kek.name, kek.kms_type, kek.kms_key_id, kek.doc, kek.shared, kek.deleted]
    dek = index.dek(
        str(fields.get("kekName")),
        str(fields.get("subject")),
        str(fields.get("algorithm")),
        int(fields.get("version") or 0),
        deleted=True,
    )
    if dek is None:
        return None
    return [dek.kek_name, dek.subject, dek.algorithm, dek.version, dek.deleted]
