"""Every road to a decision (a direct apply, the reconciler, a real worker) gives the pipeline's same
consequences, and applying twice changes nothing the second time."""

from __future__ import annotations

import re
from collections import Counter
from datetime import timedelta

import django_rq
import pytest
from django.utils import timezone

from audit.models import AuditEvent
from factcheck.models import Rating, Verdict
from moderation import jobs
from moderation.enforcement import apply_rating, reconcile_decisions
from moderation.models import (
    Action,
    DistributionChange,
    Notification,
    PostDistribution,
    RatingDecision,
    StatementOfReasons,
    Strike,
)
from tests.factories import (
    DecisionFactory,
    PageFactory,
    PostFactory,
    RatingFactory,
)
from tests.moderation.pipeline.watch import (
    FALSE_LABEL,
    D,
    Watch,
    distribution_of,
    standing_of,
)

pytestmark = pytest.mark.django_db


def consequences(post) -> dict:
    """Everything a rating's decision left on its post, in terms that do not name the post or its page."""

    def plain(text: str) -> str:
        text = text.replace(post.external_id, "<post>").replace(post.page.name, "<page>")
        return re.sub(r"\d{2} \w+ \d{4}", "<date>", text)

    statements = []
    for sor in StatementOfReasons.objects.filter(action__post=post).order_by("id"):
        transparency = {k: v for k, v in sor.transparency.items()
                        if k not in ("puid", "content_date", "application_date")}
        assert sor.transparency["puid"] == sor.puid == sor.action.puid
        statements.append((sor.what, sor.scope, sor.facts, sor.ground, sor.automation, sor.appeal_kinds,
                           plain(sor.how_to_appeal), transparency))
    return {
        "actions": [
            (a.kind, a.verdict, a.feed_multiplier, a.label, a.warn_sharers, a.end_reason, a.ended_at is None,
             a.created_by_id)
            for a in Action.objects.filter(post=post).order_by("id")
        ],
        "strikes": [(s.kind, s.ended_at is None) for s in Strike.objects.filter(action__post=post).order_by("id")],
        "standing": standing_of(post.page),
        "distribution": distribution_of(post),
        "reasons": [{k: v for k, v in r.items() if k != "action_id"}
                    for r in PostDistribution.objects.get(post=post).reasons],
        "feed": [(c.multiplier, c.labels, c.removed, c.warn_sharers, c.cause)
                 for c in DistributionChange.objects.filter(post=post).order_by("id")],
        "statements": statements,
        "audit": Counter(AuditEvent.objects.filter(post_id=post.pk).values_list("verb", "actor_label")),
        "notices": [(n.user_id, n.kind, plain(n.subject), plain(n.body))
                    for n in Notification.objects.filter(post=post).order_by("id")],
        "decisions": [(d.outcome, d.action_id is not None) for d in RatingDecision.objects.filter(post=post)],
    }


def test_the_reconciler_and_a_real_worker_give_what_a_direct_apply_gives_and_twice_changes_nothing(
    factchecker, owner, run_worker, django_capture_on_commit_callbacks
):
    def new_post():
        page = PageFactory()  # one page each: their strikes must not add up
        page.owners.add(owner)
        return PostFactory(page=page)

    direct, reconciled, worked = new_post(), new_post(), new_post()
    rationale = "The photo is from another year."

    rating = RatingFactory(reviewer=factchecker, post=direct, verdict=Verdict.FALSE, rationale=rationale)
    apply_rating(rating_id=rating.pk)

    # The job was lost (Redis down): nothing was enqueued; the reconciler finds the rating later.
    with django_capture_on_commit_callbacks(execute=False):
        lost = RatingFactory(reviewer=factchecker, post=reconciled, verdict=Verdict.FALSE, rationale=rationale)
    assert run_worker() == 0
    assert not RatingDecision.objects.filter(rating=lost).exists()
    assert reconcile_decisions(now=timezone.now() + timedelta(minutes=5)) == 1

    # The normal road: the job enqueued after commit, run by a real worker.
    with django_capture_on_commit_callbacks(execute=True):
        RatingFactory(reviewer=factchecker, post=worked, verdict=Verdict.FALSE, rationale=rationale)
    assert run_worker() == 1

    expected = consequences(direct)
    assert expected["actions"] == [("fact_check", "false", D("0.2"), FALSE_LABEL, True, "", True, None)]
    assert expected["feed"] == [(D("0.2"), [FALSE_LABEL], False, True, "rated False")]
    assert len(expected["statements"]) == 1 and len(expected["notices"]) == 1
    assert consequences(reconciled) == expected
    assert consequences(worked) == expected

    # Again, by every road: nothing new anywhere.
    watch = Watch()
    for post in (direct, reconciled, worked):
        apply_rating(rating_id=Rating.objects.get(post=post).pk)
    assert reconcile_decisions(now=timezone.now() + timedelta(minutes=5)) == 0
    for post in (direct, reconciled, worked):
        django_rq.get_queue("default").enqueue(jobs.apply_rating, Rating.objects.get(post=post).pk)
    assert run_worker() == 3
    assert watch.nothing_appended()
    for post in (direct, reconciled, worked):
        assert consequences(post) == expected


@pytest.mark.parametrize("verdict", [Verdict.TRUE, Verdict.PARTLY_FALSE])
def test_a_rerating_applied_twice_changes_nothing_the_second_time(factchecker, post, verdict):
    DecisionFactory(reviewer=factchecker, post=post, verdict=Verdict.FALSE)
    rating = RatingFactory(reviewer=factchecker, post=post, verdict=verdict, change_reason="New evidence.")
    apply_rating(rating_id=rating.pk)
    before = consequences(post)
    watch = Watch()
    apply_rating(rating_id=rating.pk)
    assert watch.nothing_appended()
    assert consequences(post) == before
