"""Which variants fold under a waiting claim, and which stay listed on their own (factcheck.queue
`folded_under_waiting_claim`): each case here is a way a post once vanished from every queue row (the hostile
review of issue 31's queue grouping)."""

from __future__ import annotations

import html
import re

import pytest

from factcheck.models import MatchMethod, MatchState, QueueState
from tests.factories import FactCheckerFactory, MatchFactory, OrganisationFactory, PostFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def checker():
    organisation = OrganisationFactory(name="Europe Checks", languages=["en", "de"], countries=["GB", "DE"])
    return FactCheckerFactory(username="ana", organisation=organisation)


def listed(client, **query) -> list[int]:
    page = client.get("/queue/", query).content.decode()
    table = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in page else ""
    return [int(pk) for pk in re.findall(r'href="/queue/posts/(\d+)/" class="post-text"', table)]


def claim_next(client, **data) -> int | None:
    response = client.post("/queue/claim-next/", data)
    found = re.fullmatch(r"/queue/posts/(\d+)/", response["Location"])
    return int(found.group(1)) if found else None


def semantic(post, source, **fields):
    return MatchFactory(post=post, source=source, method=MatchMethod.SEMANTIC, score=fields.pop("score", 0.86),
                        **fields)


def test_an_unguarded_variant_folds_and_a_guarded_one_is_listed_on_its_own(login, checker):
    """A copy that negates the claim (or changes its numbers) may be another claim: it is listed, and taken by
    Claim next, on its own; the plain retelling folds under its claim."""
    claim = PostFactory(text="Eating two cloves of raw garlic a day protects you from the flu, doctors now admit.")
    retold = PostFactory(text="Two cloves of raw garlic daily will protect you from influenza, doctors say.")
    negated = PostFactory(text="Eating two cloves of raw garlic a day does not protect you from the flu.",
                          priority=80)
    numbers = PostFactory(text="Eating nine cloves of raw garlic a day protects you from the flu, doctors admit.")
    semantic(retold, claim)
    semantic(negated, claim, guard="polarity")
    semantic(numbers, claim, guard="numbers")
    client = login(checker)

    assert sorted(listed(client)) == sorted([claim.pk, negated.pk, numbers.pk])
    assert claim_next(client) == negated.pk


def test_a_variant_of_a_variant_is_listed_on_its_own(login, checker):
    """A <- B <- C: B folds under A; C, a variant of the folded B, is listed rather than waiting under a row
    nobody sees."""
    a = PostFactory(text="Chlorine on the skin kills the virus.")
    b = PostFactory(text="Rubbing chlorine onto skin wipes out the virus.")
    c = PostFactory(text="Bleach on your arms destroys the virus.")
    semantic(b, a, score=0.9)
    semantic(c, b, score=0.8)

    assert sorted(listed(login(checker))) == sorted([a.pk, c.pk])


def test_a_post_with_copies_of_its_own_is_never_folded(login, checker):
    """B leads a group of word-for-word copies: it is reviewed from its own row with them, not hidden under A
    (whose page could neither confirm nor reject it while B has copies)."""
    a = PostFactory(text="Chlorine on the skin kills the virus.", priority=5)
    b = PostFactory(text="Chlor auf der Haut tötet das Virus.", language="de", country="DE", priority=90)
    for _ in range(3):
        PostFactory(queue_state=QueueState.GROUPED, duplicate_of=b, views=1_000_000)
    semantic(b, a, score=0.9)
    client = login(checker)

    assert b.pk in listed(client)
    assert claim_next(client) == b.pk


def test_a_filter_or_a_search_lists_every_post_that_meets_it(login, checker):
    """The fold is the plain queue's: a reviewer filtering German posts, or searching a post's words or id, is
    given that post, though its English claim is filtered out; Claim next with the filter takes it."""
    claim = PostFactory(text="Chlorine on the skin kills the virus within minutes.", language="en")
    variant = PostFactory(text="Chlor auf der Haut tötet das Virus in Minuten.", language="de", country="DE")
    semantic(variant, claim)
    client = login(checker)

    assert listed(client) == [claim.pk]
    assert listed(client, language="de") == [variant.pk]
    assert listed(client, q="Chlor Haut") == [variant.pk]
    assert listed(client, q=variant.external_id) == [variant.pk]
    assert claim_next(client, language="de") == variant.pk


def test_the_claims_page_lists_its_variants_before_a_hundred_automatic_copies(login, checker):
    """A claim with 100 automatic copies (score 1.0): its waiting variant is on its page, to confirm or reject."""
    claim = PostFactory(text="Chlorine on the skin kills the virus.")
    for _ in range(100):
        copy = PostFactory(queue_state=QueueState.GROUPED, duplicate_of=claim)
        MatchFactory(post=copy, source=claim, method=MatchMethod.MINHASH, score=1.0, state=MatchState.AUTO)
    variant = PostFactory(text="Chlor auf der Haut tötet das Virus.", language="de", country="DE")
    pair = semantic(variant, claim)
    client = login(checker)

    assert variant.pk not in listed(client)
    assert "1 variant" in html.unescape(client.get("/queue/").content.decode())
    page = client.get(f"/queue/posts/{claim.pk}/").content.decode()
    assert f"/queue/matches/{pair.pk}/confirm/" in page and f"/queue/matches/{pair.pk}/reject/" in page
