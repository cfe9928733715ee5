"""Declarative mode: ``plan`` (what the project file would change in the registry) and
``apply`` (change it). Referenced subjects come first; levels are set before versions are
registered, so a new version is judged by the level the project file asks for."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from registry.cli_tools.check import Workspace
from registry.cli_tools.errors import EXIT_ERROR, EXIT_INCOMPATIBLE, EXIT_OK, ToolError
from registry.cli_tools.output import display_path, problem_text
from registry.cli_tools.problems import Problem, parse_messages
from registry.cli_tools.project import dependency_order
from registry.cli_tools.remote import RegistryClient, RemoteError, reference_body, resolve_latest
from registry.cli_tools.schemafiles import LoadedSchema, SchemaSpec


@dataclass
class Action:
    """One change (or its absence): ``set-level``, ``create``, ``register``, ``unchanged``,
    ``error``."""

    subject: str
    file: Path
    kind: str
    detail: str
    problems: list[Problem] = field(default_factory=list)

    @property
    def incompatible(self) -> bool:
        return bool(self.problems)

    def as_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "file": display_path(self.file),
            "action": self.kind,
            "detail": self.detail,
            "incompatible": self.incompatible,
            "problems": [p.as_dict() for p in self.problems],
        }


def make_plan(specs: list[SchemaSpec], ws: Workspace, client: RegistryClient) -> list[Action]:
    actions: list[Action] = []
    changing: set[str] = set()
    for spec, loaded in load_in_order(specs, ws):
        if spec.level is not None:
            current = client.subject_level(spec.subject)
            if current != spec.level:
                detail = f"level {current or '(unset)'} -> {spec.level}"
                actions.append(Action(spec.subject, spec.file, "set-level", detail))
        if isinstance(loaded, ToolError):
            actions.append(Action(spec.subject, spec.file, "error", str(loaded)))
            continue
        pending = [r.subject for r in loaded.direct if r.subject in changing]
        if pending:
            changing.add(spec.subject)
            detail = f"new version after {', '.join(pending)} (checked when applied)"
            actions.append(Action(spec.subject, spec.file, "register", detail))
            continue
        refs = resolve_latest(client, reference_body(loaded.direct, {}))
        found = client.lookup(spec.subject, loaded.text, spec.schema_type, refs)
        if found is not None:
            detail = f"unchanged (version {found['version']}, id {found['id']})"
            actions.append(Action(spec.subject, spec.file, "unchanged", detail))
            continue
        changing.add(spec.subject)
        latest = client.latest(spec.subject)
        if latest is None:
            actions.append(Action(spec.subject, spec.file, "create", "new subject, version 1"))
            continue
        compatible, messages = client.check(spec.subject, loaded.text, spec.schema_type, refs)
        action = Action(
            spec.subject, spec.file, "register", f"new version after {latest['version']}"
        )
        if not compatible:
            action.problems = parse_messages(messages, loaded.text)
        actions.append(action)
    return actions


def exit_code(actions: list[Action]) -> int:
    if any(a.kind == "error" for a in actions):
        return EXIT_ERROR
    return EXIT_INCOMPATIBLE if any(a.incompatible for a in actions) else EXIT_OK


def write(actions: list[Action], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        out.write(json.dumps({"actions": [a.as_dict() for a in actions]}, indent=2) + "\n")
        return
    marks = {
        "set-level": "~",
        "create": "+",
        "register": "+",
        "unchanged": "=",
        "error": "!",
        "create-exporter": "+",
        "update-exporter": "~",
    }
    for action in actions:
        where = f"{action.subject} ({display_path(action.file)})"
        suffix = " INCOMPATIBLE" if action.incompatible else ""
        out.write(f"{marks[action.kind]} {action.kind:<9} {where}: {action.detail}{suffix}\n")
        for problem in action.problems:
            out.write(f"    {problem_text(problem)}\n")
    changing = ("set-level", "create", "register", "create-exporter", "update-exporter")
    changes = sum(a.kind in changing for a in actions)
    out.write(f"{changes} change(s)\n")


def apply(specs: list[SchemaSpec], ws: Workspace, client: RegistryClient, out: TextIO) -> int:
    """Set levels, then register what is missing, referenced subjects first; stop at the first
    version the registry refuses (exit 1)."""
    versions: dict[str, int] = {}
    changes = 0
    for spec, loaded in load_in_order(specs, ws):
        if isinstance(loaded, ToolError):
            raise loaded
        if spec.level is not None and client.subject_level(spec.subject) != spec.level:
            client.set_level(spec.subject, spec.level)
            out.write(f"set {spec.subject} level {spec.level}\n")
            changes += 1
        refs = resolve_latest(client, reference_body(loaded.direct, versions))
        found = client.lookup(spec.subject, loaded.text, spec.schema_type, refs)
        if found is None:
            try:
                schema_id = client.register(spec.subject, loaded.text, spec.schema_type, refs)
            except RemoteError as exc:
                if exc.status != 409:
                    raise
                out.write(f"INCOMPATIBLE {spec.subject} ({display_path(spec.file)}): ")
                out.write(f"{exc.message}\n")
                return EXIT_INCOMPATIBLE
            found = client.lookup(spec.subject, loaded.text, spec.schema_type, refs)
            version = found["version"] if found else "?"
            out.write(f"registered {spec.subject} version {version} id {schema_id}\n")
            changes += 1
        if found is not None:
            versions[spec.subject] = int(found["version"])
    out.write(f"{changes} change(s) applied\n")
    return EXIT_OK


def load_in_order(
    specs: list[SchemaSpec], ws: Workspace
) -> list[tuple[SchemaSpec, LoadedSchema | ToolError]]:
    """Each spec loaded and parsed (or why not), referenced subjects first: references found
    in the files order the subjects as declared ones do."""
    loaded: dict[str, LoadedSchema | ToolError] = {}
    ordered_specs = []
    for spec in specs:
        try:
            item = _load(spec, ws)
        except ToolError as exc:
            loaded[spec.subject] = exc
        else:
            loaded[spec.subject] = item
            if spec.references is None:
                spec = replace(spec, references=item.direct)
        ordered_specs.append(spec)
    return [(spec, loaded[spec.subject]) for spec in dependency_order(ordered_specs)]


def _load(spec: SchemaSpec, ws: Workspace) -> LoadedSchema:
    loaded = ws.load(spec)
    if loaded is None:
        raise ToolError(f"{spec.file}: file not found")
    if spec.schema_type in ws.formats:
        ws.parse(spec, loaded, strict=True)
    return loaded
