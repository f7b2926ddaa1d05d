"""Which posts a post is compared with (factcheck.matching.candidates): the claims that share a band key, a URL or
a text with it, at most MAX_CANDIDATES_PER_POST of them and the oldest first; PostBand holds claims, not the copies
linked to them, which are found through their claim (a viral claim's copies would each be every later copy's
candidate)."""

from __future__ import annotations

import pytest

from factcheck.matching.candidates import MAX_CANDIDATES_PER_POST, candidates_for, index_bands, rows
from factcheck.matching.matcher import confirm_match, match_posts
from factcheck.models import Match, PostBand
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY, EXACT_COPY, NEAR_COPY, arrive, flag, post


def _band_holders(external_id: str) -> int:
    return PostBand.objects.filter(post=post(external_id)).count()


@pytest.mark.django_db
def test_a_claim_holds_its_band_keys_and_a_copy_linked_to_it_holds_none(platform_user):
    arrive(flag("first", CLAIM), flag("copy", NEAR_COPY, page="page-b"), flag("commented", COMMENTED_COPY,
           page="page-c"), by=platform_user)
    match_posts(post_ids=[post(name).pk for name in ("first", "copy", "commented")], rated_only=False)
    assert post("copy").duplicate_of_id == post("first").pk
    assert post("commented").duplicate_of_id is None  # only suggested: a claim of its own until confirmed
    assert (_band_holders("first"), _band_holders("copy"), _band_holders("commented")) == (12, 0, 12)

    # A later copy still finds the claim, through the claim's own keys.
    arrive(flag("later", EXACT_COPY, page="page-d"), by=platform_user)
    match_posts(post_ids=[post("later").pk], rated_only=False)
    assert post("later").duplicate_of_id == post("first").pk and _band_holders("later") == 0


@pytest.mark.django_db
def test_a_suggested_copy_confirmed_into_the_group_gives_up_its_band_keys(platform_user, factchecker):
    arrive(flag("first", CLAIM), flag("commented", COMMENTED_COPY, page="page-c"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("commented").pk], rated_only=False)
    confirm_match(match_id=Match.objects.get(post=post("commented")).pk, reviewer=factchecker)
    assert post("commented").duplicate_of_id == post("first").pk
    assert (_band_holders("first"), _band_holders("commented")) == (12, 0)


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
