"""The pipeline and a page's standing: three false ratings make a repeat offender, a reversal ends it at
once, and a new decision on its page says monetisation is suspended."""

from __future__ import annotations

from collections import Counter

import pytest

from factcheck.models import Verdict
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import (
    ActionKind,
    EndReason,
    NotificationKind,
    PageStanding,
    PostDistribution,
    StatementOfReasons,
    StrikeKind,
)
from moderation.statements.transparency import (
    CATEGORY_CIVIC_DISCOURSE,
    VISIBILITY_DEMOTED,
    VISIBILITY_LABELLED,
)
from tests.factories import (
    DecisionFactory,
    PostFactory,
    RatingFactory,
)
from tests.moderation.pipeline.watch import (
    FALSE_LABEL,
    PARTLY_LABEL,
    D,
    V,
    Watch,
    actions_of,
    check_statement,
    distribution_of,
    notices_of,
    standing_of,
    strikes_of,
    the_action,
)

pytestmark = pytest.mark.django_db


def test_three_false_ratings_make_a_repeat_offender_and_a_reversal_ends_it_at_once(factchecker, colleague, owner, page):
    posts = PostFactory.create_batch(3, page=page)
    innocent = PostFactory(page=page, queue_state="unflagged")
    first = DecisionFactory(reviewer=factchecker, post=posts[0], verdict=Verdict.FALSE).rating
    second = DecisionFactory(reviewer=factchecker, post=posts[1], verdict=Verdict.FALSE).rating
    assert standing_of(page) == (2, False, D("1"))
    for p in posts[:2]:
        assert "decision_monetary" not in the_action(p).statement.transparency
    assert not PostDistribution.objects.filter(post=innocent).exists()

    third = RatingFactory(reviewer=factchecker, post=posts[2], verdict=Verdict.FALSE)
    watch = Watch()
    apply_rating(rating_id=third.pk)

    actions = [the_action(p) for p in posts]
    assert standing_of(page) == (3, True, D("0.5"))
    assert PageStanding.objects.get(page=page).monetisation_suspended
    assert strikes_of(page) == [(a.pk, StrikeKind.FACT_CHECK, True) for a in actions]
    for p in posts:
        assert distribution_of(p) == (D("0.1"), [FALSE_LABEL], False)  # 0.2 x 0.5
    assert distribution_of(innocent) == (D("0.5"), [], False)
    # Every post of the page, the rated one included, in one feed entry each: the rated one's names its rating
    # (it had said "page became a repeat offender", as the others rightly do).
    assert sorted(watch.feed()) == sorted(
        [(p.pk, D("0.1"), [FALSE_LABEL], False, "page became a repeat offender") for p in posts[:2]]
        + [(posts[2].pk, D("0.1"), [FALSE_LABEL], False, "rated False"),
           (innocent.pk, D("0.5"), [], False, "page became a repeat offender")]
    )
    [sor] = watch.statements()
    check_statement(sor, actions[2], visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED],
                    category=CATEGORY_CIVIC_DISCOURSE, monetary=True)
    for a in actions[:2]:  # the earlier statements are not rewritten
        assert "decision_monetary" not in StatementOfReasons.objects.get(action=a).transparency
    assert watch.verbs(posts[2]) == Counter({V.DECISION_APPLIED: 1, V.ACTION_CREATED: 1, V.STRIKE_CREATED: 1})
    assert [(e.verb, e.target_id, e.data) for e in watch.all_events().filter(post_id__isnull=True)] == [
        (V.STANDING_CHANGED, str(page.pk), {"repeat_offender": True, "active_strikes": 3})
    ]
    assert notices_of(watch) == [  # the post's, then its page's (moderation.standing)
        (owner.pk, NotificationKind.DECISION, f"Your post {posts[2].external_id} was rated False"),
        (owner.pk, NotificationKind.STANDING, f"Your page {page.name} is now a repeat offender"),
    ]

    # The owner disputes the first rating; a colleague reverses it: under the threshold at once.
    appeal = file_appeal(owner=owner, post_id=posts[0].pk, kind="dispute", statement="It is a real quote.")
    watch = Watch()
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                  public_rationale="New evidence.", new_verdict="true", reason="The quote is real.")

    assert standing_of(page) == (2, False, D("1"))
    assert not PageStanding.objects.get(page=page).monetisation_suspended
    assert strikes_of(page) == [(actions[0].pk, StrikeKind.FACT_CHECK, False)] + [
        (a.pk, StrikeKind.FACT_CHECK, True) for a in actions[1:]
    ]
    assert actions_of(posts[0]) == [(ActionKind.FACT_CHECK, D("0.2"), FALSE_LABEL, EndReason.REVERSED)]
    assert distribution_of(posts[0]) == (D("1"), [], False)
    for p in posts[1:]:
        assert distribution_of(p) == (D("0.2"), [FALSE_LABEL], False)
    assert distribution_of(innocent) == (D("1"), [], False)
    assert sorted(watch.feed()) == sorted(
        [(posts[0].pk, D("1"), [], False, "rated True")]  # its own decision, the reversal
        + [(p.pk, D("0.2"), [FALSE_LABEL], False, "page is no longer a repeat offender") for p in posts[1:]]
        + [(innocent.pk, D("1"), [], False, "page is no longer a repeat offender")]
    )
    assert watch.statements() == []
    assert "decision_monetary" in StatementOfReasons.objects.get(action=actions[2]).transparency  # what was said stays
    assert watch.verbs(posts[0]) == Counter({
        V.APPEAL_CHANGED: 1, V.RATING_SUPERSEDED: 1, V.RATING_RECORDED: 1,
        V.ACTION_ENDED: 1, V.STRIKE_ENDED: 1, V.DECISION_APPLIED: 1,
    })
    assert [(e.verb, e.data) for e in watch.all_events().filter(post_id__isnull=True)] == [
        (V.STANDING_CHANGED, {"repeat_offender": False, "active_strikes": 2})
    ]
    assert notices_of(watch) == [
        (owner.pk, NotificationKind.APPEAL_DECIDED,
         f"Your appeal on post {posts[0].external_id} was accepted: the rating was changed from False to True"),
        (owner.pk, NotificationKind.STANDING, f"Your page {page.name} is no longer a repeat offender"),
    ]
    assert (first.pk, second.pk) == tuple(a.rating_id for a in actions[:2])


def test_a_new_decision_on_a_repeat_offenders_page_says_monetisation_is_suspended(factchecker, page):
    posts = PostFactory.create_batch(4, page=page)
    for p in posts[:3]:
        DecisionFactory(reviewer=factchecker, post=p, verdict=Verdict.FALSE)
    watch = Watch()
    DecisionFactory(reviewer=factchecker, post=posts[3], verdict=Verdict.PARTLY_FALSE)  # no strike of its own

    action = the_action(posts[3])
    assert standing_of(page) == (3, True, D("0.5"))
    assert distribution_of(posts[3]) == (D("0.25"), [PARTLY_LABEL], False)
    assert watch.feed() == [(posts[3].pk, D("0.25"), [PARTLY_LABEL], False, "rated Partly false")]
    [sor] = watch.statements()
    check_statement(sor, action, visibility=[VISIBILITY_DEMOTED, VISIBILITY_LABELLED],
                    category=CATEGORY_CIVIC_DISCOURSE, monetary=True)
