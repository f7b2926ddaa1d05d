"""A fact-checker takes back a copy confirmed by mistake: "Not a copy: unlink" on the copy's post page
(moderation.unlinking; who may is factcheck.matching.unlinkable's rule).

The world is the demo's: bob rated a claim False, alice (his colleague) confirmed a suggested post as its copy, so
the copy took the False rating (demoted, a strike on its page, which its two earlier strikes make a repeat
offender). Before, only the owner's "not the same claim" dispute undid it, and neither alice nor bob may decide it.
Everything goes through the browser's views; the rows are read back from the database.
"""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest
from django.test import Client

from audit.models import AuditEvent, AuditVerb
from factcheck.models import Flag, Match, MatchMethod, MatchState, Post, QueueState
from factcheck.queue import queued_posts
from moderation.appeals import decide_appeal, file_appeal, start_review
from moderation.models import Action, ActionKind, Appeal, Notification, PageStanding, PostDistribution, Strike
from tests.factories import (
    PASSWORD,
    FactCheckerFactory,
    FlagFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
    UserFactory,
)
from tests.scenarios import rated_post, suggested_copy_of_rated_claim
from webhooks.models import Event

pytestmark = pytest.mark.django_db

REASON = "The copy is about a hospital in Leeds and every 2 minutes: another claim."


def signed_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def text(response) -> str:
    return html.unescape(response.content.decode())


def messages_of(response) -> str:
    found = re.search(r'<ul class="messages".*?</ul>', response.content.decode(), re.S)
    return html.unescape(found.group(0)) if found else ""


def unlink(client: Client, copy: Post, *, reason: str = REASON, claim: int | None = None):
    data = {"reason": reason, "claim": claim if claim is not None else copy.duplicate_of_id}
    return client.post(f"/queue/posts/{copy.pk}/unlink/", data)


@pytest.fixture
def org():
    return OrganisationFactory(name="Verifact")


@pytest.fixture
def bob(org):
    return FactCheckerFactory(username="bob", organisation=org)


@pytest.fixture
def alice(org):
    return FactCheckerFactory(username="alice", first_name="Alice", last_name="Archer", organisation=org)


@pytest.fixture
def carol(org):
    return FactCheckerFactory(username="carol", organisation=org)


@pytest.fixture
def olivia():
    return UserFactory(username="olivia")


@pytest.fixture
def pair(bob, olivia):
    """The suggestion, on olivia's page, which has two strikes already: a third makes it a repeat offender."""
    page = PageFactory(name="Health Truth Daily")
    for _ in range(2):
        rated_post(rater=bob, post=PostFactory(page=page))
    return suggested_copy_of_rated_claim(rater=bob, owner=olivia, page=page)


@pytest.fixture
def webhook(platform_client, settings):
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    response = platform_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/hook",
                                                         "events": ["distribution.changed", "appeal.decided"]},
                                    content_type="application/json")
    assert response.status_code == 201


@pytest.fixture
def copy(alice, pair, settings, django_capture_on_commit_callbacks) -> Post:
    """alice confirms the pair in the browser; the matched rating's job runs right after commit."""
    settings.FACTDESK_JOBS_IN_PROCESS = True
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in(alice).post(f"/queue/matches/{pair.pk}/confirm/")
    assert response.status_code == 302
    copy = Post.objects.select_related("page").get(pk=pair.post_id)
    assert copy.queue_state == QueueState.MATCHED
    standing = PageStanding.objects.get(page=copy.page)
    assert (standing.active_strikes, standing.is_repeat_offender) == (3, True)
    assert PostDistribution.objects.get(post=copy).multiplier < Decimal("1")
    return copy


def matched_action(post: Post) -> Action | None:
    return Action.objects.filter(post=post, kind=ActionKind.MATCHED_RATING).first()


def assert_unlinked(copy: Post, *, by, source_id: int) -> None:
    """The copy left its claim for good, its matched rating and strike ended, its page's standing is back."""
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.QUEUED)
    assert copy in queued_posts(organisation=None)
    pair = Match.objects.get(post=copy, source_id=source_id)
    assert (pair.state, pair.decided_by_id) == (MatchState.REJECTED, by.pk)
    assert pair.reason == f"unlinked, not the same claim: {REASON}"
    action = matched_action(copy)
    assert (action.end_reason, action.ended_by_id) == ("unlinked", by.pk)
    assert Strike.objects.get(action=action).ended_at is not None
    standing = PageStanding.objects.get(page=copy.page)
    assert (standing.active_strikes, standing.is_repeat_offender) == (2, False)
    assert PostDistribution.objects.get(post=copy).multiplier == Decimal("1")
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_UNLINKED, post_id=copy.pk, actor=by).exists()


def test_the_confirmer_unlinks_a_copy_from_its_post_page_and_everything_the_match_did_ends(
    alice, olivia, copy, webhook
):
    client = signed_in(alice)
    page = text(client.get(f"/queue/posts/{copy.pk}/"))
    # Offered where the mistake shows: beside "This post is a copy", and linked from the match notice at the top.
    assert "This post is a copy: it takes the rating of" in page
    assert '<summary class="button">Not a copy: unlink</summary>' in page
    assert 'href="#unlink">Not a copy? Unlink it</a>' in page
    assert "Confirmed as a copy by you" in page
    source_id = copy.duplicate_of_id

    response = unlink(client, copy)
    assert response.status_code == 302 and response["Location"] == f"/queue/posts/{copy.pk}/"
    shown = messages_of(client.get(response["Location"]))
    assert f"Unlinked: “{copy.external_id}” is not a copy of" in shown and "back in the review queue" in shown

    assert_unlinked(copy, by=alice, source_id=source_id)
    notice = Notification.objects.get(user=olivia, post=copy, subject__contains="no longer linked")
    assert "Verifact, an independent fact-checker, found that your post" in notice.body
    assert f"Reason: {REASON}" in notice.body
    # The platform is told: the decisions feed and the webhook outbox carry the copy's restored distribution.
    event = Event.objects.filter(type="distribution.changed", post=copy).latest("id")
    assert event.data["distribution"]["multiplier"] == 1.0
    assert "unlinked by a fact-checker" in event.data["cause"]
    # The page now says it stands alone: no copy notice, no unlink form.
    page = text(client.get(f"/queue/posts/{copy.pk}/"))
    assert "This post is a copy" not in page and "Not a copy: unlink" not in page


def test_unlinking_a_copy_staff_overrode_ends_the_override_too_and_tells_the_owner(alice, olivia, copy, staff_user):
    # A review: staff's override of the matched rating (it keeps the claim's rating) stayed: the post stayed demoted
    # and labelled for a claim it does not make, its owner was told nothing and could appeal nothing.
    from moderation.staff_actions import override_action

    override = override_action(staff=staff_user, action_id=matched_action(copy).pk, feed_multiplier="0.3",
                               label="Staff: misleading claim", reason="Softer than the policy for this one.")
    assert PostDistribution.objects.get(post=copy).multiplier < Decimal("1")
    response = unlink(signed_in(alice), copy)
    assert response.status_code == 302
    override.refresh_from_db()
    assert (override.end_reason, override.ended_by_id) == ("unlinked", alice.pk)
    assert not Action.objects.filter(post=copy, ended_at__isnull=True).exists()
    distribution = PostDistribution.objects.get(post=copy)
    assert (distribution.multiplier, distribution.labels) == (Decimal("1"), [])
    assert Notification.objects.filter(user=olivia, post=copy, subject__contains="no longer linked").exists()


def test_a_colleague_of_the_rating_organisation_unlinks_a_copy_someone_else_confirmed(alice, carol, copy):
    page = text(signed_in(carol).get(f"/queue/posts/{copy.pk}/"))
    assert "Confirmed as a copy by Alice Archer" in page
    source_id = copy.duplicate_of_id
    assert unlink(signed_in(carol), copy).status_code == 302
    assert_unlinked(copy, by=carol, source_id=source_id)


def test_the_rater_of_the_claim_may_unlink_it_too(bob, copy):
    source_id = copy.duplicate_of_id
    unlink(signed_in(bob), copy)
    assert_unlinked(copy, by=bob, source_id=source_id)


def assert_still_linked(copy: Post) -> None:
    copy.refresh_from_db()
    assert copy.queue_state == QueueState.MATCHED and copy.duplicate_of_id is not None
    assert Match.objects.get(post=copy, source_id=copy.duplicate_of_id).state == MatchState.CONFIRMED
    assert matched_action(copy).ended_at is None
    assert PageStanding.objects.get(page=copy.page).is_repeat_offender
    assert not AuditEvent.objects.filter(verb=AuditVerb.MATCH_UNLINKED).exists()


def test_another_organisations_fact_checker_is_refused_and_not_offered_it(copy):
    outsider = signed_in(FactCheckerFactory(username="claire", organisation=OrganisationFactory(name="Faktenwerk")))
    assert "Not a copy: unlink" not in text(outsider.get(f"/queue/posts/{copy.pk}/"))
    response = unlink(outsider, copy)
    assert response.status_code == 302
    assert "Not unlinked: The claim was rated by Verifact" in messages_of(outsider.get(response["Location"]))
    assert_still_linked(copy)


@pytest.mark.parametrize("who", ["staff", "owner"])
def test_staff_and_the_page_owner_are_refused(who, copy, olivia, staff_user):
    client = signed_in(olivia if who == "owner" else staff_user)
    assert unlink(client, copy).status_code == 403
    assert_still_linked(copy)


def test_the_reason_is_required_and_a_refused_reason_is_kept_in_the_form(alice, copy):
    client = signed_in(alice)
    response = unlink(client, copy, reason="   ")
    assert "Not unlinked: Say why this post is not a copy of the claim" in messages_of(client.get(response["Location"]))
    assert_still_linked(copy)
    # A reason the owner must not read (a telephone number) is refused, and what was typed is shown again.
    typed = "Another claim; call me on +44 20 7946 0958 to discuss."
    response = unlink(client, copy, reason=typed)
    page = client.get(response["Location"])
    assert "leave out e-mail addresses and phone numbers" in messages_of(page)
    assert f">{typed}</textarea>" in text(page) and '<details class="unlink" id="unlink" open>' in text(page)
    assert_still_linked(copy)


def test_an_over_long_reason_is_refused_in_the_words_every_reason_is_refused_in(alice, copy):
    client = signed_in(alice)
    response = unlink(client, copy, reason="x" * 2001)
    assert "Not unlinked: Keep the reason to 2,000 characters" in messages_of(client.get(response["Location"]))
    assert_still_linked(copy)


def test_a_stale_page_is_told_the_copy_was_already_unlinked(alice, carol, copy):
    stale = signed_in(carol)
    stale.get(f"/queue/posts/{copy.pk}/")
    claim_id = copy.duplicate_of_id
    unlink(signed_in(alice), copy)

    response = unlink(stale, copy, claim=claim_id)
    assert response.status_code == 302
    assert (f"Not unlinked: Post {copy.external_id} is not a copy of a claim now (it was unlinked, or rated on its "
            "own)") in messages_of(stale.get(response["Location"]))
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_UNLINKED).count() == 1


def test_an_automatic_match_is_not_unlinked_here(bob, alice, olivia):
    claim = rated_post(rater=bob)
    linked = PostFactory(duplicate_of=claim, queue_state=QueueState.MATCHED)
    Match.objects.create(post=linked, source=claim, method=MatchMethod.TEXT, score=1.0, state=MatchState.AUTO,
                         created_at=claim.posted_at)
    client = signed_in(alice)
    assert "Not a copy: unlink" not in text(client.get(f"/queue/posts/{linked.pk}/"))
    response = unlink(client, linked)
    assert (f"Not unlinked: Factdesk linked post {linked.external_id} to this claim automatically (same normalised "
            "text), not a fact-checker") in messages_of(client.get(response["Location"]))
    linked.refresh_from_db()
    assert linked.duplicate_of_id == claim.pk
    assert Match.objects.get(post=linked).state == MatchState.AUTO


def test_unlinking_grants_the_owners_open_appeal_of_the_match_with_one_notice(alice, olivia, copy, webhook):
    appeal = file_appeal(owner=olivia, post_id=copy.pk, kind="dispute", statement="Leeds, not London; 2 minutes.")
    source_id = copy.duplicate_of_id
    unlink(signed_in(alice), copy)

    assert_unlinked(copy, by=alice, source_id=source_id)
    appeal.refresh_from_db()
    assert (appeal.status, appeal.reviewer_id) == ("reversed", alice.pk)
    assert appeal.outcome_reason == f"A fact-checker unlinked your post from the claim: {REASON}"
    told = Notification.objects.filter(user=olivia, post=copy, created_at__gte=appeal.created_at)
    assert [n.kind for n in told] == ["appeal_decided"]  # one change, one notice
    assert "your post is no longer linked to the rated claim" in told[0].subject
    assert Event.objects.filter(type="appeal.decided", post=copy).exists()


def test_a_colleague_reviewing_the_owners_appeal_decides_it_instead(alice, carol, olivia, copy):
    appeal = file_appeal(owner=olivia, post_id=copy.pk, kind="dispute", statement="Leeds, not London; 2 minutes.")
    start_review(appeal_id=appeal.pk, reviewer=carol)
    client = signed_in(alice)
    response = unlink(client, copy)
    assert "carol is reviewing the owner's appeal of this match" in messages_of(client.get(response["Location"]))
    assert_still_linked(copy)
    assert Appeal.objects.get(pk=appeal.pk).status == "in_review"


def test_the_confirmer_reads_why_they_cannot_decide_the_appeal_and_where_to_unlink(alice, olivia, copy):
    appeal = file_appeal(owner=olivia, post_id=copy.pk, kind="dispute", statement="Leeds, not London; 2 minutes.")
    page = text(signed_in(alice).get(f"/queue/appeals/{appeal.pk}/"))
    # Nobody reviews it: the page said " is reviewing this appeal; only they can decide it now", naming nobody.
    assert " is reviewing this appeal" not in page
    assert "You confirmed this copy, so another member of your organisation must decide this appeal." in page
    assert f'<a href="/queue/posts/{copy.pk}/#unlink">unlink it on the post\'s page</a>' in page
    queue = text(signed_in(alice).get("/queue/appeals/"))
    assert "You confirmed this copy" in queue


def test_the_message_after_confirming_links_to_the_unlink(alice, pair, settings, django_capture_on_commit_callbacks):
    settings.FACTDESK_JOBS_IN_PROCESS = True
    client = signed_in(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/queue/matches/{pair.pk}/confirm/")
    shown = messages_of(client.get(response["Location"]))
    assert f'<a href="/queue/posts/{pair.post_id}/#unlink">Not the same claim after all? Unlink it</a>' in shown


def test_a_copy_grouped_under_a_waiting_claim_is_unlinked_back_to_the_queue_without_a_notice(alice, olivia):
    claim = PostFactory()
    waiting = PostFactory()
    waiting.page.owners.add(olivia)
    pair = Match.objects.create(post=waiting, source=claim, method=MatchMethod.MINHASH, score=0.6,
                                state=MatchState.SUGGESTED, created_at=claim.posted_at)
    client = signed_in(alice)
    client.post(f"/queue/matches/{pair.pk}/confirm/")
    waiting.refresh_from_db()
    assert (waiting.queue_state, waiting.duplicate_of_id) == (QueueState.GROUPED, claim.pk)

    unlink(client, waiting)
    waiting.refresh_from_db()
    assert (waiting.queue_state, waiting.duplicate_of_id) == (QueueState.QUEUED, None)
    assert Match.objects.get(pk=pair.pk).state == MatchState.REJECTED
    assert not Notification.objects.filter(user=olivia).exists()


@pytest.fixture
def copy_flag(pair, platform_user) -> Flag:
    """The platform's flag of the copy, sent before the pair was confirmed: the claim's rating answers it `rated`."""
    return FlagFactory(post=pair.post, submitted_by=platform_user, idempotency_key="copy-flag-1")


def test_the_copys_flags_that_the_claims_rating_answered_wait_again_once_it_is_unlinked(
    alice, bob, copy_flag, copy, platform_client, settings
):
    settings.FACTDESK_WEBHOOKS_ALLOW_PRIVATE = True
    assert platform_client.post("/api/v1/webhooks", {"url": "http://127.0.0.1:9/hook", "events": ["report.decided"]},
                                content_type="application/json").status_code == 201
    outcome = platform_client.get("/api/v1/flags/copy-flag-1").json()
    assert (outcome["status"], outcome["outcome"]) == ("decided", "rated")

    unlink(signed_in(alice), copy)

    # Back in the queue with no rating: its sender reads it open, as a flag that has just arrived.
    outcome = platform_client.get("/api/v1/flags/copy-flag-1").json()
    assert (outcome["status"], outcome["outcome"], outcome["decided_at"]) == ("open", None, None)
    reopened = AuditEvent.objects.get(verb=AuditVerb.REPORTS_REOPENED, post_id=copy.pk)
    assert reopened.actor == alice and reopened.data["previous"] == {"rated": 1}
    why = "no longer a copy of the claim whose rating answered them: unlinked by a fact-checker"
    assert reopened.reason == f"{why}: {REASON}"
    [sent] = Event.objects.filter(type="report.decided", post=copy, data__previous_outcome="rated")
    assert (sent.data["status"], sent.data["outcome"]) == ("open", None)
    # Its own rating answers it again.
    rated_post(rater=bob, post=Post.objects.get(pk=copy.pk))
    outcome = platform_client.get("/api/v1/flags/copy-flag-1").json()
    assert (outcome["status"], outcome["outcome"]) == ("decided", "rated")


def test_a_reversed_not_the_same_claim_appeal_opens_the_copys_flags_again_and_a_withdrawn_one_stays(
    carol, olivia, copy_flag, copy, platform_user, platform_client
):
    withdrawn = FlagFactory(post=copy, submitted_by=platform_user, idempotency_key="copy-flag-2")
    assert platform_client.delete("/api/v1/flags/copy-flag-2").status_code == 200
    appeal = file_appeal(owner=olivia, post_id=copy.pk, kind="dispute", statement="Leeds, not London; 2 minutes.")
    start_review(appeal_id=appeal.pk, reviewer=carol)

    decide_appeal(appeal_id=appeal.pk, reviewer=carol, outcome="reversed", reason="Another hospital, another claim.")

    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.QUEUED)
    copy_flag.refresh_from_db()
    assert (copy_flag.status, copy_flag.outcome, copy_flag.decided_at) == ("open", "", None)
    reopened = AuditEvent.objects.get(verb=AuditVerb.REPORTS_REOPENED, post_id=copy.pk)
    assert (reopened.actor, reopened.data["flags"]) == (carol, {"misinformation": [copy_flag.pk]})
    assert f"appeal {appeal.pk} reversed" in reopened.reason
    # The platform's own withdrawal stands: never answered again.
    withdrawn.refresh_from_db()
    assert withdrawn.status == "withdrawn"


@pytest.mark.parametrize("claim", ["²", "٣", "9" * 30])
def test_a_claim_id_that_is_not_a_plain_number_is_no_500(alice, copy, claim):
    """The page sends the claim it showed as a number; a hand-made value that str.isdigit takes and int does not
    ("²"), or reads as another number ("٣" is 3), is not read as a claim: the copy is unlinked from its claim."""
    response = unlink(signed_in(alice), copy, claim=claim)
    assert response.status_code == 302
    assert Post.objects.get(pk=copy.pk).duplicate_of_id is None
