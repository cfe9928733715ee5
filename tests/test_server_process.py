"""The `schema-registry` command: serve (flags and environment), start-up log, graceful
SIGTERM, persistence across restarts, `db upgrade`, bad store URLs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import CONTENT_TYPE, LiveServer

SCHEMA = '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'


def test_serve_logs_address_and_store_and_stops_on_sigterm(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path / 'a.db'}", tmp_path)
    server.start()
    response = httpx.post(
        f"{server.url}/subjects/s/versions",
        json={"schema": SCHEMA},
        headers={"Content-Type": CONTENT_TYPE},
    )
    assert response.json()["id"] == 1
    assert server.stop() == 0
    log = server.log()
    assert f"listening on http://127.0.0.1:{server.port}" in log
    assert str(tmp_path / "a.db") in log
    assert "Traceback" not in log

    # the data survives a restart
    again = LiveServer(f"sqlite:///{tmp_path / 'a.db'}", tmp_path)
    again.start()
    try:
        assert httpx.get(f"{again.url}/subjects").json() == ["s"]
        assert httpx.get(f"{again.url}/schemas/ids/1").json()["schema"] == SCHEMA
    finally:
        assert again.stop() == 0


def test_settings_come_from_the_environment(tmp_path: Path) -> None:
    db = tmp_path / "env.db"
    server = LiveServer(
        f"sqlite:///{db}", tmp_path, env={"SCHEMA_REGISTRY_COMPATIBILITY_LEVEL": "FULL"}
    )
    server.start()
    try:
        assert httpx.get(f"{server.url}/config").json() == {"compatibilityLevel": "FULL"}
    finally:
        server.stop()


def test_unsupported_store_url_exits_with_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "registry.cli", "serve", "--store", "mysql://x/y", "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "mysql" in result.stderr


def test_bad_environment_value_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "registry.cli", "serve"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"SCHEMA_REGISTRY_PORT": "eighty", "PATH": ""},
    )
    assert result.returncode == 2
    assert "SCHEMA_REGISTRY_PORT" in result.stderr


def test_db_upgrade_creates_the_schema(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "up.db"
    result = subprocess.run(
        [sys.executable, "-m", "registry.cli", "db", "upgrade", "--store", f"sqlite:///{db}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert db.exists()
    import sqlite3

    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("select name from sqlite_master")}
    assert "alembic_version" in tables
