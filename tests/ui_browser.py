"""Helpers of the web UI's browser tests: Debian's Chromium (``scripts/chromium install``) driven
by Playwright for Python (never ``playwright install``), and waits on conditions, never sleeps."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: generous: the machine running the tests may be small and busy
WAIT_MS = 30_000
REPO = Path(__file__).resolve().parent.parent


def ensure_chromium() -> None:
    if not Path(CHROMIUM).exists():
        subprocess.run(["bash", str(REPO / "scripts" / "chromium"), "install"], check=True)


@contextmanager
def chromium() -> Iterator[Browser]:
    ensure_chromium()
    with sync_playwright() as p:
        # launch() gives the browser a fresh temporary profile (its own --user-data-dir)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def open_view(page: Page, base: str, hash_: str) -> None:
    """Load ``/ui/`` at ``hash_`` and wait until the view for that URL is rendered."""
    page.goto(f"{base}/ui/{hash_}")
    wait_view(page, hash_)


def wait_view(page: Page, hash_: str) -> None:
    page.wait_for_function(
        "h => document.getElementById('view').dataset.ready === h", arg=hash_, timeout=WAIT_MS
    )
