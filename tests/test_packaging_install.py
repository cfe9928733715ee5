"""The wheel as users get it: ``pip install pyschemaregistry`` (no extras) into a fresh
virtualenv runs every serializer and deserializer of serdes against a live registry with only
the declared dependencies, and holds nothing of the server; ``pyschemaregistry[server]`` in
another starts ``schema-registry serve``.

The wheel is built once (from this tree, no build isolation). pip resolves the dependencies
normally (PyPI, through pip's cache, plus whatever ``find-links`` the machine configures), so
the declared dependencies are what is proved to suffice: nothing is copied from this virtualenv.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer, free_port, sqlite_live_server
from tests.fixtures.parallel import tree_lock

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # minutes: scheduled early under xdist (tests/fixtures/parallel.py)
_PIP_WHEEL = (sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q")
CHECK = Path(__file__).with_name("installed_serdes_check.py")


def _env() -> dict[str, str]:
    """This process's environment without what would let the venv see the source tree."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    with tree_lock("pip-wheel"):  # the build writes build/ and *.egg-info in the tree
        _run([*_PIP_WHEEL, "-w", str(dist), str(ROOT)], cwd=dist)
    return next(dist.glob("pyschemaregistry-*.whl"))


def _venv_with(tmp: Path, requirement: str) -> Path:
    """A fresh virtualenv (no system site-packages) with ``requirement`` pip-installed."""
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp)
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "-q", "--no-compile", requirement], cwd=tmp)
    return python


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from sqlite_live_server(tmp_path_factory.mktemp("pkg-registry"))


# pip resolving and unpacking a dozen distributions: about a minute on an idle 2-core machine,
# several when it is loaded (pyproject's 300 s default is per test)
@pytest.mark.timeout(900)
def test_serdes_alone_serializes_everything_with_its_declared_dependencies(
    wheel: Path, registry: LiveServer, tmp_path: Path
) -> None:
    python = _venv_with(tmp_path, str(wheel))
    done = _run([str(python), str(CHECK), registry.url], cwd=tmp_path)
    assert done.stdout.strip().endswith("OK"), done.stdout

    # the command is installed but says what to install instead of a traceback
    command = python.parent / "schema-registry"
    out = subprocess.run(
        [str(command), "serve"], cwd=tmp_path, env=_env(), capture_output=True, text=True
    )
    assert out.returncode == 2, out
    assert "pip install 'pyschemaregistry[server]'" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.timeout(900)
def test_server_extra_starts_schema_registry_serve(wheel: Path, tmp_path: Path) -> None:
    python = _venv_with(tmp_path, f"pyschemaregistry[server] @ {wheel.as_uri()}")
    port = free_port()
    store = f"sqlite:///{tmp_path / 'registry.db'}"
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(python.parent / "schema-registry"), "serve", "--port", str(port), "--store", store],
        cwd=tmp_path,
        env=_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        answer = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/subjects", timeout=2) as r:
                    answer = r.read()
                break
            except OSError:
                time.sleep(0.2)
        assert answer == b"[]", (tmp_path / "server.log").read_text()[-4000:]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
