"""A record of the source's log as the requests that replay it on the destination (pure).

- DELETE_SUBJECT: the destination subject is soft-deleted.
- SCHEMA: the destination subject is put in IMPORT mode (once), then the version is registered
  with its id and version (references renamed like their subjects); ``deleted`` soft-deletes
  it; a tombstone deletes it permanently (soft first, as the REST API requires).
- CONFIG / MODE of a subject: copied (``PUT``; a tombstone ``DELETE``s). A mode other than
  READONLY/READONLY_OVERRIDE is written as IMPORT: the destination must accept the imports.
- CONFIG / MODE of a context (the global ones are the default context's): copied to the
  context they export into, when the exporter exports into a context of its own (``contextType``
  AUTO or CUSTOM) and everything (``:*:``), as Confluent's exporter does; the destination's
  global settings are never touched. Such a request is a barrier: sent after every record
  before it and before any after it (it governs every subject of its context).
- Everything else (contexts, ``__GLOBAL`` settings, DEKs, associations, exporters) is not
  exported.

Log order is dependency order: a version's references were registered before it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from registry import records
from registry.exporters.model import (
    ALL_CONTEXTS,
    Exporter,
    destination_context,
    destination_subject,
    matches,
)
from registry.records import Record
from registry.subjects import DEFAULT_CONTEXT, GLOBAL_CONTEXT, parse_subject

#: Confluent error codes that mean "already as wanted" for each kind of request
GONE = frozenset({40401, 40402, 40404, 40406, 40408, 40409})
EXPORTED = frozenset({records.SCHEMA, records.CONFIG, records.MODE, records.DELETE_SUBJECT})


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Any = None
    #: error codes that count as success (the destination already is as wanted)
    accept: frozenset[int] = field(default_factory=frozenset)
    #: a request to send first when this one is answered with one of ``retry_after`` codes
    before: Request | None = None
    retry_after: frozenset[int] = field(default_factory=frozenset)
    #: the destination subject this request needs in IMPORT mode first
    import_subject: str | None = None
    #: sent alone, after everything before it and before anything after it
    barrier: bool = False


def _path(subject: str) -> str:
    return quote(subject, safe="")


def for_record(exporter: Exporter, record: Record, cluster_id: str) -> list[Request]:
    """The requests replaying ``record`` on the destination (none when it is not exported)."""
    try:
        key = records.decode_key(record.key)
        value = records.decode_value(record.value)
    except records.RecordFormatError:
        return []
    subject = key.subject
    if key.keytype not in EXPORTED:
        return []
    if key.keytype in (records.CONFIG, records.MODE):
        context = _context_of_setting(subject)
        if context is not None:
            return _context_setting(exporter, key.keytype, context, value, cluster_id)
    if subject is None or not parse_subject(subject).name or not matches(exporter, subject):
        return []
    dest = destination_subject(exporter, subject, cluster_id)
    if key.keytype == records.SCHEMA:
        return _schema(exporter, subject, dest, key.version or 0, value, cluster_id)
    if key.keytype == records.DELETE_SUBJECT:
        if value is None:
            return []
        return [Request("DELETE", f"/subjects/{_path(dest)}", accept=GONE, import_subject=dest)]
    return _setting(key.keytype, dest, value)


def _context_of_setting(subject: str | None) -> str | None:
    """The context a CONFIG/MODE key sets (the default one for the global key), or None when
    it is a subject's."""
    if subject is None:
        return DEFAULT_CONTEXT
    qs = parse_subject(subject)
    return qs.context if not qs.name else None


def _context_setting(
    exporter: Exporter,
    keytype: str,
    context: str,
    value: dict[str, Any] | None,
    cluster_id: str,
) -> list[Request]:
    if context == GLOBAL_CONTEXT or exporter.context_type not in ("AUTO", "CUSTOM"):
        return []
    if ALL_CONTEXTS not in exporter.subjects:
        return []
    dest = f":{destination_context(exporter, context, cluster_id)}:"
    return [
        dataclasses.replace(r, barrier=True, import_subject=None)
        for r in _setting(keytype, dest, value)
    ]


def _setting(keytype: str, dest: str, value: dict[str, Any] | None) -> list[Request]:
    """The requests copying a CONFIG or MODE record's value to ``dest`` (a subject, or a
    context as ``:.ctx:``)."""
    if keytype == records.CONFIG:
        if value is None:
            return [Request("DELETE", f"/config/{_path(dest)}", accept=GONE)]
        body = {k: v for k, v in value.items() if k not in ("compatibilityLevel", "subject")}
        if value.get("compatibilityLevel"):
            body["compatibility"] = value["compatibilityLevel"]
        return [Request("PUT", f"/config/{_path(dest)}", body)]
    mode = (value or {}).get("mode")
    if mode not in ("READONLY", "READONLY_OVERRIDE"):
        mode = "IMPORT"
    return [Request("PUT", f"/mode/{_path(dest)}?force=true", {"mode": mode})]


def _schema(
    exporter: Exporter,
    subject: str,
    dest: str,
    version: int,
    value: dict[str, Any] | None,
    cluster_id: str,
) -> list[Request]:
    one = f"/subjects/{_path(dest)}/versions/{version}"
    if value is None:
        soft = Request("DELETE", one, accept=GONE)
        return [
            Request(
                "DELETE",
                one + "?permanent=true",
                accept=GONE,
                before=soft,
                retry_after=frozenset({40407}),
                import_subject=dest,
            )
        ]
    if value.get("deleted"):
        return [Request("DELETE", one, accept=GONE, import_subject=dest)]
    dest_ctx = parse_subject(dest).context
    references = []
    for ref in value.get("references") or []:
        target = parse_subject(subject).sibling(str(ref.get("subject"))).qualified
        target_dest = parse_subject(destination_subject(exporter, target, cluster_id))
        name = target_dest.name if target_dest.context == dest_ctx else target_dest.qualified
        references.append({**ref, "subject": name})
    body: dict[str, Any] = {
        "schema": value.get("schema"),
        "schemaType": value.get("schemaType") or "AVRO",
        "references": references or None,
        "metadata": value.get("metadata"),
        "ruleSet": value.get("ruleSet"),
        "id": value.get("id"),
        "version": version,
    }
    body = {k: v for k, v in body.items() if v is not None}
    if body["schemaType"] == "AVRO":
        del body["schemaType"]
    return [Request("POST", f"/subjects/{_path(dest)}/versions", body, import_subject=dest)]
