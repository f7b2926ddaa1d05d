"""Issue 29, break 4: suggested copies are offered only where confirming can work, the way round that
works, and not again once decided (factcheck.matching.confirmable, matcher.confirm_match, the post page).

A suggestion is stored as matching found it: `post` may copy `source`, the older post. When `post` is the
one rated since, confirming makes `source` its copy, which then carries the rating as a matched rating.
"""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from core.formatting import day
from factcheck.claims import OutsideCoverage
from factcheck.matching.confirmable import MatchRefused, NotYourClaimsMatch, confirmation, facts_of
from factcheck.matching.matcher import confirm_match, reject_match
from factcheck.models import Claim, ClaimStatus, Match, MatchState, Post, QueueState, Rating
from factcheck.ratings import record_rating
from factcheck.selectors import waiting_suggestions, waiting_suggestions_everywhere
from moderation.models import Action, ActionKind
from tests.factories import (
    FactCheckerFactory,
    MatchFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
    RatingFactory,
)
from tests.pg import Backend, wait_until_blocked

pytestmark = pytest.mark.django_db

NBSP = "\xa0"  # a date on a page is never split over two lines


@pytest.fixture
def org():
    return OrganisationFactory(name="Full Fact", languages=["en"], countries=["GB"])


@pytest.fixture
def checker(org):
    return FactCheckerFactory(organisation=org, first_name="Maria", last_name="Lopez")


def rated(post: Post, *, by) -> Post:
    RatingFactory(post=post, reviewer=by)
    post.refresh_from_db()
    return post


def suggest(post: Post, source: Post) -> Match:
    """A suggestion as matching stores it (`post` may copy `source`)."""
    return MatchFactory(post=post, source=source)


def rated_post_with_copies(*, checker, copies: int = 4) -> tuple[Post, list[Match]]:
    """The issue's post: rated after its near-copies were suggested, most of them stored as its copies'
    claim (older posts), one as its copy (a newer post)."""
    older = [PostFactory(text=f"Older copy {n} of the miracle cure claim.") for n in range(copies - 1)]
    claim = PostFactory(text="The miracle cure claim, as first seen.")
    newer = PostFactory(text="Newer copy of the miracle cure claim.")
    pairs = [suggest(claim, source) for source in older] + [suggest(newer, claim)]
    return rated(claim, by=checker), pairs


# The rule, as queries: what the navigation counts -------------------------------------------------------


def waiting_everywhere(organisation) -> set[int]:
    """The pairs the navigation counts: both halves, which never share a pair."""
    stored, turned = waiting_suggestions_everywhere(organisation=organisation)
    stored_ids, turned_ids = set(stored.values_list("id", flat=True)), set(turned.values_list("id", flat=True))
    assert not stored_ids & turned_ids
    return stored_ids | turned_ids


def test_waiting_suggestions_counts_exactly_the_pairs_a_member_could_confirm(org, checker):
    other_org = OrganisationFactory(name="Maldita", languages=["es"], countries=[])
    other = FactCheckerFactory(organisation=other_org)
    everywhere = OrganisationFactory(name="Everywhere")
    now = timezone.now()

    confirmable = {
        "stored way": suggest(PostFactory(), rated(PostFactory(), by=checker)),
        "turned round": suggest(rated(PostFactory(), by=checker), PostFactory()),
        "neither rated": suggest(PostFactory(), PostFactory()),
        "held by a colleague": suggest(PostFactory(), PostFactory()),
    }
    Claim.objects.create(post=confirmable["held by a colleague"].post, reviewer=FactCheckerFactory(organisation=org),
                         claimed_at=now, expires_at=now + timedelta(minutes=30), status=ClaimStatus.ACTIVE)
    root = PostFactory()
    already_copy = PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED)
    grouped_root = PostFactory()
    PostFactory(duplicate_of=grouped_root, queue_state=QueueState.GROUPED)
    held = PostFactory()
    Claim.objects.create(post=held, reviewer=other, claimed_at=now, expires_at=now + timedelta(minutes=30),
                         status=ClaimStatus.ACTIVE)
    spanish = PostFactory(language="es", country="ES")
    refused = {
        "both rated": suggest(rated(PostFactory(), by=checker), rated(PostFactory(), by=checker)),
        "another organisation's rating": suggest(PostFactory(), rated(PostFactory(language="es"), by=other)),
        "outside coverage": suggest(spanish, PostFactory()),
        "already a copy": suggest(already_copy, PostFactory()),
        "root is a copy": suggest(PostFactory(), already_copy),
        "copy has copies": suggest(grouped_root, PostFactory()),
        "politician": suggest(PostFactory(page=PageFactory(is_politician=True),
                                          queue_state=QueueState.NOT_ELIGIBLE), PostFactory()),
        "copy removed": suggest(PostFactory(queue_state=QueueState.REMOVED), PostFactory()),
        "root removed": suggest(PostFactory(), PostFactory(queue_state=QueueState.REMOVED)),
        "held by another organisation": suggest(held, PostFactory()),
        "rejected": MatchFactory(state=MatchState.REJECTED),
        "confirmed": MatchFactory(state=MatchState.CONFIRMED),
    }

    waiting = waiting_everywhere(org)

    assert waiting == {match.pk for match in confirmable.values()}, {
        name for name, match in {**confirmable, **refused}.items()
        if (match.pk in waiting) != (name in confirmable)
    }
    # The page's rule and the count's are one: the same pairs, for a member who holds no claim.
    facts = facts_of({pk for m in Match.objects.all() for pk in (m.post_id, m.source_id)}, now=now)
    colleague = FactCheckerFactory(organisation=org)
    by_page = {m.pk for m in Match.objects.all() if confirmation(
        state=m.state, method=m.method, post=facts[m.post_id], source=facts[m.source_id],
        reviewer=colleague).confirmable}
    assert by_page == waiting - {confirmable["held by a colleague"].pk}
    # One post's pairs, either way round (what the rating's "next steps" count).
    turned = confirmable["turned round"]
    assert list(waiting_suggestions(organisation=org, post_id=turned.post_id)) == [turned]
    assert list(waiting_suggestions(organisation=org, post_id=turned.source_id)) == [turned]
    # Another organisation covers Spanish: the Spanish copy. One that lists nothing covers every copy, but
    # not the claims another organisation rated, nor posts other organisations' members hold.
    assert waiting_everywhere(other_org) == {
        refused["outside coverage"].pk}
    assert waiting_everywhere(everywhere) == {
        confirmable["neither rated"].pk, refused["outside coverage"].pk}
    # A fact-checker of no organisation: the same, confirming copies of no rated claim.
    assert waiting_everywhere(None) == {
        confirmable["neither rated"].pk, refused["outside coverage"].pk}


# The rated post's page: every suggested copy can be confirmed, the way round that works ---------------------


def confirm_url(match: Match) -> str:
    return f"/queue/matches/{match.pk}/confirm/"


def reject_url(match: Match) -> str:
    return f"/queue/matches/{match.pk}/reject/"


def page_text(client, post: Post) -> str:
    response = client.get(reverse("factcheck:post", args=[post.pk]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def messages_of(response) -> str:
    found = re.search(r'<ul class="messages".*?</ul>', response.content.decode(), re.S)
    return html.unescape(found.group(0)) if found else ""


def test_a_rated_posts_page_offers_confirm_for_its_suggested_copies_and_each_then_carries_its_rating(
    login, checker, settings, django_capture_on_commit_callbacks
):
    settings.FACTDESK_JOBS_IN_PROCESS = True  # the matched rating is applied right after commit
    claim, pairs = rated_post_with_copies(checker=checker)
    client = login(checker)

    body = page_text(client, claim)
    assert "4 suggested pairs to decide" in body
    rating = Rating.objects.get(post=claim, is_current=True)
    rated_on = day(rating.created_at).replace(" ", NBSP)
    for match in pairs:
        assert confirm_url(match) in body and reject_url(match) in body
        copy = match.source if match.post_id == claim.pk else match.post
        # The rating each copy takes is named: its verdict, organisation and date.
        assert (f"Confirming makes post {copy.external_id} a copy of post {claim.external_id}: post {copy.external_id} "
                f"takes “{rating.get_verdict_display()}” from Full Fact's rating of {rated_on}.") in body
    assert "Cannot be confirmed" not in body

    for match in pairs:
        copy = match.source if match.post_id == claim.pk else match.post
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(confirm_url(match), {"next": f"/queue/posts/{claim.pk}/"})
        assert response["Location"] == f"/queue/posts/{claim.pk}/"
        assert (f"Confirmed: “{copy.external_id}” is a copy of “{claim.external_id}”; "
                "it now carries that claim's rating.") in messages_of(client.get(response["Location"]))

    rating = Rating.objects.get(post=claim, is_current=True)
    for match in pairs:
        match.refresh_from_db()
        copy = Post.objects.get(pk=match.post_id)
        # The pair reads the way it was confirmed: the unrated post copies the rated one.
        assert (match.source_id, match.state, match.decided_by_id) == (claim.pk, MatchState.CONFIRMED, checker.pk)
        assert (copy.duplicate_of_id, copy.queue_state) == (claim.pk, QueueState.MATCHED)
        action = Action.objects.get(post=copy, kind=ActionKind.MATCHED_RATING, ended_at__isnull=True)
        assert action.rating == rating
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_CONFIRMED, data__turned=True).count() == 3

    body = page_text(client, claim)
    assert "/confirm/" not in body and "/reject/" not in body and "to decide" not in body
    assert body.count("Confirmed by Maria Lopez") == 4


def test_confirming_the_stored_way_still_makes_the_newer_post_the_copy(login, checker):
    claim = rated(PostFactory(), by=checker)
    later = PostFactory()
    match = suggest(later, claim)
    confirm_match(match_id=match.pk, reviewer=checker)
    match.refresh_from_db()
    later.refresh_from_db()
    assert (match.post_id, match.source_id, later.duplicate_of_id, later.queue_state) == (
        later.pk, claim.pk, claim.pk, QueueState.MATCHED)


# Where confirming cannot work: no Confirm button, the reason in words, and the same refusal from the domain ----


def _both_rated(org, checker):
    first, second = rated(PostFactory(), by=checker), rated(PostFactory(), by=checker)
    return second, suggest(second, first), "Both posts have ratings of their own, so neither takes the other's."


def _a_copys_page(org, checker):
    root = rated(PostFactory(), by=checker)
    copy = PostFactory()
    confirm_match(match_id=suggest(copy, root).pk, reviewer=checker)
    other = PostFactory()
    return copy, suggest(copy, other), "already a copy of another claim"


def _grouped_under_a_root(org, checker):
    root, grouped, later = PostFactory(), PostFactory(), PostFactory()
    confirm_match(match_id=suggest(grouped, root).pk, reviewer=checker)
    return later, suggest(later, grouped), "has since become a copy of another claim"


def _politician(org, checker):
    speech = PostFactory(page=PageFactory(is_politician=True), queue_state=QueueState.NOT_ELIGIBLE)
    copy = PostFactory()
    return copy, suggest(copy, speech), "Posts of politicians' pages are not fact-checked"


def _removed(org, checker):
    claim = rated(PostFactory(), by=checker)
    removed = PostFactory(queue_state=QueueState.REMOVED)
    return claim, suggest(removed, claim), "Trust and safety removed post"


def _root_with_copies(org, checker):
    claim = rated(PostFactory(), by=checker)
    root = PostFactory()
    confirm_match(match_id=suggest(PostFactory(), root).pk, reviewer=checker)
    return claim, suggest(claim, root), "are copies of post"


def _another_organisations_claim(org, checker):
    other = FactCheckerFactory(organisation=OrganisationFactory(name="Maldita"))
    claim = rated(PostFactory(), by=other)
    copy = PostFactory()
    return copy, suggest(copy, claim), "The claim was rated by Maldita; only its fact-checkers can decide its copies."


def _outside_coverage(org, checker):
    claim = rated(PostFactory(), by=checker)
    spanish = PostFactory(language="es", country="ES")
    return claim, suggest(claim, spanish), "is outside what Full Fact covers"


CANNOT = {
    "both rated": _both_rated,
    "a copy's page": _a_copys_page,
    "grouped under a root": _grouped_under_a_root,
    "politician": _politician,
    "removed": _removed,
    "root with copies": _root_with_copies,
    "another organisation's claim": _another_organisations_claim,
    "outside coverage": _outside_coverage,
}


@pytest.mark.parametrize("world", CANNOT.values(), ids=CANNOT.keys())
def test_a_pair_that_cannot_be_confirmed_shows_why_and_offers_no_button(login, org, checker, world):
    page_post, match, reason = world(org, checker)
    body = page_text(login(checker), page_post)
    assert confirm_url(match) not in body
    assert reject_url(match) not in body  # blocked for good, or not this reviewer's to decide
    assert "Cannot be confirmed: " in body and reason in body
    assert "to decide" not in body


@pytest.mark.parametrize("world", CANNOT.values(), ids=CANNOT.keys())
def test_confirm_match_refuses_the_same_pairs_with_the_same_words_and_writes_nothing(org, checker, world):
    page_post, match, reason = world(org, checker)
    before = {p.pk: (p.queue_state, p.duplicate_of_id) for p in Post.objects.all()}
    with pytest.raises((MatchRefused, NotYourClaimsMatch, OutsideCoverage)) as refused:
        confirm_match(match_id=match.pk, reviewer=checker)
    assert reason in str(refused.value)
    match.refresh_from_db()
    assert (match.state, match.decided_by_id) == (MatchState.SUGGESTED, None)
    assert {p.pk: (p.queue_state, p.duplicate_of_id) for p in Post.objects.all()} == before


def test_a_copy_another_reviewer_holds_offers_reject_but_not_confirm(login, org, checker):
    claim = rated(PostFactory(), by=checker)
    held = PostFactory()
    match = suggest(claim, held)
    now = timezone.now()
    Claim.objects.create(post=held, reviewer=FactCheckerFactory(organisation=org), claimed_at=now,
                         expires_at=now + timedelta(minutes=30), status=ClaimStatus.ACTIVE)
    body = page_text(login(checker), claim)
    assert confirm_url(match) not in body and reject_url(match) in body
    assert f"Cannot be confirmed: Another reviewer holds the claim on post {held.external_id}." in body
    with pytest.raises(MatchRefused, match="Another reviewer holds the claim"):
        confirm_match(match_id=match.pk, reviewer=checker)
    reject_match(match_id=match.pk, reviewer=checker, reason="A different study.")
    assert Match.objects.get(pk=match.pk).state == MatchState.REJECTED


# Once decided, or refused, a pair is not offered again ---------------------------------------------------------


def test_a_rejected_pair_is_not_offered_again(login, checker):
    claim, pairs = rated_post_with_copies(checker=checker, copies=2)
    client = login(checker)
    client.post(reject_url(pairs[0]), {"reason": "Another claim", "next": f"/queue/posts/{claim.pk}/"})
    body = page_text(client, claim)
    assert confirm_url(pairs[0]) not in body and reject_url(pairs[0]) not in body
    assert confirm_url(pairs[1]) in body
    assert "1 suggested pair to decide" in body
    assert "Rejected by Maria Lopez" in body


def test_a_confirm_refused_because_the_other_post_was_rated_meanwhile_leaves_no_button(login, org, checker):
    claim = rated(PostFactory(), by=checker)
    other = PostFactory()
    match = suggest(claim, other)
    client = login(checker)
    assert confirm_url(match) in page_text(client, claim)
    rated(other, by=FactCheckerFactory(organisation=org))  # a colleague rated it after the page was loaded

    response = client.post(confirm_url(match), {"next": f"/queue/posts/{claim.pk}/"})
    after = client.get(response["Location"])
    assert "Both posts have ratings of their own, so neither takes the other's." in messages_of(after)
    body = html.unescape(after.content.decode())
    assert confirm_url(match) not in body and reject_url(match) not in body
    assert "Cannot be confirmed: Both posts have ratings of their own" in body
    assert Match.objects.get(pk=match.pk).state == MatchState.SUGGESTED


def test_the_post_page_reads_its_pairs_in_a_bounded_number_of_queries(login, checker, django_assert_max_num_queries):
    claim, _ = rated_post_with_copies(checker=checker, copies=2)
    client = login(checker)
    with CaptureQueriesContext(connection) as few:
        page_text(client, claim)
    for n in range(30):
        suggest(claim, PostFactory(text=f"Another older copy {n}."))
    with django_assert_max_num_queries(len(few)):
        page_text(client, claim)


# Confirming while another reviewer rates one of the posts -----------------------------------------------------


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_confirming_waits_for_a_rating_of_the_other_post_then_refuses_instead_of_overwriting_it():
    org = OrganisationFactory(name="Full Fact")
    checker, colleague = FactCheckerFactory(organisation=org), FactCheckerFactory(organisation=org)
    claim = rated(PostFactory(), by=checker)
    other = PostFactory()
    match = suggest(claim, other)  # confirming would make `other` the rated claim's copy

    def rate_other(backend: Backend):
        with transaction.atomic():
            record_rating(reviewer=colleague, post_id=other.pk, verdict="false", rationale="Never said.",
                          sources=["https://evidence.example/2"], claim_if_unclaimed=True)
            backend.reached("rated")
            backend.wait_for("commit")

    rater = Backend(rate_other, name="rater")
    confirmer = Backend(lambda backend: confirm_match(match_id=match.pk, reviewer=checker), name="confirmer")
    try:
        rater.start()
        rater.wait_until_reached("rated")
        confirmer.start()
        # The confirmation waits for the rating's lock on the other post: it never reads it half-rated.
        wait_until_blocked(confirmer, by=rater, statement='FROM "factcheck_post" WHERE "factcheck_post"."id" IN')
        rater.release("commit")
        rater.join()
        with pytest.raises(MatchRefused, match="Both posts have ratings of their own"):
            confirmer.join()
    finally:
        rater.stop()
        confirmer.stop()
    other.refresh_from_db()
    assert (other.queue_state, other.duplicate_of_id) == (QueueState.RATED, None)
    assert Match.objects.get(pk=match.pk).state == MatchState.SUGGESTED
