"""Undoing a rejected suggestion in the browser ("Undo: this is the same claim after all"): a fact-checker of the
rating's organisation who rejected a suggested copy by mistake puts the pair back to suggested, with a reason kept in
the audit log beside the rejection; then it is confirmed as any suggestion, and the copy takes the claim's rating.

The rejection is undone where the pair is listed (the copy's and the claim's post pages), linked from the message
that reports the rejection. Refused, writing nothing: without a reason, by another organisation or outside the
copy's coverage, for a pair that was unlinked rather than rejected as a suggestion, and when nobody could confirm the
pair now (the copy rated on its own, or removed). Confirming keeps its own guards afterwards (a copy another
reviewer holds)."""

from __future__ import annotations

import html
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import claim_post
from factcheck.models import Match, MatchState, Post, QueueState, Rating
from moderation.models import Action, ActionKind
from moderation.staff_actions import remove_post
from moderation.unlinking import unlink_confirmed_copy
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    MatchFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
)

pytestmark = pytest.mark.django_db
WHY = "Same lemon-water cure, only with a comment added: I rejected it by mistake."


def text(response) -> str:
    return html.unescape(response.content.decode())


def messages_of(response) -> str:
    found = re.search(r'<ul class="messages".*?</ul>', response.content.decode(), re.S)
    return html.unescape(found.group(0)) if found else ""


def copies_section(response) -> str:
    return text(response).split('id="copies-title"', 1)[1].split("</section>", 1)[0]


def undo(client, match: Match, **data):
    return client.post(f"/queue/matches/{match.pk}/undo-rejection/", data)


def recorded(match: Match) -> dict:
    """What an undo might change: the pair and the audit log of its decisions."""
    match.refresh_from_db()
    return {
        "match": (match.state, match.decided_by_id, match.decided_at, match.reason),
        "events": list(AuditEvent.objects.filter(target_type="factcheck.match", target_id=str(match.pk))
                       .values_list("verb", flat=True).order_by("id")),
    }


@pytest.fixture
def verifica():
    return OrganisationFactory(name="Verifica")


@pytest.fixture
def reviewer(verifica):
    return FactCheckerFactory(username="maria", organisation=verifica)


@pytest.fixture
def claim(reviewer) -> Post:
    """The first post of a claim, rated False by Verifica."""
    post = PostFactory(text=CLAIM, page=PageFactory(name="Health Truths Daily"), language="en")
    DecisionFactory(reviewer=reviewer, post=post)
    return post


@pytest.fixture
def copy(claim) -> Post:
    return PostFactory(text=COMMENTED_COPY, page=PageFactory(name="Wellness Mums"), language="en")


@pytest.fixture
def rejected(login, reviewer, claim, copy) -> Match:
    """A suggestion of the copy, rejected in the browser by Verifica's reviewer ("not the same claim")."""
    pair = MatchFactory(post=copy, source=claim)
    response = login(reviewer).post(f"/queue/matches/{pair.pk}/reject/", {"reason": "Another claim."})
    assert response.status_code == 302
    pair.refresh_from_db()
    assert pair.state == MatchState.REJECTED
    return pair


def test_the_rejection_message_links_to_the_undo_and_both_post_pages_offer_it(login, reviewer, claim, copy):
    pair = MatchFactory(post=copy, source=claim)
    client = login(reviewer)
    response = client.post(f"/queue/matches/{pair.pk}/reject/", {"reason": "Another claim."})
    said = messages_of(client.get(response["Location"]))
    assert "this pair will not be suggested again." in said
    assert re.search(rf'<a href="/queue/posts/{copy.pk}/#match-{pair.pk}">The same claim after all\? Undo the '
                     r"rejection</a>", html.unescape(said))
    for post in (copy, claim):
        section = copies_section(client.get(f"/queue/posts/{post.pk}/"))
        assert f'id="match-{pair.pk}"' in section
        assert f'action="/queue/matches/{pair.pk}/undo-rejection/"' in section
        assert re.search(rf'<label for="id_undo_{pair.pk}_reason">Why it is the same claim after all', section)
        assert ">Undo: this is the same claim after all</button>" in section
        assert f'name="next" value="/queue/posts/{post.pk}/#copies-title"' in section


def test_undoing_suggests_the_pair_again_keeps_the_history_and_confirming_gives_the_copy_the_rating(
    login, reviewer, claim, copy, rejected, settings, django_capture_on_commit_callbacks,
):
    settings.FACTDESK_JOBS_IN_PROCESS = True  # the matched rating is applied right after commit
    client = login(reviewer)
    response = undo(client, rejected, reason=f"  {WHY}  ", next=f"/queue/posts/{copy.pk}/#copies-title")
    assert response.status_code == 302 and response["Location"] == f"/queue/posts/{copy.pk}/#copies-title"
    rejected.refresh_from_db()
    assert (rejected.state, rejected.decided_by_id, rejected.decided_at, rejected.reason) == (
        MatchState.SUGGESTED, None, None, "")
    # History kept: the rejection's event stands, and the undo's names who, why and the rejection it undid.
    rejection = AuditEvent.objects.get(verb=AuditVerb.MATCH_REJECTED, target_id=str(rejected.pk))
    undone = AuditEvent.objects.get(verb=AuditVerb.MATCH_REJECTION_UNDONE)
    assert (undone.actor_id, undone.post_id, undone.reason, undone.target_id) == (
        reviewer.pk, copy.pk, WHY, str(rejected.pk))
    assert undone.data["rejection"] == rejection.pk and undone.data["rejected_by"] == reviewer.pk
    assert undone.data["source"] == claim.pk

    page = client.get(f"/queue/posts/{copy.pk}/")
    assert (f"Suggested again: “{copy.external_id}” may copy “{claim.external_id}”. Confirm it below"
            in messages_of(page))
    section = copies_section(page)
    assert f'action="/queue/matches/{rejected.pk}/confirm/"' in section and "undo-rejection" not in section
    # Back among the organisation's waiting suggestions.
    assert f'<a href="/queue/posts/{copy.pk}/#copies-title">Post' in text(client.get("/queue/suggestions/"))

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/queue/matches/{rejected.pk}/confirm/")
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (claim.pk, QueueState.MATCHED)
    action = Action.objects.get(post=copy, kind=ActionKind.MATCHED_RATING, ended_at__isnull=True)
    assert action.rating == Rating.objects.get(post=claim, is_current=True)


def test_a_reason_is_required_and_nothing_changes_without_one(login, reviewer, copy, rejected):
    before = recorded(rejected)
    client = login(reviewer)
    response = undo(client, rejected, reason="   ")
    assert response["Location"] == f"/queue/posts/{copy.pk}/"
    assert "Say why this is the same claim after all" in messages_of(client.get(response["Location"]))
    assert recorded(rejected) == before


@pytest.mark.parametrize(("reason", "says"), [
    ("x" * 2001, "Keep the reason to 2,000 characters"),
    ("Same claim; call me on +44 20 7946 0958.", "leave out e-mail addresses and phone numbers"),
])
def test_a_refused_reason_is_told_in_the_words_every_reason_is_refused_in(login, reviewer, copy, rejected, reason,
                                                                         says):
    # As the unlinking and the withdrawal of a rating refuse it (core.reasons): the form said "Ensure this value has
    # at most 2000 characters" of a reason its own domain refuses as "Keep the reason to 2,000 characters".
    before = recorded(rejected)
    client = login(reviewer)
    response = undo(client, rejected, reason=reason)
    assert says in messages_of(client.get(response["Location"]))
    assert recorded(rejected) == before


def test_another_organisations_factchecker_is_offered_no_undo_and_is_refused(login, copy, rejected):
    outsider = FactCheckerFactory(organisation=OrganisationFactory(name="Faktisk"))
    before = recorded(rejected)
    client = login(outsider)
    assert "undo-rejection" not in copies_section(client.get(f"/queue/posts/{copy.pk}/"))
    response = undo(client, rejected, reason=WHY)
    assert ("The claim was rated by Verifica; only its fact-checkers can decide its copies."
            in messages_of(client.get(response["Location"])))
    assert recorded(rejected) == before


def test_a_member_outside_the_copys_coverage_is_refused(login, verifica, reviewer, copy, rejected):
    verifica.languages = ["fr"]
    verifica.save(update_fields=["languages"])
    before = recorded(rejected)
    client = login(reviewer)
    assert "undo-rejection" not in copies_section(client.get(f"/queue/posts/{copy.pk}/"))
    response = undo(client, rejected, reason=WHY)
    assert "is outside what Verifica covers" in messages_of(client.get(response["Location"]))
    assert recorded(rejected) == before


def test_a_copy_rated_on_its_own_since_is_refused_nobody_could_confirm_it(login, reviewer, copy, rejected):
    DecisionFactory(reviewer=reviewer, post=copy)
    before = recorded(rejected)
    client = login(reviewer)
    assert "undo-rejection" not in copies_section(client.get(f"/queue/posts/{copy.pk}/"))
    response = undo(client, rejected, reason=WHY)
    assert ("Nobody could confirm this pair now: Both posts have ratings of their own"
            in messages_of(client.get(response["Location"])))
    assert recorded(rejected) == before


def test_a_copy_removed_since_is_refused(login, reviewer, ts_user, copy, rejected):
    remove_post(staff=ts_user, post_id=copy.pk, ground="hate", reason="Dehumanises a group.")
    before = recorded(rejected)
    client = login(reviewer)
    response = undo(client, rejected, reason=WHY)
    assert (f"Nobody could confirm this pair now: Trust and safety removed post {copy.external_id}"
            in messages_of(client.get(response["Location"])))
    assert recorded(rejected) == before


def test_an_unlinked_copy_is_not_suggested_again_by_an_undo(login, reviewer, claim, copy):
    # Confirmed, then unlinked by a fact-checker (its owner told): rejected, but not as a suggestion.
    pair = MatchFactory(post=copy, source=claim)
    client = login(reviewer)
    client.post(f"/queue/matches/{pair.pk}/confirm/")
    unlink_confirmed_copy(post_id=copy.pk, actor=reviewer, reason="A different claim about lemon water.")
    before = recorded(pair)
    assert before["match"][0] == MatchState.REJECTED
    assert "undo-rejection" not in copies_section(client.get(f"/queue/posts/{copy.pk}/"))
    response = undo(client, pair, reason=WHY)
    assert "This pair was not rejected as a suggestion" in messages_of(client.get(response["Location"]))
    assert recorded(pair) == before


def test_a_pair_that_was_never_rejected_has_nothing_to_undo(login, reviewer, claim, copy):
    pair = MatchFactory(post=copy, source=claim)
    before = recorded(pair)
    client = login(reviewer)
    response = undo(client, pair, reason=WHY)
    assert "This pair is suggested now, not rejected: there is no rejection to undo." in messages_of(
        client.get(response["Location"]))
    assert recorded(pair) == before


def test_confirming_after_an_undo_keeps_its_guard_a_copy_another_reviewer_holds(login, verifica, reviewer, copy,
                                                                                    rejected):
    colleague = FactCheckerFactory(organisation=OrganisationFactory(name="Faktisk"))
    claim_post(reviewer=colleague, post_id=copy.pk, now=timezone.now())
    client = login(reviewer)
    undo(client, rejected, reason=WHY)
    rejected.refresh_from_db()
    assert rejected.state == MatchState.SUGGESTED  # undoing waits for nobody's claim
    response = client.post(f"/queue/matches/{rejected.pk}/confirm/")
    assert (f"Another reviewer holds the claim on post {copy.external_id}."
            in messages_of(client.get(response["Location"])))
    copy.refresh_from_db()
    assert copy.duplicate_of_id is None


def test_the_post_page_reads_its_rejected_pairs_in_a_fixed_number_of_queries(
    login, reviewer, claim, django_assert_max_num_queries,
):
    client = login(reviewer)

    def rejected_copies(count: int) -> None:
        for _ in range(count):
            pair = MatchFactory(post=PostFactory(text=COMMENTED_COPY, language="en"), source=claim)
            client.post(f"/queue/matches/{pair.pk}/reject/", {"reason": "Another claim."})

    rejected_copies(2)
    with CaptureQueriesContext(connection) as few:
        body = text(client.get(f"/queue/posts/{claim.pk}/"))
    counted = len(few)  # now: the next request empties the log it is read from
    assert body.count(">Undo: this is the same claim after all</button>") == 2
    rejected_copies(20)
    with django_assert_max_num_queries(counted):
        body = text(client.get(f"/queue/posts/{claim.pk}/"))
    assert body.count(">Undo: this is the same claim after all</button>") == 22


def test_the_post_page_reads_the_posts_of_its_suggested_and_rejected_pairs_at_once(
    login, reviewer, claim, django_assert_max_num_queries,
):
    """Whether a suggestion may be confirmed and whether a rejection may be undone are judged on the same facts of the
    pairs' posts (factcheck.views_matches.pair_facts): a page listing both reads them in one query, not one a kind."""
    client = login(reviewer)
    for _ in range(2):
        pair = MatchFactory(post=PostFactory(text=COMMENTED_COPY, language="en"), source=claim)
        client.post(f"/queue/matches/{pair.pk}/reject/", {"reason": "Another claim."})
    client.get(f"/queue/posts/{claim.pk}/")  # shows the rejections' messages, which later pages do not
    with CaptureQueriesContext(connection) as rejected_only:
        client.get(f"/queue/posts/{claim.pk}/")
    counted = len(rejected_only)
    for _ in range(3):
        MatchFactory(post=PostFactory(text=COMMENTED_COPY, language="en"), source=claim)
    with django_assert_max_num_queries(counted):
        body = text(client.get(f"/queue/posts/{claim.pk}/"))
    assert body.count(">Undo: this is the same claim after all</button>") == 2
    assert body.count('aria-label="Confirm post ') == 3
