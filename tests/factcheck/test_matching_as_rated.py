"""A copy is matched to a rated claim by the words its rating rated (Rating.rated_text, rated_url), not by what the
platform sent for the rated post since (factcheck.matching.as_rated).

The platform may send a flag for a rated post with edited text or another link: the post takes them
(factcheck.ingest), but the rating is of the words the fact-checker read. A new post carrying the new words must not
inherit that rating (nor be offered as its copy), and an exact or near copy of the words that were rated still
must, on arrival and by the reconciler's matching alike. A new rating of the post is of its words then: from then on
those are the claim's.
"""

from __future__ import annotations

import pytest

from factcheck.matching.matcher import match_new_posts, match_unmatched
from factcheck.matching.semantic_backfill import embed_missed_posts
from factcheck.models import Match, Post, QueueState
from factcheck.models_bands import RatedBand
from tests import scenarios
from tests.api.helpers import flag_payload, post_json
from tests.conftest import bearer_client
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, NEAR_COPY, queue_ids
from tests.factories import FactCheckerFactory, PlatformUserFactory, RatingFactory

pytestmark = pytest.mark.django_db

RATED_URL = "https://social.example/posts/lemon-water"
# What the page owner edited the rated post into: another claim altogether.
NEW_WORDS = ("The city council secretly sold every public library in the county to a private developer for one "
             "dollar last week")
NEW_URL = "https://social.example/posts/libraries"
# Copies of the new words: the same text in capitals (method text), and with a typo, a "BREAKING:" and a hashtag
# (minhash, about 0.87).
NEW_WORDS_EXACT = NEW_WORDS.upper() + "!!"
NEW_WORDS_NEAR = ("BREAKING: The city councl secretly sold every public library in the county to a private developer "
                  "for one dollar last week #share")
COPIES = {  # path: (a copy of the words rated, a copy of the words sent later)
    "text": (EXACT_COPY, NEW_WORDS_EXACT),
    "minhash": (NEAR_COPY, NEW_WORDS_NEAR),
}


def send(external_id: str, text: str, *, url: str = "", page: str = "page-copy", key: str = "",
         language: str = "en") -> Post:
    """The platform flags a post through POST /api/v1/flags."""
    body = flag_payload(idempotency_key=key or f"flag-{external_id}-{len(text)}", post={
        "external_id": external_id, "text": text, "url": url or f"https://social.example/posts/{external_id}",
        "language": language, "country": "GB",
    }, page={"external_id": page, "name": f"Page {page}"})
    response = post_json(bearer_client(PlatformUserFactory()), "/api/v1/flags", body)
    assert response.status_code in (200, 201), response.content
    return Post.objects.get(external_id=external_id)


@pytest.fixture
def rater():
    return FactCheckerFactory()


@pytest.fixture
def edited(rater) -> Post:
    """A claim rated False, then flagged again by the platform with its page owner's edit: other words, another
    link."""
    claim = scenarios.rated_claim(rater=rater, text=CLAIM, url=RATED_URL)
    send("source", NEW_WORDS, url=NEW_URL, page="page-source", key="sent-again")
    claim.refresh_from_db()
    assert (claim.text, claim.url, claim.queue_state) == (NEW_WORDS, NEW_URL, QueueState.RATED)
    return claim


def inherits(copy: Post, claim: Post, *, method: str) -> bool:
    copy.refresh_from_db()
    match = Match.objects.filter(post=copy, source=claim).first()
    return (copy.queue_state == QueueState.MATCHED and copy.duplicate_of_id == claim.pk and copy.pk not in queue_ids()
            and match is not None and (match.method, match.state) == (method, "auto"))


def stands_alone(copy: Post, claim: Post) -> bool:
    """Not matched, nor suggested, to the claim: queued for a review of its own."""
    copy.refresh_from_db()
    return (copy.queue_state == QueueState.QUEUED and copy.duplicate_of_id is None and copy.pk in queue_ids()
            and not Match.objects.filter(post=copy, source=claim).exists())


@pytest.mark.parametrize("path", COPIES)
def test_on_arrival_a_copy_of_the_rated_words_inherits_the_rating_and_a_copy_of_the_edit_does_not(edited, path):
    of_rated, of_edit = COPIES[path]
    rated_copy = send("copy-of-rated", of_rated)
    edit_copy = send("copy-of-edit", of_edit)
    assert inherits(rated_copy, edited, method=path)
    assert stands_alone(edit_copy, edited)


@pytest.mark.parametrize("path", COPIES)
def test_the_reconcilers_matching_also_goes_by_the_rated_words(edited, path, settings):
    """Flags that arrived while matching was off are matched by the reconciler, against every post: the rated claim
    is compared as it was rated there too."""
    of_rated, of_edit = COPIES[path]
    settings.FACTDESK_MATCHING = False
    rated_copy, edit_copy = send("copy-of-rated", of_rated), send("copy-of-edit", of_edit)
    settings.FACTDESK_MATCHING = True
    match_unmatched()
    assert inherits(rated_copy, edited, method=path)
    assert stands_alone(edit_copy, edited)


def test_a_post_of_the_rated_link_inherits_the_rating_and_one_of_the_new_link_does_not(edited):
    rated_link = send("on-rated-link", "Look what they are saying about this one", url=RATED_URL + "?utm_source=x")
    new_link = send("on-new-link", "Look what they are saying about this one", url=NEW_URL)
    assert inherits(rated_link, edited, method="url")
    assert stands_alone(new_link, edited)


def test_a_new_rating_of_the_edited_post_makes_the_new_words_the_claims(edited, rater):
    before = send("edit-before", NEW_WORDS_NEAR)
    assert stands_alone(before, edited)

    RatingFactory(post=edited, reviewer=FactCheckerFactory(organisation=rater.membership.organisation),
                  verdict="partly_false", change_reason="The post now makes another claim.")
    after = send("edit-after", NEW_WORDS_NEAR)
    old_words = send("old-words-after", NEAR_COPY)
    assert inherits(after, edited, method="minhash")
    assert stands_alone(old_words, edited)
    # The claim's band keys are its new words' alone: a copy of the old words no longer even finds it.
    edited_keys = {row.band for row in RatedBand.objects.filter(post=edited)}
    assert edited_keys and not edited_keys & set(map(int, old_words.signature.split()))


# The rated claim and the edit in French (cosines 0.86 and 0.81 with the English, 0.10 to 0.16 across): lexically
# nothing alike, so only the semantic matcher pairs them.
RATED_IN_FRENCH = ("Des scientifiques confirment que boire de l'eau chaude citronnée pendant 5 minutes chaque matin "
                   "guérit le diabète de type 2 en trois semaines")
EDIT_IN_FRENCH = ("Le conseil municipal a secrètement vendu toutes les bibliothèques publiques du comté à un "
                  "promoteur privé pour un dollar la semaine dernière")


def test_a_rated_claim_embedded_after_its_edit_is_embedded_as_rated(rater, settings):
    """The semantic reconciler embeds a claim rated while semantic matching was off, after the platform sent its
    edit: from the words rated, so that their retelling is suggested under the rating and the edit's is not."""
    settings.FACTDESK_SEMANTIC, settings.FACTDESK_SEMANTIC_SUGGEST = False, 0.7
    claim = scenarios.rated_claim(rater=rater, text=CLAIM, url=RATED_URL)
    send("source", NEW_WORDS, url=NEW_URL, page="page-source", key="sent-again")
    settings.FACTDESK_SEMANTIC = True
    assert embed_missed_posts() == 1

    rated_retold, edit_retold = (send("rated-fr", RATED_IN_FRENCH, language="fr"),
                                 send("edit-fr", EDIT_IN_FRENCH, language="fr"))
    match_new_posts(post_ids=[rated_retold.pk, edit_retold.pk])
    suggested = Match.objects.get(post=rated_retold, source=claim)
    assert (suggested.method, suggested.state, suggested.guard) == ("semantic", "suggested", "")
    assert not Match.objects.filter(post=edit_retold, source=claim).exists()
