"""Suggested copies in the browser: the post page lists a post's near-duplicate pairs, and a
fact-checker confirms or rejects a suggestion there (PRODUCT.md, Near-duplicates).

Each decision is shown as the reviewer sees it (the message on the page they return to) and as it
is recorded (the Match, the copy's group and queue state, the audit event); each refusal writes
nothing.
"""

from __future__ import annotations

import html
import re

import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.matching.matcher import match_posts
from factcheck.models import Match, MatchGuard, MatchMethod, MatchState, Post, QueueState, Rating
from moderation.models import Action, ActionKind

# The claim, and the claim with a long comment of the reposter's: text between the two thresholds.
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    MatchFactory,
    OrganisationFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

MATCH_EVENTS = (AuditVerb.MATCH_CONFIRMED, AuditVerb.MATCH_REJECTED, AuditVerb.MATCH_UNLINKED)


# Helpers


def text(response) -> str:
    """The page as a reader sees it (entities such as &#x27; unescaped)."""
    return html.unescape(response.content.decode())


def messages_of(response) -> str:
    found = re.search(r'<ul class="messages".*?</ul>', response.content.decode(), re.S)
    return html.unescape(found.group(0)) if found else ""


def confirm(client, match: Match, **data):
    return client.post(f"/queue/matches/{match.pk}/confirm/", data)


def reject(client, match: Match, **data):
    return client.post(f"/queue/matches/{match.pk}/reject/", data)


def state_of(match: Match, copy: Post) -> dict:
    """Everything a refused decision might have changed."""
    match.refresh_from_db()
    copy.refresh_from_db()
    return {
        "match": (match.state, match.decided_by_id, match.decided_at, match.reason),
        "copy": (copy.duplicate_of_id, copy.queue_state),
        "events": AuditEvent.objects.filter(verb__in=MATCH_EVENTS).count(),
        "actions": Action.objects.filter(post=copy).count(),
    }


@pytest.fixture
def verifica():
    return OrganisationFactory(name="Verifica")


@pytest.fixture
def reviewer(verifica):
    return FactCheckerFactory(username="maria", organisation=verifica)


@pytest.fixture
def claim(reviewer) -> Post:
    """The first post of a claim, rated False by Verifica."""
    post = PostFactory(text=CLAIM, page=PageFactory(name="Health Truths Daily"), views=40_000, shares=2_000)
    DecisionFactory(reviewer=reviewer, post=post)
    return post


@pytest.fixture
def copy(claim) -> Post:
    """A later post, still in the queue, suggested as a copy of the claim."""
    return PostFactory(text=COMMENTED_COPY, page=PageFactory(name="Wellness Mums"), views=9_000, shares=300)


@pytest.fixture
def suggestion(copy, claim) -> Match:
    return MatchFactory(post=copy, source=claim)


# What the post page shows


def test_a_claim_with_more_copies_than_its_page_lists_counts_them_all(login, reviewer, claim, monkeypatch):
    """The page lists MAX_MATCHES_SHOWN pairs; what it says of the claim's copies counts every one: a reviewer
    told that a new rating reaches 79 copies of a claim with 2,400 is misled about what the rating does."""
    monkeypatch.setattr("factcheck.selectors.MAX_MATCHES_SHOWN", 3)
    page = PageFactory(name="Reposts Inc")
    for n in range(5):
        copy = PostFactory(text=f"Repost {n} of the lemon claim", page=page, duplicate_of=claim,
                           queue_state=QueueState.MATCHED)
        MatchFactory(post=copy, source=claim, method=MatchMethod.TEXT, score=1.0, state=MatchState.AUTO)
    MatchFactory(post=PostFactory(text="Lemon water is not a cure", page=page), source=claim)

    shown = text(login(reviewer).get(f"/queue/posts/{claim.pk}/"))
    assert 'Copies of this claim <span class="muted">(6)</span>' in shown
    assert "Showing 3 of 6 pairs, suggestions first." in shown
    assert "Its 5 copies carry this rating too; a new rating reaches them as well." in shown


def test_the_claims_page_lists_its_pairs_with_relation_method_score_state_and_guard(login, reviewer, claim):
    auto = PostFactory(text="Exact repost of the lemon claim", duplicate_of=claim, queue_state=QueueState.MATCHED,
                       page=PageFactory(name="Reposts Inc"))
    MatchFactory(post=auto, source=claim, method=MatchMethod.TEXT, score=1.0, state=MatchState.AUTO)
    held = PostFactory(text="Drinking hot lemon water does not cure diabetes", page=PageFactory(name="Myth Busters"))
    pair = MatchFactory(post=held, source=claim, score=0.83, guard=MatchGuard.POLARITY)
    gone = PostFactory(text="Lemon farmers report record harvest", page=PageFactory(name="Farm News"))
    refused = MatchFactory(post=gone, source=claim, score=0.42, state=MatchState.REJECTED)
    Match.objects.filter(pk=refused.pk).update(decided_by=reviewer, decided_at=timezone.now(),
                                               reason="About harvests, not health.")

    page = text(login(reviewer).get(f"/queue/posts/{claim.pk}/"))
    section = page.split('id="copies-title"', 1)[1].split("</section>", 1)[0]
    assert "Copies of this claim <span class=\"muted\">(3)</span>" in section
    # The suggestion comes first: it needs a decision.
    assert section.index("Myth Busters") < section.index("Reposts Inc") < section.index("Farm News")
    assert f'href="/queue/posts/{held.pk}/"' in section and f'href="/queue/posts/{auto.pk}/"' in section
    assert "Drinking hot lemon water does not cure diabetes" in section
    assert section.count("Copy of this post") == 2 and section.count("May copy this post") == 1
    assert "Same normalised text" in section and "Near-duplicate text" in section
    assert "score <strong>1.00</strong>" in section and "score <strong>0.83</strong>" in section
    assert "Matched automatically" in section and "Suggested" in section
    assert "Negation or polarity differs" in section
    assert "Rejected by maria" in section and "“About harvests, not health.”" in section
    # Confirm and Reject for the suggestion only, each a POST form with its CSRF token.
    assert section.count('aria-label="Confirm post ') == 1 and section.count('aria-label="Reject post ') == 1
    assert f'action="/queue/matches/{pair.pk}/confirm/"' in section
    assert f'action="/queue/matches/{pair.pk}/reject/"' in section
    assert section.count('name="csrfmiddlewaretoken"') == 2
    # Each decision comes back to this list, so the next Tab goes on from it, not from the top of the page.
    assert section.count(f'name="next" value="/queue/posts/{claim.pk}/#copies-title"') == 2
    # The reason has a real label, tied to its field.
    assert re.search(rf'<label for="id_reject_{pair.pk}_reason">Why it is not the same claim', section)
    assert f'id="id_reject_{pair.pk}_reason"' in section and 'name="reason"' in section
    # The claim is rated: its linked copy carries the rating.
    assert "Its copy carries this rating too" in page


def test_a_suggested_copys_page_names_the_claim_it_may_copy(login, reviewer, claim, copy, suggestion):
    section = text(login(reviewer).get(f"/queue/posts/{copy.pk}/")).split('id="copies-title"', 1)[1]
    assert "This post may copy it" in section and f'href="/queue/posts/{claim.pk}/"' in section
    assert "Health Truths Daily" in section and "score <strong>0.61</strong>" in section


def test_a_post_without_pairs_has_no_copies_section(login, reviewer):
    post = PostFactory()
    assert 'id="copies-title"' not in text(login(reviewer).get(f"/queue/posts/{post.pk}/"))


def test_a_waiting_claims_page_says_rating_it_rates_its_copies(login, reviewer):
    root = PostFactory()
    for _ in range(3):
        linked = PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED)
        MatchFactory(post=linked, source=root, method=MatchMethod.URL, score=1.0, state=MatchState.AUTO)
    assert "Rating this post rates its 3 copies too." in text(login(reviewer).get(f"/queue/posts/{root.pk}/"))


def test_a_grouped_copy_points_to_its_claim_and_offers_no_rating_form(login, reviewer):
    root = PostFactory(external_id="root-1")
    linked = PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED)
    MatchFactory(post=linked, source=root, method=MatchMethod.URL, score=1.0, state=MatchState.AUTO)
    page = text(login(reviewer).get(f"/queue/posts/{linked.pk}/"))
    assert "A copy of a claim waiting for review" in page and f'href="/queue/posts/{root.pk}/"' in page
    assert "This post is a copy: it takes the rating of" in page
    assert 'name="rationale"' not in page


# Confirming


def test_confirming_a_copy_of_a_rated_claim_links_it_and_it_takes_the_claims_rating(
    login, reviewer, claim, copy, suggestion, settings, django_capture_on_commit_callbacks
):
    settings.FACTDESK_JOBS_IN_PROCESS = True  # the matched rating is applied right after commit
    client = login(reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        response = confirm(client, suggestion)
    assert response.status_code == 302 and response["Location"] == f"/queue/posts/{copy.pk}/"

    suggestion.refresh_from_db()
    copy.refresh_from_db()
    assert (suggestion.state, suggestion.decided_by_id) == (MatchState.CONFIRMED, reviewer.pk)
    assert suggestion.decided_at is not None
    assert (copy.duplicate_of_id, copy.queue_state) == (claim.pk, QueueState.MATCHED)
    event = AuditEvent.objects.get(verb=AuditVerb.MATCH_CONFIRMED)
    assert (event.actor_id, event.post_id) == (reviewer.pk, copy.pk)
    action = Action.objects.get(post=copy, kind=ActionKind.MATCHED_RATING, ended_at__isnull=True)
    assert action.rating == Rating.objects.get(post=claim, is_current=True)

    page = client.get(response["Location"])
    assert f"Confirmed: “{copy.external_id}” is a copy of “{claim.external_id}”; it now carries that claim's rating." \
        in messages_of(page)
    body = text(page)
    assert re.search(r"Matched to a claim rated <span[^>]*>False</span> by <strong>Verifica</strong>", body)
    assert f'href="/queue/posts/{claim.pk}/"' in body
    assert 'aria-label="Confirm post ' not in body  # decided: no buttons any more
    # The claim's page counts the copy in its group.
    assert "Its copy carries this rating too" in text(client.get(f"/queue/posts/{claim.pk}/"))


def test_confirming_a_copy_of_a_waiting_claim_groups_it_under_the_claim_in_the_queue(login, reviewer):
    root = PostFactory(text=CLAIM, priority=80, views=1_000, shares=0)
    later = PostFactory(text=COMMENTED_COPY, priority=90, views=500, shares=50)
    pair = MatchFactory(post=later, source=root)
    client = login(reviewer)
    response = confirm(client, pair, next=f"/queue/posts/{root.pk}/")
    assert response["Location"] == f"/queue/posts/{root.pk}/"
    later.refresh_from_db()
    assert (later.duplicate_of_id, later.queue_state) == (root.pk, QueueState.GROUPED)
    assert "it will be reviewed once, with that claim" in messages_of(client.get(response["Location"]))

    queue = text(client.get("/queue/"))
    assert f'href="/queue/posts/{later.pk}/" class="post-text"' not in queue  # no row of its own
    assert "1 copy · combined reach 1,550" in queue
    assert "Rating this post rates its 1 copy too." in text(client.get(f"/queue/posts/{root.pk}/"))


@pytest.mark.parametrize("target", ["https://evil.example/queue/", "//evil.example/queue/", "javascript:alert(1)",
                                    "queue/posts/1/", ""])
def test_a_decision_never_returns_to_another_site(login, reviewer, copy, suggestion, target):
    response = confirm(login(reviewer), suggestion, next=target)
    assert response["Location"] == f"/queue/posts/{copy.pk}/"


# Rejecting


def test_rejecting_a_suggestion_keeps_the_reason_and_the_pair_is_never_suggested_again(login, reviewer):
    source = PostFactory(text=CLAIM)
    later = PostFactory(text=COMMENTED_COPY)
    match_posts(post_ids=[source.pk, later.pk], rated_only=False)
    pair = Match.objects.get(post=later, source=source)
    assert pair.state == MatchState.SUGGESTED

    client = login(reviewer)
    response = reject(client, pair, reason="  The repost adds a claim about drug companies.  ",
                      next=f"/queue/posts/{later.pk}/")
    assert response["Location"] == f"/queue/posts/{later.pk}/"
    pair.refresh_from_db()
    later.refresh_from_db()
    assert (pair.state, pair.decided_by_id) == (MatchState.REJECTED, reviewer.pk)
    assert pair.reason == "The repost adds a claim about drug companies."
    assert (later.duplicate_of_id, later.queue_state) == (None, QueueState.QUEUED)
    event = AuditEvent.objects.get(verb=AuditVerb.MATCH_REJECTED)
    assert (event.actor_id, event.post_id, event.reason) == (
        reviewer.pk, later.pk, "The repost adds a claim about drug companies.")

    page = client.get(response["Location"])
    assert (f"Rejected: “{later.external_id}” is not a copy of “{source.external_id}”; "
            "this pair will not be suggested again.") in messages_of(page)
    section = text(page).split('id="copies-title"', 1)[1].split("</section>", 1)[0]
    assert "Rejected by " in section and 'aria-label="Confirm post ' not in section

    # Matching the pair again, both ways round, suggests nothing new.
    match_posts(post_ids=[source.pk, later.pk], rated_only=False)
    match_posts(post_ids=[later.pk], rated_only=False)
    assert list(Match.objects.values_list("post_id", "source_id", "state")) == [
        (later.pk, source.pk, MatchState.REJECTED)
    ]


def test_rejecting_without_a_reason_is_allowed(login, reviewer, suggestion):
    reject(login(reviewer), suggestion)
    suggestion.refresh_from_db()
    assert (suggestion.state, suggestion.reason) == (MatchState.REJECTED, "")


def test_an_over_long_reason_is_refused_with_a_message_and_nothing_changes(login, reviewer, copy, suggestion):
    before = state_of(suggestion, copy)
    client = login(reviewer)
    response = reject(client, suggestion, reason="x" * 2001)
    assert response["Location"] == f"/queue/posts/{copy.pk}/"
    assert "at most 2000 characters" in messages_of(client.get(response["Location"]))
    assert state_of(suggestion, copy) == before


# Refusals


@pytest.mark.parametrize("decide", [confirm, reject])
def test_another_organisations_factchecker_is_refused_and_nothing_changes(login, claim, copy, suggestion, decide):
    outsider = FactCheckerFactory(organisation=OrganisationFactory(name="Faktisk"))
    before = state_of(suggestion, copy)
    client = login(outsider)
    response = decide(client, suggestion, reason="Not the same.")
    assert response["Location"] == f"/queue/posts/{copy.pk}/"
    assert ("The claim was rated by Verifica; only its fact-checkers can decide its copies."
            in messages_of(client.get(response["Location"])))
    assert state_of(suggestion, copy) == before


@pytest.mark.parametrize("decide", [confirm, reject])
def test_a_factchecker_outside_the_copys_coverage_is_refused_and_nothing_changes(login, copy, decide):
    root = PostFactory(text=CLAIM)  # unrated: any organisation covering the copy could decide
    pair = MatchFactory(post=copy, source=root)
    french = FactCheckerFactory(organisation=OrganisationFactory(name="Vérifions", languages=["fr"]))
    before = state_of(pair, copy)
    client = login(french)
    response = decide(client, pair)
    assert "is outside what Vérifions covers" in messages_of(client.get(response["Location"]))
    assert state_of(pair, copy) == before


@pytest.mark.parametrize("decide", [confirm, reject])
@pytest.mark.parametrize("state", [MatchState.CONFIRMED, MatchState.REJECTED, MatchState.AUTO])
def test_a_pair_that_is_no_suggestion_any_more_is_refused(login, reviewer, claim, decide, state):
    later = PostFactory()
    pair = MatchFactory(post=later, source=claim, state=state)
    before = state_of(pair, later)
    client = login(reviewer)
    response = decide(client, pair)
    label = {MatchState.CONFIRMED: "confirmed by a fact-checker", MatchState.REJECTED: "rejected",
             MatchState.AUTO: "matched automatically"}[state]
    assert f"This suggestion was already {label}." in messages_of(client.get(response["Location"]))
    assert state_of(pair, later) == before


@pytest.mark.parametrize("make_user", [UserFactory, StaffFactory, PlatformUserFactory])
@pytest.mark.parametrize("decide", [confirm, reject])
def test_people_who_are_not_factcheckers_get_the_403_page_and_nothing_changes(login, copy, suggestion, make_user,
                                                                              decide):
    user = make_user()
    if user.is_page_owner:
        copy.page.owners.add(user)  # even the copy's own page owner
    before = state_of(suggestion, copy)
    response = decide(login(user), suggestion, reason="Mine is different.")
    assert response.status_code == 403
    assert "This page is for fact-checkers" in response.content.decode()
    assert state_of(suggestion, copy) == before


@pytest.mark.parametrize("path", ["confirm", "reject"])
def test_anonymous_visitors_are_sent_to_the_login_page(client, suggestion, path):
    response = client.post(f"/queue/matches/{suggestion.pk}/{path}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    suggestion.refresh_from_db()
    assert suggestion.state == MatchState.SUGGESTED


@pytest.mark.parametrize("path", ["confirm", "reject"])
def test_decisions_take_a_post_and_an_unknown_pair_is_a_404(login, reviewer, suggestion, path):
    client = login(reviewer)
    assert client.get(f"/queue/matches/{suggestion.pk}/{path}/").status_code == 405
    assert client.post(f"/queue/matches/{suggestion.pk + 1000}/{path}/").status_code == 404
    suggestion.refresh_from_db()
    assert suggestion.state == MatchState.SUGGESTED


def test_a_pair_a_guard_held_is_confirmed_only_despite_its_warning_ticked(login, reviewer, claim):
    # A walk through the pages found one click confirming a copy the page itself said negates the claim, with no
    # way back but the owner's appeal: the confirmation now asks for the warning to be acknowledged.
    negation = PostFactory(text="Drinking hot lemon water does not cure diabetes", page=PageFactory(name="Myths"))
    pair = MatchFactory(post=negation, source=claim, score=0.83, guard=MatchGuard.POLARITY)
    client = login(reviewer)
    section = text(client.get(f"/queue/posts/{claim.pk}/")).split('id="copies-title"', 1)[1].split("</section>")[0]
    assert "Warning:</strong> This copy negates the claim." in section
    # The checkbox names its post: five pairs had five boxes of one name for a screen reader.
    assert ('<input type="checkbox" name="despite_warning" required> Same claim despite the warning'
            f'<span class="visually-hidden"> (post {negation.external_id})</span>') in section
    assert 'class="button primary small" aria-label="Confirm post' not in section  # not the page's main action
    before = state_of(pair, negation)

    refused = confirm(client, pair)
    assert "This copy negates the claim: confirm it only if both posts still make the same claim" in messages_of(
        client.get(refused.url))
    assert state_of(pair, negation) == before

    confirm(client, pair, despite_warning="on")
    pair.refresh_from_db()
    negation.refresh_from_db()
    assert (pair.state, pair.decided_by, negation.duplicate_of_id) == (MatchState.CONFIRMED, reviewer, claim.pk)


def test_a_pair_without_a_guard_is_confirmed_in_one_click(login, reviewer, claim, copy, suggestion):
    section = text(login(reviewer).get(f"/queue/posts/{claim.pk}/")).split('id="copies-title"', 1)[1]
    assert "despite_warning" not in section.split("</section>")[0]
    confirm(login(reviewer), suggestion)
    suggestion.refresh_from_db()
    assert suggestion.state == MatchState.CONFIRMED


@pytest.mark.parametrize("decide", [confirm, reject])
def test_a_decisions_outcome_is_shown_beside_the_copies_list_the_page_returns_to(login, reviewer, claim, decide):
    """The page returns to #copies-title, a screen below the messages at the top of the page: a confirm refused
    because a colleague had rejected the pair looked like a success there (the row just went away)."""
    stale, fresh = (MatchFactory(post=PostFactory(), source=claim, state=state)
                    for state in (MatchState.REJECTED, MatchState.SUGGESTED))
    client = login(reviewer)
    for pair, says in ((stale, "This suggestion was already rejected."), (fresh, "is not a copy of" if decide is reject
                                                                          else "is a copy of")):
        page = client.get(decide(client, pair)["Location"]).content.decode()
        top, copies = page.split('id="copies-title"', 1)
        copies = copies.split("</section>", 1)[0]
        assert says in html.unescape(copies) and says not in html.unescape(top)
        if pair is stale:  # a refusal is an alert with the focus, where the reviewer is
            assert 'role="alert" tabindex="-1" autofocus' in copies
