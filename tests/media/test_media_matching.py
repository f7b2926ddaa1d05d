"""Matching by media (PRODUCT.md, "Matching by media"): an `altered` rating reaches every post carrying a matching
image by itself; any other verdict's media match is a suggestion; text and media together follow the text rules.

Posts arrive through ingest (the API for the arrival's answer) with their images' PDQ hashes and MD5s; a claim is
rated with record_rating. Posts that arrive after the rating are matched on arrival; posts that were there before
are reached by the sweep (factcheck.matching.sweep), run by a real RQ worker where the decision side's
matched rating is checked too.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from factcheck.ingest import FlagInput, IngestResult, ingest_flags
from factcheck.matching.media import find_same_files, find_similar
from factcheck.matching.sweep import sweep_rated_media
from factcheck.media import MediaInput, pdq_hex, store_media
from factcheck.models import Match, MatchMethod, MatchState, Post, QueueState, Verdict
from factcheck.models_media import PostMedia
from factcheck.pages import set_politician
from tests.api.helpers import flag_payload, post_json
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY, EXACT_COPY, WORKER, flag, matched_action, post
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory, RatingFactory, StaffFactory

# Texts that share nothing a near-duplicate judge could find: what pairs them is their picture only.
TEXTS = [
    "The city council approved a new budget for road repairs and public libraries on Tuesday evening",
    "Look at what they found floating in the harbour this morning, nobody is talking about it",
    "My grandmother sent me this and I honestly cannot stop laughing at the whole thing",
    "Photo from the march yesterday, the crowd went on for miles and miles down the avenue",
    "This is the moment the bridge collapsed, share it before the news takes it down for good",
    "Weekend hiking trip with the family, best views we have had in years up on the ridge",
]
RNG = random.Random(30)
PICTURE = RNG.getrandbits(256)
OTHER_PICTURE = RNG.getrandbits(256)
MD5 = "0123456789abcdef0123456789abcdef"


def flipped(value: int, bits: int) -> int:
    """`value` with `bits` bits flipped, spread over the 16 chunks two at a time (15 chunks with two and one
    with one for 31 bits: the hardest case for the band keys, which must still find it)."""
    positions = [chunk * 16 + offset for offset in (0, 7) for chunk in range(16)][:bits]
    for position in positions:
        value ^= 1 << position
    return value


def image(value: int | None, *, quality: int | None = None, md5: str = "", name: str = "a") -> MediaInput:
    return MediaInput(kind="image", url=f"https://media.example/{name}.jpg", pdq=pdq_hex(value) if value else "",
                      md5=md5, quality=quality)


def with_media(base: FlagInput, *items: MediaInput) -> FlagInput:
    return replace(base, post=replace(base.post, media=tuple(items)))


def arrive(external_id: str, text: str, *items: MediaInput, page: str = "", politician: bool = False) -> IngestResult:
    """A flag of a post carrying these items, as the platform sends it."""
    [result] = ingest_flags(flags=[with_media(flag(external_id, text, page=page or f"page-{external_id}",
                                                   politician=politician), *items)])
    return result


def rate(target: Post, verdict: str, *, reviewer=None) -> None:
    RatingFactory(reviewer=reviewer or FactCheckerFactory(), post=target, verdict=verdict)


def pair(copy: str, source: str = "source") -> Match | None:
    return Match.objects.filter(post__external_id=copy, source__external_id=source).first()


@pytest.fixture
def checker(db):
    return FactCheckerFactory(organisation=OrganisationFactory(name="Full Fact"))


# Matched on arrival, by verdict ------------------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize(("verdict", "expected"), [
    (Verdict.ALTERED, MatchState.AUTO),
    (Verdict.FALSE, MatchState.SUGGESTED),
    (Verdict.PARTLY_FALSE, MatchState.SUGGESTED),
    (Verdict.MISSING_CONTEXT, MatchState.SUGGESTED),
    (Verdict.SATIRE, MatchState.SUGGESTED),
    (Verdict.TRUE, MatchState.SUGGESTED),
    (Verdict.NOT_ELIGIBLE, None),
])
def test_a_new_post_with_a_rated_posts_picture_is_linked_only_when_the_claim_is_altered(checker, verdict, expected):
    arrive("source", TEXTS[0], image(PICTURE))
    rate(post("source"), verdict, reviewer=checker)
    result = arrive("copy", TEXTS[1], image(flipped(PICTURE, 12), name="recropped"))

    match, copy = pair("copy"), post("copy")
    if expected is None:
        assert match is None and copy.queue_state == QueueState.QUEUED
        return
    assert (match.method, match.state, match.guard) == (MatchMethod.MEDIA, expected, "")
    assert match.score == round(1 - 12 / 256, 4)
    if expected == MatchState.AUTO:
        assert result.queue_state == copy.queue_state == QueueState.MATCHED
        assert copy.duplicate_of_id == post("source").pk
    else:
        assert result.queue_state == copy.queue_state == QueueState.QUEUED and copy.duplicate_of_id is None


@pytest.mark.django_db
def test_the_same_file_is_an_exact_match_whatever_its_perceptual_hash(checker):
    arrive("source", TEXTS[0], image(PICTURE, md5=MD5))
    rate(post("source"), Verdict.ALTERED, reviewer=checker)
    # A video of the same file (no PDQ at all), and an image whose PDQ is far off but whose bytes are the same.
    arrive("video", TEXTS[1], MediaInput(kind="video", url="https://media.example/v.mp4", md5=MD5))
    arrive("copy", TEXTS[2], image(OTHER_PICTURE, md5=MD5))
    for copy in ("video", "copy"):
        match = pair(copy)
        assert (match.method, match.state, match.score) == (MatchMethod.MEDIA, MatchState.AUTO, 1.0)
        assert post(copy).queue_state == QueueState.MATCHED


@pytest.mark.django_db
def test_a_picture_31_bits_away_matches_and_one_32_bits_away_does_not(checker):
    arrive("source", TEXTS[0], image(PICTURE))
    rate(post("source"), Verdict.ALTERED, reviewer=checker)
    arrive("at-31", TEXTS[1], image(flipped(PICTURE, 31)))
    arrive("at-32", TEXTS[2], image(flipped(PICTURE, 32)))
    assert pair("at-31").score == round(1 - 31 / 256, 4) and post("at-31").queue_state == QueueState.MATCHED
    assert pair("at-32") is None and post("at-32").queue_state == QueueState.QUEUED
    # The lookup itself, as the benchmark calls it: exactly what is within the distance, with its distance.
    found = find_similar([flipped(PICTURE, 31), flipped(PICTURE, 32)], rated_only=True)
    assert [(post_id, apart) for _, post_id, apart in found[flipped(PICTURE, 31)]] == [(post("source").pk, 31)]
    assert found[flipped(PICTURE, 32)] == []


@pytest.mark.django_db
def test_a_low_quality_hash_is_not_matched_on_either_side(checker):
    arrive("blurry-source", TEXTS[0], image(PICTURE, quality=30))
    arrive("source", TEXTS[1], image(OTHER_PICTURE, quality=90))
    for source in ("blurry-source", "source"):
        rate(post(source), Verdict.ALTERED, reviewer=checker)
    arrive("copy-of-blurry", TEXTS[2], image(PICTURE, quality=90))
    arrive("blurry-copy", TEXTS[3], image(OTHER_PICTURE, quality=49))
    assert not Match.objects.exists()
    assert set(Post.objects.filter(external_id__in=["copy-of-blurry", "blurry-copy"])
               .values_list("queue_state", flat=True)) == {QueueState.QUEUED}
    assert find_similar([PICTURE], rated_only=True)[PICTURE] == []  # never indexed


@pytest.mark.django_db
@pytest.mark.parametrize(("verdict", "text", "method", "state"), [
    # The text matches automatically: the text's judgement stands, whatever the verdict.
    (Verdict.FALSE, EXACT_COPY, MatchMethod.TEXT, MatchState.AUTO),
    # The text only reaches a suggestion: a suggestion, under the text rules...
    (Verdict.FALSE, COMMENTED_COPY, MatchMethod.MINHASH, MatchState.SUGGESTED),
    # ... unless the claim is altered: the picture itself is what was rated.
    (Verdict.ALTERED, COMMENTED_COPY, MatchMethod.MEDIA, MatchState.AUTO),
], ids=["text-auto", "text-suggested", "text-suggested-altered"])
def test_text_and_picture_both_matching_follow_the_text_rules(checker, verdict, text, method, state):
    arrive("source", CLAIM, image(PICTURE))
    rate(post("source"), verdict, reviewer=checker)
    arrive("copy", text, image(flipped(PICTURE, 4)))
    match = pair("copy")
    assert (match.method, match.state) == (method, state)
    assert Match.objects.filter(post=post("copy")).count() == 1


@pytest.mark.django_db
def test_the_platform_is_told_in_the_flags_answer_that_a_copy_of_an_altered_picture_is_matched(checker,
                                                                                                platform_client):
    arrive("source", TEXTS[0], image(PICTURE))
    rate(post("source"), Verdict.ALTERED, reviewer=checker)
    media = [{"kind": "image", "url": "https://media.example/shared.jpg", "pdq": pdq_hex(flipped(PICTURE, 9)),
              "quality": 100}]
    response = post_json(platform_client, "/api/v1/flags",
                         flag_payload(post={"external_id": "api-copy", "text": TEXTS[1], "media": media}))
    assert response.status_code == 201, response.content
    assert response.json()["results"][0]["queue_state"] == "matched"
    assert pair("api-copy").method == MatchMethod.MEDIA


@pytest.mark.django_db
def test_a_politicians_post_is_never_matched_by_its_picture(checker):
    arrive("before", TEXTS[1], image(PICTURE), page="minister", politician=True)
    arrive("source", TEXTS[0], image(PICTURE))
    rate(post("source"), Verdict.ALTERED, reviewer=checker)
    arrive("after", TEXTS[2], image(PICTURE), page="minister", politician=True)
    sweep_rated_media(post_ids=[post("source").pk])
    assert not Match.objects.exists()
    assert {post("before").duplicate_of_id, post("after").duplicate_of_id} == {None}


@pytest.mark.django_db
def test_a_claim_on_a_page_marked_a_politicians_since_its_rating_reaches_no_picture(checker):
    arrive("source", TEXTS[0], image(PICTURE), page="minister")
    rate(post("source"), Verdict.ALTERED, reviewer=checker)
    set_politician(staff=StaffFactory(), page_id=post("source").page_id, is_politician=True, reason="A minister.")
    assert post("source").queue_state == QueueState.RATED  # rated posts keep their rating
    arrive("copy", TEXTS[1], image(PICTURE))
    sweep_rated_media(post_ids=[post("source").pk])
    assert not Match.objects.exists() and post("copy").queue_state == QueueState.QUEUED


# Posts that arrived before the rating: the sweep -------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize(("verdict", "expected"), [(Verdict.ALTERED, MatchState.AUTO),
                                                   (Verdict.FALSE, MatchState.SUGGESTED)])
def test_the_sweep_reaches_older_posts_carrying_the_picture(checker, verdict, expected):
    arrive("near", TEXTS[1], image(flipped(PICTURE, 20)))
    arrive("same-file", TEXTS[2], image(OTHER_PICTURE, md5=MD5))
    arrive("unrelated", TEXTS[3], image(OTHER_PICTURE ^ (1 << 200) ^ ((1 << 64) - 1)))
    arrive("source", TEXTS[0], image(PICTURE, md5=MD5), image(None, md5="f" * 32, name="second"))
    source = post("source")
    rate(source, verdict, reviewer=checker)
    assert set(PostMedia.objects.filter(post=source).values_list("swept_at", flat=True)) == {None}

    result = sweep_rated_media(post_ids=[source.pk])

    for copy in ("near", "same-file"):
        match = pair(copy)
        assert match.source_id == source.pk > match.post_id  # the claim is newer than its copies
        assert (match.method, match.state) == (MatchMethod.MEDIA, expected)
        linked = expected == MatchState.AUTO
        assert post(copy).queue_state == (QueueState.MATCHED if linked else QueueState.QUEUED)
        assert post(copy).duplicate_of_id == (source.pk if linked else None)
    assert pair("unrelated") is None
    assert len(result.linked) + result.suggested == 2
    assert None not in set(PostMedia.objects.filter(post=source).values_list("swept_at", flat=True))
    # Run again (the reconciler, a retried job): nothing new.
    again = sweep_rated_media(post_ids=[source.pk])
    assert (again.linked, again.suggested) == ([], 0)
    assert Match.objects.count() == 2


@pytest.mark.django_db
def test_a_claim_re_rated_as_altered_leaves_its_earlier_suggestions_suggested(checker):
    arrive("source", TEXTS[0], image(PICTURE))
    rate(post("source"), Verdict.FALSE, reviewer=checker)
    arrive("copy", TEXTS[1], image(PICTURE))
    assert pair("copy").state == MatchState.SUGGESTED
    RatingFactory(reviewer=checker, post=post("source"), verdict=Verdict.ALTERED)
    sweep_rated_media(post_ids=[post("source").pk])
    assert pair("copy").state == MatchState.SUGGESTED and post("copy").duplicate_of_id is None
    # A post that arrives now is linked.
    arrive("later", TEXTS[2], image(PICTURE))
    assert pair("later").state == MatchState.AUTO


@WORKER
def test_posts_that_arrived_before_an_altered_rating_get_its_matched_rating_from_the_worker(run_worker,
                                                                                          platform_user):
    checker = FactCheckerFactory()
    for n, external_id in enumerate(["old-copy-1", "old-copy-2"], start=1):
        arrive(external_id, TEXTS[n], image(flipped(PICTURE, 5 * n), name=external_id))
    arrive("unrelated", TEXTS[3], image(OTHER_PICTURE))
    arrive("source", TEXTS[0], image(PICTURE))
    run_worker()
    rating = RatingFactory(reviewer=checker, post=post("source"), verdict=Verdict.ALTERED)
    run_worker()  # the claim's decision, the sweep (queue `copies`), then the copies' matched ratings

    for copy in ("old-copy-1", "old-copy-2"):
        assert (post(copy).queue_state, post(copy).duplicate_of_id) == (QueueState.MATCHED, post("source").pk)
        action = matched_action(post(copy))
        assert (action.rating_id, action.verdict) == (rating.pk, Verdict.ALTERED)
    assert matched_action(post("unrelated")) is None and post("unrelated").queue_state == QueueState.QUEUED
    assert None not in set(PostMedia.objects.filter(post=post("source")).values_list("swept_at", flat=True))


# Deciding a media suggestion ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_fact_checker_confirms_a_media_suggestion_and_the_copy_takes_the_rating(checker, login):
    arrive("copy", TEXTS[1], image(PICTURE))
    arrive("source", TEXTS[0], image(flipped(PICTURE, 3)))
    rate(post("source"), Verdict.FALSE, reviewer=checker)
    sweep_rated_media(post_ids=[post("source").pk])
    match = pair("copy")
    assert (match.method, match.state) == (MatchMethod.MEDIA, MatchState.SUGGESTED)

    client = login(checker)
    page = client.get(f"/queue/posts/{post('source').pk}/").content.decode()
    assert "Same or similar image" in page and f'action="/queue/matches/{match.pk}/confirm/"' in page
    response = client.post(f"/queue/matches/{match.pk}/confirm/")
    assert response.status_code == 302
    match.refresh_from_db()
    assert match.state == MatchState.CONFIRMED and match.decided_by == checker
    assert (post("copy").duplicate_of_id, post("copy").queue_state) == (post("source").pk, QueueState.MATCHED)


@pytest.mark.django_db
def test_a_rejected_media_suggestion_is_never_matched_again(checker, login):
    arrive("source", TEXTS[0], image(PICTURE))
    rate(post("source"), Verdict.FALSE, reviewer=checker)
    arrive("copy", TEXTS[1], image(PICTURE))
    match = pair("copy")
    response = login(checker).post(f"/queue/matches/{match.pk}/reject/", {"reason": "Same photo, other story."})
    assert response.status_code == 302
    match.refresh_from_db()
    assert (match.state, match.reason) == (MatchState.REJECTED, "Same photo, other story.")
    # Re-rated as altered and swept again: the pair stays rejected, and the copy stays in the queue.
    RatingFactory(reviewer=checker, post=post("source"), verdict=Verdict.ALTERED)
    sweep_rated_media(post_ids=[post("source").pk])
    assert list(Match.objects.values_list("state", flat=True)) == [MatchState.REJECTED]
    assert post("copy").queue_state == QueueState.QUEUED


@pytest.mark.django_db
def test_md5_lookups_find_every_post_or_rated_posts_only(checker):
    arrive("a", TEXTS[0], image(PICTURE, md5=MD5))
    arrive("b", TEXTS[1], image(OTHER_PICTURE, md5=MD5))
    rate(post("a"), Verdict.FALSE, reviewer=checker)
    everyone = {post_id for _, post_id in find_same_files([MD5], rated_only=False)[MD5]}
    rated = {post_id for _, post_id in find_same_files([MD5], rated_only=True)[MD5]}
    assert everyone == {post("a").pk, post("b").pk} and rated == {post("a").pk}


@pytest.mark.django_db
def test_a_batch_lookup_finds_exactly_what_a_scan_of_every_stored_hash_finds():
    """What the matcher looks up for a batch of posts (and the benchmark for one): every stored image within the
    distance, with its distance, and nothing else."""
    rng = random.Random(7)
    stored = [rng.getrandbits(256) for _ in range(30)]
    posts = PostFactory.create_batch(len(stored))
    media_ids = store_media({p.pk: [image(value)] for p, value in zip(posts, stored, strict=True)})
    queries = [flipped(stored[n % 30], rng.choice([0, 9, 16, 25, 31, 32, 40])) for n in range(40)]
    found = find_similar(queries, rated_only=False)
    for query in queries:
        scan = sorted((apart, media_id, p.pk) for media_id, p, value in zip(media_ids, posts, stored, strict=True)
                      if (apart := (query ^ value).bit_count()) <= 31)
        assert sorted((apart, media_id, post_id) for media_id, post_id, apart in found[query]) == scan
    assert sum(len(hits) for hits in found.values()) >= 20  # most queries were within the distance
