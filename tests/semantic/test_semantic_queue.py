"""Issue 31: the queue counts semantic suggestions under their claim, so a claim retold many times in other words
(or other languages) is one row with its variants (factcheck.queue.folded_under_waiting_claim).

A queued post suggested (semantic) as a copy of a claim still waiting in the same queue is not listed on its own
nor taken by "Claim next"; the claim's row says "N variants" and its page lists them to confirm or reject. Once
the pair is confirmed (it joins the group), rejected (a row of its own again) or the claim is rated (it waits
again, with its suggestion to the rated claim), it is as any post.
"""

from __future__ import annotations

import html
import re

import pytest

from factcheck.models import Claim, ClaimStatus, MatchMethod, MatchState, Post, QueueState
from tests.factories import FactCheckerFactory, MatchFactory, OrganisationFactory, PostFactory, RatingFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def bilingual():
    """Covers English and German in the United Kingdom and Germany (claim_next looks language by language)."""
    return OrganisationFactory(name="Europe Checks", languages=["en", "de"], countries=["GB", "DE"])


@pytest.fixture
def checker(bilingual):
    return FactCheckerFactory(username="ana", organisation=bilingual)


@pytest.fixture
def claim() -> Post:
    return PostFactory(text="Chlorine on the skin kills the virus within minutes.", priority=20)


@pytest.fixture
def variants(claim) -> list[Post]:
    """Two later posts saying the claim in other words, each ranked above it, each suggested as its copy."""
    retold = [
        PostFactory(text="Rubbing chlorine onto your skin wipes out the virus in a few minutes.", priority=50),
        PostFactory(text="Chlor auf der Haut tötet das Virus in Minuten.", language="de", country="DE", priority=40),
    ]
    for post in retold:
        MatchFactory(post=post, source=claim, method=MatchMethod.SEMANTIC, score=0.86)
    return retold


def listed(client, **query) -> list[int]:
    """Post ids in the order the queue table shows them."""
    page = client.get("/queue/", query).content.decode()
    table = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in page else ""
    return [int(pk) for pk in re.findall(r'href="/queue/posts/(\d+)/" class="post-text"', table)]


def row_of(client, post: Post) -> str:
    """The queue row of `post`, as text."""
    page = client.get("/queue/").content.decode()
    rows = [row for row in page.split('<tr class="queue-row">')[1:] if f'href="/queue/posts/{post.pk}/"' in row]
    assert len(rows) == 1
    return html.unescape(re.sub(r"<[^>]+>", " ", rows[0].split("</tr>", 1)[0]))


def claim_next(client) -> int | None:
    """The post "Claim next" took, or None."""
    response = client.post("/queue/claim-next/")
    found = re.fullmatch(r"/queue/posts/(\d+)/", response["Location"])
    return int(found.group(1)) if found else None


def test_a_claim_retold_twice_is_one_row_with_its_two_variants(login, checker, claim, variants):
    other = PostFactory(text="An unrelated rumour about 5G masts.", priority=30)
    client = login(checker)

    assert listed(client) == [other.pk, claim.pk]
    assert "2 variants" in row_of(client, claim)
    # The total counts the rows listed: the variants wait under their claim's (factcheck.queue.queue_page).
    assert "1–2 of 2</strong> posts waiting" in html.unescape(client.get("/queue/").content.decode())
    assert "variant" not in row_of(client, other)
    # Their own pages say nothing of the fold; the claim's page lists both, each to confirm or reject.
    body = html.unescape(client.get(f"/queue/posts/{claim.pk}/").content.decode())
    for post in variants:
        pair = post.matches.get()
        assert f"/queue/matches/{pair.pk}/confirm/" in body and f"/queue/matches/{pair.pk}/reject/" in body
    assert body.count("Same claim in other words") == 2


def test_claim_next_takes_the_claim_and_never_its_variants(login, checker, claim, variants):
    client = login(checker)
    assert claim_next(client) == claim.pk
    # The claim is claimed now, still waiting: its variants wait with it, and nothing else is left.
    assert claim_next(client) is None
    assert set(Post.objects.filter(pk__in=[p.pk for p in variants]).values_list("queue_state", flat=True)) == {
        QueueState.QUEUED}
    assert not Claim.objects.filter(post__in=variants).exists()
    assert listed(client) == []


def test_a_rejected_variant_is_listed_again_and_a_confirmed_one_joins_the_group(login, checker, claim, variants):
    english, german = variants
    client = login(checker)
    client.post(f"/queue/matches/{english.matches.get().pk}/reject/", {"reason": "Another claim."})
    assert listed(client) == [english.pk, claim.pk]
    assert "1 variant" in row_of(client, claim) and "1 variants" not in row_of(client, claim)

    client.post(f"/queue/matches/{german.matches.get().pk}/confirm/")
    german.refresh_from_db()
    assert german.queue_state == QueueState.GROUPED
    assert listed(client) == [english.pk, claim.pk]
    row = row_of(client, claim)
    assert "1 copy" in row and "variant" not in row


def test_once_the_claim_is_rated_its_variants_wait_again_with_their_suggestion(login, checker, claim, variants):
    rating = RatingFactory(post=claim, reviewer=checker)
    client = login(checker)
    assert listed(client) == [p.pk for p in variants]
    # Each still carries its suggestion, now to a rated claim: confirming gives it the rating, named.
    body = html.unescape(client.get(f"/queue/posts/{variants[0].pk}/").content.decode())
    assert f"/queue/matches/{variants[0].matches.get().pk}/confirm/" in body
    assert f"takes “False” from {rating.organisation.name}'s rating of " in body
    assert claim_next(client) == variants[0].pk


def test_a_variant_is_folded_only_in_a_queue_that_lists_its_claim(login, checker, claim, variants):
    assert listed(login(checker)) == [claim.pk]
    german_only = FactCheckerFactory(organisation=OrganisationFactory(name="Correctiv", languages=["de"]))
    # Correctiv's queue has no English claim to fold the German post under: it is a row of its own there.
    client = login(german_only)
    assert listed(client) == [variants[1].pk]
    assert claim_next(client) == variants[1].pk


def test_only_pending_semantic_suggestions_to_an_older_waiting_claim_fold_a_post(login, checker, claim, variants):
    minhash = PostFactory(priority=50)
    MatchFactory(post=minhash, source=claim, method=MatchMethod.MINHASH)
    rejected = PostFactory(priority=49)
    MatchFactory(post=rejected, source=claim, method=MatchMethod.SEMANTIC, state=MatchState.REJECTED)
    removed_claim = PostFactory(queue_state=QueueState.REMOVED)
    under_removed = PostFactory(priority=48)
    MatchFactory(post=under_removed, source=removed_claim, method=MatchMethod.SEMANTIC)
    # Stored with the newer post as the source (never by matching): neither folds under the other.
    older, newer = PostFactory(priority=47), PostFactory(priority=46)
    MatchFactory(post=older, source=newer, method=MatchMethod.SEMANTIC)
    shown = listed(login(checker))
    assert shown == [minhash.pk, rejected.pk, under_removed.pk, older.pk, newer.pk, claim.pk]
    assert not set(shown) & {post.pk for post in variants}


def test_a_claimed_claims_variants_stay_folded_until_it_is_rated(login, checker, claim, variants):
    colleague = FactCheckerFactory(organisation=checker.membership.organisation)
    assert claim_next(login(colleague)) == claim.pk
    assert Claim.objects.get(post=claim).status == ClaimStatus.ACTIVE
    assert listed(login(checker)) == []
