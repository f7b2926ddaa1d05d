"""A post's admin page tells its whole story, read-only; a rating is never editable by staff."""

from __future__ import annotations

import re

import pytest

from audit.models import AuditEvent
from factcheck.members import create_user
from factcheck.models import Rating
from moderation.models import Appeal, Strike
from tests.factories import PASSWORD


@pytest.fixture
def told(populate):
    busy = populate(24)
    # Post 0 is rated False, applied, then removed by staff; post 8 is rated and disputed.
    return busy, busy.posts[0], busy.posts[8]


def test_the_post_page_shows_flags_ratings_actions_strikes_appeals_timeline_and_audit_events(told, staff_client):
    busy, removed, disputed = told
    body = staff_client.get(f"/admin/factcheck/post/{removed.pk}/change/").content.decode()
    assert removed.external_id in body
    assert "Classifier" in body and "User report" in body  # flags by source
    assert "Checked against the primary source." in body  # the rating's rationale
    assert "Removed (Hate)" in body  # the timeline
    assert "Slur against a group." in body  # the removal's reason
    assert "Community standards" in body  # the page's strikes
    assert AuditEvent.objects.filter(post_id=removed.pk).exists()
    # The audit events read as sentences naming the post and the people (test_admin_usability has more).
    post_link = f'<a href="/admin/factcheck/post/{removed.pk}/change/">post {removed.external_id}</a>'
    assert f"{post_link} (Hate): “Slur against a group.”" in body
    assert f"/admin/audit/auditevent/?post_id={removed.pk}" in body
    assert Strike.objects.filter(page=removed.page).exists()

    body = staff_client.get(f"/admin/factcheck/post/{disputed.pk}/change/").content.decode()
    appeal = Appeal.objects.get(post=disputed)
    assert "Dispute appeal filed" in body
    assert f"/admin/moderation/appeal/{appeal.pk}/change/" in body


def test_the_post_page_has_no_editable_field_and_saving_it_changes_nothing(told, staff_client):
    _, post, _ = told
    body = staff_client.get(f"/admin/factcheck/post/{post.pk}/change/").content.decode()
    assert 'name="text"' not in body and 'name="queue_state"' not in body
    response = staff_client.post(f"/admin/factcheck/post/{post.pk}/change/", {"text": "rewritten"})
    assert response.status_code == 403
    post.refresh_from_db()
    assert post.text != "rewritten"


@pytest.mark.parametrize("who", ["trust_safety", "superuser"])
def test_nobody_edits_adds_or_deletes_a_rating_in_the_admin(told, client, who):
    if who == "superuser":
        from accounts.models import User

        User.objects.create_superuser(username="root", email="root@example.org", password=PASSWORD)
        assert client.login(username="root", password=PASSWORD)
    else:
        create_user(username="tess", role="trust_safety", password=PASSWORD)
        assert client.login(username="tess", password=PASSWORD)
    rating = Rating.objects.first()
    url = f"/admin/factcheck/rating/{rating.pk}/change/"
    assert 'name="verdict"' not in client.get(url).content.decode()
    assert client.post(url, {"verdict": "true", "rationale": "changed"}).status_code == 403
    assert client.get("/admin/factcheck/rating/add/").status_code == 403
    assert client.post(f"/admin/factcheck/rating/{rating.pk}/delete/", {"post": "yes"}).status_code == 403
    rating.refresh_from_db()
    assert (rating.verdict, rating.rationale) != ("true", "changed")


@pytest.mark.django_db
def test_a_claims_copies_are_the_best_few_with_their_count_and_a_link_to_them_all(staff_client, monkeypatch):
    """A viral claim's admin page listed all its copies (2,400: 607 KB, 2 s): the best BEST_COPIES_SHOWN, the count,
    and the Match list of them all."""
    from factcheck.models import MatchMethod, MatchState
    from tests.factories import MatchFactory, PostFactory

    monkeypatch.setattr("factcheck.admin.BEST_COPIES_SHOWN", 2)
    claim = PostFactory(external_id="viral-claim")
    for n, score in enumerate((0.99, 0.8, 0.9)):
        MatchFactory(post=PostFactory(external_id=f"copy-{n}"), source=claim, method=MatchMethod.MINHASH, score=score,
                     state=MatchState.AUTO)
    page = staff_client.get(f"/admin/factcheck/post/{claim.pk}/change/").content.decode()
    copies = page.split("of this post, best first", 1)[1]
    assert ">copy-0<" in copies and ">copy-2<" in copies and ">copy-1<" not in copies
    link = f"/admin/factcheck/match/?source__id__exact={claim.pk}"
    assert f'<a href="{link}">All 3 copies of this post</a> (best 2 shown)' in copies
    # The list it opens is this claim's copies and nothing else: not a pair where the claim is the copy, nor a
    # post whose id begins with the claim's.
    MatchFactory(post=claim, source=PostFactory(external_id="earlier"), state=MatchState.SUGGESTED)
    MatchFactory(post=PostFactory(external_id="viral-claim-2"), source=PostFactory(), state=MatchState.SUGGESTED)
    listed = staff_client.get(link).content.decode()
    rows = re.findall(r'<tr><th class="field-post[^"]*"><a href="[^"]*">([^<]+)</a>', listed)
    assert sorted(rows) == ["copy-0", "copy-1", "copy-2"]
