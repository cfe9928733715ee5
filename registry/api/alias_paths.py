"""Confluent 8.x's ``AliasFilter`` before routing: the path segment after ``subjects`` (or
``deks``, where ``aliasForDeks`` wins) and the ``subject`` query parameter of
``/schemas/ids/...`` are replaced by their alias target."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode

from registry import aliases
from registry.api.deps import ENCODED_SLASH
from registry.state import State


def rewrite_aliases(scope: dict[str, Any], state: State) -> None:
    if not state.configs:
        return
    path: str = scope["path"]
    pieces = path.split("/")
    changed = False
    for_deks = path.startswith("/dek-registry")
    for index in range(len(pieces) - 1):
        # the segment after ``subjects`` (or the DEK registry's ``deks``)
        if pieces[index] in ("subjects", "deks") and pieces[index + 1]:
            subject = pieces[index + 1].replace(ENCODED_SLASH, "/")
            target = aliases.resolve(state, subject, for_deks=for_deks)
            if target != subject:
                pieces[index + 1] = target.replace("/", ENCODED_SLASH)
                changed = True
            break
    if changed:
        scope["path"] = "/".join(pieces)
    if path.startswith("/schemas/ids"):
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        replaced = [(k, aliases.resolve(state, v) if k == "subject" else v) for k, v in query]
        if replaced != query:
            scope["query_string"] = urlencode(replaced).encode()
