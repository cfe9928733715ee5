"""Exporter definitions: request validation, Confluent's error codes, and the mapping of a
source subject to its destination subject (pure functions, no I/O)."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from registry.errors import RegistryError
from registry.subjects import DEFAULT_CONTEXT, parse_subject

CONTEXT_TYPES = ("AUTO", "CUSTOM", "NONE")
STARTING, RUNNING, PAUSED, ERROR = "STARTING", "RUNNING", "PAUSED", "ERROR"
STATES = (STARTING, RUNNING, PAUSED, ERROR)
DEFAULT_SUBJECTS = ("*",)
DEFAULT_RENAME = "${subject}"
URL_KEY = "schema.registry.url"
ALL_CONTEXTS = ":*:"
_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,256}$")
_CONTEXT = re.compile(r"^\.?[A-Za-z0-9_.\-]{1,256}$")


# ---- Confluent's error codes ---------------------------------------------------------------


def not_found(name: str) -> RegistryError:
    return RegistryError(40450, f"Exporter '{name}' not found.")


def invalid_name(name: object) -> RegistryError:
    return RegistryError(40950, f"Missing or invalid exporter name: {name!r}")


def invalid_config(detail: str) -> RegistryError:
    return RegistryError(40951, f"Missing or invalid exporter config: {detail}")


def invalid_subjects(detail: str) -> RegistryError:
    return RegistryError(40952, f"Invalid exporter subjects: {detail}")


def already_exists(name: str) -> RegistryError:
    return RegistryError(40960, f"Exporter '{name}' already exists.")


def already_running(name: str) -> RegistryError:
    return RegistryError(40961, f"Exporter '{name}' is already running.")


def not_paused(name: str) -> RegistryError:
    return RegistryError(40963, f"Exporter '{name}' is not paused.")


def too_many(limit: int) -> RegistryError:
    return RegistryError(40964, f"Too many exporters: at most {limit} are allowed.")


# ---- definitions -------------------------------------------------------------------------


@dataclass(frozen=True)
class Exporter:
    """One exporter's definition; ``config`` holds its secrets encrypted (``secrets``)."""

    name: str
    context_type: str = "AUTO"
    context: str | None = None
    subjects: tuple[str, ...] = DEFAULT_SUBJECTS
    subject_rename_format: str = DEFAULT_RENAME
    config: dict[str, str] = field(default_factory=dict)

    def value(self) -> dict[str, Any]:
        """The EXPORTER record value."""
        return {
            "name": self.name,
            "contextType": self.context_type,
            "context": self.context,
            "subjects": list(self.subjects),
            "subjectRenameFormat": self.subject_rename_format,
            "config": dict(self.config),
        }

    @classmethod
    def from_value(cls, value: dict[str, Any]) -> Exporter:
        return cls(
            name=str(value["name"]),
            context_type=str(value.get("contextType") or "AUTO"),
            context=value.get("context"),
            subjects=tuple(value.get("subjects") or DEFAULT_SUBJECTS),
            subject_rename_format=str(value.get("subjectRenameFormat") or DEFAULT_RENAME),
            config={str(k): str(v) for k, v in (value.get("config") or {}).items()},
        )


def check_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise invalid_name(name)
    return name


def check_fields(body: dict[str, Any], base: Exporter) -> Exporter:
    """``base`` with the fields ``body`` gives (create: ``base`` holds the defaults), each
    checked; ``config`` is merged into ``base.config`` (its secrets not yet encrypted)."""
    context_type = body.get("contextType", base.context_type)
    if context_type is None:
        context_type = "AUTO"
    if not isinstance(context_type, str) or context_type.upper() not in CONTEXT_TYPES:
        raise invalid_config(f"contextType must be one of {', '.join(CONTEXT_TYPES)}")
    context_type = context_type.upper()
    context = body.get("context", base.context)
    if context is not None and (not isinstance(context, str) or not _CONTEXT.match(context)):
        raise invalid_config(f"invalid context {context!r}")
    if context_type == "CUSTOM" and not context:
        raise invalid_config("contextType CUSTOM needs a context")
    subjects = body.get("subjects", list(base.subjects))
    if subjects is None:
        subjects = list(DEFAULT_SUBJECTS)
    if not isinstance(subjects, list) or not all(
        isinstance(s, str) and s.strip() for s in subjects
    ):
        raise invalid_subjects("subjects must be a list of subject names or patterns")
    if not subjects:
        raise invalid_subjects("no subjects given")
    rename = body.get("subjectRenameFormat", base.subject_rename_format)
    if rename is None:
        rename = DEFAULT_RENAME
    if not isinstance(rename, str) or not rename or ":" in rename.replace(DEFAULT_RENAME, ""):
        raise invalid_config(f"invalid subjectRenameFormat {rename!r}")
    config = dict(base.config)
    if "config" in body and body["config"] is not None:
        config.update(check_config(body["config"]))
    check_destination(config)
    return Exporter(
        name=base.name,
        context_type=context_type,
        context=context if context_type == "CUSTOM" else None,
        subjects=tuple(subjects),
        subject_rename_format=rename,
        config=config,
    )


def check_config(config: object) -> dict[str, str]:
    if not isinstance(config, dict) or not all(
        isinstance(k, str) and isinstance(v, str | int | bool) for k, v in config.items()
    ):
        raise invalid_config("config must be an object of string values")
    return {k: v if isinstance(v, str) else str(v).lower() for k, v in config.items()}


def check_destination(config: dict[str, str]) -> None:
    url = config.get(URL_KEY, "")
    urls = [u.strip() for u in url.split(",") if u.strip()]
    if not urls or not all(u.startswith(("http://", "https://")) for u in urls):
        raise invalid_config(f"{URL_KEY} must be an http:// or https:// URL")


# ---- subjects -----------------------------------------------------------------------------


def matches(exporter: Exporter, subject: str) -> bool:
    """Whether the exporter copies the qualified source ``subject``. A pattern without a
    context names subjects of the default context (``*`` is every one of them); ``:.ctx:p``
    those of ``.ctx``; ``:*:`` every subject of every context, ``:*:p`` ``p`` in any context.
    Patterns are globs (``*``, ``?``, ``[...]``)."""
    qs = parse_subject(subject)
    if not qs.name:
        return False
    for pattern in exporter.subjects:
        if pattern.startswith(ALL_CONTEXTS):
            rest = pattern[len(ALL_CONTEXTS) :] or "*"
            if fnmatch.fnmatchcase(qs.name, rest):
                return True
            continue
        pq = parse_subject(pattern)
        if pq.context == qs.context and fnmatch.fnmatchcase(qs.name, pq.name or "*"):
            return True
    return False


def destination_context(exporter: Exporter, source_context: str, cluster_id: str) -> str:
    """The destination context of a source context: ``NONE`` keeps it; ``AUTO`` puts it under
    ``.<source cluster id>``; ``CUSTOM`` under the exporter's ``context``."""
    if exporter.context_type == "NONE":
        return source_context
    prefix = exporter.context if exporter.context_type == "CUSTOM" else cluster_id
    prefix = "." + str(prefix).lstrip(".")
    if source_context == DEFAULT_CONTEXT:
        return prefix
    return prefix + source_context


def destination_subject(exporter: Exporter, subject: str, cluster_id: str) -> str:
    """The qualified destination subject of the qualified source ``subject``."""
    qs = parse_subject(subject)
    name = exporter.subject_rename_format.replace(DEFAULT_RENAME, qs.name)
    ctx = destination_context(exporter, qs.context, cluster_id)
    return name if ctx == DEFAULT_CONTEXT else f":{ctx}:{name}"
