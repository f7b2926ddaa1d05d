"""Which posts a post is compared with (factcheck.matching.candidates): the claims that share a band key, a URL or
a text with it, at most MAX_CANDIDATES_PER_POST of them and the oldest first. PostBand files each post's keys under
its claim: a copy's under its group's first post, never under the copy (a viral claim's copies would each be every
later copy's candidate), so a post close to any copy still finds the claim."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from factcheck.matching.candidates import MAX_CANDIDATES_PER_POST, candidates_for, index_bands, rows
from factcheck.matching.leaving import unlink_copy
from factcheck.matching.matcher import confirm_match, match_new_posts, match_posts, regroup_rated
from factcheck.models import Match, Post, QueueState
from factcheck.models_bands import PostBand, RatedBand
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY, EXACT_COPY, NEAR_COPY, arrive, flag, post
from tests.factories import RatingFactory


def _keys_held(external_id: str) -> set[int]:
    return set(PostBand.objects.filter(post=post(external_id)).values_list("band", flat=True))


def _keys_rated(external_id: str) -> set[int]:
    return set(RatedBand.objects.filter(post=post(external_id)).values_list("band", flat=True))


def _own_keys(*external_ids: str) -> set[int]:
    return {key for row in rows(post(name).pk for name in external_ids) for key in row.keys}


@pytest.mark.django_db
def test_a_claim_holds_its_own_and_its_copies_band_keys_and_a_copy_holds_none(platform_user):
    arrive(flag("first", CLAIM), flag("copy", NEAR_COPY, page="page-b"), flag("commented", COMMENTED_COPY,
           page="page-c"), by=platform_user)
    match_posts(post_ids=[post(name).pk for name in ("first", "copy", "commented")], rated_only=False)
    assert post("copy").duplicate_of_id == post("first").pk
    assert post("commented").duplicate_of_id is None  # only suggested: a claim of its own until confirmed
    assert _own_keys("copy") - _own_keys("first")  # the copy has keys of its own, which the claim now holds too
    assert (_keys_held("first"), _keys_held("copy")) == (_own_keys("first", "copy"), set())
    assert _keys_held("commented") == _own_keys("commented")

    arrive(flag("later", EXACT_COPY, page="page-d"), by=platform_user)
    match_posts(post_ids=[post("later").pk], rated_only=False)
    assert post("later").duplicate_of_id == post("first").pk and _keys_held("later") == set()


@pytest.mark.django_db
def test_a_suggested_copy_confirmed_into_the_group_gives_its_band_keys_to_the_claim(platform_user, factchecker):
    arrive(flag("first", CLAIM), flag("commented", COMMENTED_COPY, page="page-c"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("commented").pk], rated_only=False)
    confirm_match(match_id=Match.objects.get(post=post("commented")).pk, reviewer=factchecker)
    assert post("commented").duplicate_of_id == post("first").pk
    assert (_keys_held("first"), _keys_held("commented")) == (_own_keys("first", "commented"), set())



@pytest.mark.django_db
def test_a_suggested_copy_confirmed_under_a_rated_claim_gives_the_claim_its_keys_for_arrivals(
        platform_user, factchecker):
    arrive(flag("first", CLAIM), by=platform_user)
    RatingFactory(reviewer=factchecker, post=post("first"))
    arrive(flag("commented", COMMENTED_COPY, page="page-c"), by=platform_user)  # suggested on arrival
    confirm_match(match_id=Match.objects.get(post=post("commented")).pk, reviewer=factchecker)
    assert post("commented").queue_state == QueueState.MATCHED
    assert _own_keys("commented") <= _keys_rated("first")


@pytest.mark.django_db
def test_a_copy_unlinked_by_an_appeal_holds_its_band_keys_again_at_once(platform_user, factchecker):
    arrive(flag("first", CLAIM), flag("copy", NEAR_COPY, page="page-b"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("copy").pk], rated_only=False)
    unlink_copy(post=post("copy"), actor=factchecker, reason="not the same claim", now=timezone.now())
    assert _keys_held("copy") == _own_keys("copy")  # before the reconciler matches it again


@pytest.mark.django_db
def test_a_key_held_by_more_claims_than_a_post_may_have_gives_its_oldest(platform_user):
    # Boilerplate shared by many claims: each key's oldest holders are read, and a post keeps at most the cap.
    count = MAX_CANDIDATES_PER_POST + 30
    arrive(*(flag(f"claim-{n}", CLAIM, page=f"page-{n}") for n in range(count)), by=platform_user)
    claims = rows(post(f"claim-{n}").pk for n in range(count))
    index_bands(claims)
    arrive(flag("new", CLAIM, page="page-new"), by=platform_user)
    [new] = rows([post("new").pk])

    found = candidates_for([new], rated_only=False)[new.id]
    assert [row.id for row in found] == sorted(row.id for row in claims)[:MAX_CANDIDATES_PER_POST]


# A copy of the claim with a typo and a comment (auto-linked), and that copy with one more typo: it shares no band
# key with the claim, only with the copy, yet scores above the automatic threshold against the claim. The typo strikes
# the key beside (factcheck.matching.spelling forgives no other letter changed inside a word of five).
TYPO_COPY = ("Scientists confirm that drinking hot lwmon water for 5 minutes every morning cures type 2 diabetes "
             "within three weeks my aunt tried it and it worked")
TYPO_OF_TYPO_COPY = TYPO_COPY.replace("morning", "mornicg")


@pytest.mark.django_db
def test_a_copy_of_a_copy_finds_the_claim_through_the_keys_its_group_holds(platform_user):
    arrive(flag("first", CLAIM), flag("copy", TYPO_COPY, page="page-b"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("copy").pk], rated_only=False)
    assert post("copy").duplicate_of_id == post("first").pk
    arrive(flag("later", TYPO_OF_TYPO_COPY, page="page-c"), by=platform_user)
    assert not _own_keys("first") & _own_keys("later")

    match_posts(post_ids=[post("later").pk], rated_only=False)
    assert post("later").duplicate_of_id == post("first").pk
    assert Match.objects.get(post=post("later")).source_id == post("first").pk  # judged against the claim itself



@pytest.mark.django_db
def test_a_copy_of_a_copy_of_a_claim_rated_since_is_linked_on_arrival(platform_user, factchecker):
    # RatedBand holds every key of a rated claim's group, as PostBand does: the copy of a copy that shares no key
    # with the claim itself is matched to it inside its own ingest batch, and never enters the queue.
    arrive(flag("first", CLAIM), flag("copy", TYPO_COPY, page="page-b"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("copy").pk], rated_only=False)
    RatingFactory(reviewer=factchecker, post=post("first"))
    assert _own_keys("copy") - _own_keys("first") <= _keys_rated("first")

    arrive(flag("later", TYPO_OF_TYPO_COPY, page="page-c"), by=platform_user)
    assert (post("later").queue_state, post("later").duplicate_of_id) == (QueueState.MATCHED, post("first").pk)


@pytest.mark.django_db
def test_a_copy_linked_to_a_rated_claim_by_its_match_job_gives_the_claim_its_keys_for_arrivals(
        platform_user, factchecker):
    arrive(flag("first", CLAIM), by=platform_user)
    match_posts(post_ids=[post("first").pk], rated_only=False)
    RatingFactory(reviewer=factchecker, post=post("first"))
    arrive(flag("copy", TYPO_COPY, page="page-b"), by=platform_user)  # linked on arrival to the rated claim
    match_new_posts(post_ids=[post("copy").pk])  # its match job, after the batch commits
    assert post("copy").duplicate_of_id == post("first").pk
    assert _own_keys("first", "copy") == _keys_rated("first") and _keys_rated("copy") == set()

    arrive(flag("later", TYPO_OF_TYPO_COPY, page="page-c"), by=platform_user)
    assert (post("later").queue_state, post("later").duplicate_of_id) == (QueueState.MATCHED, post("first").pk)


@pytest.mark.django_db
@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_text_copied_more_times_than_a_post_may_have_candidates_is_read_only_to_the_cap(platform_user):
    """Copypasta: the posts sharing a new post's text are read oldest first from (text_key, id), and the read stops
    at the cap; on the key alone every copy was read and sorted, in every match job, growing with the copies."""
    count = MAX_CANDIDATES_PER_POST + 30
    arrive(*(flag(f"copy-{n}", CLAIM, page=f"page-{n}") for n in range(count)), by=platform_user)
    arrive(flag("new", CLAIM, page="page-new"), by=platform_user)
    [new] = rows([post("new").pk])
    with CaptureQueriesContext(connection) as captured:
        found = candidates_for([new], rated_only=False)[new.id]
    assert [row.id for row in found] == sorted(post(f"copy-{n}").pk for n in range(count))[:MAX_CANDIDATES_PER_POST]

    [sharing] = [q["sql"] for q in captured.captured_queries if "text_key = key" in q["sql"]]
    with connection.cursor() as cursor:
        # The test's table is small: without these the planner could read it whole, whatever the indexes.
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sharing}")
        plan = cursor.fetchone()[0]
    nodes = list(_nodes(plan[0]["Plan"]))
    by_text = [n for n in nodes if n.get("Index Name") == "post_text_key"]
    assert by_text and all(n["Actual Rows"] <= MAX_CANDIDATES_PER_POST for n in by_text)
    assert not [n for n in nodes if n["Node Type"] == "Sort"]


def _nodes(node: dict):
    yield node
    for child in node.get("Plans", ()):
        yield from _nodes(child)


@pytest.mark.django_db
def test_the_migration_gives_claims_rated_before_it_their_groups_keys(platform_user, factchecker):
    arrive(flag("first", CLAIM), flag("copy", TYPO_COPY, page="page-b"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("copy").pk], rated_only=False)
    RatingFactory(reviewer=factchecker, post=post("first"))
    # As a claim rated before it stood: RatedBand held the claim's own keys only.
    RatedBand.objects.filter(post=post("first")).exclude(band__in=_own_keys("first")).delete()
    assert _keys_rated("first") == _own_keys("first")

    migration = import_module("factcheck.migrations.0029_rated_claims_hold_their_groups_keys").Migration
    with connection.cursor() as cursor:
        for sql in migration.operations[0].sql:
            cursor.execute(sql)
    assert _keys_rated("first") == _keys_held("first") == _own_keys("first", "copy")


@pytest.mark.django_db
def test_a_copy_left_grouped_under_a_claim_rated_meanwhile_gives_it_its_keys_when_regrouped(platform_user):
    arrive(flag("first", CLAIM), flag("copy", TYPO_COPY, page="page-b"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("copy").pk], rated_only=False)
    assert post("copy").queue_state == QueueState.GROUPED
    # The claim rated while the copy's job ran: neither saw the other, so the copy stayed grouped.
    Post.objects.filter(pk=post("first").pk).update(queue_state=QueueState.RATED)
    assert regroup_rated().count == 1
    assert post("copy").queue_state == QueueState.MATCHED
    assert _own_keys("copy") <= _keys_rated("first")
