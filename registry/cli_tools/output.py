"""Reports of ``check`` (and ``validate``): human text, JSON, or GitHub workflow annotations."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from registry.cli_tools.errors import EXIT_ERROR, EXIT_INCOMPATIBLE, EXIT_OK
from registry.cli_tools.problems import Problem

FORMATS = ("text", "json", "github")


@dataclass
class Result:
    """The outcome for one subject: compatible, incompatible (problems) or an input error."""

    subject: str
    file: Path
    level: str | None = None
    against: str | None = None
    compared: int = 0  # how many previous versions were compared with
    problems: list[Problem] = field(default_factory=list)
    error: str | None = None
    checked: bool = True  # False: parsed only (validate)

    @property
    def status(self) -> str:
        if self.error is not None:
            return "error"
        return "incompatible" if self.problems else "compatible"

    def as_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "file": display_path(self.file),
            "status": self.status,
            "level": self.level,
            "against": self.against,
            "compared_versions": self.compared,
            "problems": [p.as_dict() for p in self.problems],
            "error": self.error,
        }


def exit_code(results: list[Result]) -> int:
    """2 when any input error, else 1 when any incompatibility, else 0."""
    if any(r.error is not None for r in results):
        return EXIT_ERROR
    if any(r.problems for r in results):
        return EXIT_INCOMPATIBLE
    return EXIT_OK


def display_path(path: Path) -> str:
    """The path relative to the working directory when inside it (what GitHub expects)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def write(results: list[Result], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        document = {
            "status": ["compatible", "incompatible", "error"][exit_code(results)],
            "results": [r.as_dict() for r in results],
        }
        out.write(json.dumps(document, indent=2) + "\n")
    elif fmt == "github":
        for result in results:
            for line in github_lines(result):
                out.write(line + "\n")
        out.write(summary(results) + "\n")
    else:
        for result in results:
            for line in text_lines(result):
                out.write(line + "\n")
        out.write(summary(results) + "\n")


def text_lines(result: Result) -> list[str]:
    where = f"{result.subject} ({display_path(result.file)})"
    if result.error is not None:
        return [f"ERROR {where}: {result.error}"]
    if not result.checked:
        return [f"OK    {where}: valid"]
    if not result.problems:
        detail = result.level or "registry's level"
        versions = "no previous version" if result.compared == 0 else _versions(result.compared)
        against = f" at {result.against}" if result.against else ""
        return [f"OK    {where}: compatible ({detail}; {versions}{against})"]
    return [f"FAIL  {where}:{problem.line}: {problem_text(problem)}" for problem in result.problems]


def problem_text(problem: Problem) -> str:
    parts = []
    if problem.field:
        parts.append(f"field '{problem.field}'")
    if problem.path:
        parts.append(f"path {problem.path}")
    parts.append(problem.rule)
    if problem.old_type is not None or problem.new_type is not None:
        parts.append(f"old type {problem.old_type or '?'} -> new type {problem.new_type or '?'}")
    if problem.old_version is not None:
        parts.append(f"vs version {problem.old_version}")
    return ", ".join(parts) + f": {problem.description}"


def summary(results: list[Result]) -> str:
    counts = {s: sum(r.status == s for r in results) for s in ("compatible", "incompatible")}
    errors = sum(r.status == "error" for r in results)
    if not any(r.checked for r in results):
        return f"{len(results)} schema(s): {len(results) - errors} valid, {errors} error(s)"
    return (
        f"{len(results)} subject(s): {counts['compatible']} compatible, "
        f"{counts['incompatible']} incompatible, {errors} error(s)"
    )


def github_lines(result: Result) -> list[str]:
    """``::error file=...,line=...,title=...::message`` commands (annotations on the lines)."""
    path = display_path(result.file)
    if result.error is not None:
        return [_command("error", path, 1, f"Schema error: {result.subject}", result.error)]
    return [
        _command(
            "error",
            path,
            problem.line,
            f"Incompatible schema change: {result.subject} ({problem.rule})",
            problem_text(problem),
        )
        for problem in result.problems
    ]


def _command(kind: str, path: str, line: int, title: str, message: str) -> str:
    props = f"file={_escape_property(path)},line={line},title={_escape_property(title)}"
    return f"::{kind} {props}::{_escape_data(message)}"


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _versions(count: int) -> str:
    return "1 previous version" if count == 1 else f"{count} previous versions"


def is_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"
