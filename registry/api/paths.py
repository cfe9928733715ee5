"""Request paths as the routers read them: encoded slashes kept inside a subject name, and
``/contexts/{ctx}/...`` rewritten to the qualified-subject routes. The app applies it before
routing; the auth middleware applies it to its own view of the request so that both decide on
the same path.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

from registry.api.deps import ENCODED_SLASH

Scope = dict[str, Any]


def rewrite_paths(scope: Scope) -> None:
    raw = scope.get("raw_path") or scope["path"].encode()
    raw_text = raw.decode("latin-1")
    if "%2f" in raw_text.lower():
        parts = raw_text.split("/")
        scope["path"] = "/".join(
            unquote(p.replace("%2F", ENCODED_SLASH).replace("%2f", ENCODED_SLASH)) for p in parts
        )
    path: str = scope["path"]
    if not path.startswith("/contexts/"):
        return
    pieces = path.split("/")
    # ["", "contexts", ctx, resource, ...]
    if len(pieces) < 4:
        return
    ctx, resource, rest = pieces[2], pieces[3], pieces[4:]
    prefix = f":{ctx}:"
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if resource == "subjects":
        if rest:
            rest[0] = prefix + rest[0]
            new = "/subjects/" + "/".join(rest)
        else:
            new = "/subjects"
            query.append(("subjectPrefix", prefix))
    elif resource == "schemas":
        new = "/schemas" + ("/" + "/".join(rest) if rest else "")
        if rest and rest[0] == "ids":
            query.append(("subject", prefix))
        elif not rest:
            query.append(("subjectPrefix", prefix))
    elif resource in ("config", "mode"):
        new = f"/{resource}/" + prefix + (rest[0] if rest else "")
    elif resource == "compatibility" and len(rest) >= 2 and rest[0] == "subjects":
        rest[1] = prefix + rest[1]
        new = "/compatibility/" + "/".join(rest)
    else:
        return
    scope["path"] = new
    scope["raw_path"] = new.encode()
    scope["query_string"] = urlencode(query).encode()
