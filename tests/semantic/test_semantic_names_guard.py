"""A retelling that names another person, place or body is another claim: its semantic suggestion carries the
`names` guard (factcheck.matching.semantic.semantic_guard), so the queue lists it on its own, with the warning on
the claim's page, instead of folding it under the claim it only resembles (factcheck.queue_fold). In German, which
capitalises every noun, capitals tell no names, and no pair is held as naming others.

The encoder is the real one; the cosines are written beside the texts, none of which shares enough words with its
claim for the lexical matcher (MinHash under 0.4), so each pair is the semantic step's.
"""

from __future__ import annotations

import html
import re

import pytest

from factcheck.matching.matcher import match_new_posts
from factcheck.models import Match, MatchMethod
from tests.factcheck.matching_helpers import arrive, flag, post
from tests.factories import FactCheckerFactory, OrganisationFactory

pytestmark = pytest.mark.django_db

CLAIM = ("The governor of Texas ordered the police to stop arresting shoplifters who steal goods worth less than a "
         "thousand dollars")
ELSEWHERE = ("Florida's governor told police officers to quit arresting shoplifters who take goods worth under a "
             "thousand dollars")  # 0.87
RETOLD = ("Texas's governor told police officers to quit arresting shoplifters who take goods worth under a thousand "
          "dollars")
# Names someone the claim leaves unnamed, as retellings do: not another claim for that (0.90).
NAMED = ("Texas governor Greg Abbott told police officers to quit arresting shoplifters who take goods worth under a "
         "thousand dollars")
GERMAN_CLAIM = "Der Chef von Pfizer gab im Fernsehen zu, dass der neue Impfstoff Kindern schadet"
GERMAN_RETOLD = "Im Fernsehen räumte der Pfizer-Chef ein, dass die neue Impfung den Kindern schadet"  # 0.82


@pytest.fixture(autouse=True)
def _semantic_on(settings):
    settings.FACTDESK_MATCHING = True
    settings.FACTDESK_SEMANTIC = True
    settings.FACTDESK_SEMANTIC_SUGGEST = 0.7


@pytest.fixture
def checker():
    organisation = OrganisationFactory(name="Europe Checks", languages=["en", "de"], countries=["GB"])
    return FactCheckerFactory(username="ana", organisation=organisation)


def claim_and_retelling(claim: str, retold: str, *, language: str = "en"):
    """The claim arrives and is matched, then the retelling (each flagged, in `language`, from Great Britain)."""
    for external_id, text in (("claim", claim), ("retold", retold)):
        arrive(flag(external_id, text, page=f"page-{external_id}", language=language))
        match_new_posts(post_ids=[post(external_id).pk])
    return post("claim"), post("retold")


def listed(client) -> list[int]:
    page = client.get("/queue/").content.decode()
    table = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in page else ""
    return [int(pk) for pk in re.findall(r'href="/queue/posts/(\d+)/" class="post-text"', table)]


def test_a_retelling_that_names_another_place_is_warned_of_and_listed_on_its_own(login, checker):
    claim, elsewhere = claim_and_retelling(CLAIM, ELSEWHERE)
    match = Match.objects.get(post=elsewhere)
    assert (match.source_id, match.method, match.state, match.guard) == (claim.pk, MatchMethod.SEMANTIC,
                                                                          "suggested", "names")
    client = login(checker)

    assert sorted(listed(client)) == sorted([claim.pk, elsewhere.pk])
    page = html.unescape(re.sub(r"<[^>]+>", "", client.get(f"/queue/posts/{claim.pk}/").content.decode()))
    assert "Warning: This copy names a person, place or body the claim does not." in page


@pytest.mark.parametrize("text", [RETOLD, NAMED], ids=["the-claims-place", "and-the-governors-name"])
def test_a_retelling_that_names_the_claims_place_folds_under_it(login, checker, text):
    claim, retold = claim_and_retelling(CLAIM, text)
    assert Match.objects.get(post=retold).guard == ""
    client = login(checker)

    assert listed(client) == [claim.pk]
    assert "1 variant" in html.unescape(client.get("/queue/").content.decode())


def test_capitalised_german_nouns_are_not_read_as_other_names(login, checker):
    """"Impfstoff" and "Impfung" are not two names: every German noun has a capital."""
    claim, retold = claim_and_retelling(GERMAN_CLAIM, GERMAN_RETOLD, language="de")
    match = Match.objects.get(post=retold)
    assert (match.source_id, match.method, match.guard) == (claim.pk, MatchMethod.SEMANTIC, "")

    assert listed(login(checker)) == [claim.pk]
