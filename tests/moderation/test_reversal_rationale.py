"""Issue 29, break 5: a reversed appeal's new rating publishes the fact-checker's own public rationale and
article; the note to the page owner stays on the owner's notice and timeline, never on the claim page or
in ClaimReview."""

from __future__ import annotations

import html
import json
import re
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from factcheck.members import organisation_of
from factcheck.models import Rating
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Appeal, AppealStatus, Notification, NotificationKind
from tests import scenarios
from tests.factories import FactCheckerFactory, UserFactory

pytestmark = pytest.mark.django_db

OWNER_NOTE = "We watched the full interview you linked, and you are right about the quote."
PUBLIC = "The full interview, broadcast on 3 May, shows the minister saying these words at 12:40."
OLD_ARTICLE = "https://factcheckers.example/articles/false-quote"
NEW_ARTICLE = "https://factcheckers.example/articles/quote-confirmed"


@pytest.fixture
def world(factchecker):
    owner = UserFactory(username="olga")
    post = scenarios.rated_post(rater=factchecker, owner=owner, text="The minister said: we will close the port.",
                                rating={"rationale": "No record of this quote exists.", "article_url": OLD_ARTICLE})
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Here is the whole interview.",
                         evidence_urls=["https://broadcaster.example/interview"])
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    return {"owner": owner, "post": post, "appeal": appeal, "colleague": colleague}


def decide_in_the_browser(login, world, **fields):
    data = {"outcome": "reversed", "new_verdict": "true", "reason": OWNER_NOTE, "public_rationale": PUBLIC,
            "article_url": NEW_ARTICLE, "version": world["appeal"].version, **fields}
    return login(world["colleague"]).post(f"/queue/appeals/{world['appeal'].pk}/", data)


def ld_json(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/ld\+json">(.*?)</script>', page, re.S).group(1))


def test_the_claim_page_and_its_claimreview_show_the_reversals_public_rationale_and_article(client, login, world):
    assert decide_in_the_browser(login, world).status_code == 302
    current = Rating.objects.get(post=world["post"], is_current=True)
    page = client.get(f"/claims/{current.pk}/").content.decode()
    text = html.unescape(page)
    assert PUBLIC in text and NEW_ARTICLE in text
    assert OWNER_NOTE not in text and "appeal reversed" not in text.lower() and OLD_ARTICLE not in text
    review = ld_json(page)
    assert review["reviewBody"] == PUBLIC
    assert review["url"] == NEW_ARTICLE
    assert review["reviewRating"]["alternateName"] == "True"


def test_the_api_and_the_export_publish_the_public_rationale_never_the_owner_note(platform_client, login, world):
    decide_in_the_browser(login, world)
    review = platform_client.get(f"/api/v1/posts/{world['post'].external_id}/claimreview").json()
    assert (review["reviewBody"], review["url"]) == (PUBLIC, NEW_ARTICLE)
    out = StringIO()
    call_command("export_claimreview", "--since", "2000-01-01", stdout=out, stderr=StringIO())
    assert PUBLIC in out.getvalue() and OWNER_NOTE not in out.getvalue()


def test_a_reversal_without_an_article_links_its_own_claim_page_not_the_old_article(client, login, world):
    decide_in_the_browser(login, world, article_url="")
    current = Rating.objects.get(post=world["post"], is_current=True)
    review = ld_json(client.get(f"/claims/{current.pk}/").content.decode())
    assert review["url"].endswith(f"/claims/{current.pk}/")
    assert OLD_ARTICLE not in json.dumps(review)


def test_the_owner_keeps_the_note_on_their_timeline_and_notice(login, world):
    decide_in_the_browser(login, world)
    notice = Notification.objects.get(user=world["owner"], kind=NotificationKind.APPEAL_DECIDED)
    assert OWNER_NOTE in notice.body
    page = html.unescape(login(world["owner"]).get(f"/appeals/posts/{world['post'].pk}/").content.decode())
    assert OWNER_NOTE in page


def test_a_reversal_without_a_public_rationale_is_refused_in_the_form_and_nothing_changes(login, world):
    response = decide_in_the_browser(login, world, public_rationale="  ")
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert "There is a problem" in page
    assert 'href="#id_public_rationale"' in page and "Give the public rationale of the new rating" in page
    assert Appeal.objects.get(pk=world["appeal"].pk).status == AppealStatus.OPEN
    assert Rating.objects.get(post=world["post"], is_current=True).verdict == "false"


def test_the_decision_form_asks_for_the_public_rationale_and_article_apart_from_the_note(login, world):
    page = login(world["colleague"]).get(f"/queue/appeals/{world['appeal'].pk}/").content.decode()
    for field_id in ("id_new_verdict", "id_public_rationale", "id_article_url", "id_reason"):
        assert f'<label for="{field_id}">' in page
    assert "It is not published." in html.unescape(page)


def test_the_domain_refuses_a_reversal_without_a_public_rationale_or_with_a_bad_article(world):
    for fields, field in (({"public_rationale": ""}, "public_rationale"),
                          ({"public_rationale": PUBLIC, "article_url": "javascript:alert(1)"}, "article_url")):
        with pytest.raises(ValidationError) as refused:
            decide_appeal(appeal_id=world["appeal"].pk, reviewer=world["colleague"], outcome="reversed",
                          reason=OWNER_NOTE, new_verdict="true", **fields)
        assert list(refused.value.message_dict) == [field]
    assert Appeal.objects.get(pk=world["appeal"].pk).status == AppealStatus.OPEN


def test_upholding_needs_no_public_rationale_and_publishes_nothing_new(world):
    decided = decide_appeal(appeal_id=world["appeal"].pk, reviewer=world["colleague"], outcome="upheld",
                            reason="The quote is still nowhere in the interview.", public_rationale="ignored")
    assert decided.status == AppealStatus.UPHELD and decided.new_rating is None
    assert Rating.objects.get(post=world["post"], is_current=True).rationale == "No record of this quote exists."
