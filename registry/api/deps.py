"""What routes need from the request: the registry instance and decoded subject names."""

from __future__ import annotations

from fastapi import Request

from registry.core import Registry
from registry.subjects import qualify

#: stands in for an encoded slash (%2F) in a path segment while routing; no valid subject
#: contains it (it is a private-use code point chosen for that)
ENCODED_SLASH = "\uf8ff"
#: the request state key a follower sets on a write it relays from the leader: the leader's own
#: audit middleware records it (with the outcome and the state it changed), so the follower's
#: does not (one audit event per request, however many instances it crossed)
AUDIT_RELAYED = "audit_relayed"


def registry_of(request: Request) -> Registry:
    reg: Registry = request.app.state.registry
    return reg


def decoded(segment: str) -> str:
    """A path segment as the client wrote it: an encoded slash (%2F) is a ``/`` again."""
    return segment.replace(ENCODED_SLASH, "/")


def subject_param(subject: str) -> str:
    """The subject a route acts on: decoded, then in the canonical form (``:.:x`` is ``x``,
    ``:.ctx`` is ``:.ctx:``), the same the auth middleware decides on (:func:`canonical`)."""
    return canonical(decoded(subject))


def canonical(subject: str) -> str:
    """``subject`` as the registry stores and checks it; the default context itself (``:.:``)
    stays as written (it names the global scope in ``/config`` and ``/mode``)."""
    return qualify(subject) or subject
