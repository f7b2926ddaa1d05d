"""The post's decisions as the owner's page showed them, which the appeal form carries (`seen`): filing refuses an
appeal whose decision changed since (moderation.appeals), and the portal says so before it files (views_portal)."""

from __future__ import annotations

from factcheck.models import Rating
from moderation.models import Action, ActionKind, AppealKind
from moderation.selectors import FactCheckDecision


def decisions_read(decision: FactCheckDecision | None, actions: list[Action]) -> str:
    """The post's decisions as its page shows the owner: the fact-check rating (with the matched action, for a copy)
    and the removal. The appeal form carries it (`seen`): filing refuses one whose decision changed since
    (`still_as_read`: an appeal is never filed against a rating its owner has not read)."""
    removal = next((action for action in actions if action.kind == ActionKind.REMOVAL), None)
    fact_check = _fact_check_read(decision.rating, decision.matched) if decision is not None else ""
    return f"{fact_check}|{removal.pk if removal is not None else ''}"


def _fact_check_read(rating: Rating, matched: Action | None) -> str:
    return f"{rating.pk}.{matched.pk if matched is not None else ''}"


def still_as_read(seen: str, *, kind: str, rating: Rating | None, action: Action | None) -> bool:
    """Whether the decision an appeal of `kind` is against (its rating and action, as moderation.appeals finds them)
    is the one the owner's page showed (`seen`, from `decisions_read`)."""
    fact_check, _, removal = seen.partition("|")
    if kind == AppealKind.REMOVAL:
        return removal == str(action.pk)
    return fact_check == _fact_check_read(rating, action)


def read_alike(seen: str, now: str, *, kind: str) -> bool:
    """Whether two `decisions_read` show the same decision an appeal of `kind` is against (the removal for a removal
    appeal, the fact-check rating otherwise): the other may change meanwhile without making the appeal stale."""
    fact_check, _, removal = seen.partition("|")
    fact_check_now, _, removal_now = now.partition("|")
    return removal == removal_now if kind == AppealKind.REMOVAL else fact_check == fact_check_now
