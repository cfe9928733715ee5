"""Exporters in the project file: ``plan`` says which would be created or changed, ``apply``
creates or updates them (an update pauses the exporter, changes it, and resumes it).

```yaml
exporters:
  - name: to-dr
    contextType: CUSTOM
    context: dr
    subjects: ["orders-*"]
    subjectRenameFormat: "${subject}"
    config:
      schema.registry.url: https://dr:8081
      basic.auth.user.info: ${DR_USER_INFO}   # ${VAR}: from the environment
```

Credentials cannot be compared (the registry never shows them): a changed credential alone is
not planned; ``apply`` sends the file's values on every update.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import yaml

from registry.cli_tools.errors import ToolError
from registry.cli_tools.remote import RegistryClient, RemoteError

_KEYS = {"name", "contextType", "context", "subjects", "subjectRenameFormat", "config"}
_DEFAULTS = {"contextType": "AUTO", "subjects": ["*"], "subjectRenameFormat": "${subject}"}
_VAR = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")
MASK = "[hidden]"


def load_exporters(path: Path) -> list[dict[str, Any]]:
    """The ``exporters`` list of the project file (empty when it has none)."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, yaml.YAMLError) as exc:
        raise ToolError(f"{path}: {exc}") from None
    entries = (document or {}).get("exporters") or []
    if not isinstance(entries, list):
        raise ToolError(f"{path}: 'exporters' must be a list")
    out = []
    for index, entry in enumerate(entries):
        where = f"{path}: exporters[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ToolError(f"{where}: expected a mapping with a 'name'")
        unknown = set(entry) - _KEYS
        if unknown:
            raise ToolError(f"{where}: unknown keys {sorted(unknown)}")
        config = entry.get("config")
        if not isinstance(config, dict):
            raise ToolError(f"{where}: 'config' (with schema.registry.url) is required")
        entry = {**_DEFAULTS, **entry}
        entry["config"] = {str(k): _expand(str(v), where) for k, v in config.items()}
        out.append(entry)
    return out


def _expand(value: str, where: str) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ToolError(f"{where}: environment variable {name} is not set")
        return os.environ[name]

    return _VAR.sub(one, value)


def _current(client: RegistryClient, name: str) -> dict[str, Any] | None:
    try:
        return dict(client.call("GET", f"/exporters/{quote(name, safe='')}"))
    except RemoteError as exc:
        if exc.status == 404:
            return None
        raise


def _differences(wanted: dict[str, Any], current: dict[str, Any]) -> list[str]:
    out = []
    for key in ("contextType", "context", "subjects", "subjectRenameFormat"):
        if wanted.get(key) != current.get(key):
            out.append(f"{key} {current.get(key)!r} -> {wanted.get(key)!r}")
    shown = current.get("config") or {}
    for key, value in wanted["config"].items():
        if shown.get(key) != MASK and shown.get(key) != value:
            out.append(f"config {key}")
    return out


def plan_lines(exporters: list[dict[str, Any]], client: RegistryClient) -> list[tuple[str, str]]:
    """(kind, text) per exporter: ``create-exporter``, ``update-exporter`` or ``unchanged``."""
    lines = []
    for wanted in exporters:
        current = _current(client, wanted["name"])
        if current is None:
            lines.append(("create-exporter", f"exporter {wanted['name']}: new"))
            continue
        changed = _differences(wanted, current)
        if changed:
            lines.append(("update-exporter", f"exporter {wanted['name']}: {'; '.join(changed)}"))
        else:
            lines.append(("unchanged", f"exporter {wanted['name']}: unchanged"))
    return lines


def apply_exporters(exporters: list[dict[str, Any]], client: RegistryClient, out: TextIO) -> int:
    changes = 0
    for wanted in exporters:
        name = quote(wanted["name"], safe="")
        current = _current(client, wanted["name"])
        if current is None:
            client.call("POST", "/exporters", wanted)
            out.write(f"created exporter {wanted['name']}\n")
            changes += 1
            continue
        if not _differences(wanted, current):
            continue
        state = client.call("GET", f"/exporters/{name}/status")["state"]
        if state != "PAUSED":
            client.call("PUT", f"/exporters/{name}/pause")
        client.call("PUT", f"/exporters/{name}", {k: v for k, v in wanted.items() if k != "name"})
        if state != "PAUSED":
            client.call("PUT", f"/exporters/{name}/resume")
        out.write(f"updated exporter {wanted['name']}\n")
        changes += 1
    return changes
