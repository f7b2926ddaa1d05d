"""What the browser journeys share: signing in through the login form, as a person does."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.factories import PASSWORD


def sign_in(page, base_url: str, username: str, next_url: str = "/", *, password: str = PASSWORD) -> None:
    """Sign in at /accounts/login/ and land on `next_url` (each role's start page by default)."""
    page.context.clear_cookies()
    page.goto(f"{base_url}/accounts/login/?next={next_url}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    if next_url != "/":
        expect(page).to_have_url(f"{base_url}{next_url}")
    # Loaded, deferred scripts run: a key pressed next reaches the page's shortcuts (the URL changes first).
    page.wait_for_load_state()
