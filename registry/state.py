"""The registry's in-memory state, built only by applying ``_schemas`` records in log order.

Every read is answered from here; every write appends records that come back through
:meth:`State.apply`. The leader and any follower run this same code, so they cannot disagree.
Indexes are per context: subject -> versions, id -> subject-versions, identity hash -> id,
referenced subject-version -> referrers, and the highest id ever seen.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from registry import records
from registry.dek_records import KeyIndex
from registry.exporters.index import ExporterIndex
from registry.identity import schema_hash
from registry.journal import Journal, Journaled
from registry.records import Record, RecordFormatError, RecordKey
from registry.subjects import DEFAULT_CONTEXT, parse_subject

log = logging.getLogger(__name__)


#: the references of a version without any (one shared empty sequence, not a list per version)
NO_REFERENCES: tuple[dict[str, Any], ...] = ()


@dataclass(slots=True)
class SchemaVersion:
    """One subject-version as stored in a SCHEMA record.

    Memory (a million of these is the registry's state): the subject and schema type strings
    are interned (shared by every version), a version without references shares
    :data:`NO_REFERENCES`, and the record key is kept only when it is not the one Confluent
    writes for this subject and version (:attr:`key` rebuilds that one)."""

    subject: str
    version: int
    id: int
    schema_type: str
    schema: str
    references: Sequence[dict[str, Any]]
    metadata: dict[str, Any] | None
    rule_set: dict[str, Any] | None
    deleted: bool
    ts: int
    digest: bytes
    #: the record's key bytes when they differ from Confluent's for (subject, version), else None
    raw_key: bytes | None = None
    #: what is known of the schema text's re-printed forms (``STORED_IS_*`` bits, set by
    #: ``registry.lookups``): a text this registry wrote is its own canonical form, so a lookup
    #: need not parse it again to compare it with a candidate (not part of the value)
    forms: int = field(default=0, compare=False, repr=False)

    @property
    def key(self) -> bytes:
        """The key bytes of this version's record (a tombstone must reuse them)."""
        if self.raw_key is not None:
            return self.raw_key
        return records.encode_key(records.schema_key(self.subject, self.version))

    @property
    def context(self) -> str:
        return parse_subject(self.subject).context

    def value(self) -> dict[str, Any]:
        """The SCHEMA record value for this version."""
        return {
            "subject": self.subject,
            "version": self.version,
            "id": self.id,
            "schemaType": self.schema_type,
            "references": self.references or None,
            "metadata": self.metadata,
            "ruleSet": self.rule_set,
            "schema": self.schema,
            "deleted": self.deleted,
        }


@dataclass
class ContextState(Journaled):
    name: str
    #: qualified subject -> version -> schema version
    subjects: dict[str, dict[int, SchemaVersion]] = field(default_factory=dict)
    #: id -> qualified subject -> version
    ids: dict[int, dict[str, int]] = field(default_factory=dict)
    #: identity hash -> id
    hashes: dict[bytes, int] = field(default_factory=dict)
    #: (referenced qualified subject, version) -> referrer (subject, version) pairs
    referrers: dict[tuple[str, int], set[tuple[str, int]]] = field(default_factory=dict)
    max_id: int = 0
    #: the state's undo journal (last: attribute changes are journaled once it is set)
    journal: Journal | None = field(default=None, repr=False, compare=False)

    def versions(self, subject: str) -> dict[int, SchemaVersion]:
        return self.subjects.get(subject, {})

    def any_version_of(self, schema_id: int) -> SchemaVersion | None:
        holders = self.ids.get(schema_id)
        if not holders:
            return None
        # the oldest registration carries the id's content
        subject, version = min(holders.items(), key=lambda item: (item[0], item[1]))
        return self.subjects[subject][version]


@dataclass
class Setting:
    """A CONFIG or MODE record: its value and the raw key bytes a tombstone must reuse."""

    value: dict[str, Any]
    key: bytes


@dataclass(slots=True)
class Association:
    """An ASSOC record (Confluent 8.x): a topic tied to a subject for its key or value."""

    subject: str
    guid: str
    resource_name: str
    resource_namespace: str
    resource_id: str
    resource_type: str
    association_type: str
    lifecycle: str
    frozen: bool
    create_ts: int
    update_ts: int
    key: bytes

    @property
    def resource(self) -> tuple[str, str, str, str]:
        return (
            self.resource_name,
            self.resource_namespace,
            self.resource_type,
            self.association_type,
        )

    def value(self) -> dict[str, Any]:
        """The ASSOC record value (Confluent's ``AssociationValue``)."""
        return {
            "guid": self.guid,
            "tenant": "default",
            "resourceName": self.resource_name,
            "resourceNamespace": self.resource_namespace,
            "resourceId": self.resource_id,
            "resourceType": self.resource_type,
            "associationType": self.association_type,
            "subject": self.subject,
            "lifecycle": self.lifecycle,
            "frozen": self.frozen,
            "createTs": self.create_ts or None,
        }


class State(Journaled):
    """Applies records; answers lookups. Not thread-safe for writers: the service serialises
    :meth:`apply` calls; readers may run concurrently (dict reads are atomic under the GIL).

    Every change a record makes goes through the undo journal (``registry.journal``): the
    write path applies a batch's records tentatively and rolls them back (``Registry.write``)."""

    journal: Journal

    def __init__(self) -> None:
        journal = Journal()
        self.offset = -1
        self.contexts: dict[str, ContextState] = {
            DEFAULT_CONTEXT: ContextState(DEFAULT_CONTEXT, journal=journal)
        }
        #: contexts named by CONTEXT records (how GET /contexts lists them), with raw keys
        self.context_records: dict[str, bytes] = {}
        #: config/mode key (None = global, ":.ctx:" = context, subject) -> setting
        self.configs: dict[str | None, Setting] = {}
        self.modes: dict[str | None, Setting] = {}
        #: ASSOC records by (resource name, namespace, type, association type, subject)
        self.associations: dict[tuple[str, str, str, str, str], Association] = {}
        self.skipped = 0
        #: KEKs and DEKs of the DEK registry (``registry.dek_records``)
        self.encryption_keys = KeyIndex(journal=journal)
        #: schema exporters, their progress and lease (``registry.exporters``)
        self.exporters = ExporterIndex(journal=journal)
        #: a sequence lock for readers caching answers (``registry.api.fast_reads``): odd while
        #: a record is applied or a batch rolled back, and different after any change. Never
        #: journaled (:meth:`_bump`): a rollback must not bring an old value back
        self.changes = 0
        #: set last: from here on attribute changes are journaled while a batch is open
        self.journal = journal

    # ---- tentative application (group commit) ---------------------------------------------

    def begin_tentative(self) -> None:
        """Journal every change from now on until :meth:`rollback` or :meth:`end_tentative`."""
        self.journal.begin()

    def rollback(self) -> None:
        """Undo every change made since :meth:`begin_tentative`, newest first."""
        self._bump()
        try:
            self.journal.rollback()
        finally:
            self._bump()

    def _bump(self) -> None:
        """``changes`` += 1, around the journal (see ``changes``)."""
        self.__dict__["changes"] += 1

    def end_tentative(self) -> None:
        self.journal.end()

    def _put(self, table: dict[Any, Any], name: Any, value: Any) -> None:
        self.journal.put(table, name, value)

    def _drop(self, table: dict[Any, Any], name: Any) -> None:
        self.journal.drop(table, name)

    def _set(self, target: Any, name: str, value: Any) -> None:
        self.journal.set(target, name, value)

    # ---- applying records ----------------------------------------------------------------

    def apply_all(self, batch: Iterable[Record]) -> None:
        for record in batch:
            self.apply(record)

    def apply(self, record: Record) -> None:
        self._bump()  # odd while applying (see ``changes``)
        try:
            self._apply(record)
        finally:
            self._bump()

    def _apply(self, record: Record) -> None:
        if record.log:  # a separate DEK registry log, with offsets of its own
            self.encryption_keys.apply_record(record)
            return
        if record.offset <= self.offset and record.offset >= 0:
            return
        if record.offset >= 0:
            self.offset = record.offset
        try:
            key = records.decode_key(record.key)
            value = records.decode_value(record.value)
        except RecordFormatError as exc:
            self._set(self, "skipped", self.skipped + 1)
            log.warning("skipping record at offset %s: %s", record.offset, exc)
            return
        handler = _HANDLERS[key.keytype]
        handler(self, key, value, record)

    def _apply_schema(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        subject = key.subject or ""
        ctx = self.context_of(subject)
        old = ctx.subjects.get(subject, {}).get(key.version or 0)
        if value is None:
            if old is not None:
                self._unindex(ctx, old)
                self._drop_version(ctx, subject, old.version)
            return
        try:
            sv = _schema_version(value, key, record)
        except (KeyError, TypeError, ValueError) as exc:
            self._set(self, "skipped", self.skipped + 1)
            log.warning("skipping malformed SCHEMA record at offset %s: %s", record.offset, exc)
            return
        holders = ctx.ids.get(sv.id)
        if holders:
            owner = ctx.any_version_of(sv.id)
            if (
                owner is not None
                and owner.digest != sv.digest
                and (subject, sv.version) not in {(s, v) for s, v in holders.items()}
            ):
                self._set(self, "skipped", self.skipped + 1)
                log.warning(
                    "skipping SCHEMA record at offset %s: id %s already belongs to another schema",
                    record.offset,
                    sv.id,
                )
                return
        if old is not None:
            self._unindex(ctx, old)
        # copy-on-write: readers iterate these small dicts without the write lock
        self._put(ctx.subjects, subject, {**ctx.subjects.get(subject, {}), sv.version: sv})
        self._put(ctx.ids, sv.id, {**ctx.ids.get(sv.id, {}), subject: sv.version})
        if sv.digest not in ctx.hashes:
            self._put(ctx.hashes, sv.digest, sv.id)
        if sv.id > ctx.max_id:
            self._set(ctx, "max_id", sv.id)
        for ref in sv.references:
            target = (parse_subject(subject).sibling(str(ref["subject"])).qualified, ref["version"])
            referrers = {*ctx.referrers.get(target, ()), (subject, sv.version)}
            self._put(ctx.referrers, target, referrers)

    def _unindex(self, ctx: ContextState, sv: SchemaVersion) -> None:
        holders = ctx.ids.get(sv.id)
        if holders is not None and holders.get(sv.subject) == sv.version:
            holders = {s: v for s, v in holders.items() if s != sv.subject}
            # another version of the same subject may carry the same id
            for version, other in ctx.subjects.get(sv.subject, {}).items():
                if other.id == sv.id and version != sv.version:
                    holders[sv.subject] = version
                    break
            if holders:
                self._put(ctx.ids, sv.id, holders)
            else:
                self._drop(ctx.ids, sv.id)
                if ctx.hashes.get(sv.digest) == sv.id:
                    self._drop(ctx.hashes, sv.digest)
        for ref in sv.references:
            target = (
                parse_subject(sv.subject).sibling(str(ref["subject"])).qualified,
                ref["version"],
            )
            refs = ctx.referrers.get(target)
            if refs is not None and (sv.subject, sv.version) in refs:
                # copy-on-write like the other indexes (and so a rollback can restore the set)
                remaining = refs - {(sv.subject, sv.version)}
                if remaining:
                    self._put(ctx.referrers, target, remaining)
                else:
                    self._drop(ctx.referrers, target)

    def _apply_delete_subject(
        self, key: RecordKey, value: dict[str, Any] | None, record: Record
    ) -> None:
        if value is None:
            return
        subject = key.subject or ""
        up_to = value.get("version")
        for version, sv in self.context_of(subject).versions(subject).items():
            if up_to is None or version <= up_to:
                self._set(sv, "deleted", True)

    def _apply_clear_subject(
        self, key: RecordKey, value: dict[str, Any] | None, record: Record
    ) -> None:
        if value is None:
            return
        subject = key.subject or ""
        qs = parse_subject(subject)
        ctx = self.context_of(subject)
        targets = [s for s in ctx.subjects if qs.name == "" or s == subject]
        for target in targets:
            for sv in [sv for sv in ctx.subjects[target].values() if sv.deleted]:
                self._unindex(ctx, sv)
                self._drop_version(ctx, target, sv.version)

    def _apply_config(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        self._apply_setting(self.configs, key, value)

    def _apply_mode(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        self._apply_setting(self.modes, key, value)

    def _apply_setting(
        self, table: dict[str | None, Setting], key: RecordKey, value: dict[str, Any] | None
    ) -> None:
        subject = key.subject
        if value is None:
            self._drop(table, subject)
            return
        clean = {k: v for k, v in value.items() if k not in ("subject", "offset", "ts")}
        self._put(table, subject, Setting(clean, key.to_bytes()))

    def _apply_context(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        name = key.context or DEFAULT_CONTEXT
        if value is None:
            self._drop(self.context_records, name)
        else:
            self._put(self.context_records, name, key.to_bytes())
            if name not in self.contexts:
                self._put(self.contexts, name, ContextState(name, journal=self.journal))

    def _apply_encryption_key(
        self, key: RecordKey, value: dict[str, Any] | None, record: Record
    ) -> None:
        self.encryption_keys.apply(key, value, record)

    def _apply_exporter(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        self.exporters.apply(key, value, record)

    def _apply_assoc(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        if key.resource is None or key.subject is None:
            return
        ident = (*key.resource, key.subject)
        old = self.associations.get(ident)
        if value is None:
            self.associations = {k: v for k, v in self.associations.items() if k != ident}
            return
        try:
            lifecycle = str(value.get("lifecycle") or "WEAK")
            assoc = Association(
                subject=key.subject,
                guid=str(value.get("guid") or ""),
                resource_name=key.resource[0],
                resource_namespace=key.resource[1],
                resource_id=str(value["resourceId"]),
                resource_type=key.resource[2],
                association_type=key.resource[3],
                lifecycle="STRONG" if lifecycle == "STRONG" else "WEAK",
                frozen=bool(value.get("frozen", False)),
                # Confluent keeps the first write's time as the creation time
                create_ts=old.create_ts if old is not None else record.timestamp,
                update_ts=record.timestamp,
                key=key.to_bytes(),
            )
        except (KeyError, TypeError, ValueError) as exc:
            self.skipped += 1
            log.warning("skipping malformed ASSOC record at offset %s: %s", record.offset, exc)
            return
        # copy-on-write, as for subjects: readers iterate without the write lock
        self.associations = {**self.associations, ident: assoc}

    def _apply_noop(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        return

    # ---- lookups --------------------------------------------------------------------------

    def _drop_version(self, ctx: ContextState, subject: str, version: int) -> None:
        remaining = {v: sv for v, sv in ctx.subjects.get(subject, {}).items() if v != version}
        if remaining:
            self._put(ctx.subjects, subject, remaining)
        else:
            self._drop(ctx.subjects, subject)

    def context_of(self, subject: str) -> ContextState:
        name = parse_subject(subject).context
        ctx = self.contexts.get(name)
        if ctx is None:
            ctx = ContextState(name, journal=self.journal)
            self._put(self.contexts, name, ctx)
        return ctx

    def context_view(self, subject: str) -> ContextState:
        """The context of ``subject`` for reading: an empty detached one when it has none
        yet (unlike :meth:`context_of`, which adds it to the state)."""
        name = parse_subject(subject).context
        return self.contexts.get(name) or ContextState(name)

    def find_context(self, name: str) -> ContextState | None:
        return self.contexts.get(name)

    def versions(self, subject: str) -> dict[int, SchemaVersion]:
        ctx = self.contexts.get(parse_subject(subject).context)
        return ctx.versions(subject) if ctx else {}

    def all_subject_versions(self) -> Iterator[SchemaVersion]:
        for ctx in self.contexts.values():
            for versions in ctx.subjects.values():
                yield from versions.values()

    def context_names(self) -> list[str]:
        names = {DEFAULT_CONTEXT, *self.context_records}
        names.update(name for name, ctx in self.contexts.items() if ctx.subjects)
        return sorted(names, key=lambda n: (n != DEFAULT_CONTEXT, n))


def _schema_version(value: dict[str, Any], key: RecordKey, record: Record) -> SchemaVersion:
    schema = value["schema"]
    references = list(value.get("references") or NO_REFERENCES) or NO_REFERENCES
    # an empty object is kept: Confluent tells ``"metadata": {}`` from none (hash, look-ups)
    metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else None
    rule_set = value.get("ruleSet") if isinstance(value.get("ruleSet"), dict) else None
    if not isinstance(schema, str):
        raise TypeError("schema is not a string")
    subject = sys.intern(key.subject or str(value.get("subject", "")))
    version = int(key.version if key.version is not None else value["version"])
    raw_key: bytes | None = key.to_bytes()
    if key.subject is not None and key.version is not None and raw_key == records.encode_key(key):
        raw_key = None  # Confluent's bytes for (subject, version): rebuilt when needed
    return SchemaVersion(
        subject=subject,
        version=version,
        id=int(value["id"]),
        schema_type=sys.intern(str(value.get("schemaType") or "AVRO")),
        schema=schema,
        references=references,
        metadata=metadata,
        rule_set=rule_set,
        deleted=bool(value.get("deleted", False)),
        ts=record.timestamp,
        digest=schema_hash(schema, references, metadata, rule_set),
        raw_key=raw_key,
    )


_HANDLERS = {
    records.SCHEMA: State._apply_schema,
    records.CONFIG: State._apply_config,
    records.MODE: State._apply_mode,
    records.DELETE_SUBJECT: State._apply_delete_subject,
    records.CLEAR_SUBJECT: State._apply_clear_subject,
    records.CONTEXT: State._apply_context,
    records.NOOP: State._apply_noop,
    records.KEK: State._apply_encryption_key,
    records.DEK: State._apply_encryption_key,
    records.ASSOC: State._apply_assoc,
    records.EXPORTER: State._apply_exporter,
    records.EXPORTER_STATE: State._apply_exporter,
    records.EXPORTER_LEASE: State._apply_exporter,
}
