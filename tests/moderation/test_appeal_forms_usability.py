"""The appeal forms as people meet them (issue 12): an error summary after a failed submit, every
missing field at once, no form while an appeal is open, nothing to dispute in a True rating, a
decision form that chooses nothing for the reviewer, plain outcome words, one notice per reversal,
and the desks' Open / Decided / All views with a search, in a fixed number of queries."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.members import organisation_of
from factcheck.models import Rating
from factcheck.ratings import record_rating
from moderation.appeals import AppealRefused, decide_appeal, file_appeal, start_review
from moderation.models import Appeal, AppealStatus, Notification, NotificationKind
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.conftest import bearer_client
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY, NEAR_COPY, arrive, flag, matched_action, post
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(db):
    return UserFactory(username="olga")


@pytest.fixture
def colleague(factchecker):
    return FactCheckerFactory(organisation=organisation_of(factchecker))


def dispute(owner, target, **kw) -> Appeal:
    return file_appeal(owner=owner, post_id=target.pk, kind="dispute", statement="The cure is real.", **kw)


def html(response) -> str:
    return response.content.decode()


def summary(page: str) -> list[tuple[str, str]]:
    """The error summary's links: (field id, message)."""
    box = re.search(r'<div class="error-summary".*?</div>', page, re.S)
    assert box, "no error summary on the page"
    return re.findall(r'<a href="#([^"]+)">([^<]+)</a>', box.group(0))


def file(client, target, **data):
    payload = {"kind": "", "statement": "", "evidence_urls": "", "correction_details": "", **data}
    return client.post(f"/appeals/posts/{target.pk}/", payload)


# Filing


def test_an_empty_appeal_reports_every_missing_field_at_once_in_a_summary_that_links_to_each(
    login, owner, factchecker
):
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    response = file(login(owner), target)
    page = html(response)
    assert response.status_code == 200
    assert "There is a problem" in page and "<title>Error: " in page
    # Focus goes to the summary with or without script: autofocus, and static/js/appeals.js.
    assert re.search(r'<div class="error-summary"[^>]*\bautofocus\b[^>]*tabindex="-1"|'
                     r'<div class="error-summary"[^>]*tabindex="-1"[^>]*\bautofocus\b', page)
    assert summary(page) == [("id_kind_0", "Choose what you appeal."), ("id_statement", "Say why you appeal.")]
    assert 'id="id_kind_0"' in page and 'id="id_statement"' in page
    assert '<label for="id_statement">' in page
    assert 'aria-invalid="true"' in page and 'aria-describedby="id_statement_hint id_statement_error"' in page
    assert not Appeal.objects.exists()


def test_an_empty_correction_asks_for_its_statement_only(login, owner, factchecker):
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    page = html(file(login(owner), target, kind="correction"))
    assert summary(page) == [("id_statement", "Say why you appeal.")]


def test_a_statement_at_the_limit_over_many_lines_is_filed_with_each_line_break_counted_once(login, owner, factchecker):
    """The browser sends each line break as "\r\n": counted as two, a statement of 2,000 characters on 40 lines was
    refused ("it has 2,039") while the page's counter said none were left."""
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    typed = "\r\n".join(["x" * 49] * 40) + "x"  # 2,000 characters as the counter counts them: 2,039 sent
    file(login(owner), target, kind="dispute", statement=typed)
    assert Appeal.objects.get().statement == typed.replace("\r\n", "\n")


def test_a_statement_of_invisible_characters_only_says_nothing(login, owner, factchecker):
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    page = html(file(login(owner), target, kind="dispute", statement="\u200b\u200b \u2060\ufeff"))
    assert summary(page) == [("id_statement", "Say why you appeal.")]
    assert not Appeal.objects.exists()


def test_what_was_corrected_is_marked_for_a_correction_only_and_the_limit_is_stated_without_script(
    login, owner, factchecker
):
    page = html(login(owner).get(f"/appeals/posts/{scenarios.rated_post(owner=owner, rater=factchecker).pk}/"))
    # static/js/appeals.js hides the field unless "correction" is chosen; without script the label says so.
    assert 'data-show-when="kind=correction"' in page and "(for a correction)" in page
    assert 'data-limit="2000"' in page and "in up to 2,000 characters" in page
    assert '<script src="/static/js/appeals.js" defer></script>' in page
    assert '<link rel="stylesheet" href="/static/css/appeals.css">' in page


def test_a_dispute_filed_with_correction_details_keeps_none_of_them(login, owner, factchecker):
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    file(login(owner), target, kind="dispute", statement="Real quote.", correction_details="Typed before switching.")
    assert Appeal.objects.get().correction_details == ""


def test_while_an_appeal_is_open_the_form_is_not_shown_and_the_page_links_to_the_appeal(login, owner, factchecker):
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    appeal = dispute(owner, target)
    client = login(owner)
    page = html(client.get(f"/appeals/posts/{target.pk}/"))
    assert "An appeal against this rating is open" in page
    assert f'href="#appeal-{appeal.pk}"' in page and f'id="appeal-{appeal.pk}"' in page
    assert "File appeal" not in page and 'name="statement"' not in page
    refused = client.post(f"/appeals/posts/{target.pk}/", {"kind": "correction", "statement": "Fixed.",
                                                           "correction_details": "Title."}, follow=True)
    assert "An appeal against this decision is already open." in html(refused)
    assert Appeal.objects.count() == 1


def test_a_removal_can_still_be_appealed_while_the_rating_is_under_appeal(login, owner, factchecker, staff_user):
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    dispute(owner, target)
    remove_post(staff=staff_user, post_id=target.pk, ground="hate", reason="Slurs.")
    page = html(login(owner).get(f"/appeals/posts/{target.pk}/"))
    assert "File appeal" in page and 'value="removal"' in page and 'value="dispute"' not in page


@pytest.mark.parametrize("verdict, label", [("true", "True"), ("not_eligible", "Not eligible")])
def test_a_rating_that_restricts_nothing_cannot_be_disputed_or_corrected(login, owner, factchecker, verdict, label):
    target = scenarios.rated_post(owner=owner, rater=factchecker, verdict=verdict)
    for kind in ("dispute", "correction"):
        with pytest.raises(AppealRefused, match="nothing to dispute or correct"):
            file_appeal(owner=owner, post_id=target.pk, kind=kind, statement="Wrong.", correction_details="x")
    client = login(owner)
    page = html(client.get(f"/appeals/posts/{target.pk}/"))
    assert f"This post is rated {label}: that rating does not reduce its distribution or label it" in page
    assert "File appeal" not in page and 'value="dispute"' not in page
    refused = client.post(f"/appeals/posts/{target.pk}/", {"kind": "dispute", "statement": "Wrong."}, follow=True)
    assert "nothing to dispute or correct" in html(refused)
    assert not Appeal.objects.exists()


def test_the_api_refuses_a_dispute_of_a_true_rating(owner, factchecker):
    target = scenarios.rated_post(owner=owner, rater=factchecker, verdict="true")
    response = bearer_client(owner).post(f"/api/v1/posts/{target.external_id}/appeals",
                                         {"kind": "dispute", "statement": "Wrong."}, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "appeal_refused"
    assert "nothing to dispute or correct" in response.json()["error"]["message"]
    assert not Appeal.objects.exists()


# Deciding


def test_the_decision_form_chooses_no_verdict_and_lists_each_verdict_once_without_the_one_appealed(
    login, owner, factchecker, colleague
):
    appeal = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker))
    page = html(login(colleague).get(f"/queue/appeals/{appeal.pk}/"))
    select = re.search(r'<select name="new_verdict".*?</select>', page, re.S).group(0)
    options = re.findall(r'<option value="([^"]*)"', select)
    assert options == ["", "altered", "partly_false", "missing_context", "satire", "true"]
    assert "the default" not in page
    assert re.findall(r'<option value="([^"]*)" selected', select) == [""]  # the placeholder, not a verdict
    assert 'data-show-when="outcome=reversed"' in page
    assert "checked" not in re.search(r'<fieldset class="field".*?</fieldset>', page, re.S).group(0)


def test_a_failed_decision_lists_every_error_in_the_summary_and_saves_nothing(login, owner, factchecker, colleague):
    appeal = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker))
    client = login(colleague)
    page = html(client.post(f"/queue/appeals/{appeal.pk}/", {"outcome": "", "reason": ""}))
    assert summary(page) == [("id_outcome_0", "Choose whether the appeal is accepted or not."),
                             ("id_reason", "Give the reason the owner will read.")]
    page = html(client.post(f"/queue/appeals/{appeal.pk}/", {"outcome": "reversed", "reason": ""}))
    # In the page's order: the verdict sits with the outcome, above the reason.
    assert summary(page) == [("id_new_verdict", "Choose the verdict that replaces the current rating."),
                             ("id_public_rationale", "Give the public rationale of the new rating: the claim page "
                              "and ClaimReview publish it (the reason to the owner is not published)."),
                             ("id_reason", "Give the reason the owner will read.")]
    assert Appeal.objects.get(pk=appeal.pk).status == AppealStatus.OPEN


def test_upholding_ignores_a_verdict_chosen_before(login, owner, factchecker, colleague):
    target = scenarios.rated_post(owner=owner, rater=factchecker)
    appeal = dispute(owner, target)
    response = login(colleague).post(f"/queue/appeals/{appeal.pk}/",
                                     {"outcome": "upheld", "reason": "It stands.", "new_verdict": "true"})
    assert response.status_code == 302
    decided = Appeal.objects.get(pk=appeal.pk)
    assert (decided.status, decided.new_verdict) == (AppealStatus.UPHELD, "")
    assert Rating.objects.get(post=target, is_current=True).verdict == "false"


def test_a_removal_appeal_decision_has_no_verdict_and_reports_its_errors_in_a_summary(login, owner, staff_user):
    target = PostFactory(page=PageFactory())
    target.page.owners.add(owner)
    remove_post(staff=staff_user, post_id=target.pk, ground="hate", reason="Slurs.")
    appeal = file_appeal(owner=owner, post_id=target.pk, kind="removal", statement="A quotation.")
    page = html(login(StaffFactory()).post(f"/staff/appeals/{appeal.pk}/", {"reason": ""}))
    assert 'name="new_verdict"' not in page
    assert [target for target, _ in summary(page)] == ["id_outcome_0", "id_reason"]


def test_the_owner_is_told_in_plain_words_whether_the_appeal_was_accepted(login, owner, factchecker, colleague):
    accepted = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker, external_id="post-accepted"))
    decide_appeal(appeal_id=accepted.pk, reviewer=colleague, outcome="reversed", reason="The study is real.",
                  public_rationale="New evidence.", new_verdict="missing_context")
    refused = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker, external_id="post-refused"))
    decide_appeal(appeal_id=refused.pk, reviewer=colleague, outcome="upheld", reason="The study was retracted.")
    subjects = set(Notification.objects.filter(user=owner, kind=NotificationKind.APPEAL_DECIDED)
                   .values_list("subject", flat=True))
    assert subjects == {
        "Your appeal on post post-accepted was accepted: the rating was changed from False to Missing context",
        "Your appeal on post post-refused was not accepted",
    }
    body = Notification.objects.get(
        user=owner, kind=NotificationKind.APPEAL_DECIDED, subject__contains="post-refused"
    ).body
    assert "did not accept it. The rating False stands." in body and "reversed" not in body.lower()
    page = html(login(owner).get(f"/appeals/posts/{accepted.post_id}/"))
    assert "Your appeal was accepted: the rating was changed from False to Missing context." in page
    page = html(login(owner).get(f"/appeals/posts/{refused.post_id}/"))
    assert "Your appeal was not accepted: the rating stands." in page


def test_one_reversal_sends_the_owner_one_notice_and_one_email_even_when_the_post_has_copies(
    login, owner, factchecker, colleague, run_worker, mailoutbox, django_capture_on_commit_callbacks
):
    # A claim on the owner's page, a copy of it on another of their pages, and one on someone else's.
    # Each step's jobs are enqueued as its transaction commits, and run by a real worker.
    with django_capture_on_commit_callbacks(execute=True):
        arrive(flag("claim", CLAIM, page="page-claim"))
        rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post("claim").pk,
                               verdict="false", rationale="Invented.", sources=["https://a.example"])
        arrive(flag("own-copy", EXACT_COPY, page="page-own"), flag("their-copy", NEAR_COPY, page="page-theirs"))
    other = UserFactory(username="oscar")
    for name, user in (("claim", owner), ("own-copy", owner), ("their-copy", other)):
        post(name).page.owners.add(user)
    run_worker()
    assert all(matched_action(post(name)) for name in ("own-copy", "their-copy"))
    appeal = dispute(owner, post("claim"))
    before = set(Notification.objects.values_list("id", flat=True))
    mailoutbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        response = login(colleague).post(f"/queue/appeals/{appeal.pk}/", {
            "outcome": "reversed", "reason": "The study exists.",
                "public_rationale": "New evidence.", "new_verdict": "missing_context",
            "version": appeal.version})
    assert response.status_code == 302
    run_worker()

    new = Notification.objects.exclude(id__in=before)
    mine = list(new.filter(user=owner))
    assert [(n.kind, n.post_id) for n in mine] == [(NotificationKind.APPEAL_DECIDED, post("claim").pk)]
    assert "The same change applies to the copies of this post on your pages: own-copy" in mine[0].body
    assert [m.to for m in mailoutbox if owner.email in m.to] == [[owner.email]]
    # The other copy's owner was not told of the appeal: they hear of their own post's change.
    assert list(new.filter(user=other).values_list("post_id", flat=True)) == [post("their-copy").pk]
    assert Rating.objects.get(pk=rating.pk).is_current is False

    # A copy that arrives later is news to its owner: they are told of it.
    with django_capture_on_commit_callbacks(execute=True):
        arrive(flag("late-copy", EXACT_COPY, page="page-late"))
    post("late-copy").page.owners.add(owner)
    run_worker()
    assert matched_action(post("late-copy")).verdict == "missing_context"
    assert Notification.objects.filter(user=owner, post=post("late-copy")).count() == 1


# The desks' views and search


@pytest.fixture
def desk(owner, factchecker, colleague):
    """Three appeals: one open, one upheld, one reversed."""
    waiting = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker, text="Lemon water cures measles.",
                                                  external_id="p-open"))
    upheld = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker, text="Vaccines contain chips.",
                                                 external_id="p-upheld"))
    decide_appeal(appeal_id=upheld.pk, reviewer=colleague, outcome="upheld", reason="Stands.")
    other = UserFactory(username="wendy")
    reversed_ = dispute(other, scenarios.rated_post(owner=other, rater=factchecker, text="The bridge closed on Monday.",
                                                    external_id="p-rev"))
    decide_appeal(appeal_id=reversed_.pk, reviewer=colleague, outcome="reversed", reason="It did.",
                  public_rationale="New evidence.", new_verdict="true")
    return {"open": waiting, "upheld": upheld, "reversed": reversed_}


def shown(page: str) -> list[str]:
    return re.findall(r'class="post-text appeal-link">Post <bdi class="mono">([^<]+)</bdi>', page)


def test_the_appeals_queue_has_open_decided_and_all_views_marked_current(login, colleague, desk):
    client = login(colleague)
    page = html(client.get("/queue/appeals/"))
    assert shown(page) == ["p-open"]
    assert '<a href="?view=open" aria-current="page">Open</a>' in page
    page = html(client.get("/queue/appeals/?view=decided"))
    assert shown(page) == ["p-rev", "p-upheld"]  # the latest decision first
    assert '<a href="?view=decided" aria-current="page">Decided</a>' in page
    assert "now True" in page
    assert sorted(shown(html(client.get("/queue/appeals/?view=all")))) == ["p-open", "p-rev", "p-upheld"]


@pytest.mark.parametrize("query, expected", [
    ("p-upheld", ["p-upheld"]),            # a post's external id
    ("bridge monday", ["p-rev"]),          # words of the post's text, in any order and case
    ("wendy", ["p-rev"]),                  # the owner who filed
    ("olga vaccines", ["p-upheld"]),       # every word must match
    ("nothing-like-this", []),
])
def test_the_appeals_queue_searches_ids_text_and_filers(login, colleague, desk, query, expected):
    page = html(login(colleague).get("/queue/appeals/", {"view": "all", "q": query}))
    assert sorted(shown(page)) == expected
    assert f'value="{query}"' in page
    if not expected:
        assert f"No appeals match “{query}”." in page


def test_paging_keeps_the_view_and_the_search(login, owner, factchecker, colleague, monkeypatch):
    monkeypatch.setattr("moderation.views_appeals.PAGE_SIZE", 2)
    for n in range(3):
        appeal = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker, text=f"Claim {n} about tides."))
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="Stands.")
    page = html(login(colleague).get("/queue/appeals/", {"view": "decided", "q": "tides"}))
    assert len(shown(page)) == 2 and 'href="?view=decided&amp;q=tides&amp;page=2"' in page


@pytest.mark.parametrize("appeals", [3, 12])
@pytest.mark.parametrize("params", [{}, {"view": "decided"}, {"view": "all", "q": "cure olga"}])
def test_every_view_of_the_appeals_queue_renders_in_a_fixed_number_of_queries(
    login, owner, factchecker, colleague, appeals, params, django_assert_max_num_queries
):
    for i in range(appeals):
        appeal = dispute(owner, scenarios.rated_post(owner=owner, rater=factchecker),
                         now=timezone.now() - timedelta(hours=i))
        if i % 2:
            decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="Stands.")
        elif i % 3 == 0:
            start_review(appeal_id=appeal.pk, reviewer=colleague)
    client = login(colleague)
    # Session, user with their organisation, the appeals with their posts, pages, ratings and reviewers; the
    # navigation's counts (issue 29).
    with django_assert_max_num_queries(4):
        response = client.get("/queue/appeals/", params)
    assert len(shown(html(response))) == {"": (appeals + 1) // 2, "decided": appeals // 2}.get(
        params.get("view", ""), appeals)


def test_the_staff_desk_has_the_same_views(login, owner, staff_user, django_assert_max_num_queries):
    for n in range(2):
        target = PostFactory(page=PageFactory(), external_id=f"removed-{n}")
        target.page.owners.add(owner)
        remove_post(staff=staff_user, post_id=target.pk, ground="violence", reason="Threats.")
        appeal = file_appeal(owner=owner, post_id=target.pk, kind="removal", statement="No threat meant.")
    decide_appeal(appeal_id=appeal.pk, reviewer=StaffFactory(), outcome="upheld", reason="Stands.")
    client = login(StaffFactory())
    with django_assert_max_num_queries(5):  # the navigation's counts (issue 29) and the appeals nobody can decide
        page = html(client.get("/staff/appeals/", {"view": "decided"}))
    assert shown(page) == ["removed-1"] and '<a href="?view=decided" aria-current="page">Decided</a>' in page
    assert shown(html(client.get("/staff/appeals/"))) == ["removed-0"]
