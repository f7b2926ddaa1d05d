"""Withdrawing a rating (moderation.withdrawal, factcheck.withdrawals): its organisation takes a rating back with no
verdict in its place, from the post page ("Withdraw this rating" beside "Change rating") or the API.

The world: bob of Verifact rated olivia's flagged post False; her page had two strikes already, so the third made it
a repeat offender; alice (bob's colleague) confirmed oscar's post as its copy, which carries the rating. Before,
re-rating was the only undo ("Not eligible" says something else and keeps the post out of the queue).
"""

from __future__ import annotations

import html
import json
import re
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import F
from django.test import Client

from audit.models import AuditEvent, AuditVerb
from factcheck.matching.matcher import confirm_match
from factcheck.members import organisation_of
from factcheck.models import Post, QueueState, Rating
from factcheck.queue import queued_posts
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    ActionKind,
    DistributionChange,
    Notification,
    PageStanding,
    PostDistribution,
    Strike,
)
from moderation.propagation import apply_matches
from tests.conftest import bearer_client
from tests.factcheck.test_turned_copy_locks import turned_pair
from tests.factories import (
    PASSWORD,
    FactCheckerFactory,
    OrganisationFactory,
    PlatformUserFactory,
    PostFactory,
    UserFactory,
)
from tests.scenarios import rated_post, suggested_copy_of_rated_claim
from webhooks.models import Event

pytestmark = pytest.mark.django_db

REASON = "Rated the wrong post: the claim we checked is the one posted an hour later on another page."


def signed_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def text(response) -> str:
    return html.unescape(response.content.decode())


def messages_of(response) -> str:
    found = re.search(r'<ul class="messages".*?</ul>', response.content.decode(), re.S)
    return html.unescape(found.group(0)) if found else ""


@pytest.fixture
def bob():
    return FactCheckerFactory(username="bob", organisation=OrganisationFactory(name="Verifact"))


@pytest.fixture
def alice(bob):
    return FactCheckerFactory(username="alice", organisation=organisation_of(bob))


@pytest.fixture
def dave():
    """A fact-checker of another organisation."""
    return FactCheckerFactory(username="dave", organisation=OrganisationFactory(name="Checkers United"))


@pytest.fixture
def olivia():
    return UserFactory(username="olivia")


@pytest.fixture
def oscar():
    return UserFactory(username="oscar")


@pytest.fixture
def world(bob, alice, olivia, oscar):
    """The claim rated False (its page's third strike) and a confirmed copy carrying the rating."""
    pair = suggested_copy_of_rated_claim(rater=bob, owner=oscar)
    claim = Post.objects.select_related("page").get(pk=pair.source_id)
    claim.page.owners.add(olivia)
    for _ in range(2):
        rated_post(rater=bob, post=PostFactory(page=claim.page))
    confirm_match(match_id=pair.pk, reviewer=alice)
    apply_matches(post_ids=[pair.post_id])
    copy = Post.objects.get(pk=pair.post_id)
    assert copy.queue_state == QueueState.MATCHED
    assert Action.objects.filter(post=copy, kind=ActionKind.MATCHED_RATING, ended_at__isnull=True).exists()
    assert PageStanding.objects.get(page=claim.page).is_repeat_offender
    rating = Rating.objects.get(post=claim, is_current=True)
    return {"claim": claim, "copy": copy, "rating": rating}


@pytest.fixture
def webhook(platform_client, settings):
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    response = platform_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/hook",
                                                         "events": ["distribution.changed"]},
                                    content_type="application/json")
    assert response.status_code == 201


def withdraw_url(post: Post, rating: Rating) -> str:
    return f"/queue/posts/{post.pk}/ratings/{rating.pk}/withdraw/"


def api_url(post: Post, rating: Rating) -> str:
    return f"/api/v1/posts/{post.external_id}/ratings/{rating.pk}/withdraw"


def api_withdraw(client: Client, post: Post, rating: Rating, reason: str = REASON):
    return client.post(api_url(post, rating), json.dumps({"reason": reason}), content_type="application/json")


def assert_untouched(world) -> None:
    """Nothing was written: the rating is current, its action active, the post still rated."""
    rating, claim = world["rating"], world["claim"]
    rating.refresh_from_db()
    assert rating.is_current and rating.superseded_at is None
    assert Action.objects.get(post=claim, kind=ActionKind.FACT_CHECK, rating=rating).ended_at is None
    claim.refresh_from_db()
    assert claim.queue_state == QueueState.RATED
    assert not AuditEvent.objects.filter(verb=AuditVerb.RATING_WITHDRAWN).exists()


def test_a_colleague_withdraws_the_rating_from_the_post_page_and_everything_it_did_ends(
    world, alice, olivia, oscar, webhook
):
    claim, copy, rating = world["claim"], world["copy"], world["rating"]
    client = signed_in(alice)
    page = text(client.get(f"/queue/posts/{claim.pk}/"))
    assert "<summary class=\"button primary\">Change rating</summary>" in page
    assert f'href="{withdraw_url(claim, rating)}">Withdraw this rating</a>' in page

    confirm = text(client.get(withdraw_url(claim, rating)))
    # The confirmation says plainly what will happen, from the rows the withdrawal will read.
    assert "The rating stops being current." in confirm
    assert "its demotion and its label are lifted, and the post's distribution goes back to ×1." in confirm
    assert "The page stops being a repeat offender." in confirm
    assert "The 1 copy that carries this rating lose it too" in confirm
    assert "The post goes back to the review queue" in confirm
    assert '<label for="id_reason">Why you withdraw this rating <span class="req">(required)</span></label>' in confirm

    response = client.post(withdraw_url(claim, rating), {"reason": REASON}, follow=True)
    assert response.redirect_chain == [(f"/queue/posts/{claim.pk}/", 302)]
    assert (f"Rating withdrawn: post “{claim.external_id}” is no longer rated False; it is back in the review queue"
            in messages_of(response))
    after = text(response)
    assert "Current rating:" not in after and "Withdraw this rating" not in after
    assert "withdrawn" in after  # the page's history marks it

    # The rating stops being current, with no successor; its history stays.
    rating.refresh_from_db()
    assert (rating.is_current, rating.superseded_by_id) == (False, None)
    assert rating.superseded_at is not None
    assert not Rating.objects.filter(post=claim, is_current=True).exists()
    # Its action ends, with its strike; the page is no longer a repeat offender; the distribution is back.
    action = Action.objects.get(post=claim, kind=ActionKind.FACT_CHECK, rating=rating)
    assert (action.end_reason, action.ended_by_id) == ("withdrawn", alice.pk)
    assert Strike.objects.get(action=action).ended_at is not None
    standing = PageStanding.objects.get(page=claim.page)
    assert (standing.active_strikes, standing.is_repeat_offender) == (2, False)
    assert PostDistribution.objects.get(post=claim).multiplier == Decimal("1")
    # Back in the queue, flags and all.
    claim.refresh_from_db()
    assert claim.queue_state == QueueState.QUEUED
    assert claim in queued_posts(organisation=None)
    # The copy follows: its matched rating ends, and it waits with its claim for the next rating.
    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.GROUPED, claim.pk)
    matched = Action.objects.get(post=copy, kind=ActionKind.MATCHED_RATING)
    assert (matched.end_reason, matched.ended_by_id) == ("withdrawn", alice.pk)
    assert PostDistribution.objects.get(post=copy).multiplier == Decimal("1")
    # Both owners are told, with the reason.
    notice = Notification.objects.get(user=olivia, post=claim, subject__contains="was withdrawn")
    assert notice.subject == f"The False rating of your post {claim.external_id} was withdrawn"
    assert REASON in notice.body and "Verifact" in notice.body
    assert "the strike it gave your page ends with it" in notice.body
    told = Notification.objects.get(user=oscar, post=copy, subject__contains="no longer carries")
    assert REASON in told.body
    portal = text(signed_in(olivia).get(f"/appeals/posts/{claim.pk}/"))
    assert "False rating withdrawn" in portal  # her post's timeline says so
    assert "This post has no current fact-check rating." in portal
    # The decisions feed and the webhooks carry both changes; the audit log says who and why.
    feed = DistributionChange.objects.filter(post=claim).latest("id")
    assert feed.cause == "False rating withdrawn by its fact-checker" and feed.multiplier == Decimal("1")
    assert DistributionChange.objects.filter(post=copy, cause__contains="withdrawn").exists()
    event = Event.objects.filter(type="distribution.changed", post=claim).latest("id")
    assert event.data["cause"] == "False rating withdrawn by its fact-checker"
    assert event.deliveries.exists()
    audit = AuditEvent.objects.get(verb=AuditVerb.RATING_WITHDRAWN, post_id=claim.pk)
    assert (audit.actor_id, audit.reason, audit.data["copies"]) == (alice.pk, REASON, 1)


def test_the_public_page_says_it_was_withdrawn_and_it_is_published_no_more(world, alice):
    claim, rating = world["claim"], world["rating"]
    assert '<script type="application/ld+json">' in Client().get(f"/claims/{rating.pk}/").content.decode()
    assert signed_in(alice).post(withdraw_url(claim, rating), {"reason": REASON}).status_code == 302

    rating.refresh_from_db()
    page = Client().get(f"/claims/{rating.pk}/")
    assert page.status_code == 200
    body = text(page)
    assert f"Verifact withdrew this rating on {rating.superseded_at:%-d %B %Y}" in body
    assert "The claim has no published rating now." in body
    assert '<script type="application/ld+json">' not in body
    out = StringIO()
    call_command("export_claimreview", "--since", "2000-01-01", stdout=out)
    assert claim.external_id not in out.getvalue()
    assert bearer_client(PlatformUserFactory()).get(
        f"/api/v1/posts/{claim.external_id}/claimreview").status_code == 404


def test_the_api_withdraws_and_answers_with_the_post_as_it_reads_now(world, alice):
    claim, rating = world["claim"], world["rating"]
    client = bearer_client(alice)
    response = api_withdraw(client, claim, rating)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body == client.get(f"/api/v1/posts/{claim.external_id}").json()
    assert (body["rating"], body["queue_state"]) == (None, "queued")
    assert Decimal(str(body["distribution"]["multiplier"])) == 1
    [action] = [a for a in body["actions"] if a["kind"] == "fact_check"]
    assert action["end_reason"] == "withdrawn"


def test_a_post_without_flags_is_not_put_in_the_queue(bob):
    post = PostFactory(flag_count=0, queue_state=QueueState.UNFLAGGED)
    rating = record_rating(reviewer=bob, post_id=post.pk, verdict="false", rationale="Invented.",
                           sources=["https://source.example/a"], claim_if_unclaimed=True)
    apply_rating(rating_id=rating.pk)
    assert api_withdraw(bearer_client(bob), post, rating).status_code == 200
    post.refresh_from_db()
    assert post.queue_state == QueueState.UNFLAGGED
    assert post not in queued_posts(organisation=None)


@pytest.mark.parametrize("who", ["dave", "staff", "owner", "platform"])
def test_only_the_ratings_organisation_may_withdraw_it_through_the_api(world, dave, olivia, ts_user, who):
    user = {"dave": dave, "staff": ts_user, "owner": olivia, "platform": PlatformUserFactory()}[who]
    response = api_withdraw(bearer_client(user), world["claim"], world["rating"])
    assert response.status_code == 403
    assert response.json()["error"]["code"] == ("not_your_rating" if who == "dave" else "forbidden")
    assert_untouched(world)


def test_another_organisation_is_offered_nothing_and_refused_in_the_browser(world, dave, staff_client):
    claim, rating = world["claim"], world["rating"]
    client = signed_in(dave)
    assert "Withdraw this rating" not in text(client.get(f"/queue/posts/{claim.pk}/"))
    page = client.get(withdraw_url(claim, rating))
    assert "only a fact-checker of that organisation can withdraw it" in text(page)
    assert "<form" not in text(page).split('id="withdraw-title"')[1]
    response = client.post(withdraw_url(claim, rating), {"reason": REASON})
    assert response.status_code == 409
    assert "You cannot withdraw this rating." in text(response)
    assert staff_client.post(withdraw_url(claim, rating), {"reason": REASON}).status_code == 403
    assert_untouched(world)


def test_an_open_appeal_refuses_the_withdrawal(world, alice, olivia):
    claim, rating = world["claim"], world["rating"]
    file_appeal(owner=olivia, post_id=claim.pk, kind="dispute", statement="The quote is real.")
    response = api_withdraw(bearer_client(alice), claim, rating)
    assert (response.status_code, response.json()["error"]["code"]) == (409, "appeal_open")
    client = signed_in(alice)
    assert "Withdraw this rating" not in text(client.get(f"/queue/posts/{claim.pk}/"))
    assert "only the appeal's decision can change it now" in text(client.get(withdraw_url(claim, rating)))
    assert_untouched(world)


def test_a_stale_rating_is_refused_with_the_current_one_named(world, bob, alice):
    claim, rating = world["claim"], world["rating"]
    client = signed_in(alice)
    assert client.get(withdraw_url(claim, rating)).status_code == 200  # alice reads the confirmation page...
    newer = record_rating(reviewer=bob, post_id=claim.pk, verdict="partly_false", rationale="Half of it holds.",
                          sources=["https://source.example/b"], change_reason="A second source.")
    apply_rating(rating_id=newer.pk)
    # ... and sends it after bob changed the rating: told, not a 500 and not a silent success.
    response = client.post(withdraw_url(claim, rating), {"reason": REASON})
    assert response.status_code == 409
    page = text(response)
    assert "Not withdrawn." in page and "the post is now rated Partly false by Verifact" in page
    newer.refresh_from_db()
    assert newer.is_current
    assert not AuditEvent.objects.filter(verb=AuditVerb.RATING_WITHDRAWN).exists()

    answer = api_withdraw(bearer_client(alice), claim, rating)
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "stale_rating"
    assert answer.json()["error"]["details"] == {"current_rating_id": newer.pk}


def test_a_second_withdrawal_is_stale(world, alice, bob):
    claim, rating = world["claim"], world["rating"]
    assert api_withdraw(bearer_client(bob), claim, rating).status_code == 200
    again = api_withdraw(bearer_client(alice), claim, rating)
    assert again.status_code == 409
    assert again.json()["error"] == {
        "code": "stale_rating", "details": {"current_rating_id": None},
        "message": again.json()["error"]["message"],
    }
    assert "withdrawn or reversed meanwhile" in again.json()["error"]["message"]
    assert AuditEvent.objects.filter(verb=AuditVerb.RATING_WITHDRAWN).count() == 1


@pytest.mark.parametrize(("reason", "says"), [
    ("", "Say why the rating is withdrawn"),
    ("   ", "Say why the rating is withdrawn"),
    ("x" * 2001, "Keep the reason to 2,000 characters"),
    ("Call me on +44 7700 900123 about it.", "leave out e-mail addresses and phone numbers"),
])
def test_a_bad_reason_is_a_422_naming_the_field_and_the_form_keeps_it(world, alice, reason, says):
    claim, rating = world["claim"], world["rating"]
    response = api_withdraw(bearer_client(alice), claim, rating, reason=reason)
    assert response.status_code == 422
    [problem] = response.json()["error"]["details"]["errors"]
    assert problem["field"] == "reason" and says in problem["message"]
    page = signed_in(alice).post(withdraw_url(claim, rating), {"reason": reason})
    assert page.status_code == 200
    assert says in text(page) and 'id="error-summary"' in text(page)
    assert_untouched(world)


def test_a_copys_page_names_the_claim_to_withdraw_it_on(world, alice):
    response = api_withdraw(bearer_client(alice), world["copy"], world["rating"])
    assert response.status_code == 404
    assert "withdraw the rating there" in response.json()["error"]["message"]
    assert_untouched(world)


def test_the_post_can_be_rated_again_and_its_copy_follows(world, alice, bob, django_capture_on_commit_callbacks,
                                                           settings):
    claim, copy, rating = world["claim"], world["copy"], world["rating"]
    assert api_withdraw(bearer_client(alice), claim, rating).status_code == 200
    settings.FACTDESK_JOBS_IN_PROCESS = True
    with django_capture_on_commit_callbacks(execute=True):
        again = record_rating(reviewer=bob, post_id=claim.pk, verdict="missing_context", rationale="Needs context.",
                              sources=["https://source.example/c"], claim_if_unclaimed=True)
    assert again.change_reason == ""  # a first rating again: nothing is current to change
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.MATCHED
    assert Action.objects.get(post=copy, kind=ActionKind.MATCHED_RATING, ended_at__isnull=True).rating_id == again.pk


def test_a_copy_linked_up_to_its_claim_stands_alone_so_waiting_links_still_point_down(bob):
    """A confirmation turned round made the older post the newer rated one's copy: grouped under its claim again, its
    link would point up, against the lock order (docs/concurrency.md, "Which way a copy's link points")."""
    copy, claim = turned_pair(bob)
    apply_matches(post_ids=[copy.pk])
    assert copy.pk < claim.pk and Action.objects.filter(post=copy, ended_at__isnull=True).exists()
    rating = Rating.objects.get(post=claim, is_current=True)
    assert api_withdraw(bearer_client(bob), claim, rating).status_code == 200
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.QUEUED)
    assert not Action.objects.filter(post=copy, ended_at__isnull=True).exists()
    assert not Post.objects.filter(queue_state=QueueState.GROUPED, duplicate_of_id__gt=F("id")).exists()
