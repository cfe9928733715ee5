"""Subject aliases (Confluent 8.x): a subject whose own config carries ``alias`` stands for the
aliased subject wherever a request names it (``/subjects/{s}/...``, ``/compatibility/subjects/
{s}/...``, ``/schemas/ids/{id}?subject=s``, association subjects). Confluent resolves one hop,
relative to the alias's context, and only from the subject's own config record.
"""

from __future__ import annotations

from registry.state import State
from registry.subjects import parse_subject


def resolve(state: State, subject: str) -> str:
    """The subject ``subject`` stands for: its alias target, else itself (unchanged)."""
    if not subject:
        return subject
    qualified = parse_subject(subject).qualified
    setting = state.configs.get(qualified)
    alias = setting.value.get("alias") if setting is not None else None
    if not isinstance(alias, str) or not alias:
        return subject
    return parse_subject(qualified).sibling(alias).qualified
