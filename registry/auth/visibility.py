"""What a caller whose rules do not grant everything may see.

* Listings are filtered by the routers before they page (``offset``/``limit`` count only what
  the caller may see): subjects, schemas, the subjects and versions of an id, the contexts and
  ids of a GUID, and the ids of ``referencedby``. A schema id is visible through any readable
  subject that holds it (in the id's context).
* ``GET /contexts`` lists the default context ``.`` (Confluent always lists it) and the
  contexts holding at least one subject the caller may read (soft-deleted ones included).
* References in a register, lookup or compatibility request that name a subject the caller may
  not read are renamed to a subject that does not exist (:func:`hide_references`), so the
  answer is exactly the one for a missing reference, and nothing is stored.

:class:`registry.auth.middleware.AuthMiddleware` puts the caller's :class:`Grants` in the
request state under :data:`GRANTS`; without it (authentication off) everything is visible.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from typing import Any

import orjson
from fastapi import Request

from registry.auth.rules import Grants, Permission
from registry.core import Registry
from registry.state import ContextState, SchemaVersion
from registry.subjects import DEFAULT_CONTEXT, parse_subject

#: key of the request state holding the caller's grants
GRANTS = "grants"


def grants_of(request: Request) -> Grants | None:
    """The caller's grants when they restrict what it may read, else None."""
    grants: Grants | None = request.scope.get("state", {}).get(GRANTS)
    if grants is None or grants.everything(Permission.READ):
        return None
    return grants


def readable(grants: Grants, subject: str) -> bool:
    return grants.can(subject, Permission.READ)


def id_visible(grants: Grants, ctx: ContextState, schema_id: int) -> bool:
    """Whether a readable subject of ``ctx`` holds ``schema_id``."""
    return any(readable(grants, s) for s in list(ctx.ids.get(schema_id, {})))


def subjects(request: Request, names: list[str]) -> list[str]:
    grants = grants_of(request)
    return names if grants is None else [s for s in names if readable(grants, s)]


def versions(request: Request, found: list[SchemaVersion]) -> list[SchemaVersion]:
    grants = grants_of(request)
    return found if grants is None else [sv for sv in found if readable(grants, sv.subject)]


def pairs(request: Request, found: list[tuple[str, int]]) -> list[tuple[str, int]]:
    grants = grants_of(request)
    return found if grants is None else [p for p in found if readable(grants, p[0])]


def contexts(request: Request, reg: Registry, names: list[str]) -> list[str]:
    grants = grants_of(request)
    if grants is None:
        return names
    out = []
    for name in names:
        ctx = reg.state.find_context(name)
        held = list(ctx.subjects) if ctx is not None else []
        if name == DEFAULT_CONTEXT or any(readable(grants, s) for s in held):
            out.append(name)
    return out


def by_guid(request: Request, reg: Registry, found: list[SchemaVersion]) -> list[SchemaVersion]:
    """The contexts' schemas with a GUID the caller may see."""
    grants = grants_of(request)
    if grants is None:
        return found
    return [sv for sv in found if id_visible(grants, reg.state.context_of(sv.subject), sv.id)]


def ids_in(request: Request, reg: Registry, subject: str, ids: Iterable[int]) -> list[int]:
    """``ids`` of the context of ``subject`` the caller may see."""
    grants = grants_of(request)
    if grants is None:
        return list(ids)
    ctx = reg.state.context_of(subject)
    return [i for i in ids if id_visible(grants, ctx, i)]


# ---- references -----------------------------------------------------------------------------


def hide_references(
    body: bytes, subject: str, grants: Grants
) -> tuple[bytes, list[tuple[bytes, bytes]]] | None:
    """``body`` with each reference to a subject the caller may not read renamed to a random
    subject that does not exist, and the (new name, old name) pairs, as JSON string bytes, to put
    back in the answer; None when nothing is hidden (or the body is not a request with
    references: the route answers that as usual). ``subject`` is the referencing subject: an
    unqualified reference is in its context."""
    try:  # parsed even without a literal "references": a key may be written with escapes
        doc: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    refs = doc.get("references") if isinstance(doc, dict) else None
    if not isinstance(refs, list):
        return None
    base = parse_subject(subject)
    stem = "hidden-" + secrets.token_hex(8)
    replacements: list[tuple[bytes, bytes]] = []
    for i, ref in enumerate(refs):
        name = ref.get("subject") if isinstance(ref, dict) else None
        if not isinstance(name, str) or not name:
            continue
        if readable(grants, base.sibling(name).qualified):
            continue
        prefix = _context_prefix(name)
        hidden = f"{prefix}{stem}-{i:06d}"
        ref["subject"] = hidden
        replacements.append((_json_text(hidden), _json_text(name)))
    if not replacements:
        return None
    return orjson.dumps(doc), replacements


def _context_prefix(name: str) -> str:
    """``:.ctx:`` of a qualified name, else ``""``."""
    if name.startswith(":") and name.count(":") >= 2:
        return name[: name.index(":", 1) + 1]
    return ""


def _json_text(value: str) -> bytes:
    """``value`` as it appears inside a JSON string."""
    return orjson.dumps(value)[1:-1]
