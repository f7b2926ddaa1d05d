"""The rating form's failed save and what follows a saved one (issue 29, breaks 3 and 7): a failed save opens
with the appeal forms' error summary at the top of the form, linking to each field; a saved rating is followed
by links to the post, its public page and its open copy suggestions, on the queue with its "Claim next"."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.utils import timezone

from factcheck.claims import claim_post
from factcheck.models import Match, MatchMethod, MatchState, Rating, Verdict
from tests.factories import FactCheckerFactory, PostFactory

pytestmark = pytest.mark.django_db

GOOD = {
    "verdict": Verdict.FALSE,
    "rationale": "The quoted study does not exist; the journal has no such issue.",
    "sources": "https://journal.example/archive",
    "replaces": "",
}


def summary_of(html: str) -> str:
    match = re.search(r'<div class="error-summary"[^>]*>(.*?)</div>', html, re.S)
    assert match, "no error summary on the page"
    return match.group(0)


def test_a_failed_save_opens_with_an_error_summary_linking_to_each_field(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", {**GOOD, "verdict": "", "rationale": " ",
                                                                    "sources": "ftp://x.example/a"})
    assert response.status_code == 200
    html = html_lib.unescape(response.content.decode())
    summary = summary_of(html)
    assert "There is a problem" in summary
    # Focus goes to it (autofocus, and appeals.js), so the page is not left at its top with focus on the body.
    assert 'tabindex="-1" autofocus data-error-summary' in summary and 'role="alert"' in summary
    assert '<a href="#id_verdict_0">Choose a verdict.</a>' in summary
    assert '<a href="#id_rationale">A rationale is required.</a>' in summary
    assert '<a href="#id_sources">Not an http:// or https:// URL: ftp://x.example/a</a>' in summary
    # At the top of the rating form, before its first field; each field in error says so to screen readers.
    form = html[html.index('<form method="post" action="/queue/posts/'):]
    assert form.index("error-summary") < form.index('name="verdict"')
    assert 'aria-invalid="true"' in html and 'aria-describedby="id_rationale_helptext id_rationale_error"' in html
    assert 'id="id_rationale_error"' in html
    assert not unknown_references(html)
    assert not Rating.objects.exists()


def unknown_references(html: str) -> set[str]:
    """Ids that an aria-describedby or aria-labelledby names and no element of the page has: a screen reader
    reads nothing for them (the rating form's help texts, "One http:// or https:// URL per line", were such)."""
    named = {name for refs in re.findall(r'aria-(?:describedby|labelledby)="([^"]*)"', html) for name in refs.split()}
    return named - set(re.findall(r'\sid="([^"]+)"', html))


def test_every_field_of_the_rating_form_is_described_by_its_help_text(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    html = html_lib.unescape(login(factchecker).get(f"/queue/posts/{post.pk}/").content.decode())
    assert 'aria-describedby="id_sources_helptext"' in html
    assert 'id="id_sources_helptext">One http:// or https:// URL per line' in html
    assert not unknown_references(html)


def test_a_refused_save_is_in_the_error_summary_with_what_was_typed(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=FactCheckerFactory(username="amira"), post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", GOOD)
    assert response.status_code == 409
    html = html_lib.unescape(response.content.decode())
    assert "Not saved: amira holds this post until" in summary_of(html)
    assert GOOD["rationale"] in html


def test_the_page_without_errors_has_no_summary(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    assert "error-summary" not in login(factchecker).get(f"/queue/posts/{post.pk}/").content.decode()


def test_after_saving_the_reviewer_gets_links_to_the_post_its_public_page_its_suggestions_and_claim_next(
    login, factchecker,
):
    post = PostFactory(external_id="post-lemon")
    now = timezone.now()
    for _ in range(2):  # open suggestions both ways round
        Match.objects.create(post=PostFactory(), source=post, method=MatchMethod.MINHASH, score=0.6,
                             state=MatchState.SUGGESTED, created_at=now)
    Match.objects.create(post=post, source=PostFactory(), method=MatchMethod.MINHASH, score=0.6,
                         state=MatchState.SUGGESTED, created_at=now)
    Match.objects.create(post=PostFactory(), source=post, method=MatchMethod.MINHASH, score=0.6,
                         state=MatchState.REJECTED, created_at=now)
    claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    response = client.post(f"/queue/posts/{post.pk}/", GOOD, follow=True)
    rating = Rating.objects.get()
    html = html_lib.unescape(response.content.decode())
    assert "Rating saved: “<bdi>post-lemon</bdi>” rated False." in html
    assert f'<a href="/queue/posts/{post.pk}/">Open the rated post</a>' in html
    assert f'<a href="/claims/{rating.pk}/">Its public page</a>' in html
    assert f'<a href="/queue/posts/{post.pk}/#copies-title">3 open copy suggestions to decide</a>' in html
    assert 'action="/queue/claim-next/"' in html  # "Claim next": the queue's, where the message is shown
    assert response.redirect_chain[-1][0] == "/queue/"
    assert client.get(f"/claims/{rating.pk}/").status_code == 200  # the public page exists


def test_a_not_eligible_rating_has_no_public_page_to_link(login, factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/", {**GOOD, "verdict": Verdict.NOT_ELIGIBLE},
                                       follow=True)
    html = html_lib.unescape(response.content.decode())
    assert "Rating saved:" in html and "Its public page" not in html
    assert "No open copy suggestions" in html
