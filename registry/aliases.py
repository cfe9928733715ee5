"""Subject aliases (Confluent 8.x): a subject whose own config carries ``alias`` stands for the
aliased subject wherever a request names it (``/subjects/{s}/...``, ``/compatibility/subjects/
{s}/...``, ``/schemas/ids/{id}?subject=s``, association subjects). Confluent resolves one hop,
relative to the alias's context, and only from the subject's own config record.
"""

from __future__ import annotations

from registry.state import State
from registry.subjects import parse_subject


def resolve(state: State, subject: str, *, for_deks: bool = False) -> str:
    """The subject ``subject`` stands for: its alias target, else itself (unchanged). For the
    DEK registry's paths ``aliasForDeks``, when set, wins over ``alias`` (Confluent 8.x)."""
    if not subject:
        return subject
    qualified = parse_subject(subject).qualified
    setting = state.configs.get(qualified)
    alias = setting.value.get("alias") if setting is not None else None
    if for_deks and setting is not None and setting.value.get("aliasForDeks"):
        alias = setting.value.get("aliasForDeks")
    if not isinstance(alias, str) or not alias:
        return subject
    return parse_subject(qualified).sibling(alias).qualified
