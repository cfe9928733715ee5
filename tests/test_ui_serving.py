"""Serving the web UI: the files at /ui (with the media types browsers need for modules), the
redirect from /ui, nothing outside the static folder, no route when SCHEMA_REGISTRY_UI=false,
and the files shipped as package data."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from registry.api.app import create_app
from registry.api.ui import STATIC, is_ui_path
from registry.core import Registry
from registry.settings import Settings
from registry.store.factory import open_store


def client(tmp_path: Path, **settings: object) -> TestClient:
    s = Settings(store=f"sqlite:///{tmp_path / 'r.db'}", **settings)  # type: ignore[arg-type]
    return TestClient(create_app(Registry(open_store(s.store), s)))


def test_ui_files_are_served_with_their_media_types(tmp_path: Path) -> None:
    with client(tmp_path) as c:
        r = c.get("/ui", follow_redirects=False)
        assert r.status_code == 308 and r.headers["location"] == "ui/"
        index = c.get("/ui/")
        assert index.status_code == 200
        assert index.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="app.js">' in index.text
        js = c.get("/ui/app.js")
        assert js.headers["content-type"].startswith("text/javascript")
        assert c.get("/ui/style.css").headers["content-type"].startswith("text/css")


@pytest.mark.parametrize("name", ["missing.js", "..%2Fapi%2Fui.py", ".hidden.js", "__init__.py"])
def test_nothing_else_is_served(tmp_path: Path, name: str) -> None:
    with client(tmp_path) as c:
        r = c.get("/ui/" + name)
        assert r.status_code == 404
        assert r.json()["error_code"] == 404


def test_ui_off(tmp_path: Path) -> None:
    with client(tmp_path, ui=False) as c:
        assert c.get("/ui/").status_code == 404
        assert c.get("/ui/app.js").status_code == 404
    assert Settings.from_env({"SCHEMA_REGISTRY_UI": "false"}).ui is False
    assert Settings.from_env({}).ui is True


def test_every_static_file_is_package_data() -> None:
    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["registry.ui.static"]
    for path in STATIC.iterdir():
        assert any(path.match(p) for p in patterns), path.name
        # modules import one another relatively; nothing loaded from elsewhere
        if path.suffix in (".js", ".html", ".css"):
            text = path.read_text()
            assert "http://" not in text.replace("http://www.w3.org", "")
            assert "https://" not in text, path.name


@pytest.mark.parametrize(
    ("path", "public"),
    [
        ("/ui", True),
        ("/ui/", True),
        ("/ui/app.js", True),
        ("/ui/../subjects", False),
        ("/ui/x/../../subjects", False),
        ("/uix", False),
        ("/ui/a/b.js", False),
        ("/subjects", False),
    ],
)
def test_only_the_ui_files_skip_authentication(path: str, public: bool) -> None:
    assert is_ui_path(path) is public
