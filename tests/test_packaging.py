"""A regular (non-editable) install carries everything the server needs, migrations included."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.fixtures.parallel import tree_lock

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_listed_in_pyproject() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = set()
    for top in ("registry", "serdes", "spark_serdes"):
        for init in (ROOT / top).rglob("__init__.py"):
            found.add(".".join(init.parent.relative_to(ROOT).parts))
        for proto in (ROOT / top).rglob("*.proto"):  # data-only directories
            found.add(".".join(proto.parent.relative_to(ROOT).parts))
    found |= {"registry._migrations", "registry._migrations.versions", "registry.ui.static"}
    assert found == listed


def test_wheel_contains_migrations_and_migrates_from_site_packages(tmp_path: Path) -> None:
    with tree_lock("pip-wheel"):  # the build writes build/ and *.egg-info in the tree
        build = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-build-isolation",
                "-v",
                "-w",
                str(tmp_path / "dist"),
                str(ROOT),
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=300,
        )
    # a newcomer's `make run` shows no pages of setuptools warnings
    assert "BuildBackendWarning" not in build.stderr + build.stdout
    assert "absent from the `packages` configuration" not in build.stderr + build.stdout
    wheel = next((tmp_path / "dist").glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "registry/formats/protobuf/proto/confluent/meta.proto" in names
    assert "registry/formats/protobuf/proto/confluent/type/decimal.proto" in names
    assert "registry/ui/static/index.html" in names and "registry/ui/static/app.js" in names
    assert "registry/_migrations/env.py" in names
    assert "registry/_migrations/script.py.mako" in names
    assert any(n.startswith("registry/_migrations/versions/0001") for n in names)

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    db = tmp_path / "w.db"
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from registry.store.sql import MIGRATIONS_DIR, upgrade_database;"
        "assert str(MIGRATIONS_DIR).startswith(sys.argv[1]), MIGRATIONS_DIR;"
        "upgrade_database('sqlite:///' + sys.argv[2])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(site), str(db)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONSAFEPATH": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert db.exists()
