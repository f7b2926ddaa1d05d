"""Politicians' pages in the admin: marking and unmarking go through factcheck.pages.set_politician.

The confirmation machinery (a reason form, a confirmation page, one domain call per row) is
core.admin_decisions'; this module only says what marking and unmarking do.
"""

from __future__ import annotations

from typing import Any

from core.admin_decisions import ReasonForm, StaffDecision, StaffDecisionsAdmin
from factcheck.models import Page
from factcheck.pages import set_politician


def _describe_page(page: Page) -> str:
    marked = "a politician's page" if page.is_politician else "not a politician's page"
    return f"{page.name} ({page.external_id}), now {marked}"


def _politician_decision(*, is_politician: bool) -> StaffDecision:
    def apply(staff, page: Page, data: dict[str, Any]) -> str:
        if page.is_politician == is_politician:
            return "already so; unchanged"
        changed = set_politician(staff=staff, page_id=page.pk, is_politician=is_politician, reason=data["reason"])
        return f"{'marked' if is_politician else 'unmarked'}; {changed} post(s) changed queue state"

    if is_politician:
        return StaffDecision(
            slug="mark_politician", title="Mark as politicians' pages", button="Mark as politicians' pages",
            permission="factcheck.set_politician", form_class=ReasonForm, apply=apply, refusals=(ValueError,),
            describe=_describe_page, link=lambda page: "" if page.is_politician else "Mark as a politician's page",
            explanation=("Posts of a politician's page are not fact-checked: their queued posts leave the queue "
                         "and active claims on them end. Ratings already made stay."),
        )
    return StaffDecision(
        slug="unmark_politician", title="Unmark politicians' pages", button="Unmark",
        permission="factcheck.set_politician", form_class=ReasonForm, apply=apply, refusals=(ValueError,),
        describe=_describe_page, link=lambda page: "Unmark as a politician's page" if page.is_politician else "",
        explanation="Flagged posts of these pages that have no current rating return to the queue.",
    )


MARK_POLITICIAN = _politician_decision(is_politician=True)
UNMARK_POLITICIAN = _politician_decision(is_politician=False)


class PoliticianPageActions(StaffDecisionsAdmin):
    """Page admin: marking a politician's page goes through set_politician, never a checkbox save."""

    staff_decisions = (MARK_POLITICIAN, UNMARK_POLITICIAN)
