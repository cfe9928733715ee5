"""The project file (YAML) listing subjects, their files, types, levels and references.

```yaml
subjects:
  - subject: address-value
    file: schemas/address.avsc
  - subject: order-value
    file: schemas/order.avsc
    type: AVRO                 # default: from the file extension
    level: FULL                # the subject's compatibility level
    previous: old/order.avsc   # offline: previous version(s), a file or a directory
    references:
      - name: com.acme.Address
        subject: address-value
        version: 1             # default: the version this run registers, else the latest
        file: schemas/address.avsc   # default: the file of that subject above
```

Paths are relative to the project file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from registry.cli_tools.errors import ToolError
from registry.cli_tools.schemafiles import Reference, SchemaSpec, schema_type_of
from registry.compatibility import parse_level

_SUBJECT_KEYS = {"subject", "file", "type", "level", "previous", "references"}
_REFERENCE_KEYS = {"name", "subject", "version", "file"}


def load_project(path: Path) -> list[SchemaSpec]:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ToolError(f"{path}: project file not found") from None
    except yaml.YAMLError as exc:
        raise ToolError(f"{path}: invalid YAML: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("subjects"), list):
        if isinstance(document, dict) and "subjects" not in document and "exporters" in document:
            return []  # a file of exporters only (registry.cli_tools.plan_exporters)
        raise ToolError(f"{path}: expected a mapping with a 'subjects' list")
    base = path.resolve().parent
    entries = document["subjects"]
    files: dict[str, Path] = {}
    for index, entry in enumerate(entries):
        where = f"{path}: subjects[{index}]"
        if not isinstance(entry, dict):
            raise ToolError(f"{where}: expected a mapping")
        unknown = set(entry) - _SUBJECT_KEYS
        if unknown:
            raise ToolError(f"{where}: unknown keys {sorted(unknown)}")
        for key in ("subject", "file"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise ToolError(f"{where}: '{key}' is required")
        if entry["subject"] in files:
            raise ToolError(f"{where}: subject {entry['subject']!r} listed twice")
        files[entry["subject"]] = base / entry["file"]
    specs = []
    for index, entry in enumerate(entries):
        where = f"{path}: subjects[{index}] ({entry['subject']})"
        level = entry.get("level")
        if level is not None and parse_level(level) is None:
            raise ToolError(f"{where}: unknown level {level!r}")
        file = files[entry["subject"]]
        refs = entry.get("references")
        references = None
        if refs is not None:
            if not isinstance(refs, list):
                raise ToolError(f"{where}: 'references' must be a list")
            references = [_reference(ref, where, base, files) for ref in refs]
        specs.append(
            SchemaSpec(
                subject=entry["subject"],
                file=file,
                schema_type=schema_type_of(file, entry.get("type")),
                level=parse_level(level) if level is not None else None,
                references=references,
                previous=base / entry["previous"] if entry.get("previous") else None,
            )
        )
    return specs


def _reference(ref: Any, where: str, base: Path, files: dict[str, Path]) -> Reference:
    if not isinstance(ref, dict) or set(ref) - _REFERENCE_KEYS:
        raise ToolError(f"{where}: a reference takes {sorted(_REFERENCE_KEYS)}")
    name, subject = ref.get("name"), ref.get("subject")
    if not isinstance(name, str) or not isinstance(subject, str):
        raise ToolError(f"{where}: a reference needs 'name' and 'subject'")
    version = ref.get("version")
    if version is not None and (not isinstance(version, int) or version < 1):
        raise ToolError(f"{where}: reference {name!r}: 'version' must be a positive integer")
    if ref.get("file"):
        file = base / ref["file"]
    elif subject in files:
        file = files[subject]
    else:
        raise ToolError(f"{where}: reference {name!r}: give its 'file' or list {subject!r}")
    return Reference(name, subject, version, file)


def declared_references(specs: list[SchemaSpec]) -> dict[Path, list[Reference]]:
    """Each listed file's declared references (to resolve references of references)."""
    return {spec.file.resolve(): spec.references for spec in specs if spec.references is not None}


def dependency_order(specs: list[SchemaSpec]) -> list[SchemaSpec]:
    """Referenced subjects before the subjects referencing them (stable otherwise)."""
    by_subject = {s.subject: s for s in specs}
    ordered: list[SchemaSpec] = []
    state: dict[str, int] = {}

    def visit(spec: SchemaSpec) -> None:
        mark = state.get(spec.subject)
        if mark == 2:
            return
        if mark == 1:
            raise ToolError(f"circular references through subject {spec.subject!r}")
        state[spec.subject] = 1
        for ref in spec.references or []:
            if ref.subject in by_subject:
                visit(by_subject[ref.subject])
        state[spec.subject] = 2
        ordered.append(spec)

    for spec in specs:
        visit(spec)
    return ordered
