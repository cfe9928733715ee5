"""What routes need from the request: the registry instance and decoded subject names."""

from __future__ import annotations

from fastapi import Request

from registry.core import Registry

#: stands in for an encoded slash (%2F) in a path segment while routing; no valid subject
#: contains it (it is a private-use code point chosen for that)
ENCODED_SLASH = "\uf8ff"


def registry_of(request: Request) -> Registry:
    reg: Registry = request.app.state.registry
    return reg


def subject_param(subject: str) -> str:
    return subject.replace(ENCODED_SLASH, "/")
