"""What the pipeline tests read: the rows a call appended (`Watch`) and the state it left on a post and
its page, in terms the assertions compare."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal

from django.db.models import Max

from audit.models import AuditEvent, AuditVerb
from moderation.models import (
    Action,
    DistributionChange,
    Notification,
    PageStanding,
    PostDistribution,
    RatingDecision,
    StatementOfReasons,
    Strike,
)
from moderation.statements.reasons import TAXONOMY_BY_GROUND
from moderation.statements.transparency import (
    AUTOMATED_NOT,
    CATEGORY_CIVIC_DISCOURSE,
    KEYWORD_MISINFORMATION,
    MONETARY_SUSPENSION,
)

D = Decimal
FALSE_LABEL = "False information. Checked by independent fact-checkers."
PARTLY_LABEL = "Partly false information."
ACTIVE = None  # the end reason of an action that has not ended

V = AuditVerb


def _max_id(model) -> int:
    return model.objects.aggregate(m=Max("id"))["m"] or 0


class Watch:
    """The rows appended after this point: audit events, feed entries, notifications, statements."""

    def __init__(self) -> None:
        self.audit = _max_id(AuditEvent)
        self.feed_id = _max_id(DistributionChange)
        self.notification = _max_id(Notification)
        self.statement = _max_id(StatementOfReasons)
        self.decision = _max_id(RatingDecision)

    def verbs(self, post) -> Counter:
        return Counter(AuditEvent.objects.filter(id__gt=self.audit, post_id=post.pk).values_list("verb", flat=True))

    def all_events(self):
        return AuditEvent.objects.filter(id__gt=self.audit).order_by("id")

    def feed(self, post=None) -> list[tuple]:
        rows = DistributionChange.objects.filter(id__gt=self.feed_id).order_by("id")
        if post is not None:
            rows = rows.filter(post=post)
        return [(row.post_id, row.multiplier, row.labels, row.removed, row.cause) for row in rows]

    def notices(self) -> list[Notification]:
        return list(Notification.objects.filter(id__gt=self.notification).order_by("id"))

    def statements(self) -> list[StatementOfReasons]:
        return list(StatementOfReasons.objects.filter(id__gt=self.statement).order_by("id"))

    def decisions(self) -> list[RatingDecision]:
        return list(RatingDecision.objects.filter(id__gt=self.decision).order_by("id"))

    def nothing_appended(self) -> bool:
        return (
            not self.all_events().exists() and not self.feed() and not self.notices() and not self.statements()
            and not self.decisions()
        )


def actions_of(post) -> list[tuple]:
    """(kind, multiplier, label, end reason or ACTIVE), oldest first; ended_at agrees with end_reason."""
    rows = []
    for action in Action.objects.filter(post=post).order_by("id"):
        assert (action.ended_at is None) == (action.end_reason == ""), action
        rows.append((action.kind, action.feed_multiplier, action.label, action.end_reason or ACTIVE))
    return rows


def strikes_of(page) -> list[tuple]:
    """(action id, kind, active), oldest first."""
    return [(s.action_id, s.kind, s.ended_at is None) for s in Strike.objects.filter(page=page).order_by("id")]


def standing_of(page) -> tuple:
    standing = PageStanding.objects.get(page=page)
    return standing.active_strikes, standing.is_repeat_offender, standing.page_multiplier


def distribution_of(post) -> tuple:
    row = PostDistribution.objects.get(post=post)
    return row.multiplier, row.labels, row.removed


def check_statement(sor: StatementOfReasons, action: Action, *, visibility: list[str], category: str,
                    monetary: bool = False) -> None:
    t = sor.transparency
    assert sor.action_id == action.pk
    assert sor.puid == action.puid == t["puid"]
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,500}", t["puid"])
    assert t["decision_visibility"] == visibility
    assert t["category"] == category
    if category == CATEGORY_CIVIC_DISCOURSE:
        assert t["category_specification"] == [KEYWORD_MISINFORMATION]
    else:  # a removal: the keywords of its ground, if any
        taxonomy = next(tax for tax in TAXONOMY_BY_GROUND.values() if tax["category"] == category)
        assert t.get("category_specification") == taxonomy.get("category_specification")
    assert t["automated_decision"] == AUTOMATED_NOT and sor.automated_decision is False
    assert t.get("decision_monetary") == (MONETARY_SUSPENSION if monetary else None)


def notices_of(watch: Watch) -> list[tuple]:
    return [(n.user_id, n.kind, n.subject) for n in watch.notices()]


def the_action(post, **filters) -> Action:
    return Action.objects.get(post=post, **filters)
