"""``/ui``: the web UI's static files (``registry/ui/static``). The server only serves files; the
UI reads and writes through the public REST API with the user's own credentials, so the auth
middleware lets these paths through without any (they carry no data)."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, RedirectResponse, Response

from registry import errors

PREFIX = "/ui"
STATIC = Path(str(resources.files("registry.ui") / "static"))
MEDIA = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}

router = APIRouter(include_in_schema=False)


_FILE = re.compile(r"/ui(/([A-Za-z0-9_-]+\.[a-z]+)?)?")


def is_ui_path(path: str) -> bool:
    """Whether ``path`` may name one of the UI's files (served without authentication): /ui,
    /ui/ or /ui/NAME.EXT, nothing with another segment."""
    return _FILE.fullmatch(path) is not None


@router.get(PREFIX)
async def ui_root() -> Response:
    # relative asset and API URLs resolve against /ui/ (also behind a path-prefix proxy)
    return RedirectResponse("ui/", status_code=308)


@router.get(PREFIX + "/")
async def ui_index() -> Response:
    return _file("index.html")


@router.get(PREFIX + "/{name}")
async def ui_asset(name: str) -> Response:
    return _file(name)


def _file(name: str) -> Response:
    path = STATIC / name
    media = MEDIA.get(path.suffix)
    if media is None or "/" in name or name.startswith(".") or not path.is_file():
        raise errors.RegistryError(404, "HTTP 404 Not Found")
    return FileResponse(path, media_type=media)
