"""Local schema files: their type, their subject, and their references found among local files.

References are found without any configuration:

* Avro: a type name used but not defined in the file, defined at the top of another ``.avsc``
  file in the same directory or an include directory (the reference name is the full name);
* Protobuf: an ``import "a/b.proto";`` found relative to the file's directory or an include
  directory (the reference name is the import path);
* JSON Schema: a ``$ref`` to another file, relative to the file's directory (the reference name
  is the ``$ref`` text without its ``#`` fragment).

A declared reference (from the project file) names its file itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from registry.cli_tools.errors import ToolError
from registry.cli_tools.sources import Source
from registry.formats.base import Dependency

EXTENSIONS = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}
SUFFIXES = {"AVRO": ".avsc", "PROTOBUF": ".proto", "JSON": ".json"}
AVRO_PRIMITIVES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
_IMPORT = re.compile(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"\s*;', re.MULTILINE)


@dataclass(frozen=True)
class Reference:
    """A reference as the registry stores it, with the local file holding its schema."""

    name: str
    subject: str
    version: int | None
    file: Path


@dataclass
class SchemaSpec:
    """One subject and the local file of its next version."""

    subject: str
    file: Path
    schema_type: str
    level: str | None = None
    references: list[Reference] | None = None  # None: found from the files
    previous: Path | None = None


@dataclass
class LoadedSchema:
    """A spec's text as read from a source, with its transitive dependencies (first first)."""

    spec: SchemaSpec
    text: str
    dependencies: list[Dependency] = field(default_factory=list)
    direct: list[Reference] = field(default_factory=list)


def schema_type_of(path: Path, declared: str | None = None) -> str:
    if declared:
        kind = declared.upper()
        if kind not in SUFFIXES:
            raise ToolError(f"{path}: unknown schema type {declared!r} (AVRO, PROTOBUF, JSON)")
        return kind
    kind = EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        raise ToolError(f"{path}: unknown schema type; use .avsc, .proto or .json")
    return kind


def subject_for(path: Path, template: str = "{stem}") -> str:
    """The subject named after the file: ``{stem}`` (default) or a template such as
    ``{stem}-value``."""
    return template.format(stem=path.stem, name=path.name)


class ReferenceFinder:
    """Finds the references of local files as they are in one source."""

    def __init__(
        self, source: Source, include: Sequence[Path] = (), subject_template: str = "{stem}"
    ) -> None:
        self.source = source
        self.subject_template = subject_template
        self.include = [p.resolve() for p in include]
        self._avro_index: dict[Path, dict[str, Path]] = {}

    def direct(self, path: Path, text: str, schema_type: str) -> list[tuple[str, Path]]:
        if schema_type == "AVRO":
            return self._avro(path, text)
        if schema_type == "PROTOBUF":
            return self._protobuf(path, text)
        return self._json(path, text)

    def _dirs(self, path: Path) -> list[Path]:
        dirs = [path.resolve().parent]
        dirs += [d for d in self.include if d not in dirs]
        return dirs

    def _avro(self, path: Path, text: str) -> list[tuple[str, Path]]:
        try:
            doc = json.loads(text)
        except ValueError:
            return []  # the parser says what is wrong
        defined, used = _avro_names(doc)
        found: list[tuple[str, Path]] = []
        for name in used:
            if name in defined:
                continue
            for directory in self._dirs(path):
                target = self._avro_names_in(directory).get(name)
                if target is not None and target != path.resolve():
                    found.append((name, target))
                    break
        return found

    def _avro_names_in(self, directory: Path) -> dict[str, Path]:
        index = self._avro_index.get(directory)
        if index is None:
            index = {}
            for candidate in self.source.list_dir(directory):
                if candidate.suffix.lower() != ".avsc":
                    continue
                try:
                    doc = json.loads(self.source.read(candidate) or "")
                except ValueError:
                    continue
                if isinstance(doc, dict) and isinstance(doc.get("name"), str):
                    index.setdefault(_full_name(doc["name"], doc.get("namespace")), candidate)
            self._avro_index[directory] = index
        return index

    def _protobuf(self, path: Path, text: str) -> list[tuple[str, Path]]:
        found = []
        for name in _IMPORT.findall(text):
            for directory in self._dirs(path):
                target = directory / name
                if self.source.read(target) is not None:
                    found.append((name, target))
                    break
        return found

    def _json(self, path: Path, text: str) -> list[tuple[str, Path]]:
        try:
            doc = json.loads(text)
        except ValueError:
            return []
        found: list[tuple[str, Path]] = []
        for ref in _json_refs(doc):
            name = ref.split("#", 1)[0]
            if not name or any(n == name for n, _ in found):
                continue
            local = name.rsplit("/", 1)[-1] if "://" in name else name
            for directory in self._dirs(path):
                target = directory / local
                if self.source.read(target) is not None:
                    found.append((name, target))
                    break
        return found


def load(
    spec: SchemaSpec,
    source: Source,
    finder: ReferenceFinder,
    declared: Callable[[Path], list[Reference] | None] = lambda _: None,
) -> LoadedSchema | None:
    """The spec's file as it is in ``source`` (``None`` when it does not exist there), with its
    dependencies read from the same source. ``declared`` gives a file's declared references."""
    text = source.read(spec.file)
    if text is None:
        return None

    def refs_of(path: Path, body: str, kind: str, explicit: list[Reference] | None) -> list:
        if explicit is not None:
            return [(r.name, r.file) for r in explicit]
        return finder.direct(path, body, kind)

    direct = refs_of(spec.file, text, spec.schema_type, spec.references)
    dependencies: list[Dependency] = []
    read: dict[Path, str] = {}  # files already visited (one file may have several names)
    names: set[str] = set()

    def visit(name: str, path: Path, trail: tuple[Path, ...]) -> None:
        resolved = path.resolve()
        if resolved in trail:
            raise ToolError(f"{path}: circular reference through {name!r}")
        if name in names:
            return
        names.add(name)
        if resolved in read:
            dependencies.append(Dependency(name, read[resolved]))
            return
        body = source.read(path)
        if body is None:
            raise ToolError(f"{spec.file}: reference {name!r}: {path} not found ({source.label})")
        kind = schema_type_of(path) if path.suffix.lower() in EXTENSIONS else spec.schema_type
        for sub_name, sub_path in refs_of(path, body, kind, declared(path)):
            visit(sub_name, sub_path, (*trail, resolved))
        read[resolved] = body
        dependencies.append(Dependency(name, body))

    for name, path in direct:
        visit(name, path, (spec.file.resolve(),))
    references = spec.references
    if references is None:
        references = [
            Reference(name, subject_for(path, finder.subject_template), None, path)
            for name, path in direct
        ]
    return LoadedSchema(spec, text, dependencies, references)


def _full_name(name: str, namespace: object) -> str:
    if "." in name or not isinstance(namespace, str) or not namespace:
        return name
    return f"{namespace}.{name}"


def _avro_names(doc: object) -> tuple[set[str], list[str]]:
    """Full names a document defines, and the names it uses (in order, as full names and as
    written), resolving short names against the enclosing namespace."""
    defined: set[str] = set()
    used: list[str] = []

    def walk(node: object, namespace: str | None) -> None:
        if isinstance(node, str):
            if node in AVRO_PRIMITIVES:
                return
            for name in (_full_name(node, namespace), node):
                if name not in used:
                    used.append(name)
            return
        if isinstance(node, list):
            for item in node:
                walk(item, namespace)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if kind in ("record", "error", "enum", "fixed") and isinstance(node.get("name"), str):
            full = _full_name(node["name"], node.get("namespace", namespace))
            defined.add(full)
            namespace = full.rsplit(".", 1)[0] if "." in full else None
            for fld in node.get("fields") or []:
                if isinstance(fld, dict):
                    walk(fld.get("type"), namespace)
            return
        if kind == "array":
            walk(node.get("items"), namespace)
        elif kind == "map":
            walk(node.get("values"), namespace)
        else:
            walk(kind, namespace)

    walk(doc, None)
    return defined, used


def _json_refs(doc: object) -> Iterator[str]:
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _json_refs(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from _json_refs(item)
