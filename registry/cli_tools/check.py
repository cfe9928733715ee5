"""``check`` and ``validate``: parse local schemas and test them against their subjects.

Offline, the previous versions come from files or from a git revision and the rules are the
registry's own (``registry.compatibility.check`` over ``registry.core.default_formats()``);
online, the registry answers ``POST /compatibility/subjects/{s}/versions?verbose=true``. Both
produce the same :class:`~registry.cli_tools.output.Result` with the messages taken apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from registry.cli_tools.errors import ToolError
from registry.cli_tools.output import Result
from registry.cli_tools.problems import parse_messages
from registry.cli_tools.remote import (
    RegistryClient,
    RegistryUnreachable,
    RemoteError,
    reference_body,
    resolve_latest,
)
from registry.cli_tools.schemafiles import (
    LoadedSchema,
    Reference,
    ReferenceFinder,
    SchemaSpec,
    load,
)
from registry.cli_tools.sources import WORK_TREE, GitRevision, Source
from registry.compatibility import PreviousSchema, check
from registry.core import default_formats
from registry.formats.base import InvalidSchemaError, ParsedSchema, SchemaFormat

DEFAULT_LEVEL = "BACKWARD"


@dataclass
class Workspace:
    """What every check shares: include directories, declared references, the formats."""

    include: list[Path]
    declared: dict[Path, list[Reference]]
    subject_template: str = "{stem}"

    def __post_init__(self) -> None:
        self.formats: dict[str, SchemaFormat] = default_formats()
        self._finders: dict[int, ReferenceFinder] = {}

    def finder(self, source: Source) -> ReferenceFinder:
        key = id(source)
        if key not in self._finders:
            self._finders[key] = ReferenceFinder(source, self.include, self.subject_template)
        return self._finders[key]

    def load(self, spec: SchemaSpec, source: Source = WORK_TREE) -> LoadedSchema | None:
        return load(spec, source, self.finder(source), self.declared_of)

    def declared_of(self, path: Path) -> list[Reference] | None:
        return self.declared.get(path.resolve())

    def format_of(self, spec: SchemaSpec) -> SchemaFormat:
        fmt = self.formats.get(spec.schema_type)
        if fmt is None:
            raise ToolError(f"no {spec.schema_type} support installed")
        return fmt

    def parse(self, spec: SchemaSpec, loaded: LoadedSchema, *, strict: bool) -> ParsedSchema:
        try:
            return self.format_of(spec).parse(loaded.text, loaded.dependencies, strict=strict)
        except InvalidSchemaError as exc:
            raise ToolError(f"invalid schema: {exc}") from None


def validate(specs: list[SchemaSpec], ws: Workspace) -> list[Result]:
    """Parse each file (with its references) as a new version would be parsed."""
    results = []
    for spec in specs:
        result = Result(spec.subject, spec.file, checked=False)
        try:
            ws.parse(spec, _load_new(spec, ws), strict=True)
        except ToolError as exc:
            result.error = str(exc)
        results.append(result)
    return results


def check_offline(
    specs: list[SchemaSpec],
    ws: Workspace,
    against: str | None,
    level_of: Callable[[SchemaSpec], str],
) -> list[Result]:
    """Each file against its previous versions: ``against`` is ``git:REV``, a file, a directory
    or ``None`` (each spec's ``previous``)."""
    git = (
        GitRevision(against.removeprefix("git:"))
        if against and against.startswith("git:")
        else None
    )
    if against and git is None and not Path(against).exists():
        raise ToolError(f"--against {against}: no such file or directory")
    if against and git is None and Path(against).is_file() and len(specs) > 1:
        raise ToolError("--against FILE needs exactly one schema; give a directory instead")
    results = []
    for spec in specs:
        level = level_of(spec)
        result = Result(spec.subject, spec.file, level=level, against=against)
        try:
            loaded = _load_new(spec, ws)
            new = ws.parse(spec, loaded, strict=True)
            if git is not None:
                previous = _previous_at_revision(spec, ws, git, level)
            else:
                result.against = (
                    str(against or spec.previous) if (against or spec.previous) else None
                )
                previous = _previous_files(spec, ws, Path(against) if against else spec.previous)
            result.compared = (
                len(previous) if level.endswith("_TRANSITIVE") else min(1, len(previous))
            )
            messages = check(ws.format_of(spec), level, new, previous)
            old_text = previous[-1].text if previous and not level.endswith("_TRANSITIVE") else None
            result.problems = parse_messages(messages, loaded.text, old_text)
        except ToolError as exc:
            result.error = str(exc)
        results.append(result)
    return results


def check_online(specs: list[SchemaSpec], ws: Workspace, client: RegistryClient) -> list[Result]:
    """Each file against its subject in the registry, at the registry's level."""
    results = []
    for spec in specs:
        result = Result(spec.subject, spec.file, against=client.url)
        try:
            loaded = _load_new(spec, ws)
            if spec.schema_type in ws.formats:
                ws.parse(spec, loaded, strict=True)
            refs = resolve_latest(client, reference_body(loaded.direct, {}))
            result.level = client.subject_level(spec.subject, default_to_global=True)
            latest = client.latest(spec.subject)
            result.compared = 0 if latest is None else 1
            compatible, messages = client.check(spec.subject, loaded.text, spec.schema_type, refs)
            if not compatible:
                result.problems = parse_messages(messages, loaded.text)
        except RemoteError as exc:
            prefix = "invalid schema: " if exc.error_code == 42201 else "registry: "
            result.error = prefix + exc.message
        except RegistryUnreachable:
            raise
        except ToolError as exc:
            result.error = str(exc)
        results.append(result)
    return results


def _load_new(spec: SchemaSpec, ws: Workspace) -> LoadedSchema:
    loaded = ws.load(spec)
    if loaded is None:
        raise ToolError(f"{spec.file}: file not found")
    return loaded


def _previous_at_revision(
    spec: SchemaSpec, ws: Workspace, git: GitRevision, level: str
) -> list[PreviousSchema]:
    """The file as it was at the revision (every distinct earlier text for transitive levels);
    none when it did not exist there (a new subject)."""
    loaded = ws.load(spec, git)
    if loaded is None:
        return []
    texts = git.history(spec.file) if level.endswith("_TRANSITIVE") else [loaded.text]
    if not texts or texts[-1] != loaded.text:
        texts.append(loaded.text)
    previous = []
    for number, text in enumerate(texts, start=1):
        parsed = _parse_previous(spec, ws, LoadedSchema(spec, text, loaded.dependencies), git.label)
        previous.append(PreviousSchema(parsed, number if len(texts) > 1 else None, text))
    return previous


def _previous_files(spec: SchemaSpec, ws: Workspace, where: Path | None) -> list[PreviousSchema]:
    """Previous versions given as files: a file, or in a directory either a sub-directory
    named after the subject (every file in it, by name, oldest first) or a file of the same
    name as the schema file."""
    if where is None:
        raise ToolError("offline check needs --against (git:REV, a file or a directory)")
    if where.is_file():
        files = [where]
    elif (where / spec.subject).is_dir():
        files = sorted(p for p in (where / spec.subject).iterdir() if p.is_file())
    elif (where / spec.file.name).is_file():
        files = [where / spec.file.name]
    else:
        files = []  # a new subject
    # references of previous versions: next to them, else where the new file finds its own
    finder = ReferenceFinder(WORK_TREE, [*ws.include, spec.file.parent], ws.subject_template)
    previous = []
    for number, path in enumerate(files, start=1):
        old_spec = SchemaSpec(spec.subject, path, spec.schema_type)
        loaded = load(old_spec, WORK_TREE, finder, ws.declared_of)
        assert loaded is not None
        parsed = _parse_previous(spec, ws, loaded, str(path))
        previous.append(PreviousSchema(parsed, number if len(files) > 1 else None, loaded.text))
    return previous


def _parse_previous(
    spec: SchemaSpec, ws: Workspace, loaded: LoadedSchema, where: str
) -> ParsedSchema:
    try:
        return ws.format_of(spec).parse(loaded.text, loaded.dependencies, strict=False)
    except InvalidSchemaError as exc:
        raise ToolError(f"previous version ({where}) is invalid: {exc}") from None
