"""Browser fixtures: the system's Chromium driven by Playwright's sync API, against live_server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django would then refuse the test's
# own (synchronous) database calls, which are safe here because nothing else runs in the loop.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("FACTDESK_CHROMIUM", "/usr/bin/chromium")
SHOTS_DIR = Path(os.environ.get("FACTDESK_SHOTS_DIR", "/tmp/factdesk-shots"))


# One browser per test rather than per session: once Playwright's sync API has started, the
# database connection this thread sees is a different object, without the contents that
# serialized_rollback restores; a browser started before the test's database setup left the
# tests after a transactional test without the migrations' rows (the default policy).
@pytest.fixture
def browser() -> Iterator:
    if not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set FACTDESK_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def screenshot(page):
    """Save a full-page screenshot under SHOTS_DIR, for people to look at after a run."""
    SHOTS_DIR.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        path = SHOTS_DIR / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take
