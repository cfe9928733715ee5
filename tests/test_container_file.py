"""The Dockerfile's text (tests/test_container_image.py builds and runs it): what it copies
covers every packaged directory (and .dockerignore lets those through), both stages use
Debian's Python from debian:bookworm-slim, it runs as a non-root user, and its HEALTHCHECK
command, run as written against a server started with the image's environment, passes over
HTTP and HTTPS and fails when the server is down."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import free_port
from tests.production_helpers import Pki, Server, running, tls_context

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def image_env() -> dict[str, str]:
    block = re.search(r"^ENV PATH=.*?(?=^\S)", DOCKERFILE, re.M | re.S)
    assert block is not None
    pairs = re.findall(r"(\w+)=(\S+)", block.group(0).replace("\\\n", " "))
    return {k: v for k, v in pairs if k.startswith("SCHEMA_REGISTRY_")}


def healthcheck_argv() -> list[str]:
    """The HEALTHCHECK command of the Dockerfile (exec form)."""
    match = re.search(r"^HEALTHCHECK .*? CMD (\[.*\])$", DOCKERFILE, re.M)
    assert match is not None
    argv: list[str] = json.loads(match.group(1))
    return argv


def healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    argv = healthcheck_argv()
    assert argv[0] == "python"
    return subprocess.run(
        [sys.executable, *argv[1:]], env=env, capture_output=True, text=True, timeout=30
    )


def test_the_image_copies_every_packaged_directory() -> None:
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = {p.split(".")[0] for p in packages["packages"] if not p.startswith("registry._")}
    dirs |= set(packages["package-dir"].values())
    copied = set(re.findall(r"^COPY (\w+) \./", DOCKERFILE, re.M))
    assert dirs <= copied, dirs - copied
    allowed = {
        line[1:] for line in (ROOT / ".dockerignore").read_text().splitlines() if line[:1] == "!"
    }
    assert copied | {"pyproject.toml", "README.md"} <= allowed


def test_the_image_runs_as_an_unprivileged_user() -> None:
    assert re.search(r"^USER 10001:10001$", DOCKERFILE, re.M)
    assert DOCKERFILE.count("FROM ") == 2  # build tools stay in the build stage
    assert image_env()["SCHEMA_REGISTRY_HOST"] == "0.0.0.0"


def test_both_stages_use_debians_python_from_the_slim_image() -> None:
    # Debian bookworm's python3 is 3.11, the version the project needs; scripts/container makes
    # the same base locally where no registry is reachable
    froms = re.findall(r"^FROM (\S+)", DOCKERFILE, re.M)
    assert froms == ["debian:bookworm-slim", "debian:bookworm-slim"]
    installs = re.findall(r"apt-get install (.*?) \\$", DOCKERFILE, re.M)
    assert len(installs) == 2
    for install in installs:
        assert "--no-install-recommends" in install and "python3" in install.split()
    assert "python3-venv" not in installs[1]  # the runtime stage needs no venv/pip wheels
    assert DOCKERFILE.count("rm -rf /var/lib/apt/lists/*") == 2


def test_healthcheck_command_over_http_and_https(tmp_path: Path) -> None:
    env = image_env()
    env["SCHEMA_REGISTRY_STORE"] = f"sqlite:///{tmp_path / 'image.db'}"
    env["SCHEMA_REGISTRY_HOST"] = "127.0.0.1"
    server = Server(tmp_path, env)
    env["SCHEMA_REGISTRY_PORT"] = str(server.port)
    with running(server):
        assert healthcheck(env).returncode == 0
        assert server.log().lstrip().startswith("{")  # JSON logs in the image
    down = healthcheck(env)
    assert down.returncode != 0

    pki = Pki(tmp_path)
    tls_env = {
        **env,
        "SCHEMA_REGISTRY_TLS_CERTFILE": str(pki.server_cert),
        "SCHEMA_REGISTRY_TLS_KEYFILE": str(pki.server_key),
        "SCHEMA_REGISTRY_PORT": str(free_port()),
    }
    tls_server = Server(tmp_path, tls_env, scheme="https", verify=tls_context(pki.ca))
    tls_env["SCHEMA_REGISTRY_PORT"] = str(tls_server.port)
    with running(tls_server):
        result = healthcheck(tls_env)
        assert result.returncode == 0, result.stderr
