"""Rating drafts do not outlive their use: a daily job deletes every draft nobody typed into for
FACTDESK_RATING_DRAFT_DAYS (factcheck.drafts), such as the draft of a post that someone else rated, which its
reviewer's own rating never came to delete. Typed work still outlives a lapsed claim, a night or a week away."""

from __future__ import annotations

import html as html_lib
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.claims import claim_post
from factcheck.members import organisation_of
from factcheck.models import RatingDraft
from factcheck.ratings import record_rating
from reports.periodic import SCHEDULE
from tests.factcheck.test_rating_drafts import TYPED, draft_url
from tests.factories import FactCheckerFactory, PostFactory

pytestmark = pytest.mark.django_db


def page_of(client, post) -> str:
    response = client.get(f"/queue/posts/{post.pk}/")
    assert response.status_code == 200
    return html_lib.unescape(response.content.decode())


def typed_days_ago(client, post, days: int) -> None:
    assert client.post(draft_url(post), TYPED, HTTP_ACCEPT="application/json").status_code == 200
    RatingDraft.objects.filter(post=post).update(updated_at=timezone.now() - timedelta(days=days))


def test_the_daily_job_deletes_drafts_nobody_typed_into_for_the_set_days_and_keeps_the_rest(
    login, factchecker, settings
):
    settings.FACTDESK_RATING_DRAFT_DAYS = 30
    [job] = [job for job in SCHEDULE if job.name == "factcheck.jobs.delete_forgotten_drafts"]
    assert job.interval <= timedelta(days=1).total_seconds()
    client = login(factchecker)
    rated_by_a_colleague, left_for_a_month, away_for_a_week, lapsed = (PostFactory() for _ in range(4))
    typed_days_ago(client, rated_by_a_colleague, 31)
    colleague = FactCheckerFactory(first_name="Amira", last_name="Haddad", organisation=organisation_of(factchecker))
    record_rating(claim_if_unclaimed=True, reviewer=colleague, post_id=rated_by_a_colleague.pk, verdict="false",
                  rationale="Rated from the agency's archive.", sources=["https://archive.example/1"])
    assert "Rated since your draft by Amira Haddad" in page_of(client, rated_by_a_colleague)
    typed_days_ago(client, left_for_a_month, 31)
    typed_days_ago(client, away_for_a_week, 7)
    claim_post(reviewer=factchecker, post_id=lapsed.pk, now=timezone.now() - timedelta(minutes=40))  # ran out
    typed_days_ago(client, lapsed, 0)

    assert job.func() == 2

    assert set(RatingDraft.objects.values_list("post_id", flat=True)) == {away_for_a_week.pk, lapsed.pk}
    assert "Rated since your draft" not in page_of(client, rated_by_a_colleague)
    assert "Your unsaved draft from" not in page_of(client, left_for_a_month)
    client.post(f"/queue/posts/{away_for_a_week.pk}/claim/")  # back after a week, the reviewer claims it again
    for post in (away_for_a_week, lapsed):  # still filled in, as it was typed
        page = page_of(client, post)
        assert "Your unsaved draft from" in page and TYPED["rationale"] in page
    assert job.func() == 0  # safe to run twice


def test_an_out_of_date_draft_says_how_long_it_is_kept(login, factchecker, settings):
    settings.FACTDESK_RATING_DRAFT_DAYS = 30
    post = PostFactory()
    client = login(factchecker)
    typed_days_ago(client, post, 0)
    record_rating(claim_if_unclaimed=True, reviewer=FactCheckerFactory(organisation=organisation_of(factchecker)),
                  post_id=post.pk, verdict="false", rationale="Rated from the agency's archive.",
                  sources=["https://archive.example/1"])
    assert "kept here to read and copy from, for 30 days after you last typed in it" in page_of(client, post)
