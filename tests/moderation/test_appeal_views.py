"""Deciding appeals in the browser: who may decide, every transition, conflicts, overdue marks, escaping, queries."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from factcheck.members import organisation_of
from factcheck.models import Rating
from moderation.appeals import decide_appeal, file_appeal, start_review
from moderation.models import Action, Appeal, AppealStatus, PostDistribution
from moderation.staff_actions import lift_action, remove_post
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, PlatformUserFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

SCRIPT = '<script>alert("x")</script><b>bold</b>'
# The rating of the `appeal` fixture's post, as the appeal page shows it.
SHOWN = {"rationale": "No such cure exists.", "sources": ["https://who.example/facts"]}


def dispute(owner, post, *, statement: str = "The cure is real.", **kw) -> Appeal:
    return file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=statement,
                       evidence_urls=["https://evidence.example/study"], **kw)


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def colleague(factchecker):
    return FactCheckerFactory(organisation=organisation_of(factchecker))


@pytest.fixture
def appeal(owner, factchecker):
    return dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner, text="A miracle cure was found.",
                                               rating=SHOWN))


@pytest.fixture
def removal_appeal(owner, staff_user):
    post = PostFactory(page=PageFactory())
    post.page.owners.add(owner)
    remove_post(staff=staff_user, post_id=post.pk, ground="hate", reason="Slurs against a group.")
    return file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quotation, not my view.")


def url(appeal: Appeal, suffix: str = "") -> str:
    desk = "staff" if appeal.kind == "removal" else "queue"
    return f"/{desk}/appeals/{appeal.pk}/{suffix}"


def decide(client, appeal: Appeal, **data):
    # The browser names the verdict of a reversed rating (ignored for a removal, which takes none).
    # A reversal publishes its own rationale on the claim page (issue 29).
    return client.post(url(appeal), {"outcome": "reversed", "reason": "The study is authentic.", "new_verdict": "true",
                                     "public_rationale": "The study is authentic and says what the post says.",
                                     **data})


def status_of(appeal: Appeal) -> str:
    return Appeal.objects.values_list("status", flat=True).get(pk=appeal.pk)


# Who may open and decide


@pytest.mark.parametrize(
    "method, path",
    [("get", "/queue/appeals/"), ("get", "/queue/appeals/{id}/"), ("post", "/queue/appeals/{id}/"),
     ("post", "/queue/appeals/{id}/review/"), ("get", "/staff/appeals/"), ("get", "/staff/appeals/{id}/"),
     ("post", "/staff/appeals/{id}/"), ("post", "/staff/appeals/{id}/review/")],
)
def test_anonymous_visitors_are_sent_to_the_login_page(client, appeal, method, path):
    response = getattr(client, method)(path.format(id=appeal.pk), {"outcome": "reversed", "reason": "x"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert status_of(appeal) == AppealStatus.OPEN


@pytest.mark.parametrize("make_user", [UserFactory, PlatformUserFactory, StaffFactory])
def test_people_who_are_not_factcheckers_are_refused_the_appeals_queue(login, appeal, make_user):
    client = login(make_user())
    for response in (client.get("/queue/appeals/"), client.get(url(appeal)), decide(client, appeal),
                     client.post(url(appeal, "review/"))):
        assert response.status_code == 403
        assert "decided by fact-checkers" in response.content.decode()
    assert status_of(appeal) == AppealStatus.OPEN


@pytest.mark.parametrize("make_user", [UserFactory, FactCheckerFactory])
def test_only_trust_and_safety_staff_open_removal_appeals(login, removal_appeal, make_user):
    client = login(make_user())
    for response in (client.get("/staff/appeals/"), client.get(url(removal_appeal)), decide(client, removal_appeal)):
        assert response.status_code == 403
        assert "decided by trust-and-safety staff" in response.content.decode()
    assert status_of(removal_appeal) == AppealStatus.OPEN


def test_the_owner_who_filed_cannot_decide_their_own_appeal(login, appeal, owner):
    response = decide(login(owner), appeal)
    assert response.status_code == 403
    assert status_of(appeal) == AppealStatus.OPEN


def test_a_factchecker_of_another_organisation_neither_sees_nor_decides_the_appeal(login, appeal):
    client = login(FactCheckerFactory())
    assert "The cure is real." not in client.get("/queue/appeals/").content.decode()
    assert client.get(url(appeal)).status_code == 404
    assert decide(client, appeal).status_code == 404
    assert client.post(url(appeal, "review/")).status_code == 404
    assert status_of(appeal) == AppealStatus.OPEN


def test_the_rater_sees_the_appeal_marked_as_theirs_but_cannot_take_or_decide_it(login, appeal, factchecker):
    client = login(factchecker)
    queue = client.get("/queue/appeals/").content.decode()
    assert "You made this rating" in queue and "The cure is real." in queue
    assert ">Decide</a>" not in queue
    detail = client.get(url(appeal)).content.decode()
    assert "You made this rating, so another member of your organisation must decide" in detail
    assert "Save decision" not in detail and "Take into review" not in detail

    response = decide(client, appeal)
    assert response.status_code == 403
    refusal = "You made this rating, so another member of your organisation must decide the appeal."
    assert refusal in response.content.decode()
    assert client.post(url(appeal, "review/")).status_code == 403
    assert status_of(appeal) == AppealStatus.OPEN


def test_staff_cannot_decide_a_dispute_and_fact_checkers_cannot_reach_a_removal_appeal(
    login, appeal, removal_appeal, staff_user, colleague
):
    staff = login(StaffFactory())
    assert staff.get(f"/staff/appeals/{appeal.pk}/").status_code == 404
    assert decide(staff, appeal).status_code == 403
    factchecker = login(colleague)
    assert factchecker.get(f"/queue/appeals/{removal_appeal.pk}/").status_code == 404
    assert (status_of(appeal), status_of(removal_appeal)) == (AppealStatus.OPEN, AppealStatus.OPEN)


def test_the_staff_member_who_removed_the_post_cannot_decide_its_appeal(login, removal_appeal, staff_user):
    client = login(staff_user)
    assert "You made this removal" in client.get("/staff/appeals/").content.decode()
    response = decide(client, removal_appeal)
    assert response.status_code == 403
    assert "You cannot decide this appeal." in response.content.decode()
    assert status_of(removal_appeal) == AppealStatus.OPEN


# The queue


def test_the_queue_lists_open_appeals_of_the_organisation_oldest_first_with_overdue_ones_marked(
    login, owner, factchecker, colleague
):
    now = timezone.now()
    old = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner), statement="Filed two days ago.",
                  now=now - timedelta(hours=30))
    fresh = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner), statement="Filed just now.")
    in_review = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner), statement="Being looked at.",
                        now=now - timedelta(hours=2))
    start_review(appeal_id=in_review.pk, reviewer=colleague)
    decided = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner), statement="Decided already.")
    decide_appeal(appeal_id=decided.pk, reviewer=colleague, outcome="upheld", reason="Stands.")
    other_org = dispute(owner, scenarios.rated_post(rater=FactCheckerFactory(), owner=owner), statement="Not ours.")

    html = login(colleague).get("/queue/appeals/").content.decode()
    shown = [text for text in ("Filed two days ago.", "Being looked at.", "Filed just now.") if text in html]
    assert shown == ["Filed two days ago.", "Being looked at.", "Filed just now."]
    assert html.index("Filed two days ago.") < html.index("Being looked at.") < html.index("Filed just now.")
    assert "Decided already." not in html and "Not ours." not in html
    assert html.count('<span class="badge overdue">Overdue</span>') == 1
    assert "overdue by 6" in html  # 30 hours after filing, 24 allowed
    assert "1 overdue" in html
    assert f"by {colleague.username}" in html  # who holds the appeal in review
    assert html.count(">Decide</a>") == 3
    assert {old.pk, fresh.pk, other_org.pk} <= set(Appeal.objects.values_list("pk", flat=True))


def test_an_overdue_appeal_is_marked_on_its_page(login, owner, factchecker, colleague):
    appeal = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner),
                     now=timezone.now() - timedelta(hours=25))
    html = login(colleague).get(url(appeal)).content.decode()
    assert '<span class="badge overdue">Overdue</span>' in html and "overdue by 1" in html


def test_the_staff_queue_lists_removal_appeals_only(login, appeal, removal_appeal):
    html = login(StaffFactory()).get("/staff/appeals/").content.decode()
    assert "It was a quotation, not my view." in html and "The cure is real." not in html
    assert "Hate" in html


# The appeal page and every transition


def test_the_appeal_page_shows_the_appeal_the_rating_the_post_and_the_full_timeline(
    login, appeal, factchecker, colleague
):
    html = login(colleague).get(url(appeal)).content.decode()
    for text in ("Dispute (the rating is wrong)", "The cure is real.", "https://evidence.example/study",
                 "No such cure exists.", "https://who.example/facts", "A miracle cure was found.", "×0.2",
                 "False information. Checked by independent fact-checkers.", "Dispute appeal filed",
                 f"{factchecker.username} ({organisation_of(factchecker).name})", "Take into review", "Save decision"):
        assert text in html, text
    for label in ('<label for="id_outcome_0"', '<label for="id_reason">', '<label for="id_new_verdict">'):
        assert label in html


def test_the_appeal_page_shows_a_factchecker_the_steps_of_their_own_organisations_appeals_only(
    login, appeal, owner, colleague, staff_user
):
    # The owner appeals a removal of the same post: the statement and the reason given to them are trust and
    # safety's, as on the post page; staff read every step.
    remove_post(staff=staff_user, post_id=appeal.post_id, ground="harassment", reason="Named a private person.")
    removal = file_appeal(owner=owner, post_id=appeal.post_id, kind="removal", statement="STAFF-ONLY-STATEMENT")
    html = login(colleague).get(url(appeal)).content.decode()
    assert "Dispute appeal filed" in html and "The cure is real." in html
    assert "STAFF-ONLY-STATEMENT" not in html and "Removal appeal filed" not in html
    staff_html = login(StaffFactory()).get(url(removal)).content.decode()
    assert "STAFF-ONLY-STATEMENT" in staff_html and "Dispute appeal filed" in staff_html


def test_taking_into_review_then_reversing_a_dispute_restores_full_distribution(login, appeal, colleague):
    client = login(colleague)
    response = client.post(url(appeal, "review/"), follow=True)
    assert "You are reviewing this appeal" in response.content.decode()
    assert (status_of(appeal), Appeal.objects.get(pk=appeal.pk).reviewer_id) == (AppealStatus.IN_REVIEW, colleague.pk)
    assert "Take into review" not in response.content.decode()

    response = decide(client, appeal)
    assert response.status_code == 302 and response["Location"] == "/queue/appeals/"
    assert "rating is now True" in client.get(response["Location"]).content.decode()
    decided = Appeal.objects.get(pk=appeal.pk)
    assert (decided.status, decided.new_verdict) == ("reversed", "true")
    assert decided.outcome_reason == "The study is authentic."
    assert Rating.objects.get(post=appeal.post, is_current=True).verdict == "true"
    distribution = PostDistribution.objects.get(post=appeal.post)
    assert (distribution.multiplier, distribution.labels) == (Decimal("1"), [])


def test_upholding_keeps_the_rating_and_the_page_shows_the_outcome_and_reason(login, appeal, colleague):
    client = login(colleague)
    assert decide(client, appeal, outcome="upheld", reason="The study was retracted.").status_code == 302
    assert status_of(appeal) == AppealStatus.UPHELD
    assert Rating.objects.get(post=appeal.post, is_current=True).verdict == "false"
    html = client.get(url(appeal)).content.decode()
    assert "The study was retracted." in html and "Appeal upheld" in html and "Save decision" not in html


def test_a_dispute_reversed_with_a_chosen_verdict_gets_that_verdict(login, appeal, colleague):
    decide(login(colleague), appeal, new_verdict="missing_context")
    assert Rating.objects.get(post=appeal.post, is_current=True).verdict == "missing_context"


def test_accepting_a_correction_needs_the_new_verdict_shown_next_to_the_field(login, owner, factchecker, colleague):
    post = scenarios.rated_post(rater=factchecker, owner=owner)
    correction = file_appeal(owner=owner, post_id=post.pk, kind="correction", statement="I fixed it.",
                             correction_details="Removed the cure claim from the second paragraph.")
    client = login(colleague)
    html = client.get(url(correction)).content.decode()
    assert "Removed the cure claim from the second paragraph." in html and "(required to accept)" in html

    response = decide(client, correction, new_verdict="")
    assert response.status_code == 200
    html = response.content.decode()
    assert "An accepted correction needs the new verdict." in html
    field = html.index('<label for="id_new_verdict">')
    assert html.index("An accepted correction needs the new verdict.", field) < html.index('<select name="new_verdict"')
    assert status_of(correction) == AppealStatus.OPEN

    decide(client, correction, new_verdict="partly_false")
    assert status_of(correction) == AppealStatus.REVERSED
    assert Rating.objects.get(post=post, is_current=True).verdict == "partly_false"


def test_a_decision_without_a_reason_or_outcome_is_refused_next_to_the_fields(login, appeal, colleague):
    response = login(colleague).post(url(appeal), {"outcome": "", "reason": "  "})
    html = response.content.decode()
    assert response.status_code == 200
    assert "Choose whether the appeal is accepted or not." in html
    assert "Give the reason the owner will read." in html
    assert status_of(appeal) == AppealStatus.OPEN


def test_reversing_a_removal_appeal_lifts_the_removal(login, removal_appeal):
    client = login(StaffFactory())
    html = client.get(url(removal_appeal)).content.decode()
    assert "Slurs against a group." in html and "New verdict" not in html
    response = decide(client, removal_appeal, reason="Quoted to condemn it.")
    assert response.status_code == 302 and response["Location"] == "/staff/appeals/"
    assert status_of(removal_appeal) == AppealStatus.REVERSED
    assert Action.objects.get(pk=removal_appeal.action_id).ended_at is not None
    assert PostDistribution.objects.get(post=removal_appeal.post).removed is False


# Conflicts


def test_a_stale_second_decision_is_told_the_appeal_was_already_decided(login, appeal, colleague, client):
    from django.test import Client

    first = Client()
    first.force_login(colleague)
    second_reviewer = FactCheckerFactory(organisation=organisation_of(colleague))
    second = login(second_reviewer)
    assert "Save decision" in second.get(url(appeal)).content.decode()  # both have the form open

    assert decide(first, appeal, outcome="upheld", reason="It stands.").status_code == 302
    response = decide(second, appeal)
    assert response.status_code == 409
    html = response.content.decode()
    assert f"This appeal was already decided by {colleague.username}" in html
    assert "upheld. Your decision was not saved." in html
    assert "Save decision" not in html and "It stands." in html  # the current state, not the stale form
    # What the second reviewer typed is shown back to them, not lost with the refused form.
    assert "What you wrote (not saved)" in html
    assert "The study is authentic and says what the post says." in html and "The study is authentic." in html
    assert status_of(appeal) == AppealStatus.UPHELD
    assert Rating.objects.get(post=appeal.post, is_current=True).verdict == "false"


def test_deciding_an_appeal_a_colleague_took_into_review_is_refused_with_who_holds_it(login, appeal, colleague):
    start_review(appeal_id=appeal.pk, reviewer=colleague)
    other = login(FactCheckerFactory(organisation=organisation_of(colleague)))
    html = other.get(url(appeal)).content.decode()
    assert f"{colleague.username} is reviewing this appeal" in html and "Save decision" not in html
    for response in (decide(other, appeal), other.post(url(appeal, "review/"))):
        assert response.status_code == 409
        assert f"{colleague.username} is already reviewing this appeal." in response.content.decode()
    assert Appeal.objects.get(pk=appeal.pk).reviewer_id == colleague.pk


# Escaping


def test_html_in_statements_and_reasons_is_shown_escaped(login, owner, factchecker, colleague):
    appeal = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner), statement=SCRIPT)
    client = login(colleague)
    for page in (client.get("/queue/appeals/"), client.get(url(appeal))):
        html = page.content.decode()
        assert SCRIPT not in html
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in html
    decide(client, appeal, outcome="upheld", reason=SCRIPT)
    html = client.get(url(appeal)).content.decode()
    assert SCRIPT not in html and "<b>bold</b>" not in html
    assert html.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") >= 3  # statement, reason, timeline


# Query counts


@pytest.mark.parametrize("appeals", [2, 12])
def test_the_appeals_queue_renders_in_a_fixed_number_of_queries(login, owner, factchecker, colleague, appeals,
                                                                  django_assert_max_num_queries):
    for i in range(appeals):
        appeal = dispute(owner, scenarios.rated_post(rater=factchecker, owner=owner),
                         now=timezone.now() - timedelta(hours=i * 5))
        if i % 3 == 0:
            start_review(appeal_id=appeal.pk, reviewer=colleague)
    client = login(colleague)
    # Session, user with their organisation (accounts.backends), the appeals with their posts, pages,
    # ratings and reviewers; the navigation's counts (issue 29).
    with django_assert_max_num_queries(4):
        response = client.get("/queue/appeals/")
    assert response.content.decode().count('class="post-text appeal-link"') == appeals


@pytest.mark.parametrize("copies", [1, 8])
def test_the_appeals_queue_lists_copies_disputes_in_a_fixed_number_of_queries(login, owner, factchecker, colleague,
                                                                               copies, django_assert_max_num_queries):
    # Who confirmed each copy's match (whom can_decide leaves out) was one query a row, twice (a review).
    from factcheck.matching.matcher import match_posts
    from moderation.propagation import apply_matches
    from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, arrive, flag, post

    arrive(flag("source", CLAIM, page="page-source"))
    scenarios.rated_post(rater=factchecker, post=post("source"))
    names = [f"copy-{n}" for n in range(copies)]
    arrive(*(flag(name, EXACT_COPY, page=f"page-{name}") for name in names))
    match_posts(post_ids=[post(name).pk for name in names], rated_only=True)
    apply_matches(post_ids=[post(name).pk for name in names])
    for name in names:
        post(name).page.owners.add(owner)
        assert dispute(owner, post(name)).action.kind == "matched_rating"
    client = login(colleague)
    with django_assert_max_num_queries(4):
        response = client.get("/queue/appeals/")
    assert response.content.decode().count('class="post-text appeal-link"') == copies


@pytest.mark.parametrize("appeals", [1, 6])
def test_the_appeal_page_renders_in_a_fixed_number_of_queries(login, owner, factchecker, colleague, appeals,
                                                               django_assert_max_num_queries):
    post = scenarios.rated_post(rater=factchecker, owner=owner)
    # Earlier appeals on the same post, each decided, make the timeline longer.
    for _ in range(appeals - 1):
        earlier = dispute(owner, post)
        decide_appeal(appeal_id=earlier.pk, reviewer=colleague, outcome="upheld", reason="Stands.")
    appeal = dispute(owner, post)
    client = login(colleague)
    # Session, user with their organisation, the appeal with everything it is against, four for the timeline;
    # the navigation's counts (issue 29); the post's pictures.
    with django_assert_max_num_queries(10):  # +1: trust and safety sending the post (its timeline)
        response = client.get(url(appeal))
    assert response.content.decode().count("Dispute appeal filed") == appeals


def test_the_staff_appeals_queue_renders_in_a_fixed_number_of_queries(login, owner, staff_user,
                                                                      django_assert_max_num_queries):
    for _ in range(5):
        post = PostFactory(page=PageFactory())
        post.page.owners.add(owner)
        remove_post(staff=staff_user, post_id=post.pk, ground="violence", reason="Threats.")
        file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="No threat meant.")
    client = login(StaffFactory())
    with django_assert_max_num_queries(5):  # the navigation's counts (issue 29) and the appeals nobody can decide
        response = client.get("/staff/appeals/")
    assert response.content.decode().count("No threat meant.") == 5


@pytest.mark.parametrize("outcome", ["upheld", "reversed"])
def test_a_removal_appeal_decided_by_a_lift_meanwhile_is_a_conflict_whatever_the_stale_page_chose(
    login, removal_appeal, outcome
):
    """Staff lifted the removal in another tab, which grants its appeal: the form as the appeal is now offers no
    "not accepted", so the stale page's choice must be read as stale (409, who decided it, the typed words shown
    back), not as a wrong choice that loses the reason and says nothing of what happened."""
    reviewer, lifter = StaffFactory(), StaffFactory()
    client = login(reviewer)
    assert "Save decision" in client.get(url(removal_appeal)).content.decode()
    seen = Appeal.objects.get(pk=removal_appeal.pk).version
    lift_action(actor=lifter, action_id=removal_appeal.action_id, reason="It was satire, plainly.")

    response = decide(client, removal_appeal, outcome=outcome, reason="A careful reason I typed.", version=seen)

    assert response.status_code == 409
    html = response.content.decode()
    assert f"This appeal was already decided by {lifter.username}" in html and "reversed." in html
    assert "A careful reason I typed." in html and "Save decision" not in html
    assert status_of(removal_appeal) == AppealStatus.REVERSED
