"""The documentation site builds with ``mkdocs build --strict`` (a broken link, a missing page, a
page left out of the navigation or an included example file that is gone fails), and its
generated reference pages follow the code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

from registry.settings import ENV_PREFIX, Settings
from scripts import docs_reference

ROOT = Path(__file__).resolve().parents[1]


def test_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    for page in ("reference/settings", "reference/cli", "reference/rest-api", "examples"):
        assert (tmp_path / page / "index.html").exists(), page


def test_settings_page_has_every_setting_with_its_comment() -> None:
    page = docs_reference.settings_page()
    for field in fields(Settings):
        assert f"`{ENV_PREFIX}{field.name.upper()}`" in page
    row = next(line for line in page.splitlines() if "SCHEMA_REGISTRY_READ_CACHE_BYTES" in line)
    assert "`67108864`" in row and "ready to send" in row


def test_cli_page_has_every_command() -> None:
    commands = {" ".join(words) for words, _ in docs_reference.command_helps()}
    for expected in ("serve", "db upgrade", "user add", "check", "copy", "apply"):
        assert expected in commands
    assert "usage: schema-registry serve" in docs_reference.cli_page()


def test_rest_page_has_every_operation() -> None:
    import json

    document = json.loads((ROOT / "openapi" / "openapi.json").read_text())
    page = docs_reference.rest_api_page()
    for path, operations in document["paths"].items():
        for method in operations:
            if not method.startswith("x-"):
                assert f"`{method.upper()} {path}`" in page


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    generated = set(docs_reference.PAGES)
    for page in (ROOT / "docs").rglob("*.md"):
        relative = page.relative_to(ROOT / "docs").as_posix()
        assert relative in nav or relative in generated, f"{relative} is not in mkdocs.yml's nav"
    for listed in re.findall(r"([\w/-]+\.md)", nav):
        assert (ROOT / "docs" / listed).exists() or listed in generated, listed
