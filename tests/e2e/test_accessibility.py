"""Each role's main pages, on the demo data, at a desk (1366 px) and a phone (390 px): no page is wider than
the screen, and axe-core (vendored, tests/e2e/vendor) finds no serious or critical WCAG 2.1 A/AA violation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from factcheck.demo import DEMO_PASSWORD
from factcheck.models import Post, QueueState, Rating
from moderation.models import Appeal
from tests.e2e.helpers import sign_in

AXE = Path(__file__).parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
WIDTHS = {"desk": (1366, 900), "phone": (390, 844)}
WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def pages_of(role: str) -> tuple[str | None, list[str]]:
    """(username, paths) of one role's main pages in the seeded demo."""
    rated = Rating.objects.filter(is_current=True, post__page__external_id="health-truth-daily").order_by("id").first()
    queued = Post.objects.filter(queue_state=QueueState.QUEUED, language="en").order_by("-priority").first()
    dispute = Appeal.objects.get(kind="dispute")
    removal = Appeal.objects.get(kind="removal")
    return {
        "anonymous": (None, ["/accounts/login/", f"/claims/{rated.pk}/", "/no-such-page/"]),
        "factchecker": ("bob", ["/queue/", f"/queue/posts/{queued.pk}/", f"/queue/posts/{rated.post_id}/",
                                "/queue/appeals/", f"/queue/appeals/{dispute.pk}/", "/queue/suggestions/"]),
        "page_owner": ("olivia", ["/appeals/", f"/appeals/posts/{rated.post_id}/",
                                  f"/appeals/posts/{removal.post_id}/"]),
        "staff": ("tariq", ["/staff/appeals/", f"/staff/appeals/{removal.pk}/", "/staff/reports/",
                            f"/staff/reports/{Post.objects.get(external_id='demo-r001').pk}/"]),
    }[role]


def problems_on(page) -> list[str]:
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    found = [f"{overflow} px wider than the screen"] if overflow > 0 else []
    page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})", WCAG
    )
    for violation in result["violations"]:
        if violation["impact"] in ("serious", "critical"):
            targets = "; ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
            found.append(f"{violation['impact']} {violation['id']}: {violation['help']} ({targets})")
    return found


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("role", ["anonymous", "factchecker", "page_owner", "staff"])
def test_each_roles_main_pages_fit_the_screen_and_pass_axe(role, live_server, browser, settings):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    call_command("seed_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    username, paths = pages_of(role)
    failures: list[str] = []
    for width_name, (width, height) in WIDTHS.items():
        # bypass_csp: the page's CSP (script-src 'self') would refuse the injected axe script; the app keeps it.
        context = browser.new_context(viewport={"width": width, "height": height}, locale="en-GB", bypass_csp=True)
        page = context.new_page()
        page.set_default_timeout(10_000)
        if username:
            sign_in(page, live_server.url, username, password=DEMO_PASSWORD)
        for path in paths:
            page.goto(f"{live_server.url}{path}")
            failures += [f"{width_name} {path}: {problem}" for problem in problems_on(page)]
        context.close()
    assert not failures, "\n".join(failures)
