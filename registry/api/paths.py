"""Request paths as the routers read them: encoded slashes kept inside a subject name, one
trailing slash dropped (Jersey matches ``/subjects/x/versions/`` as ``/subjects/x/versions``),
and ``/contexts/{ctx}/...`` rewritten to the qualified-subject routes the way Confluent's
``ContextFilter`` does. The app applies it before routing; the auth middleware applies it to its
own view of the request so that both decide on the same path.

A path whose percent-escapes are not UTF-8 (``%FF``, a truncated ``%E2%82``, an encoded
surrogate) is refused with 400, as Jetty 12 refuses it under the URI compliance Confluent 8.x
configures (``BAD_UTF8_ENCODING`` and ``TRUNCATED_UTF8_ENCODING`` are not allowed). Decoding them
to U+FFFD, as the ASGI server does, would make ``/subjects/%FF`` and ``/subjects/%FE`` one
subject.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote, unquote, unquote_to_bytes, urlencode

from registry.api.deps import ENCODED_SLASH
from registry.errors import RegistryError

Scope = dict[str, Any]


def context_prefix(context: str) -> str:
    """Confluent's ``QualifiedSubject.normalizeContext``: ``ctx``, ``.ctx``, ``:.ctx`` and
    ``:.ctx:`` all name ``:.ctx:``; the default context is the empty prefix. A colon inside the
    name is a 400."""
    if context.startswith(":"):
        context = context[1:]
    if context.endswith(":"):
        context = context[:-1]
    if ":" in context:
        raise RegistryError(400, "Context name cannot contain a colon")
    if not context.startswith("."):
        context = "." + context
    return "" if context == "." else f":{context}:"


def _qualified(segment: str) -> bool:
    return segment.startswith((":.", ":*:"))


#: characters left as they are when a rewritten path is percent-encoded again (RFC 3986 pchar)
_PCHAR_SAFE = "!$&'()*+,;=:@"


def check_encoding(raw: bytes) -> None:
    """Raise :class:`RegistryError` (400) unless the path ``raw`` decodes as strict UTF-8 and
    does not spell the character that stands for an encoded slash while routing."""
    if b"%" not in raw and raw.isascii():
        return
    try:
        text = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.end].hex(" ").upper()
        raise RegistryError(
            400, f"Bad UTF-8 encoding in the request path: the escaped bytes {bad} are not UTF-8"
        ) from None
    if ENCODED_SLASH in text:
        raise RegistryError(
            400,
            "The request path contains U+F8FF, which this registry reserves for an encoded '/'"
            " (%2F) in a path segment",
        )


#: Confluent's query parameters declared as ``List<...>``: every value counts
LIST_PARAMETERS = frozenset({"associationType", "findTags", "key", "value", "lifecycle"})


def first_values(query_string: bytes) -> bytes:
    """``query_string`` with each single-valued parameter at its first value only: Jersey binds
    a repeated ``@QueryParam`` of a scalar type to its first value (``getFirst``), where the
    routers here would read the last one."""
    if b"&" not in query_string:
        return query_string
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    seen: set[str] = set()
    kept = []
    for key, value in pairs:
        if key in seen and key not in LIST_PARAMETERS:
            continue
        seen.add(key)
        kept.append((key, value))
    if len(kept) == len(pairs):
        return query_string
    return urlencode(kept).encode("latin-1")


def rewrite_paths(scope: Scope) -> None:
    """Rewrite ``scope`` in place; raises :class:`RegistryError` (400) for a context name with
    a colon or a path that is not UTF-8 (:func:`check_encoding`). A repeated single-valued query
    parameter keeps its first value (:func:`first_values`)."""
    raw = scope.get("raw_path") or scope["path"].encode()
    check_encoding(raw)
    if query_string := scope.get("query_string"):
        scope["query_string"] = first_values(query_string)
    raw_text = raw.decode("latin-1")
    if "%2f" in raw_text.lower():
        parts = raw_text.split("/")
        scope["path"] = "/".join(
            unquote(p.replace("%2F", ENCODED_SLASH).replace("%2f", ENCODED_SLASH)) for p in parts
        )
    path: str = scope["path"]
    # /ui/ is the web UI's index, against which its relative asset and API URLs resolve
    if len(path) > 1 and path.endswith("/") and path != "/ui/":
        path = path[:-1]
        scope["path"] = path
        if raw_text.endswith("/"):
            scope["raw_path"] = raw_text[:-1].encode("latin-1")
    if not path.startswith("/contexts/"):
        return
    pieces = path.split("/")
    # ["", "contexts", ctx, resource, ...]
    if len(pieces) < 4:
        return
    ctx, resource, rest = pieces[2], pieces[3], pieces[4:]
    prefix = context_prefix(ctx)
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    if resource == "subjects":
        if rest:
            if not _qualified(rest[0]):
                rest[0] = prefix + rest[0]
            new = "/subjects/" + "/".join(rest)
        else:
            new = "/subjects"
            query = _prefixed(query, "subjectPrefix", prefix)
    elif resource == "schemas":
        new = "/schemas" + ("/" + "/".join(rest) if rest else "")
        if rest and rest[0] == "ids":
            query = _prefixed(query, "subject", prefix)
        elif not rest:
            query = _prefixed(query, "subjectPrefix", prefix)
    elif resource in ("config", "mode"):
        target = rest[0] if rest else ""
        new = f"/{resource}/" + (target if _qualified(target) else prefix + target)
        if new.endswith("/"):
            new = new[:-1]
    elif resource == "compatibility" and len(rest) >= 2 and rest[0] == "subjects":
        if not _qualified(rest[1]):
            rest[1] = prefix + rest[1]
        new = "/compatibility/" + "/".join(rest)
    elif resource in ("dek-registry", "associations"):
        # Confluent's filter: the segment after any "subjects" or "deks" is a subject; a
        # created or updated association is in the context
        for index in range(len(rest) - 1):
            if rest[index] in ("subjects", "deks") and not _qualified(rest[index + 1]):
                rest[index + 1] = prefix + rest[index + 1]
        new = f"/{resource}" + "".join("/" + p for p in rest)
        if resource == "associations" and scope.get("method") in ("POST", "PUT", "PATCH"):
            query = [(k, v) for k, v in query if k != "context"] + [("context", prefix)]
    else:
        return
    scope["path"] = new
    scope["raw_path"] = "/".join(
        quote(p.replace(ENCODED_SLASH, "/"), safe=_PCHAR_SAFE) for p in new.split("/")
    ).encode()
    scope["query_string"] = urlencode(query).encode()


def _prefixed(query: list[tuple[str, str]], name: str, prefix: str) -> list[tuple[str, str]]:
    """``name`` qualified with ``prefix`` (added when absent), as Confluent's filter does."""
    values = [v for k, v in query if k == name] or [""]
    others = [(k, v) for k, v in query if k != name]
    return others + [(name, v if _qualified(v) else prefix + v) for v in values]
