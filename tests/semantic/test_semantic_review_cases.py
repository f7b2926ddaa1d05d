"""Cases the hostile review of issue 31's pipeline found: a retelling must reach the rated claim whatever waits
beside it, a semantic suggestion must not keep an Altered picture's rating from its copy, copies are not embedded
(and a copy unlinked again is), and a later flag without a language keeps the detected one."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from factcheck.ingest import FlagInput, PageInput, PostInput
from factcheck.matching.leaving import unlink_copy
from factcheck.matching.matcher import match_new_posts, match_unmatched
from factcheck.matching.sweep import sweep_rated_media
from factcheck.models import Match, MatchMethod, MatchState, Post, QueueState, Verdict
from factcheck.models_semantic import PostEmbedding
from tests import scenarios
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, arrive, flag, post
from tests.factories import FactCheckerFactory, OrganisationFactory, RatingFactory
from tests.media.test_media_matching import PICTURE, image, with_media

GERMAN = ("Wissenschaftler bestätigen, dass das Trinken von heißem Zitronenwasser für 5 Minuten jeden Morgen "
          "Typ-2-Diabetes innerhalb von drei Wochen heilt")

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _semantic_on(settings):
    settings.FACTDESK_MATCHING = True
    settings.FACTDESK_SEMANTIC = True
    settings.FACTDESK_SEMANTIC_SUGGEST = 0.7


def send(external_id, text, *, language="", key="", media=None):
    now = timezone.now()
    f = FlagInput(
        idempotency_key=key or f"flag-{external_id}", source="user_report", flagged_at=now, reason="looks false",
        post=PostInput(external_id=external_id, page=PageInput("page-x", "Page x", False),
                       posted_at=now - timedelta(hours=1), url=f"https://social.example/{external_id}", text=text,
                       language=language, country="DE", views=100, shares=5))
    if media:
        f = with_media(f, *media)
    arrive(f)
    return post(external_id)


def test_a_later_flag_without_a_language_keeps_the_detected_one():
    p = send("p", GERMAN)  # the platform sent no language
    match_new_posts(post_ids=[p.pk])
    p.refresh_from_db()
    assert p.language == "de" and PostEmbedding.objects.get(post=p).language_detected

    send("p", GERMAN, key="second-flag")  # another user flags the same post; still no language sent

    p.refresh_from_db()
    assert p.language == "de"


def test_a_copy_unlinked_again_is_embedded_as_a_claim_of_its_own():
    checker = FactCheckerFactory(organisation=OrganisationFactory(name="Full Fact"))
    source = scenarios.rated_claim(rater=checker)
    arrive(flag("copy", EXACT_COPY))
    copy = post("copy")
    match_new_posts(post_ids=[copy.pk])
    copy.refresh_from_db()
    assert copy.duplicate_of_id == source.pk  # linked on its words: a copy has no embedding of its own
    assert not PostEmbedding.objects.filter(post=copy).exists()
    with transaction.atomic():
        unlink_copy(post=Post.objects.select_for_update().get(pk=copy.pk), actor=checker,
                    reason="not the same claim (dispute reversed)", now=timezone.now())

    match_unmatched()  # the reconciler, as every minute

    copy.refresh_from_db()
    assert copy.duplicate_of_id is None and copy.queue_state == QueueState.QUEUED
    assert PostEmbedding.objects.filter(post=copy).exists()


@pytest.mark.parametrize("semantic_on", [False, True])
def test_a_semantic_suggestion_gives_way_to_an_altered_pictures_rating(settings, semantic_on):
    """The same picture, its caption in German: a semantic suggestion of the waiting claim first; once the claim
    is rated Altered, the sweep links the copy by its picture all the same (the suggestion is rewritten)."""
    settings.FACTDESK_SEMANTIC = semantic_on
    checker = FactCheckerFactory(organisation=OrganisationFactory(name="Full Fact"))
    source = send("source", CLAIM, language="en", media=[image(PICTURE)])
    match_new_posts(post_ids=[source.pk])
    copy = send("copy", GERMAN, language="de", media=[image(PICTURE, name="b")])
    match_new_posts(post_ids=[copy.pk])
    RatingFactory(reviewer=checker, post=post("source"), verdict=Verdict.ALTERED)

    sweep_rated_media(post_ids=[source.pk])

    copy.refresh_from_db()
    assert copy.duplicate_of_id == source.pk and copy.queue_state == QueueState.MATCHED
    pair = Match.objects.get(post=copy, source=source)
    assert (pair.method, pair.state) == (MatchMethod.MEDIA, MatchState.AUTO)


G = [
    "Wissenschaftler bestätigen, dass das Trinken von heißem Zitronenwasser für 5 Minuten jeden Morgen "
    "Typ-2-Diabetes innerhalb von drei Wochen heilt",
    "Forscher haben gezeigt: Wer jeden Morgen 5 Minuten lang heißes Zitronenwasser trinkt, ist in drei Wochen von "
    "Typ-2-Diabetes geheilt",
    "Laut Wissenschaftlern heilt morgendliches heißes Zitronenwasser, 5 Minuten lang getrunken, Diabetes Typ 2 "
    "binnen drei Wochen",
    "Neue Studie: Heißes Wasser mit Zitrone jeden Morgen für 5 Minuten heilt Typ-2-Diabetes in nur drei Wochen",
    "Ärzte verschweigen es: 5 Minuten heißes Zitronenwasser am Morgen und Typ-2-Diabetes ist nach drei Wochen weg",
]


def test_a_waiting_retelling_closer_than_the_rated_claim_leaves_room_for_it(monkeypatch):
    """A retelling closer to another waiting retelling (0.83) than to the rated English claim (0.77), with room for
    one pair: the rated claim is the one suggested, as its rating is what the reviewer most needs to see."""
    monkeypatch.setattr("factcheck.matching.semantic.MAX_PAIRS_PER_POST", 1)
    checker = FactCheckerFactory(organisation=OrganisationFactory(name="Full Fact"))
    source = scenarios.rated_claim(rater=checker)  # English, rated False
    sibling = send("g0", G[0], language="de")
    match_new_posts(post_ids=[sibling.pk])
    late = send("late", G[2], language="de")

    match_new_posts(post_ids=[late.pk])

    assert list(Match.objects.filter(post=late).values_list("source_id", flat=True)) == [source.pk]


def test_a_waiting_claims_grouped_copies_are_not_embedded_and_leave_room_for_the_rated_claim():
    checker = FactCheckerFactory(organisation=OrganisationFactory(name="Full Fact"))
    source = scenarios.rated_claim(rater=checker)  # English, rated False
    w = send("w", G[0], language="de")
    match_new_posts(post_ids=[w.pk])
    for i in range(20):  # the German wording shared word for word 20 times: grouped under w
        match_new_posts(post_ids=[send(f"w{i}", G[0], language="de").pk])
    assert Post.objects.filter(duplicate_of=w).count() == 20
    assert not PostEmbedding.objects.filter(post__duplicate_of=w).exists()
    late = send("late", G[2], language="de")  # cosine 0.77 with the rated claim, 0.83 with w

    match_new_posts(post_ids=[late.pk])

    assert source.pk in set(Match.objects.filter(post=late).values_list("source_id", flat=True))
