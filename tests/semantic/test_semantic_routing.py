"""Issue 31: who decides a semantic suggestion (PRODUCT.md, "Same claim, other words, other languages"), and how
the suggestion reads on the post page.

A suggestion of a rated claim goes to the rating's organisation when the copy is in its coverage, otherwise to
the organisations that cover the copy's language and country; confirming makes it a matched_rating as for any
match. Lexical pairs keep their rule: only the rating's organisation decides them.
"""

from __future__ import annotations

import html
import re

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.matching.confirmable import confirmation, facts_of
from factcheck.models import Match, MatchGuard, MatchMethod, MatchState, Post, QueueState, Rating
from factcheck.selectors import waiting_suggestions_everywhere
from moderation.models import Action, ActionKind
from tests.factories import (
    FactCheckerFactory,
    MatchFactory,
    OrganisationFactory,
    PageFactory,
    PostFactory,
    RatingFactory,
)

pytestmark = pytest.mark.django_db

CLAIM = "Chlorine on the skin kills the virus within minutes, doctors confirm."
GERMAN = "Chlor auf der Haut tötet das Virus innerhalb von Minuten, bestätigen Ärzte."
RETOLD = "Doctors now say rubbing chlorine onto your skin wipes out the virus in a few minutes."


@pytest.fixture
def full_fact():
    return OrganisationFactory(name="Full Fact", languages=["en"], countries=["GB"])


@pytest.fixture
def correctiv():
    return OrganisationFactory(name="Correctiv", languages=["de"], countries=["DE"])


@pytest.fixture
def logically():
    """A second organisation covering English in the United Kingdom."""
    return OrganisationFactory(name="Logically", languages=["en"], countries=["GB"])


@pytest.fixture
def maldita():
    """Covers neither the claim nor its copies."""
    return OrganisationFactory(name="Maldita", languages=["es"], countries=["ES"])


@pytest.fixture
def rater(full_fact):
    return FactCheckerFactory(username="maria", organisation=full_fact)


@pytest.fixture
def claim(rater) -> Post:
    """The claim, in English, rated False by Full Fact."""
    post = PostFactory(text=CLAIM, page=PageFactory(name="Health Truths Daily"))
    RatingFactory(post=post, reviewer=rater)
    post.refresh_from_db()
    return post


def semantic(copy: Post, claim: Post, *, score: float = 0.87, guard: str = "") -> Match:
    """A semantic suggestion as matching records one: `copy` may say `claim` in other words."""
    return MatchFactory(post=copy, source=claim, method=MatchMethod.SEMANTIC, score=score, guard=guard)


def german_copy() -> Post:
    return PostFactory(text=GERMAN, language="de", country="DE", page=PageFactory(name="Gesundheit Heute"))


def page_text(client, post: Post) -> str:
    response = client.get(f"/queue/posts/{post.pk}/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def messages_of(response) -> str:
    found = re.search(r'<ul class="messages".*?</ul>', response.content.decode(), re.S)
    return html.unescape(found.group(0)) if found else ""


def confirm(client, match: Match):
    return client.post(f"/queue/matches/{match.pk}/confirm/", {"next": f"/queue/posts/{match.post_id}/"})


def reject(client, match: Match):
    return client.post(f"/queue/matches/{match.pk}/reject/", {"next": f"/queue/posts/{match.post_id}/"})


def unchanged(match: Match) -> tuple:
    match.refresh_from_db()
    copy = Post.objects.get(pk=match.post_id)
    return (match.state, match.decided_by_id, copy.duplicate_of_id, copy.queue_state,
            AuditEvent.objects.filter(verb__in=[AuditVerb.MATCH_CONFIRMED, AuditVerb.MATCH_REJECTED]).count())


def waiting_for(organisation) -> set[int]:
    stored, turned = waiting_suggestions_everywhere(organisation=organisation)
    return set(stored.values_list("id", flat=True)) | set(turned.values_list("id", flat=True))


# Who decides ---------------------------------------------------------------------------------------------------


def test_the_rating_organisation_alone_decides_a_semantic_copy_in_its_coverage(login, client, rater, claim,
                                                                                  logically):
    copy = PostFactory(text=RETOLD, page=PageFactory(name="Wellness Mums"))
    pair = semantic(copy, claim)
    other = FactCheckerFactory(organisation=logically)

    before = unchanged(pair)
    body = page_text(login(other), copy)
    assert f"/queue/matches/{pair.pk}/confirm/" not in body and f"/queue/matches/{pair.pk}/reject/" not in body
    assert "The claim was rated by Full Fact; only its fact-checkers can decide its copies." in body
    for decide in (confirm, reject):
        response = decide(client, pair)
        assert response.status_code == 302
        assert "only its fact-checkers can decide its copies" in messages_of(client.get(response["Location"]))
        assert unchanged(pair) == before
    assert pair.pk not in waiting_for(logically)
    assert pair.pk in waiting_for(rater.membership.organisation)

    client.logout()
    body = page_text(login(rater), copy)
    assert f"/queue/matches/{pair.pk}/confirm/" in body
    confirm(client, pair)
    pair.refresh_from_db()
    assert pair.state == MatchState.CONFIRMED and pair.decided_by_id == rater.pk


def test_an_organisation_covering_the_copy_decides_it_when_the_rater_does_not_cover_it(
    login, client, rater, claim, correctiv, full_fact, settings, django_capture_on_commit_callbacks
):
    settings.FACTDESK_JOBS_IN_PROCESS = True  # the matched rating is applied right after commit
    copy = german_copy()
    pair = semantic(copy, claim)
    german_checker = FactCheckerFactory(username="jonas", organisation=correctiv)

    # The rating's organisation does not cover German in Germany: refused, as outside its coverage.
    before = unchanged(pair)
    body = page_text(login(rater), claim)
    assert f"/queue/matches/{pair.pk}/confirm/" not in body
    response = confirm(client, pair)
    assert "outside what Full Fact covers" in messages_of(client.get(response["Location"]))
    assert unchanged(pair) == before
    assert pair.pk not in waiting_for(full_fact)
    assert pair.pk in waiting_for(correctiv)

    client.logout()
    client = login(german_checker)
    body = page_text(client, copy)
    assert f"/queue/matches/{pair.pk}/confirm/" in body and f"/queue/matches/{pair.pk}/reject/" in body
    with django_capture_on_commit_callbacks(execute=True):
        response = confirm(client, pair)
    assert (f"Confirmed: “{copy.external_id}” is a copy of “{claim.external_id}”; "
            "it now carries that claim's rating.") in messages_of(client.get(response["Location"]))

    pair.refresh_from_db()
    copy.refresh_from_db()
    rating = Rating.objects.get(post=claim, is_current=True)
    assert (pair.state, pair.decided_by_id) == (MatchState.CONFIRMED, german_checker.pk)
    assert (copy.duplicate_of_id, copy.queue_state) == (claim.pk, QueueState.MATCHED)
    # The decision side takes a copy of another organisation's claim like any: a matched_rating of Full Fact's rating.
    action = Action.objects.get(post=copy, ended_at__isnull=True)
    assert (action.kind, action.rating_id) == (ActionKind.MATCHED_RATING, rating.pk)
    body = page_text(client, copy)
    assert "Matched to a claim rated" in body and "by <strong>Full Fact</strong>" in body
    assert "It carries that rating." in body


def test_the_covering_organisation_may_reject_it_and_the_pair_is_not_offered_again(login, client, claim, correctiv):
    copy = german_copy()
    pair = semantic(copy, claim)
    response = reject(login(FactCheckerFactory(organisation=correctiv)), pair)
    assert "this pair will not be suggested again" in messages_of(client.get(response["Location"]))
    pair.refresh_from_db()
    copy.refresh_from_db()
    assert pair.state == MatchState.REJECTED and copy.queue_state == QueueState.QUEUED
    assert pair.pk not in waiting_for(correctiv)


def test_a_fact_checker_covering_neither_the_copy_nor_the_claim_is_refused(login, client, claim, maldita):
    copy = german_copy()
    pair = semantic(copy, claim)
    before = unchanged(pair)
    body = page_text(login(FactCheckerFactory(organisation=maldita)), copy)
    assert f"/queue/matches/{pair.pk}/confirm/" not in body and f"/queue/matches/{pair.pk}/reject/" not in body
    for decide in (confirm, reject):
        response = decide(client, pair)
        assert "outside what Maldita covers" in messages_of(client.get(response["Location"]))
    assert unchanged(pair) == before
    assert pair.pk not in waiting_for(maldita)


def test_a_lexical_pair_of_a_copy_outside_the_raters_coverage_stays_the_raters(login, client, claim, correctiv):
    # A near-duplicate in German of an English claim (a quoted headline, say): the rule of lexical pairs.
    copy = german_copy()
    pair = MatchFactory(post=copy, source=claim, method=MatchMethod.MINHASH, score=0.7)
    before = unchanged(pair)
    response = confirm(login(FactCheckerFactory(organisation=correctiv)), pair)
    assert "only its fact-checkers can decide its copies" in messages_of(client.get(response["Location"]))
    assert unchanged(pair) == before
    assert pair.pk not in waiting_for(correctiv)


def test_the_page_and_the_count_agree_on_semantic_pairs_for_every_organisation(claim, full_fact, correctiv,
                                                                                 logically, maldita):
    rated_german = german_copy()
    RatingFactory(post=rated_german, reviewer=FactCheckerFactory(organisation=correctiv))
    english_copy = PostFactory(text=RETOLD)
    pairs = [
        semantic(german_copy(), claim),  # outside the rater's coverage: Correctiv's
        semantic(english_copy, claim),  # inside: Full Fact's
        semantic(PostFactory(text=RETOLD), german_copy()),  # neither rated: whoever covers the copy
        # Stored the other way round: the rated post is the stored `post`; its source, in English, is the copy.
        semantic(rated_german, PostFactory(text=RETOLD)),
        MatchFactory(post=german_copy(), source=claim, method=MatchMethod.MINHASH),  # lexical: Full Fact's only
    ]
    facts = facts_of({pk for m in pairs for pk in (m.post_id, m.source_id)}, now=timezone.now())
    for organisation in (full_fact, correctiv, logically, maldita):
        member = FactCheckerFactory(organisation=organisation)
        by_page = {m.pk for m in pairs if confirmation(state=m.state, method=m.method, post=facts[m.post_id],
                                                       source=facts[m.source_id], reviewer=member).confirmable}
        assert by_page == waiting_for(organisation), organisation.name
    assert waiting_for(correctiv) == {pairs[0].pk}
    # Correctiv rated the German post; the English copy is outside its coverage, so those covering English decide.
    # The lexical German copy of Full Fact's claim is nobody's: Full Fact does not cover it, and only it decides it.
    assert waiting_for(full_fact) == {pairs[1].pk, pairs[2].pk, pairs[3].pk}
    assert waiting_for(logically) == {pairs[2].pk, pairs[3].pk}
    assert waiting_for(maldita) == set()


# How a suggestion reads ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("guard", "sentence"), [
    (MatchGuard.POLARITY, "This copy negates the claim"),
    (MatchGuard.NUMBERS, "The numbers differ from the claim's"),
    (MatchGuard.SHORT_TEXT, "Too short to judge by its words"),
])
def test_a_semantic_suggestion_shows_its_method_both_languages_its_score_and_its_guard(
    login, claim, correctiv, guard, sentence
):
    copy = german_copy()
    pair = semantic(copy, claim, score=0.874, guard=guard)
    client = login(FactCheckerFactory(organisation=correctiv))

    for post, other in ((copy, claim), (claim, copy)):
        raw = client.get(f"/queue/posts/{post.pk}/").content.decode()
        body = html.unescape(raw)
        row = body.split('id="copies-title"', 1)[1].split("</section>", 1)[0]
        assert "Same claim in other words" in row
        assert "English → German" in row
        assert "score <strong>0.87</strong>" in row
        assert f"{sentence}." in row
        # The other post's words are isolated and marked with their language.
        assert re.search(rf'<bdi lang="{other.language}">[^<]*{re.escape(other.text.split()[0])}', row)
    assert f"/queue/matches/{pair.pk}/confirm/" in row


def test_a_lexical_guard_reads_as_the_same_sentence(login, rater, claim):
    held = PostFactory(text="Chlorine on the skin does not kill the virus within minutes, doctors confirm.")
    MatchFactory(post=held, source=claim, method=MatchMethod.MINHASH, score=0.83, guard=MatchGuard.POLARITY)
    row = page_text(login(rater), claim).split('id="copies-title"', 1)[1].split("</section>", 1)[0]
    assert "This copy negates the claim." in row
    assert "→" not in row  # languages are named on semantic pairs only


def test_the_waiting_suggestions_listing_names_the_method_languages_score_and_guard(login, claim, correctiv):
    copy = german_copy()
    semantic(copy, claim, score=0.874, guard=MatchGuard.NUMBERS)
    body = html.unescape(login(FactCheckerFactory(organisation=correctiv)).get("/notifications/").content.decode())
    listing = body.split('id="waiting-suggestions"', 1)[1].split("</section>", 1)[0]
    assert f"Post {copy.external_id}" in re.sub(r"<[^>]+>", "", listing)
    assert "Same claim in other words (English → German), score 0.87" in listing
    assert "The numbers differ from the claim's" in listing


def test_the_waiting_suggestions_listing_names_a_lexical_pairs_method_and_score_too(login, rater, claim):
    """Languages are named on semantic pairs only; the method and the score on every pair (a lexical row once showed
    neither, only its guard)."""
    held = PostFactory(text="Chlorine on the skin does not kill the virus within minutes, doctors confirm.")
    MatchFactory(post=held, source=claim, method=MatchMethod.MINHASH, score=0.834, guard=MatchGuard.POLARITY)
    body = html.unescape(login(rater).get("/notifications/").content.decode())
    listing = re.sub(r"<[^>]+>", "", body.split('id="waiting-suggestions"', 1)[1].split("</section>", 1)[0])
    assert f"may be a copy of {claim.external_id}: “{claim.text[:139]}" in listing.replace("…", "")
    assert f"” · {MatchMethod.MINHASH.label}, score 0.83 · " in listing
    assert "This copy negates the claim" in listing and "→" not in listing and "Both in" not in listing
    # Both posts' words, and a link to where the pair is decided on the copy's page.
    assert "Chlorine on the skin does not kill the virus" in listing
    assert f'href="/queue/posts/{held.pk}/#copies-title"' in body
