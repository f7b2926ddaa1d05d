"""Issue 31, conflicting verdicts: when two organisations' current ratings of posts paired as the same claim
disagree, both organisations see the conflict at /queue/conflicts/ (linked from their navigation with a count),
both rationales side by side, and resolve it: re-rate their post, or mark the pair "not the same claim".
"""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.members import organisation_of
from factcheck.models import Match, MatchMethod, MatchState, Post, QueueState, Rating, Verdict
from tests.factories import (
    PASSWORD,
    FactCheckerFactory,
    MatchFactory,
    OrganisationFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    RatingFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

PAGE = "/queue/conflicts/"
EN_TEXT = "Chlorine on the skin kills the virus."
DE_TEXT = "Chlor auf der Haut tötet das Virus."
FALSE_RATIONALE = "Chlorine harms the skin and does nothing against a virus inside the body."
TRUE_RATIONALE = "A disinfectant kills the virus on surfaces, which is what the post shows."


def mark_url(match: Match) -> str:
    return f"/queue/conflicts/{match.pk}/not-same-claim/"


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def words(response) -> str:
    """The page's text as a reader reads it: no tags, one space between words."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def nav(response) -> str:
    """The main navigation's text, as a screen reader reads it (hidden words included)."""
    found = re.search(r'<nav aria-label="Main">(.*?)</nav>', response.content.decode(), re.S).group(1)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found)).split())


def signed_in(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def rated(checker, *, verdict: str, rationale: str = "The registry says otherwise.", **post_fields) -> Post:
    post = PostFactory(**post_fields)
    RatingFactory(post=post, reviewer=checker, verdict=verdict, rationale=rationale)
    return post


@pytest.fixture
def checker_a(db):
    return FactCheckerFactory(username="anna", first_name="Anna", last_name="Berg",
                              organisation=OrganisationFactory(name="Faktencheck Nord"))


@pytest.fixture
def checker_b(db):
    return FactCheckerFactory(username="ben", first_name="Ben", last_name="Okafor",
                              organisation=OrganisationFactory(name="Truth Desk London"))


@pytest.fixture
def checker_c(db):
    return FactCheckerFactory(username="carla", organisation=OrganisationFactory(name="Verifica Roma"))


@pytest.fixture
def conflict(checker_a, checker_b) -> Match:
    """Org A rated the German post False; org B rated the English post True; the two are suggested as one claim."""
    german = rated(checker_a, verdict=Verdict.FALSE, rationale=FALSE_RATIONALE, text=DE_TEXT, language="de",
                   country="DE", external_id="de-chlor")
    english = rated(checker_b, verdict=Verdict.TRUE, rationale=TRUE_RATIONALE, text=EN_TEXT, language="en",
                    external_id="en-chlorine")
    return MatchFactory(post=english, source=german, method=MatchMethod.SEMANTIC, score=0.88)


def listed(user, match: Match) -> bool:
    response = signed_in(user).get(PAGE)
    assert response.status_code == 200
    return f'id="conflict-{match.pk}"' in response.content.decode()


def test_both_organisations_see_the_conflict_with_both_rationales_side_by_side(conflict, checker_a, checker_b):
    for checker, ours, theirs in ((checker_a, conflict.source, conflict.post), (checker_b, conflict.post,
                                                                                 conflict.source)):
        response = signed_in(checker).get(PAGE)
        assert response.status_code == 200
        page, read = text_of(response), words(response)
        assert FALSE_RATIONALE in read and TRUE_RATIONALE in read
        assert "Faktencheck Nord rated it False" in read and "Truth Desk London rated it True" in read
        assert f"Your organisation: {organisation_of(checker).name}" in read
        # Each post's words in their own language, isolated; the languages named.
        assert f'<bdi lang="de">{DE_TEXT}</bdi>' in page and f'<bdi lang="en">{EN_TEXT}</bdi>' in page
        assert "de-chlor · Page" in read and "· German" in read and "· English" in read
        assert "Anna Berg" in read and "Ben Okafor" in read and "https://evidence.example/1" in read
        # Re-rating is offered for the viewer's own post only, through the post page's rating form.
        assert f'href="/queue/posts/{ours.pk}/?change=1#change-rating"' in page
        assert f'href="/queue/posts/{theirs.pk}/?change=1#change-rating"' not in page
        assert f'action="{mark_url(conflict)}"' in page
        # Their own side first: the left column on a desk, the top one on a phone.
        assert read.index(f"Your organisation: {organisation_of(checker).name}") < read.index(
            "Truth Desk London rated it" if checker == checker_a else "Faktencheck Nord rated it")


def test_the_navigation_counts_the_conflicts_and_links_to_the_page(conflict, checker_a, checker_b, checker_c):
    for checker in (checker_a, checker_b):
        response = signed_in(checker).get("/queue/")
        assert "Conflicts 1 conflicting verdicts" in nav(response)
        assert f'href="{PAGE}"' in response.content.decode()
    assert "Conflicts" not in nav(signed_in(checker_c).get("/queue/"))


def test_a_third_organisation_neither_sees_nor_marks_the_conflict(conflict, checker_c):
    response = signed_in(checker_c).get(PAGE)
    assert response.status_code == 200
    assert FALSE_RATIONALE not in text_of(response) and "0 of 0 conflicts" in words(response)
    response = signed_in(checker_c).post(mark_url(conflict), {"reason": "Looks different to me."})
    assert response.status_code == 404
    conflict.refresh_from_db()
    assert conflict.state == MatchState.SUGGESTED
    assert not AuditEvent.objects.filter(verb=AuditVerb.MATCH_REJECTED).exists()


def test_page_owners_platform_users_and_visitors_are_refused(conflict):
    owner = UserFactory()
    conflict.post.page.owners.add(owner)
    for user in (owner, PlatformUserFactory()):
        client = signed_in(user)
        assert client.get(PAGE).status_code == 403
        assert client.post(mark_url(conflict), {"reason": "mine"}).status_code == 403
    anonymous = Client()
    for response in (anonymous.get(PAGE), anonymous.post(mark_url(conflict))):
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    conflict.refresh_from_db()
    assert conflict.state == MatchState.SUGGESTED


@pytest.mark.parametrize(("ours", "theirs", "conflicting"), [
    (Verdict.FALSE, Verdict.TRUE, True),
    (Verdict.ALTERED, Verdict.MISSING_CONTEXT, True),
    (Verdict.PARTLY_FALSE, Verdict.TRUE, True),
    (Verdict.MISSING_CONTEXT, Verdict.FALSE, True),
    (Verdict.FALSE, Verdict.PARTLY_FALSE, False),  # a difference of degree
    (Verdict.MISSING_CONTEXT, Verdict.TRUE, False),
    (Verdict.FALSE, Verdict.ALTERED, False),
    (Verdict.TRUE, Verdict.TRUE, False),
    (Verdict.FALSE, Verdict.NOT_ELIGIBLE, False),  # no judgement of the claim
    (Verdict.TRUE, Verdict.SATIRE, False),  # a judgement of the post, not of the claim
])
def test_which_verdicts_conflict(checker_a, checker_b, ours, theirs, conflicting):
    match = MatchFactory(post=rated(checker_a, verdict=ours), source=rated(checker_b, verdict=theirs))
    assert listed(checker_a, match) is conflicting
    assert listed(checker_b, match) is conflicting


def test_two_ratings_of_one_organisation_are_no_conflict(checker_a):
    colleague = FactCheckerFactory(organisation=organisation_of(checker_a))
    match = MatchFactory(post=rated(checker_a, verdict=Verdict.FALSE), source=rated(colleague, verdict=Verdict.TRUE))
    assert not listed(checker_a, match)


@pytest.mark.parametrize("state", [MatchState.AUTO, MatchState.CONFIRMED])
def test_a_linked_pair_conflicts_as_a_suggested_one_does(checker_a, checker_b, state):
    match = MatchFactory(post=rated(checker_a, verdict=Verdict.TRUE), source=rated(checker_b, verdict=Verdict.FALSE),
                         state=state, method=MatchMethod.TEXT, score=1.0)
    assert listed(checker_a, match) and listed(checker_b, match)


def test_a_rejected_pair_or_an_unrated_post_is_no_conflict(checker_a, checker_b):
    rejected = MatchFactory(post=rated(checker_a, verdict=Verdict.FALSE), source=rated(checker_b, verdict=Verdict.TRUE),
                            state=MatchState.REJECTED)
    unrated = MatchFactory(post=PostFactory(), source=rated(checker_b, verdict=Verdict.TRUE))
    assert not listed(checker_b, rejected) and not listed(checker_b, unrated)
    assert "Conflicts" not in nav(signed_in(checker_b).get("/queue/"))


def test_not_the_same_claim_rejects_the_pair_audited_and_leaves_both_pages(
    conflict, checker_a, checker_b, django_capture_on_commit_callbacks,
):
    signed_in(checker_a).get("/queue/")  # org A's count is cached now: marking must not leave it behind
    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in(checker_b).post(mark_url(conflict), {"reason": "  The German post is about hands.  "},
                                             follow=True)
    assert response.redirect_chain == [(PAGE, 302)]
    assert "Marked not the same claim" in text_of(response)
    conflict.refresh_from_db()
    assert (conflict.state, conflict.decided_by, conflict.reason) == (
        MatchState.REJECTED, checker_b, "The German post is about hands.")
    event = AuditEvent.objects.get(verb=AuditVerb.MATCH_REJECTED)
    assert (event.actor, event.target_id, event.reason) == (checker_b, str(conflict.pk),
                                                            "The German post is about hands.")
    assert event.data["conflict"] is True and sorted(event.data["verdicts"]) == ["false", "true"]
    # Both ratings stay as they were.
    assert Rating.objects.filter(is_current=True, post__in=[conflict.post, conflict.source]).count() == 2
    for checker in (checker_a, checker_b):
        assert not listed(checker, conflict)
        assert "Conflicts" not in nav(signed_in(checker).get("/queue/"))


def test_re_rating_one_side_to_agree_ends_the_conflict_for_both(conflict, checker_a, checker_b):
    german = conflict.source
    current = Rating.objects.get(post=german, is_current=True)
    response = signed_in(checker_a).post(f"/queue/posts/{german.pk}/", {
        "verdict": Verdict.MISSING_CONTEXT, "rationale": "True of surfaces; the post leaves that out.",
        "sources": "https://evidence.example/2", "change_reason": "Truth Desk London's evidence on surfaces.",
        "replaces": current.pk,
    })
    assert response.status_code == 302  # saved
    assert not listed(checker_a, conflict) and not listed(checker_b, conflict)
    # A page read before the re-rating finds the conflict resolved.
    response = signed_in(checker_b).post(mark_url(conflict), {"reason": ""}, follow=True)
    assert "This conflict was already resolved" in text_of(response)
    conflict.refresh_from_db()
    assert conflict.state == MatchState.SUGGESTED


def test_a_stale_mark_answers_that_the_conflict_was_resolved(conflict, checker_a, checker_b):
    assert signed_in(checker_a).post(mark_url(conflict), {"reason": "Different claims."}).status_code == 302
    response = signed_in(checker_b).post(mark_url(conflict), {"reason": "Also different."}, follow=True)
    assert response.status_code == 200 and response.redirect_chain == [(PAGE, 302)]
    assert "This conflict was already resolved" in text_of(response)
    conflict.refresh_from_db()
    assert (conflict.decided_by, conflict.reason) == (checker_a, "Different claims.")
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_REJECTED).count() == 1
    assert signed_in(checker_b).post("/queue/conflicts/987654/not-same-claim/").status_code == 404


def test_a_linked_copy_marked_not_the_same_claim_leaves_the_group_with_its_own_rating(checker_a, checker_b):
    root = rated(checker_a, verdict=Verdict.FALSE)
    copy = rated(checker_b, verdict=Verdict.TRUE)
    Post.objects.filter(pk=copy.pk).update(duplicate_of=root, matched_at=timezone.now())
    match = MatchFactory(post=copy, source=root, state=MatchState.AUTO, method=MatchMethod.URL, score=1.0)
    assert signed_in(checker_b).post(mark_url(match), {"reason": ""}).status_code == 302
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.RATED)
    # A claim of its own, as any copy that leaves its group: the reconciler matches it again and embeds it (a
    # linked copy has none), so later posts in other words find it.
    assert copy.matched_at is None


def test_marking_needs_the_csrf_token(conflict, checker_a):
    client = Client(enforce_csrf_checks=True)
    client.force_login(checker_a)
    assert client.post(mark_url(conflict), {"reason": ""}).status_code == 403
    conflict.refresh_from_db()
    assert conflict.state == MatchState.SUGGESTED


def test_hostile_words_in_a_rationale_or_a_post_are_shown_as_text(checker_a, checker_b):
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    match = MatchFactory(post=rated(checker_a, verdict=Verdict.FALSE, rationale=hostile, text=hostile),
                         source=rated(checker_b, verdict=Verdict.TRUE, rationale="Fine."))
    body = signed_in(checker_b).get(PAGE).content.decode()
    assert f'id="conflict-{match.pk}"' in body
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in body


def test_the_page_reads_a_fixed_number_of_queries(checker_a, checker_b, django_assert_max_num_queries):
    client = signed_in(checker_a)

    def conflicts(n: int) -> None:
        for _ in range(n):
            page = PageFactory()
            MatchFactory(post=rated(checker_a, verdict=Verdict.FALSE, page=page),
                         source=rated(checker_b, verdict=Verdict.TRUE, page=PageFactory()))

    conflicts(1)
    client.get(PAGE)  # the navigation's count is cached after the first page
    with django_assert_max_num_queries(10) as one:
        assert client.get(PAGE).status_code == 200
    conflicts(6)
    with django_assert_max_num_queries(len(one.captured_queries)):
        response = client.get(PAGE)
    assert response.content.decode().count('class="card conflict"') == 7


def test_an_outsider_cannot_tell_a_live_conflict_of_others_from_any_other_pair(conflict, checker_c):
    """Whose pair it is is asked first: to a third organisation every pair answers the same 404, a live conflict
    of two others and an ordinary suggestion alike (no "already resolved" for the one and not the other)."""
    plain = MatchFactory(method=MatchMethod.SEMANTIC, score=0.9)
    client = signed_in(checker_c)

    live = client.post(mark_url(conflict), {"reason": "x"})
    other = client.post(mark_url(plain), {"reason": "x"})

    assert live.status_code == other.status_code == 404
    assert Match.objects.filter(pk__in=[conflict.pk, plain.pk], state=MatchState.SUGGESTED).count() == 2
