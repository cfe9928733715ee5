"""MkDocs hook: the reference pages that are generated from the code, so they cannot drift.

* ``reference/settings.md``: every field of :class:`registry.settings.Settings`, its environment
  variable, default and the ``#:`` comment above it in ``registry/settings.py``;
* ``reference/cli.md``: ``schema-registry --help`` and the help of every subcommand, found by
  walking the ``{a,b,...}`` choices argparse prints;
* ``reference/rest-api.md``: every operation of ``openapi/openapi.json``.

Loaded by ``mkdocs.yml`` (``hooks:``); the functions are also used by the tests.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

GENERATED = "<!-- generated from the code by scripts/docs_reference.py: do not edit -->\n\n"


# ---- settings ------------------------------------------------------------------------------


def _setting_comments(source: str) -> dict[str, str]:
    """The ``#:`` comment lines right above each field of ``class Settings``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    comments: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == "Settings"):
            continue
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                above: list[str] = []
                index = item.lineno - 2
                while index >= 0 and lines[index].strip().startswith("#:"):
                    above.insert(0, lines[index].strip()[2:].strip())
                    index -= 1
                comments[item.target.id] = " ".join(above)
    return comments


def settings_page() -> str:
    from registry.settings import ENV_PREFIX, Settings

    comments = _setting_comments((ROOT / "registry" / "settings.py").read_text())
    rows = []
    for field in fields(Settings):
        default: Any = field.default
        if default is MISSING and field.default_factory is not MISSING:  # type: ignore[misc]
            default = field.default_factory()  # type: ignore[misc]
        shown = f"`{default}`" if default not in ("", None) else ""
        meaning = comments.get(field.name, "").replace("|", "\\|")
        rows.append(f"| `{ENV_PREFIX}{field.name.upper()}` | {shown} | {meaning} |")
    return (
        "# Settings\n\n"
        + GENERATED
        + "Every setting of `schema-registry serve` is an environment variable "
        "`SCHEMA_REGISTRY_<NAME>`; the flags of `serve` (see [the CLI](cli.md)) win over the "
        "environment. The pages under *Run it* explain them in context.\n\n"
        "| variable | default | meaning |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    )


# ---- command line --------------------------------------------------------------------------


class _Parser(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _command_parser() -> argparse.ArgumentParser:
    """The parser ``registry.cli.main`` builds, caught as it is about to parse."""
    from registry import cli

    def caught(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Parser(self)

    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = caught  # type: ignore[method-assign]
    try:
        cli.main([])
    except _Parser as found:
        return found.parser
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    raise RuntimeError("registry.cli.main parsed no arguments")


def command_helps(
    parser: argparse.ArgumentParser | None = None, words: list[str] | None = None
) -> list[tuple[list[str], str]]:
    """``(command words, help text)`` of ``schema-registry`` and every subcommand below it."""
    parser = parser or _command_parser()
    words = words or []
    os.environ.setdefault("COLUMNS", "100")  # argparse wraps at the terminal's width
    found = [(words, parser.format_help())]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(command_helps(sub, [*words, name]))
    return found


def cli_page() -> str:
    parts = ["# Command line\n\n", GENERATED]
    for words, text in command_helps():
        title = " ".join(["schema-registry", *words])
        parts.append(f"## `{title}`\n\n```text\n{text.rstrip()}\n```\n\n")
    return "".join(parts)


# ---- REST API ------------------------------------------------------------------------------


def rest_api_page() -> str:
    document = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    parts = [
        "# REST API\n\n",
        GENERATED,
        "The operations of `openapi/openapi.json` (the document the server serves at "
        "`/openapi.json`; Confluent's paths, bodies and error codes). Each error answer is "
        '`{"error_code": N, "message": "..."}`.\n\n',
    ]
    by_tag: dict[str, list[str]] = {}
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if method.startswith("x-") or not isinstance(operation, dict):
                continue
            tag = (operation.get("tags") or ["other"])[0]
            params = ", ".join(
                f"`{p['name']}`" + ("" if p.get("in") == "path" else f" ({p.get('in')})")
                for p in operation.get("parameters", [])
                if isinstance(p, dict) and "name" in p
            )
            codes = ", ".join(sorted(operation.get("responses", {})))
            summary = (operation.get("summary") or "").replace("|", "\\|")
            by_tag.setdefault(tag, []).append(
                f"| `{method.upper()} {path}` | {summary} | {params} | {codes} |"
            )
    for tag in sorted(by_tag):
        parts.append(f"## {tag}\n\n| operation | summary | parameters | answers |\n")
        parts.append("|---|---|---|---|\n" + "\n".join(by_tag[tag]) + "\n\n")
    return "".join(parts)


PAGES = {
    "reference/settings.md": settings_page,
    "reference/cli.md": cli_page,
    "reference/rest-api.md": rest_api_page,
}


def on_files(files: Any, config: Any) -> Any:  # MkDocs hook
    from mkdocs.structure.files import File

    for path, page in PAGES.items():
        files.append(File.generated(config, path, content=page()))
    return files
