"""Reads of the decision side that the portal, the desks, the API and the admin share.

"Which decisions can this owner appeal", "what is this post's distribution as its owner reads
it", "which statements of reasons stand": each is computed here, once.
"""

from __future__ import annotations

from decimal import Decimal

from django.db.models import QuerySet

from factcheck.models import Post, Rating
from moderation.distribution import current_distribution
from moderation.models import Action, ActionKind, AppealKind, StatementOfReasons

ONE = Decimal("1")


def current_ratings() -> QuerySet[Rating]:
    return Rating.objects.filter(is_current=True).select_related("organisation")


def active_actions() -> QuerySet[Action]:
    """Active actions, oldest first, each with the statement of reasons stored when it was taken."""
    return Action.objects.filter(ended_at__isnull=True).select_related("statement").order_by("created_at", "id")


def statements(actions: list[Action]) -> list[StatementOfReasons]:
    """The stored statements of the restricting ones (an action that restricts nothing has none)."""
    return [action.statement for action in actions if hasattr(action, "statement")]


def appealable_kinds(rating: Rating | None, actions: list[Action]) -> list[str]:
    """What the owner may appeal: the current rating (dispute, correction) and an active removal."""
    kinds = [AppealKind.DISPUTE, AppealKind.CORRECTION] if rating is not None else []
    if any(action.kind == ActionKind.REMOVAL for action in actions):
        kinds.append(AppealKind.REMOVAL)
    return [str(kind) for kind in kinds]


def owner_distribution(post: Post) -> dict[str, object]:
    """The post's current distribution as an owner reads it."""
    current = current_distribution(post)
    return {
        "multiplier": f"{current.multiplier.normalize():f}",
        "percent_less": round((1 - float(current.multiplier)) * 100),
        "full": not current.removed and current.multiplier == ONE,
        "removed": current.removed,
        "labels": current.labels,
    }
