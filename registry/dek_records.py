"""DEK registry records and their in-memory index.

Key encryption keys (KEKs) and data encryption keys (DEKs) are records of Confluent's
``_dek_registry_keys`` format: JSON keys ``{"tenant":"default","name":N,"type":"KEK"}`` and
``{"tenant":"default","kekName":K,"subject":S,"algorithm":A,"version":V,"type":"DEK"}``, JSON
values with the key's fields, ``deleted``, ``type`` and ``ts`` (ms, the write's time); a
tombstone (``None``) is a permanent delete. They travel in the registry's one record log (see
DESIGN.md), so replicas, replay and ``schema-registry copy`` carry them like schemas.
:class:`KeyIndex` is built only by applying them, in log order (``registry.state`` calls
:meth:`KeyIndex.apply`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from registry import records
from registry.journal import Journal, Journaled
from registry.records import Record, RecordKey

log = logging.getLogger(__name__)

TENANT = "default"
ALGORITHMS = ("AES128_GCM", "AES256_GCM", "AES256_SIV")
DEFAULT_ALGORITHM = "AES256_GCM"
MIN_VERSION = 1


@dataclass(frozen=True, slots=True)
class Kek:
    name: str
    kms_type: str
    kms_key_id: str
    kms_props: dict[str, str]
    doc: str | None
    shared: bool
    deleted: bool
    ts: int = 0

    def value(self) -> dict[str, Any]:
        """The record value (Jackson's field order, nulls left out)."""
        out: dict[str, Any] = {
            **self._described(),
            "deleted": self.deleted,
            "type": records.KEK,
            "ts": _now_ms(),
        }
        return {k: v for k, v in out.items() if v is not None}

    def entity(self) -> dict[str, Any]:
        """The REST ``Kek`` entity."""
        out: dict[str, Any] = {
            **self._described(),
            "ts": self.ts,
        }
        if self.deleted:
            out["deleted"] = True
        return {k: v for k, v in out.items() if v is not None}

    def equivalent(self, other: Kek) -> bool:
        """Same key, whatever its deleted flag and timestamp."""
        return self._described() == other._described()

    def _described(self) -> dict[str, Any]:
        """What the key is (name, KMS, props, doc, shared), in Jackson's field order: the
        start of both the record value and the REST entity, and what ``equivalent`` compares."""
        return {
            "name": self.name,
            "kmsType": self.kms_type,
            "kmsKeyId": self.kms_key_id,
            "kmsProps": dict(sorted(self.kms_props.items())),
            "doc": self.doc,
            "shared": self.shared,
        }


@dataclass(frozen=True, slots=True)
class Dek:
    kek_name: str
    subject: str
    algorithm: str
    version: int
    encrypted_key_material: str | None
    deleted: bool
    ts: int = 0

    @property
    def identity(self) -> tuple[str, str, str, int]:
        return (self.kek_name, self.subject, self.algorithm, self.version)

    def value(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kekName": self.kek_name,
            "subject": self.subject,
            "algorithm": self.algorithm,
            "version": self.version,
            "encryptedKeyMaterial": self.encrypted_key_material,
            "deleted": self.deleted,
            "type": records.DEK,
            "ts": _now_ms(),
        }
        return {k: v for k, v in out.items() if v is not None}

    def entity(self, key_material: str | None = None) -> dict[str, Any]:
        """The REST ``Dek`` entity; ``keyMaterial`` only for a shared KEK's DEK."""
        out: dict[str, Any] = {
            "kekName": self.kek_name,
            "subject": self.subject,
            "version": self.version,
            "algorithm": self.algorithm,
            "encryptedKeyMaterial": self.encrypted_key_material,
            "keyMaterial": key_material,
            "ts": self.ts,
        }
        if self.deleted:
            out["deleted"] = True
        return {k: v for k, v in out.items() if v is not None}

    def equivalent(self, other: Dek) -> bool:
        return (
            self.identity == other.identity
            and self.encrypted_key_material == other.encrypted_key_material
        )


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _ts(value: dict[str, Any], record: Record) -> int:
    """When the record was written: the value's ``ts`` (kept through a copy into another
    store), else the log's timestamp (records Confluent wrote carry none)."""
    ts = value.get("ts")
    return ts if isinstance(ts, int) and not isinstance(ts, bool) else record.timestamp


# ---- keys -----------------------------------------------------------------------------------


def _json(text: str) -> str:
    return orjson.dumps(text).decode()


def kek_key(name: str) -> RecordKey:
    raw = f'{{"tenant":"{TENANT}","name":{_json(name)},"type":"KEK"}}'.encode()
    return RecordKey(records.KEK, raw=raw)


def dek_key(kek_name: str, subject: str, algorithm: str, version: int) -> RecordKey:
    raw = (
        f'{{"tenant":"{TENANT}","kekName":{_json(kek_name)},"subject":{_json(subject)},'
        f'"algorithm":"{algorithm}","version":{int(version)},"type":"DEK"}}'
    ).encode()
    return RecordKey(records.DEK, raw=raw)


# ---- the index ------------------------------------------------------------------------------


@dataclass
class KeyIndex(Journaled):
    """Every KEK and DEK of the default tenant, by name and by (kek, subject, algorithm,
    version). Copy-on-write per KEK so readers iterate without the write lock. Its changes are
    attribute assignments only, so the state's undo journal (``registry.journal``) records them
    all."""

    keks: dict[str, Kek] = field(default_factory=dict)
    #: kek name -> (subject, algorithm, version) -> dek
    deks: dict[str, dict[tuple[str, str, int], Dek]] = field(default_factory=dict)
    skipped: int = 0
    #: offset of the last record applied from a separate keys log (Kafka's keys topic)
    offset: int = -1
    #: the state's undo journal (last: attribute changes are journaled once it is set)
    journal: Journal | None = field(default=None, repr=False, compare=False)

    def apply_record(self, record: Record) -> None:
        """A record of a separate keys log: skipped when already applied."""
        if 0 <= record.offset <= self.offset:
            return
        if record.offset >= 0:
            self.offset = record.offset
        try:
            key = records.decode_key(record.key)
            value = records.decode_value(record.value)
        except records.RecordFormatError as exc:
            self.skipped += 1
            log.warning("skipping keys record at offset %s: %s", record.offset, exc)
            return
        if key.keytype in records.ENCRYPTION_KEY_TYPES:
            self.apply(key, value, record)

    def apply(self, key: RecordKey, value: dict[str, Any] | None, record: Record) -> None:
        try:
            data = orjson.loads(key.raw or key.to_bytes())
            if data.get("tenant", TENANT) != TENANT:
                return  # another tenant's key (Confluent Cloud): not served here
            if key.keytype == records.KEK:
                self._apply_kek(str(data["name"]), value, record)
            else:
                self._apply_dek(data, value, record)
        except (KeyError, TypeError, ValueError, orjson.JSONDecodeError) as exc:
            self.skipped += 1
            log.warning(
                "skipping malformed %s record at offset %s: %s", key.keytype, record.offset, exc
            )

    def _apply_kek(self, name: str, value: dict[str, Any] | None, record: Record) -> None:
        if value is None:
            self.keks = {k: v for k, v in self.keks.items() if k != name}
            return
        props = value.get("kmsProps") or {}
        kek = Kek(
            name=name,
            kms_type=str(value["kmsType"]),
            kms_key_id=str(value["kmsKeyId"]),
            kms_props={str(k): str(v) for k, v in props.items()},
            doc=value.get("doc"),
            shared=bool(value.get("shared", False)),
            deleted=bool(value.get("deleted", False)),
            ts=_ts(value, record),
        )
        self.keks = {**self.keks, name: kek}

    def _apply_dek(
        self, data: dict[str, Any], value: dict[str, Any] | None, record: Record
    ) -> None:
        kek_name = str(data["kekName"])
        ident = (str(data["subject"]), str(data["algorithm"]), int(data["version"]))
        current = self.deks.get(kek_name, {})
        if value is None:
            remaining = {k: v for k, v in current.items() if k != ident}
            if remaining:
                self.deks = {**self.deks, kek_name: remaining}
            else:
                self.deks = {k: v for k, v in self.deks.items() if k != kek_name}
            return
        dek = Dek(
            kek_name=kek_name,
            subject=ident[0],
            algorithm=ident[1],
            version=ident[2],
            encrypted_key_material=value.get("encryptedKeyMaterial"),
            deleted=bool(value.get("deleted", False)),
            ts=_ts(value, record),
        )
        self.deks = {**self.deks, kek_name: {**current, ident: dek}}

    # ---- lookups ------------------------------------------------------------------------

    def kek(self, name: str, deleted: bool) -> Kek | None:
        kek = self.keks.get(name)
        return kek if kek is not None and (deleted or not kek.deleted) else None

    def kek_names(self, deleted: bool) -> list[str]:
        return sorted(n for n, k in self.keks.items() if deleted or not k.deleted)

    def deks_of(self, kek_name: str, deleted: bool) -> list[Dek]:
        found = [d for d in self.deks.get(kek_name, {}).values() if deleted or not d.deleted]
        return sorted(found, key=lambda d: (d.subject, d.algorithm, d.version))

    def versions(self, kek_name: str, subject: str, algorithm: str, deleted: bool) -> list[Dek]:
        return [
            d
            for d in self.deks_of(kek_name, deleted)
            if d.subject == subject and d.algorithm == algorithm
        ]

    def dek(
        self, kek_name: str, subject: str, algorithm: str, version: int, deleted: bool
    ) -> Dek | None:
        if version == -1:
            found = self.versions(kek_name, subject, algorithm, deleted)
            return found[-1] if found else None
        dek = self.deks.get(kek_name, {}).get((subject, algorithm, version))
        return dek if dek is not None and (deleted or not dek.deleted) else None

    def count(self) -> int:
        return len(self.keks) + sum(len(v) for v in self.deks.values())
