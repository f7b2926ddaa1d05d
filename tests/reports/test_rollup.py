"""The dashboard's roll-up: every figure, for the program and each organisation, equals a direct count.

The history (tests/reports/conftest.py) is made through the domain functions at explicit times; the
roll-up is read back through `figures_for`, as the dashboard and the stats API read it, and compared
with counts written with plain queries over the raw rows (tests/reports/direct_counts.py), following
the definitions of reports.rollup's docstring. A few figures are also spelled out by hand, so that a
direct count that went wrong the same way would still be caught. Which days are computed and when:
test_rollup_days.py; a range's queries and the definitions' edge cases: test_rollup_edges.py.
"""

from __future__ import annotations

from collections import Counter

import pytest

from factcheck.models import Rating
from reports.figures import Scope, figures_for
from tests.reports.conftest import DAYS, FIRST, LAST, at
from tests.reports.direct_counts import (
    SCOPES,
    approximately,
    decided_in,
    direct_day,
    figure_of,
    organisation_of,
    pg_percentile,
    shown,
)

pytestmark = pytest.mark.django_db


# --- each figure against its direct count ----------------------------------------------------------


@pytest.mark.parametrize("scope", SCOPES)
def test_every_days_figures_equal_a_direct_count_of_the_history(rolled_up, scope):
    organisation = organisation_of(rolled_up, scope)
    figures = figures_for(Scope(organisation=organisation), start=FIRST, end=LAST)
    assert [d.day for d in figures.days] == DAYS
    for day_figures in figures.days:
        expected = direct_day(day_figures.day, organisation, now=rolled_up.now)
        assert shown(day_figures) == approximately(expected), f"{scope} on {day_figures.day}"


@pytest.mark.parametrize("scope, depths, oldest_hours", [
    # D0 ends with fr2 and en2 waiting (fr1, en1, claim1 rated, copy1 matched, the politician's never; de1 removed
    # at 18:00: a removed post is never rated, so it waits no more); D1 adds fr3, claim2 and its grouped copy (one
    # each); D3 rates fr2, fr3, claim2 and gives copy2 its match; D4 removes en2. Nobody covers de1.
    ("program", [2, 5, 5, 1, 0], [17, 41, 65, 88, None]),  # fr2, flagged D0 07:00, then en2 (08:00)
    ("org_fr", [1, 2, 2, 0, 0], [17, 41, 65, None, None]),  # fr2, flagged D0 07:00
    ("org_en", [1, 3, 3, 1, 0], [16, 40, 64, 88, None]),  # en2, flagged D0 08:00
])
def test_queue_depth_and_oldest_wait_at_each_days_end_follow_the_organisations_coverage(
        rolled_up, scope, depths, oldest_hours):
    figures = figures_for(Scope(organisation=organisation_of(rolled_up, scope)), start=FIRST, end=LAST)
    assert [d.queue_depth for d in figures.days] == depths
    assert [d.queue_oldest_seconds for d in figures.days] == [h and h * 3600.0 for h in oldest_hours]


def test_first_ratings_and_the_time_from_first_flag_to_rating_are_counted_on_the_day_of_the_rating(rolled_up):
    figures = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # D0: fr1 after 4 h, en1 after 4.5 h, claim1 after 5.25 h; D1 only re-rates (not first ratings);
    # D3: claim2 after 47 h, fr3 after 50.5 h, fr2 after 76.5 h; D4: en4 after 1 h.
    assert [d.first_ratings for d in figures.days] == [3, 0, 0, 3, 1]
    assert figures.days[0].time_to_rating_p50 == 4.5 * 3600
    assert figures.days[0].time_to_rating_p90 == pytest.approx((4.5 + 0.8 * 0.75) * 3600)
    assert figures.days[3].time_to_rating_p50 == 50.5 * 3600
    assert figures.days[1].time_to_rating_p50 is None and figures.days[4].time_to_rating_p90 == 3600
    fr = figures_for(Scope(organisation=rolled_up.org_fr), start=FIRST, end=LAST)
    assert [d.first_ratings for d in fr.days] == [1, 0, 0, 2, 0]
    assert fr.days[3].time_to_rating_p50 == pytest.approx(63.5 * 3600)


def test_ratings_by_verdict_count_every_rating_made_that_day_including_ones_superseded_later(rolled_up):
    program = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # fr1's False (reversed on appeal on D1) and en1's Partly false (re-rated on D1) still count on D0.
    assert program.days[0].ratings == {"false": 2, "partly_false": 1}
    assert program.days[1].ratings == {"missing_context": 1, "false": 1}
    assert program.days[2].ratings == {}
    assert program.days[3].ratings == {"false": 1, "true": 1, "altered": 1, "satire": 1}
    assert figure_of("org_fr", rolled_up, 0, "ratings") == {"false": 1}
    assert figure_of("org_en", rolled_up, 1, "ratings") == {"false": 1}


def test_decisions_count_each_action_in_every_kind_it_is(rolled_up):
    program = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # D0: three fact-checks that demote and label, copy1's matched rating (demotes, labels, matched), a removal.
    assert program.days[0].decisions == {"demotion": 4, "label": 4, "matched_rating": 1, "removal": 1}
    # D1: the reversal's label-only Missing context, en1's re-rating, staff's 0.9 override.
    assert program.days[1].decisions == {"demotion": 2, "label": 2, "override": 1}
    # D3: the True of the reversed correction takes no action.
    assert program.days[3].decisions == {"demotion": 3, "label": 4, "matched_rating": 1}
    assert program.days[4].decisions == {"removal": 1}
    # An organisation's decisions are those resting on its ratings: never a removal.
    assert figure_of("org_en", rolled_up, 0, "decisions") == {"demotion": 3, "label": 3, "matched_rating": 1}
    assert figure_of("org_fr", rolled_up, 1, "decisions") == {"label": 1}


def test_appeals_filed_closed_open_and_overdue_by_day_and_scope(rolled_up):
    program = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    assert [d.appeals_filed for d in program.days] == [
        {"dispute": 1, "removal": 1}, {"correction": 1, "dispute": 1}, {}, {"dispute": 1}, {}]
    assert [d.appeals_closed for d in program.days] == [
        {}, {"reversed": 1, "withdrawn": 1}, {}, {"upheld": 1, "reversed": 1}, {}]
    assert [d.appeals_open for d in program.days] == [2, 2, 2, 1, 1]
    # The removal appeal (filed D0 20:00) is overdue from D1's end, the correction (D1 16:00) at D2's, fr3's
    # dispute (D3 20:00) at D4's; the withdrawn dispute never is.
    assert [d.appeals_overdue for d in program.days] == [0, 1, 2, 0, 1]
    fr = figures_for(Scope(organisation=rolled_up.org_fr), start=FIRST, end=LAST)
    en = figures_for(Scope(organisation=rolled_up.org_en), start=FIRST, end=LAST)
    assert [d.appeals_open for d in fr.days] == [1, 0, 0, 1, 1]
    assert [d.appeals_overdue for d in fr.days] == [0, 0, 0, 0, 1]
    assert [d.appeals_overdue for d in en.days] == [0, 0, 1, 0, 0]
    assert en.days[1].appeals_closed == {"withdrawn": 1}  # removal appeals are staff's, never an organisation's


@pytest.mark.parametrize("scope", SCOPES)
def test_the_ranges_median_time_to_decide_counts_each_decided_appeal_once_and_no_withdrawn_one(rolled_up, scope):
    organisation = organisation_of(rolled_up, scope)
    figures = figures_for(Scope(organisation=organisation), start=FIRST, end=LAST)
    seconds = sorted((a.decided_at - a.created_at).total_seconds() for a in decided_in(FIRST, LAST, organisation))
    assert figures.decide_seconds == seconds
    assert figures.appeal_median_seconds == pg_percentile(seconds, 0.5)
    # A sub-range: only the appeals decided in it.
    part = figures_for(Scope(organisation=organisation), start=DAYS[2], end=LAST)
    assert part.decide_seconds == sorted(
        (a.decided_at - a.created_at).total_seconds() for a in decided_in(DAYS[2], LAST, organisation))


def test_the_programs_median_time_to_decide_is_the_middle_appeal(rolled_up):
    figures = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    # fr1's dispute 19 h, the correction 42 h, the removal appeal 61 h.
    assert figures.decide_seconds == [19 * 3600.0, 42 * 3600.0, 61 * 3600.0]
    assert figures.appeal_median_seconds == 42 * 3600.0
    assert figures.appeals_within_target == 1


@pytest.mark.parametrize("scope", SCOPES)
def test_throughput_per_reviewer_and_per_organisation_equals_their_ratings_and_decided_appeals(rolled_up, scope):
    organisation = organisation_of(rolled_up, scope)
    figures = figures_for(Scope(organisation=organisation), start=FIRST, end=LAST)
    since, until = at(0, 0), at(5, 0)
    ratings = Rating.objects.filter(created_at__gte=since, created_at__lt=until)
    if organisation is not None:
        ratings = ratings.filter(organisation=organisation)
    rated = Counter(ratings.values_list("reviewer_id", flat=True))
    decided = Counter(decided_in(FIRST, LAST, organisation).values_list("reviewer_id", flat=True))
    assert {p.id: (p.ratings, p.appeals_decided) for p in figures.reviewers} == {
        user: (rated[user], decided[user]) for user in rated.keys() | decided.keys()}
    if organisation is not None:
        assert figures.organisations == []  # the per-organisation table is staff's
        return
    by_organisation = Counter(ratings.values_list("organisation_id", flat=True))
    decided_by_organisation = Counter(
        decided_in(FIRST, LAST, None).exclude(rating=None).values_list("rating__organisation_id", flat=True))
    assert {p.id: (p.ratings, p.appeals_decided) for p in figures.organisations} == {
        org: (by_organisation[org], decided_by_organisation[org])
        for org in by_organisation.keys() | decided_by_organisation.keys()}


def test_throughput_names_each_reviewer_with_their_organisation_busiest_first(rolled_up):
    h = rolled_up
    figures = figures_for(Scope(organisation=None), start=FIRST, end=LAST)
    table = [(p.id, p.organisation, p.ratings, p.appeals_decided) for p in figures.reviewers]
    assert table[0] == (h.en_a.pk, "Full Facts", 4, 1)  # en1, claim1, claim2 and en1's True; the correction
    assert (h.staff_2.pk, "Trust and safety", 0, 1) in table  # the removal appeal
    assert (h.colleague.pk, "Vérifions", 1, 1) in table  # the reversal's rating, and the dispute
    assert h.staff.pk not in [row[0] for row in table]  # a removal is not a rating or an appeal decided
    assert [(p.name, p.ratings, p.appeals_decided) for p in figures.organisations] == [
        ("Full Facts", 6, 1), ("Vérifions", 4, 1)]
