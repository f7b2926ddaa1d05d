"""The same claim in other words and other languages (PRODUCT.md; issue 31): embeddings made by the matching job
after ingest commits, never by ingest itself; close posts suggested under a rated claim, never linked, with the
guards shown; rejected pairs never suggested again; languages detected when the platform sends none; the
reconciler that embeds what was matched without; and the candidates found in PostgreSQL (`nearest`).

The encoder is the real one (factcheck.semantic): each text below was checked to land where its name says, with
FACTDESK_SEMANTIC_SUGGEST at 0.7 (the cosines are written beside them).
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck import jobs as factcheck_jobs
from factcheck import semantic
from factcheck.ingest import FlagInput, PageInput, PostInput
from factcheck.matching.matcher import match_new_posts, match_unmatched, reject_match
from factcheck.matching.semantic import Embedded, nearest, store_embeddings
from factcheck.matching.semantic_backfill import embed_missed_posts
from factcheck.models import Match, Post, QueueState
from factcheck.models_semantic import PostEmbedding, SemanticBand
from moderation.models import Action
from tests import scenarios
from tests.factcheck.matching_helpers import CLAIM, NEGATED_COPY, UNRELATED, WORKER, arrive, flag, post, queue_ids
from tests.factories import PageFactory, PostFactory, RatingFactory
from tests.jobs_support import redriven

# CLAIM is "Scientists confirm that drinking hot lemon water for 5 minutes every morning cures type 2 diabetes
# within three weeks". None of these shares enough of its words for the lexical matcher (MinHash under 0.4).
GERMAN = ("Wissenschaftler bestätigen, dass das Trinken von heißem Zitronenwasser für 5 Minuten jeden Morgen "
          "Typ-2-Diabetes innerhalb von drei Wochen heilt")  # 0.78
FRENCH = ("Des scientifiques confirment que boire de l'eau chaude citronnée pendant 5 minutes chaque matin guérit "
          "le diabète de type 2 en trois semaines")  # 0.86
SPANISH = ("Científicos confirman que beber agua caliente con limón durante 5 minutos cada mañana cura la diabetes "
           "tipo 2 en tres semanas")  # 0.90
PARAPHRASE = ("Researchers have shown that a cup of warm lemon water each morning for 5 minutes will get rid of "
              "type 2 diabetes in just three weeks")  # 0.90
GERMAN_NEGATED = ("Wissenschaftler bestätigen: 5 Minuten heißes Zitronenwasser jeden Morgen heilt Typ-2-Diabetes in "
                  "drei Wochen nicht")  # 0.75
GERMAN_FIFTY_MINUTES = GERMAN.replace("5 Minuten", "50 Minuten")  # 0.76
SHORT = "Lemon water cures diabetes in three weeks"  # 0.76, 7 words
# "25,000" and French "25 000" (a narrow no-break space) are one number; "ne ... pas" is one "not", as "could not".
GUARD_CLAIM = ("Over 25,000 National Guard members were brought in because Biden could not get enough people to attend "
               "his inauguration")
GUARD_CLAIM_FRENCH = ("Plus de 25\u202f000 membres de la Garde nationale ont été amenés parce que Biden ne pouvait pas "
                      "réunir assez de gens pour assister à son investiture")  # 0.81


@pytest.fixture(autouse=True)
def _semantic_on(settings):
    settings.FACTDESK_MATCHING = True
    settings.FACTDESK_SEMANTIC = True
    settings.FACTDESK_SEMANTIC_SUGGEST = 0.7  # what the texts above were checked against


def send(external_id: str, text: str, *, language: str = "en", page: str = "page-copy", by=None) -> Post:
    """The platform flags a post in `language` ("" for none sent)."""
    now = timezone.now()
    arrive(FlagInput(
        idempotency_key=f"flag-{external_id}", source="user_report", flagged_at=now, reason="looks false",
        post=PostInput(external_id=external_id, page=PageInput(page, f"Page {page}", False),
                       posted_at=now - timedelta(hours=1), url=f"https://social.example/{external_id}", text=text,
                       language=language, country="DE", views=100, shares=5),
    ), by=by)
    return post(external_id)


def suggestion_of(copy: Post) -> Match:
    return Match.objects.get(post=copy)


# Suggested, never linked ------------------------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize(("language", "text"), [("de", GERMAN), ("fr", FRENCH), ("es", SPANISH), ("en", PARAPHRASE)],
                         ids=["german", "french", "spanish", "english-paraphrase"])
def test_a_rated_claim_in_other_words_or_another_language_is_suggested_and_never_linked(factchecker, language, text):
    source = scenarios.rated_claim(rater=factchecker)
    copy = send("copy", text, language=language)
    assert copy.queue_state == QueueState.QUEUED  # nothing lexical to match on arrival
    assert not PostEmbedding.objects.filter(post=copy).exists()  # ingest embeds nothing: the job does

    match_new_posts(post_ids=[copy.pk])

    match = suggestion_of(copy)
    assert (match.source_id, match.method, match.state, match.guard) == (source.pk, "semantic", "suggested", "")
    assert 0.7 <= match.score < 1.0
    copy.refresh_from_db()
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert copy.pk in queue_ids()
    assert not Action.objects.filter(post=copy).exists()  # no matched_rating
    recorded = AuditEvent.objects.get(verb=AuditVerb.MATCH_RECORDED, post_id=copy.pk)
    assert (recorded.data["method"], recorded.data["state"]) == ("semantic", "suggested")


@pytest.mark.django_db
def test_an_unrelated_claim_is_not_suggested(factchecker):
    scenarios.rated_claim(rater=factchecker)
    other = send("other", UNRELATED)
    match_new_posts(post_ids=[other.pk])
    assert PostEmbedding.objects.filter(post=other).exists()
    assert not Match.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("language", "text", "guard"), [
    ("de", GERMAN_NEGATED, "polarity"),
    ("de", GERMAN_FIFTY_MINUTES, "numbers"),
    ("en", SHORT, "short_text"),
], ids=["negated", "number-changed", "short"])
def test_a_close_copy_that_negates_changes_a_number_or_is_short_is_suggested_with_its_guard(
    factchecker, language, text, guard
):
    source = scenarios.rated_claim(rater=factchecker)
    copy = send("copy", text, language=language)
    match_new_posts(post_ids=[copy.pk])
    match = suggestion_of(copy)
    assert (match.source_id, match.method, match.state, match.guard) == (source.pk, "semantic", "suggested", guard)
    assert post("copy").queue_state == QueueState.QUEUED


@pytest.mark.django_db
def test_spelt_number_words_are_compared_only_within_one_language(factchecker):
    # "three" in the claim and "drei" here are one number: only digits are compared across languages.
    source = scenarios.rated_claim(rater=factchecker)
    copy = send("copy", GERMAN, language="de")
    match_new_posts(post_ids=[copy.pk])
    assert (suggestion_of(copy).source_id, suggestion_of(copy).guard) == (source.pk, "")


@pytest.mark.django_db
def test_a_number_with_another_languages_thousands_separator_is_the_same_number(factchecker):
    source = scenarios.rated_claim(rater=factchecker, text=GUARD_CLAIM)
    copy = send("copy", GUARD_CLAIM_FRENCH, language="fr")
    match_new_posts(post_ids=[copy.pk])
    assert (suggestion_of(copy).source_id, suggestion_of(copy).guard) == (source.pk, "")


@pytest.mark.django_db
def test_a_pair_the_lexical_matcher_suggested_stays_its_suggestion(factchecker):
    source = scenarios.rated_claim(rater=factchecker)
    copy = send("copy", NEGATED_COPY)
    match_new_posts(post_ids=[copy.pk])
    match = suggestion_of(copy)  # one pair, not a second one by meaning
    assert (match.source_id, match.method, match.state, match.guard) == (source.pk, "minhash", "suggested", "polarity")


@pytest.mark.django_db
def test_a_rejected_semantic_pair_is_not_suggested_again_when_the_job_runs_again(factchecker):
    scenarios.rated_claim(rater=factchecker)
    copy = send("copy", GERMAN, language="de")
    match_new_posts(post_ids=[copy.pk])
    reject_match(match_id=suggestion_of(copy).pk, reviewer=factchecker, reason="Another claim.")

    # The job runs again from the start: nothing matched, nothing embedded.
    PostEmbedding.objects.filter(post=copy).delete()
    SemanticBand.objects.filter(post=copy).delete()
    Post.objects.filter(pk=copy.pk).update(matched_at=None)
    match_new_posts(post_ids=[copy.pk])

    assert PostEmbedding.objects.filter(post=copy).exists()
    assert list(Match.objects.values_list("post_id", "state")) == [(copy.pk, "rejected")]


@pytest.mark.django_db
def test_a_waiting_claim_is_suggested_only_for_posts_newer_than_it(factchecker):
    first = send("first", CLAIM, page="page-a")
    translation = send("translation", GERMAN, language="de")
    match_new_posts(post_ids=[first.pk, translation.pk])
    match = suggestion_of(translation)
    assert (match.source_id, match.method, match.state) == (first.pk, "semantic", "suggested")
    assert not Match.objects.filter(post=first).exists()
    assert post("translation").queue_state == QueueState.QUEUED  # suggested, not grouped


@pytest.mark.django_db
def test_posts_of_a_politicians_page_get_no_suggestion(factchecker):
    scenarios.rated_claim(rater=factchecker)
    arrive(flag("copy", GERMAN, page="page-minister", politician=True))
    match_new_posts(post_ids=[post("copy").pk])
    assert not Match.objects.exists()


# Languages -------------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_language_of_a_post_sent_without_one_is_detected_and_written_to_it(factchecker):
    scenarios.rated_claim(rater=factchecker)
    copy = send("copy", GERMAN, language="")
    assert copy.language == ""
    match_new_posts(post_ids=[copy.pk])
    assert post("copy").language == "de"
    embedding = PostEmbedding.objects.get(post=copy)
    assert (embedding.language, embedding.language_detected, embedding.model) == ("de", True, semantic.MODEL_NAME)
    assert suggestion_of(copy).method == "semantic"


@pytest.mark.django_db
def test_a_copy_sent_without_a_language_has_it_detected_from_its_own_words(factchecker):
    """Copies are not embedded (their claim is), and their language stayed blank ("grouped", language "") where
    PRODUCT.md says a language is detected when the platform sends none."""
    send("first", GERMAN, language="de")
    copy = send("copy", GERMAN, language="")
    match_new_posts(post_ids=[post("first").pk, copy.pk])
    copy = post("copy")
    assert copy.duplicate_of_id == post("first").pk and copy.language == "de"
    assert not PostEmbedding.objects.filter(post=copy).exists()  # still not embedded: its claim is


@pytest.mark.django_db
def test_a_language_the_platform_sent_is_kept(factchecker):
    copy = send("copy", GERMAN, language="lb")  # the platform says Luxembourgish: its word stands
    match_new_posts(post_ids=[copy.pk])
    assert post("copy").language == "lb"
    embedding = PostEmbedding.objects.get(post=copy)
    assert (embedding.language, embedding.language_detected) == ("lb", False)


@pytest.mark.django_db
def test_a_detected_language_does_not_overwrite_one_sent_meanwhile(factchecker):
    copy = send("copy", GERMAN, language="")
    found = Embedded(post_id=copy.pk, vector=semantic.embed([GERMAN])[0], language="de", detected=True)
    Post.objects.filter(pk=copy.pk).update(language="lb")  # a later flag said what it is
    store_embeddings([found], now=timezone.now())
    assert post("copy").language == "lb"


@pytest.mark.django_db
def test_a_post_without_words_and_a_copy_linked_on_arrival_are_not_embedded(factchecker):
    scenarios.rated_claim(rater=factchecker)
    send("emoji", "😱😱 !!! 100% 👉 https://example.org/watch")
    arrive(flag("exact", CLAIM + "!!!", page="page-exact"))
    assert post("exact").queue_state == QueueState.MATCHED
    match_new_posts(post_ids=[post("emoji").pk, post("exact").pk])
    assert not PostEmbedding.objects.filter(post__in=[post("emoji"), post("exact")]).exists()


@pytest.mark.django_db
def test_a_copy_its_job_links_to_a_waiting_claim_is_never_given_to_the_encoder(monkeypatch):
    # The lexical step comes first: a viral claim's copies would otherwise cost the encoder a batch each, for nothing.
    encoded, encode = [], semantic.embed
    monkeypatch.setattr(semantic, "embed", lambda texts: encoded.extend(texts) or encode(texts))
    send("first", CLAIM)
    match_new_posts(post_ids=[post("first").pk])
    send("copy", CLAIM + " #share", page="page-b")
    send("retold", PARAPHRASE, page="page-c")
    match_new_posts(post_ids=[post("copy").pk, post("retold").pk])

    assert post("copy").duplicate_of_id == post("first").pk
    assert len(encoded) == 2 and not any("#share" in text for text in encoded)
    assert set(PostEmbedding.objects.values_list("post__external_id", flat=True)) == {"first", "retold"}
    assert suggestion_of(post("retold")).source_id == post("first").pk  # the rest of the batch is still suggested


# Switched off, lost jobs and the reconciler -----------------------------------------------------------------

@pytest.mark.django_db
def test_with_semantic_matching_off_nothing_is_embedded(factchecker, settings):
    settings.FACTDESK_SEMANTIC = False
    scenarios.rated_claim(rater=factchecker)
    copy = send("copy", GERMAN, language="")
    match_new_posts(post_ids=[copy.pk])
    assert post("copy").matched_at is not None
    assert not PostEmbedding.objects.exists() and not SemanticBand.objects.exists()
    assert not Match.objects.exists()
    assert post("copy").language == ""
    assert factcheck_jobs.embed_missed_posts() == 0


@pytest.mark.django_db
def test_the_reconciler_embeds_posts_matched_while_semantic_matching_was_off_and_warns_of_them(
    factchecker, settings, caplog
):
    settings.FACTDESK_SEMANTIC = False
    source = scenarios.rated_claim(rater=factchecker)
    copy = send("copy", GERMAN, language="de")
    match_new_posts(post_ids=[copy.pk])
    assert not PostEmbedding.objects.exists()

    settings.FACTDESK_SEMANTIC = True
    assert embed_missed_posts(now=timezone.now() + timedelta(minutes=10)) == 2
    assert set(PostEmbedding.objects.values_list("post_id", flat=True)) == {source.pk, copy.pk}
    match = suggestion_of(copy)
    assert (match.source_id, match.method, match.state) == (source.pk, "semantic", "suggested")
    assert redriven(caplog) == [
        "reconciler re-drove posts still without an embedding 30 s after they were matched: 2, the oldest waiting "
        "10 min - matched while FACTDESK_SEMANTIC was off or by another encoder, or their jobs were lost"]
    assert factcheck_jobs.embed_missed_posts() == 0  # walked past them: nothing left
    assert len(redriven(caplog)) == 1


@pytest.mark.django_db
def test_a_new_encoder_has_the_reconciler_embed_every_post_again(factchecker, monkeypatch):
    source = scenarios.rated_claim(rater=factchecker)
    copy = send("copy", GERMAN, language="de")
    match_new_posts(post_ids=[copy.pk])
    assert factcheck_jobs.embed_missed_posts() == 0
    bands = SemanticBand.objects.count()

    monkeypatch.setattr(semantic, "MODEL_NAME", "the next encoder")
    assert factcheck_jobs.embed_missed_posts() == 2
    assert set(PostEmbedding.objects.values_list("post_id", "model")) == {
        (source.pk, "the next encoder"), (copy.pk, "the next encoder")}
    assert SemanticBand.objects.count() == bands  # the old keys replaced, not added to
    assert Match.objects.filter(post=copy).count() == 1  # the pair was recorded already


@pytest.mark.django_db
def test_a_post_whose_job_was_lost_is_embedded_by_the_matching_reconciler_not_passed_by_the_walk(factchecker):
    source = scenarios.rated_claim(rater=factchecker)
    copy = send("copy", GERMAN, language="de")  # its job never runs: no commit in this test
    assert factcheck_jobs.embed_missed_posts() == 0  # the walk stops before it
    match_unmatched()
    assert PostEmbedding.objects.filter(post=copy).exists()
    assert suggestion_of(copy).source_id == source.pk


@WORKER
def test_a_real_worker_suggests_a_translation_of_a_rated_claim_and_links_nothing(
    factchecker, platform_user, run_worker
):
    send("source", CLAIM, page="page-source", by=platform_user)
    run_worker()
    RatingFactory(reviewer=factchecker, post=post("source"))
    run_worker()
    copy = send("copy", GERMAN, language="", by=platform_user)
    assert not PostEmbedding.objects.filter(post=copy).exists()  # the request embedded nothing

    run_worker()

    match = suggestion_of(copy)
    assert (match.source_id, match.method, match.state) == (post("source").pk, "semantic", "suggested")
    copy = post("copy")
    assert (copy.queue_state, copy.duplicate_of_id, copy.language) == (QueueState.QUEUED, None, "de")
    assert copy.pk in queue_ids()
    assert not Action.objects.filter(post=copy).exists()


# Candidates from PostgreSQL --------------------------------------------------------------------------------

def _unit(vectors: np.ndarray) -> np.ndarray:
    return (vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)).astype(np.float32)


def _at_cosine(rng: np.random.Generator, vector: np.ndarray, cosine: float) -> np.ndarray:
    """A unit vector at this cosine from `vector`."""
    other = rng.standard_normal(semantic.DIMENSIONS).astype(np.float32)
    other -= other.dot(vector) * vector
    other /= np.linalg.norm(other)
    return _unit(cosine * vector + np.sqrt(1 - cosine**2) * other)


def _stored(vectors: np.ndarray) -> list[int]:
    """Posts with these embeddings, stored as the matcher stores them; their ids in order."""
    page = PageFactory()
    posts = Post.objects.bulk_create([PostFactory.build(page=page) for _ in vectors])
    store_embeddings([Embedded(post_id=p.pk, vector=v, language="en", detected=False)
                      for p, v in zip(posts, vectors, strict=True)], now=timezone.now())
    return [p.pk for p in posts]


@pytest.mark.django_db
def test_nearest_finds_a_close_embedding_among_thousands_of_others():
    rng = np.random.default_rng(7)
    query = _unit(rng.standard_normal(semantic.DIMENSIONS))
    ids = _stored(np.vstack([_unit(rng.standard_normal((3000, semantic.DIMENSIONS))), _at_cosine(rng, query, 0.86)]))
    [found] = nearest(query[None, :], threshold=0.7)
    assert [pk for pk, _ in found] == [ids[-1]]
    assert found[0][1] == pytest.approx(0.86, abs=0.01)


@pytest.mark.django_db
def test_nearest_agrees_with_a_brute_force_scan():
    rng = np.random.default_rng(11)
    queries = _unit(rng.standard_normal((20, semantic.DIMENSIONS)))
    close = [_at_cosine(rng, q, c) for q in queries for c in rng.uniform(0.82, 0.98, 5)]
    ids = np.array(_stored(np.vstack([_unit(rng.standard_normal((3000, semantic.DIMENSIONS))), *close])))
    stored = np.vstack([semantic.from_bytes(v) for v in PostEmbedding.objects.order_by("post_id")
                        .values_list("vector", flat=True)])
    found = nearest(queries, limit=50, threshold=0.7)
    relevant = retrieved = 0
    for query, hits in zip(queries, found, strict=True):
        scores = np.round(stored @ query, 4)
        truth = {int(pk): float(s) for pk, s in zip(ids, scores, strict=True) if s >= 0.7}
        assert all(truth[pk] == pytest.approx(score, abs=1e-4) for pk, score in hits)  # exact cosines, no extras
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)  # best first
        relevant += len(truth)
        retrieved += len(hits)
    assert relevant == 100
    assert retrieved / relevant >= 0.9
