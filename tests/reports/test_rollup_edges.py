"""The dashboard's roll-up: reading a range runs a fixed number of queries whatever the volume, and
the edge cases of the figures' definitions (copies, instant ratings and decisions, unlinked copies).
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from factcheck.ingest import ingest_flags
from factcheck.models import Match, MatchState, Post, QueueState
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Action
from moderation.propagation import apply_matches
from reports.figures import Scope, figures_for
from reports.rollup import (
    roll_up_day,
    roll_up_days,
    waiting_posts,
)
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
    UserFactory,
)
from tests.reports.conftest import FIRST, LAST, at, flag
from tests.reports.direct_counts import (
    approximately,
    direct_day,
    rolled_up_first_day,
    shown,
    waiting_at,
)

pytestmark = pytest.mark.django_db


# --- reading a range: a fixed number of queries ---------------------------------------------------


TEXT_EARLY = "The city council will paint every bus in the city gold to celebrate the football team's victory"
EXTRA_TEXTS = [
    "A famous footballer secretly bought the moon and plans to build a stadium on it next summer",
    "Drinking seawater every day makes children grow taller according to a viral video from Brazil",
    "The new bridge in the harbour was designed to collapse on purpose to collect the insurance money",
    "Mobile phone masts change the weather over farms and ruin every harvest in the southern counties",
]


def one_rating(reviewer) -> None:
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 7))], now=at(0, 7))
    DecisionFactory(reviewer=reviewer, post=Post.objects.get(external_id="en1"), verdict="false",
                    created_at=at(0, 9), decided_at=at(0, 9, 1))


@pytest.mark.parametrize("volume", ["one rating", "five days of history and more reviewers"])
def test_reading_a_range_runs_a_fixed_number_of_queries_whatever_the_volume(request, volume):
    if volume == "one rating":
        organisation = OrganisationFactory(name="Full Facts", languages=["en"])
        one_rating(FactCheckerFactory(organisation=organisation))
        now = at(5, 6)
    else:
        history = request.getfixturevalue("history")
        organisation, now = history.org_en, history.now
        for n, reviewer in enumerate(FactCheckerFactory.create_batch(len(EXTRA_TEXTS), organisation=organisation)):
            name = f"extra{n}"
            ingest_flags(flags=[flag(name, flagged_at=at(n, 1), text=EXTRA_TEXTS[n], where=("en", "GB"))],
                         now=at(n, 1))
            DecisionFactory(reviewer=reviewer, post=Post.objects.get(external_id=name), verdict="false",
                            created_at=at(n, 2), decided_at=at(n, 2, 1))
    roll_up_days(start=FIRST, end=LAST, now=now)
    counts = {}
    for scope in (None, organisation):
        with CaptureQueriesContext(connection) as queries:
            figures_for(Scope(organisation=scope), start=FIRST, end=LAST)
        counts["program" if scope is None else "organisation"] = len(queries)
    # The days computed, the figures, the reviewers' names (with their organisations), and for staff the
    # organisations' names: never the flags, ratings, actions or appeals behind them.
    assert counts == {"program": 4, "organisation": 3}


# --- edge cases of the definitions ----------------------------------------------------------------


def test_a_copy_of_a_claim_rated_true_stops_waiting_when_it_inherits_the_rating(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    reviewer = FactCheckerFactory(organisation=organisation)
    ingest_flags(flags=[flag("lemon", flagged_at=at(0, 8), text=CLAIM, where=("en", "GB"))], now=at(0, 8))
    DecisionFactory(reviewer=reviewer, post=Post.objects.get(external_id="lemon"), verdict="true",
                    created_at=at(0, 9), decided_at=at(0, 9, 1))
    ingest_flags(flags=[flag("lemon-copy", flagged_at=at(0, 10), text=EXACT_COPY, where=("en", "GB"))],
                 now=at(0, 10))
    copy = Post.objects.get(external_id="lemon-copy")
    assert copy.queue_state == QueueState.MATCHED  # matched on arrival: out of the reviewers' queue
    apply_matches(post_ids=[copy.pk], now=at(0, 10, 5))  # a True rating takes no action, on the copy either
    assert not Action.objects.exists()
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    day = figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0]
    assert day.queue_depth == 0 == len(waiting_at(at(1, 0), None))


def test_a_rating_made_the_instant_its_post_was_flagged_counts_a_wait_of_zero(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 9))], now=at(0, 9))
    DecisionFactory(reviewer__organisation=organisation, post=Post.objects.get(external_id="en1"), verdict="false",
                    created_at=at(0, 9), decided_at=at(0, 9, 1))
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    day = figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0]
    assert (day.first_ratings, day.time_to_rating_p50, day.time_to_rating_p90) == (1, 0.0, 0.0)


def test_an_appeal_decided_the_instant_it_was_filed_counts_in_the_median_time_to_decide(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    owner = UserFactory()
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 8)), flag("en2", flagged_at=at(0, 8))], now=at(0, 8))
    posts = {p.external_id: p for p in Post.objects.select_related("page")}
    for post in posts.values():
        post.page.owners.add(owner)
        DecisionFactory(reviewer__organisation=organisation, post=post, verdict="false",
                        created_at=at(0, 9), decided_at=at(0, 9, 1))
    colleague = FactCheckerFactory(organisation=organisation)
    for name, decided in (("en1", at(0, 12)), ("en2", at(0, 16))):
        appeal = file_appeal(owner=owner, post_id=posts[name].pk, kind="dispute", statement="No.", now=at(0, 12))
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="Stands.", now=decided)
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    figures = figures_for(Scope(organisation=None), start=FIRST, end=FIRST)
    assert figures.decide_seconds == [0.0, 4 * 3600.0]
    assert figures.appeal_median_seconds == 2 * 3600.0
    assert figures.appeals_within_target == 2


def test_a_copy_unlinked_from_its_rated_claim_waits_again_from_the_moment_it_is_unlinked(db, page_owner):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    rater, colleague = FactCheckerFactory.create_batch(2, organisation=organisation)
    ingest_flags(flags=[flag("lemon", flagged_at=at(0, 8), text=CLAIM, where=("en", "GB"))], now=at(0, 8))
    DecisionFactory(reviewer=rater, post=Post.objects.get(external_id="lemon"), verdict="false",
                    created_at=at(0, 9), decided_at=at(0, 9, 1))
    ingest_flags(flags=[flag("lemon-copy", flagged_at=at(0, 10), text=EXACT_COPY, where=("en", "GB"))],
                 now=at(0, 10))
    copy = Post.objects.select_related("page").get(external_id="lemon-copy")
    copy.page.owners.add(page_owner)
    apply_matches(post_ids=[copy.pk], now=at(0, 10, 5))  # the copy inherits the claim's False
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.MATCHED
    assert roll_up_day(day=FIRST, now=at(0, 13)) > 0
    assert figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0].queue_depth == 0
    assert waiting_posts(at(0, 13)).count() == 0 == len(waiting_at(at(0, 13), None))
    # The owner says it is not the same claim; the claim's organisation agrees: the copy is unlinked at 14:00.
    appeal = file_appeal(owner=page_owner, post_id=copy.pk, kind="dispute", statement="Not the same claim.",
                         now=at(0, 12))
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed", reason="A different claim.",
                  now=at(0, 14))
    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)  # back in the queue, live
    assert Match.objects.get(post=copy).state == MatchState.REJECTED
    assert [p.pk for p in waiting_at(at(0, 14), None)] == []  # not yet at the very moment
    for moment in (at(0, 14, 1), at(1, 0)):
        waiting = [p.pk for p in waiting_at(moment, None)]
        assert waiting == [copy.pk] == list(waiting_posts(moment).values_list("pk", flat=True))
    # What waits now is exactly what the live queue states say waits.
    live = Post.objects.filter(queue_state__in=[QueueState.QUEUED, QueueState.CLAIMED, QueueState.GROUPED])
    assert list(live.values_list("pk", flat=True)) == [copy.pk]
    today, rebuilt = rolled_up_first_day(organisation, live_at=at(0, 14, 1), rebuilt_at=at(1, 6))
    assert (today.queue_depth, today.queue_oldest_seconds) == (1, (4 * 60 + 1) * 60.0)  # flagged at 10:00
    for day in rebuilt:
        assert (day.queue_depth, day.queue_oldest_seconds) == (1, 14 * 3600.0)


def test_a_rating_made_before_the_posts_first_flag_is_not_a_first_rating_and_adds_no_wait(db):
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    reviewer = FactCheckerFactory(organisation=organisation)
    # Rated while nobody had flagged it (through the API, which claims an unclaimed post)...
    early = PostFactory(external_id="early", page=PageFactory(external_id="page-early", name="Page of early"),
                        language="en", country="GB", posted_at=at(0, 5), queue_state=QueueState.UNFLAGGED,
                        flag_count=0, flag_weight=0.0, first_flagged_at=None)
    DecisionFactory(reviewer=reviewer, post=early, verdict="false", created_at=at(0, 9), decided_at=at(0, 9, 1))
    # ... and flagged later that day, after its rating.
    ingest_flags(flags=[flag("early", flagged_at=at(0, 11), text=TEXT_EARLY, where=("en", "GB"))], now=at(0, 11))
    early.refresh_from_db()
    assert early.first_flagged_at == at(0, 11) and early.flag_count == 1
    # A post flagged at 12:00 and rated at 14:00 is the day's only first rating.
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 12))], now=at(0, 12))
    DecisionFactory(reviewer=reviewer, post=Post.objects.get(external_id="en1"), verdict="partly_false",
                    created_at=at(0, 14), decided_at=at(0, 14, 1))
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    for scope in (None, organisation):
        day = figures_for(Scope(organisation=scope), start=FIRST, end=FIRST).days[0]
        assert shown(day) == approximately(direct_day(FIRST, scope, now=at(1, 6)))
        assert day.ratings == {"false": 1, "partly_false": 1}  # both ratings count as ratings
        assert (day.first_ratings, day.time_to_rating_p50, day.time_to_rating_p90) == (1, 7200.0, 7200.0)
        assert day.queue_depth == 0  # rated before its flag, it never waited


def test_a_flag_dated_ahead_of_its_arrival_waits_from_its_arrival(db):
    """The API takes a flag dated up to a day ahead (a platform's clock). Its post waited from that moment to
    come: it was left out of the queue's depth until then, and its first rating out of the time to rating."""
    organisation = OrganisationFactory(name="Full Facts", languages=["en"])
    reviewer = FactCheckerFactory(organisation=organisation)
    ingest_flags(flags=[flag("en1", flagged_at=at(0, 20))], now=at(0, 12))  # dated 8 h after it arrived
    post = Post.objects.get(external_id="en1")
    assert post.first_flagged_at == at(0, 12)
    assert [p.pk for p in waiting_posts(at(0, 13))] == [post.pk]
    DecisionFactory(reviewer=reviewer, post=post, verdict="false", created_at=at(0, 14), decided_at=at(0, 14, 1))
    roll_up_days(start=FIRST, end=FIRST, now=at(1, 6))
    day = figures_for(Scope(organisation=None), start=FIRST, end=FIRST).days[0]
    assert (day.first_ratings, day.time_to_rating_p50) == (1, 7200.0)
