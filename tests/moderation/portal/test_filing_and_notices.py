"""The page owners' portal in the browser: filing and withdrawing appeals, outcomes, and the owner's
notifications."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from dateutil.relativedelta import relativedelta
from django.utils import timezone

from factcheck.members import organisation_of
from factcheck.models import Post
from moderation.appeals import AppealRefused, decide_appeal, file_appeal
from moderation.models import Appeal, AppealStatus, Notification, RepeatOffenderPolicy
from moderation.staff_actions import lift_action, override_action, remove_post
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)
from tests.moderation.portal.pages import file, text

pytestmark = pytest.mark.django_db


# Filing


def test_the_owner_files_a_dispute_from_the_post_page(login, owner, rated_post):
    response = file(login(owner), rated_post, statement="The quote is real.",
                    evidence_urls="https://video.example/full\n\nhttps://archive.example/1")
    assert "Your dispute appeal was filed." in text(response)
    appeal = Appeal.objects.get()
    assert (appeal.kind, appeal.status, appeal.filed_by) == ("dispute", "open", owner)
    assert appeal.statement == "The quote is real."
    assert appeal.evidence_urls == ["https://video.example/full", "https://archive.example/1"]
    assert appeal.rating == rated_post.ratings.get(is_current=True)
    assert "Dispute appeal filed" in text(response) and ">Withdraw</button>" in text(response)


def test_the_owner_files_a_correction_with_what_was_corrected(login, owner, rated_post):
    file(login(owner), rated_post, kind="correction", statement="Fixed the figure.",
         correction_details="Second paragraph now says 12%, not 40%.")
    appeal = Appeal.objects.get()
    assert (appeal.kind, appeal.correction_details) == ("correction", "Second paragraph now says 12%, not 40%.")


def test_a_correction_whose_statement_says_what_was_corrected_is_filed(login, owner, rated_post):
    response = file(login(owner), rated_post, kind="correction", statement="Fixed: it now says 12%, not 40%.")
    assert "was filed" in text(response)
    assert (Appeal.objects.get().kind, Appeal.objects.get().correction_details) == ("correction", "")


def test_the_owner_appeals_a_removal(login, owner, removed_post):
    client = login(owner)
    assert "Removal appeal" in text(client.get(f"/appeals/posts/{removed_post.pk}/"))
    response = file(client, removed_post, kind="removal", statement="It names a public figure, not a private one.")
    assert "Trust-and-safety staff will review it" in text(response)
    appeal = Appeal.objects.get()
    assert (appeal.kind, appeal.action.post) == ("removal", removed_post)


def test_a_kind_that_does_not_apply_is_not_offered_and_not_filed(login, owner, rated_post):
    response = file(login(owner), rated_post, kind="removal", statement="Why?")
    assert "Choose what you appeal." in text(response)
    assert not Appeal.objects.exists()


def test_a_second_appeal_against_the_same_decision_is_refused_with_a_message(login, owner, rated_post):
    client = login(owner)
    file(client, rated_post)
    response = file(client, rated_post, kind="correction", statement="Fixed.", correction_details="Title.")
    assert "An appeal against this decision is already open." in text(response)
    assert "An appeal against this rating is open." in text(response)
    assert Appeal.objects.count() == 1


def seen_on(response) -> str:
    """The decisions the page's appeal form carries (its hidden `seen`)."""
    return re.search(r'name="seen" value="([^"]+)"', text(response)).group(1)


def read_then_rated_again(client, post, factchecker) -> str:
    """The owner opens the post's page; then the rating's organisation rates the post again (Partly false). What the
    page's form carries."""
    seen = seen_on(client.get(f"/appeals/posts/{post.pk}/"))
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    DecisionFactory(post=post, reviewer=colleague, verdict="partly_false", change_reason="New source.")
    return seen


def test_an_appeal_typed_on_a_page_whose_rating_changed_is_not_filed_against_the_new_one(
    login, owner, rated_post, factchecker
):
    client = login(owner)
    # While the owner writes about the False rating, its organisation rates the post again: Partly false.
    seen = read_then_rated_again(client, rated_post, factchecker)
    response = file(client, rated_post, statement="The False rating is wrong: QUOTE-IS-REAL.", seen=seen)
    page = text(response)
    assert "The decision changed after you opened this page" in page and "QUOTE-IS-REAL" in page
    assert not Appeal.objects.exists()
    # Having read it, the owner files against what the page now shows.
    again = seen_on(response)
    assert again != seen
    file(client, rated_post, statement="Partly false is wrong too.", seen=again)
    assert Appeal.objects.get().rating.verdict == "partly_false"


def test_a_page_whose_rating_changed_says_so_before_any_other_problem_with_the_form(
    login, owner, rated_post, factchecker
):
    # A statement over the limit was refused for its length alone, and the form quietly took the new rating's
    # version: shortened and sent again, it filed "the False rating is wrong" against Partly false.
    client = login(owner)
    seen = read_then_rated_again(client, rated_post, factchecker)
    page = text(file(client, rated_post, statement="x" * 2001, seen=seen))
    assert "The decision changed after you opened this page" in page
    assert file(client, rated_post, statement="Short now.", seen=seen).status_code == 409  # still the old page's
    assert not Appeal.objects.exists()


def test_a_removal_appeal_sent_after_the_removal_was_lifted_says_the_decision_changed(login, owner, page):
    post = PostFactory(page=page)
    removal = remove_post(staff=StaffFactory(), post_id=post.pk, ground="harassment", reason="Named a private person.")
    client = login(owner)
    seen = seen_on(client.get(f"/appeals/posts/{post.pk}/"))
    lift_action(actor=StaffFactory(), action_id=removal.pk, reason="Reviewed: a public figure.")
    response = file(client, post, kind="removal", statement="REMOVAL-APPEAL-TEXT", seen=seen)
    page_text = text(response)
    assert response.status_code == 409
    assert "The decision changed after you opened this page" in page_text and "REMOVAL-APPEAL-TEXT" in page_text
    assert "Choose what you appeal" not in page_text
    assert not Appeal.objects.exists()


def test_an_appeal_typed_while_another_was_filed_is_shown_back_not_lost(login, owner, rated_post):
    client = login(owner)
    file(client, rated_post, statement="First, from another tab.")
    response = file(client, rated_post, kind="correction", statement="SECOND-TAB-TEXT", correction_details="Title.")
    assert response.redirect_chain == [(f"/appeals/posts/{rated_post.pk}/", 302)]  # back to the post's page
    assert "An appeal against this decision is already open." in text(response)
    assert "What you wrote (not saved)" in text(response) and "SECOND-TAB-TEXT" in text(response)
    assert Appeal.objects.count() == 1
    assert "SECOND-TAB-TEXT" not in text(client.get(f"/appeals/posts/{rated_post.pk}/"))  # shown once


def test_filing_after_the_six_month_window_is_refused_with_a_message(login, owner, page, factchecker):
    long_ago = timezone.now() - timedelta(days=200)
    # Rated and decided 200 days ago (history is append-only, so it is made in the past, not rewritten).
    old_post = PostFactory(page=page)
    DecisionFactory(post=old_post, reviewer=factchecker, created_at=long_ago)
    client = login(owner)
    closed = long_ago + relativedelta(months=6)
    said = f"The 6-month window to appeal this rating closed at the end of {closed.day} {closed:%b %Y}."
    page_text = text(client.get(f"/appeals/posts/{old_post.pk}/"))
    assert said in page_text and 'name="statement"' not in page_text  # said, and no form to fill in vain
    assert said in text(file(client, old_post))
    assert not Appeal.objects.exists()


@pytest.mark.parametrize(("filed_at", "filed"), [
    ("2026-12-06T19:59:59+00:00", True),   # six months to the second: the notice's time of day
    ("2026-12-06T23:30:00-08:00", True),   # late on the day given, in Los Angeles (7 Dec, 07:30 UTC)
    ("2026-12-07T11:59:59+00:00", True),   # still 6 Dec somewhere on Earth (UTC-12)
    ("2026-12-07T12:00:00+00:00", False),  # 6 Dec has ended everywhere
])
def test_the_window_stays_open_to_the_end_of_the_day_given_wherever_the_owner_lives(owner, page, factchecker,
                                                                                    filed_at, filed):
    told = datetime.fromisoformat("2026-06-06T20:00:00+00:00")
    post = PostFactory(page=page)
    decision = DecisionFactory(post=post, reviewer=factchecker, created_at=told)
    assert decision.action.statement.how_to_appeal.endswith("You can appeal until 6 Dec 2026.")
    now = datetime.fromisoformat(filed_at)
    if filed:
        assert file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Real.", now=now).pk
    else:
        with pytest.raises(AppealRefused, match=r"^The 6-month window to appeal this decision closed at the end "
                                                r"of 6 Dec 2026\.$"):
            file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Real.", now=now)


def test_an_over_long_statement_is_refused_next_to_the_field_and_kept_for_editing(login, owner, rated_post):
    response = file(login(owner), rated_post, statement="x" * 2001)
    assert "Keep the statement to 2,000 characters (it has 2,001)." in text(response)
    assert "x" * 2001 in text(response)
    assert not Appeal.objects.exists()


def test_evidence_urls_that_are_not_http_or_https_are_refused(login, owner, rated_post):
    response = file(login(owner), rated_post, evidence_urls="javascript:alert(1)\nftp://files.example/a")
    assert "Not an http:// or https:// URL: javascript:alert(1)" in text(response)
    assert "Not an http:// or https:// URL: ftp://files.example/a" in text(response)
    assert not Appeal.objects.exists()


def test_a_post_with_nothing_to_appeal_offers_no_form_and_files_nothing(login, owner, page):
    post = PostFactory(page=page)
    client = login(owner)
    assert "Nothing to appeal" in text(client.get(f"/appeals/posts/{post.pk}/"))
    response = file(client, post)
    assert "This post has no rating or removal to appeal." in text(response)
    assert not Appeal.objects.exists()


# Withdrawing, outcome, notifications


def test_the_owner_withdraws_an_open_appeal_and_can_file_again(login, owner, rated_post):
    client = login(owner)
    file(client, rated_post)
    appeal = Appeal.objects.get()
    response = client.post(f"/appeals/{appeal.pk}/withdraw/", follow=True)
    assert "Your appeal was withdrawn." in text(response)
    appeal.refresh_from_db()
    assert appeal.status == AppealStatus.WITHDRAWN
    assert "Appeal withdrawn" in text(response) and ">Withdraw</button>" not in text(response)
    again = client.post(f"/appeals/{appeal.pk}/withdraw/", follow=True)
    assert "This appeal was already withdrawn." in text(again)
    file(client, rated_post)
    assert Appeal.objects.filter(status=AppealStatus.OPEN).count() == 1


def test_the_owner_reads_the_outcome_and_the_restored_distribution(login, owner, rated_post, factchecker):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="The video is authentic.")
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                  public_rationale="New evidence.", new_verdict="true", reason="The full video shows it.")
    html = text(login(owner).get(f"/appeals/posts/{rated_post.pk}/"))
    assert "Full distribution" in html
    assert "Your appeal was accepted: the rating was changed from False to True." in html
    assert "The full video shows it." in html
    assert "Appeal accepted" in html and "Appeal reversed" not in html  # the timeline, in plain words
    assert colleague.username not in html


def test_notifications_are_listed_and_marked_read_one_by_one_or_all_shown(login, owner, rated_post, page, factchecker):
    second = PostFactory(page=page)
    DecisionFactory(post=second, reviewer=factchecker, verdict="partly_false")
    mine = list(Notification.objects.filter(user=owner).order_by("created_at", "id"))
    assert len(mine) == 2
    client = login(owner)
    html = text(client.get("/appeals/"))
    assert f"Your post {rated_post.external_id} was rated False" in html
    assert f"Your post {second.external_id} was rated Partly false" in html
    response = client.post("/appeals/notifications/read/", {"notification": str(mine[0].pk),
                                                            "shown": [str(n.pk) for n in mine]}, follow=True)
    assert "1 notification marked as read." in text(response)
    assert f"Your post {rated_post.external_id} was rated False" not in text(response)
    assert list(Notification.objects.filter(user=owner, read_at__isnull=True)) == [mine[1]]
    response = client.post("/appeals/notifications/read/", {"all": "1", "shown": [str(mine[1].pk)]}, follow=True)
    assert "Nothing new." in text(response)
    assert not Notification.objects.filter(user=owner, read_at__isnull=True).exists()


LONG_RATIONALE = "The quoted minister never said this: the speech's transcript and video show other words."


def notices_shown(html: str) -> tuple[str, list[str]]:
    """The notifications section as the owner reads it before opening any fold, and what each fold holds."""
    section = html[html.index('id="notifications-title"'):]
    section = section[:section.index("</section>")]
    folds = re.findall(r'<details class="repeated">(.*?)</details>', section, re.S)
    return re.sub(r'<details class="repeated">.*?</details>', "", section, flags=re.S), folds


def three_false_ratings(page, factchecker, **policy_fields) -> list[Post]:
    """Three posts of the page rated False one after the other, under the repeat-offender policy with
    `policy_fields` changed (by default the third strike makes the page a repeat offender)."""
    policy = RepeatOffenderPolicy.current()
    for name, value in policy_fields.items():
        setattr(policy, name, value)
    policy.save()
    posts = [PostFactory(page=page) for _ in range(3)]
    for post in posts:
        DecisionFactory(post=post, reviewer=factchecker, rationale=LONG_RATIONALE)
    return posts


def test_notices_repeating_an_explanation_show_it_once_and_each_notices_own_facts(login, owner, page, factchecker):
    # Under the threshold: a third strike would make the page a repeat offender, which its notice says too.
    posts = three_false_ratings(page, factchecker, strike_threshold=4)
    html = text(login(owner).get("/appeals/"))
    visible, folds = notices_shown(html)
    # Each notice's own facts stay in view: which post, what happened, until when it can be appealed.
    for post in posts:
        sor = Post.objects.get(pk=post.pk).actions.get().statement
        assert (f"rated your post {post.external_id} on Daily Wonders as False. "
                f"You can appeal until {sor.appeal_by.day} {sor.appeal_by:%b %Y}.") in visible
    # The explanation they share (what the decision does, the rationale, how to appeal) is read once.
    what = Post.objects.get(pk=posts[0].pk).actions.get().statement.what
    for shared in (what, f"Their rationale: {LONG_RATIONALE}", "Dispute the rating if you think it is wrong"):
        escaped = shared.replace("'", "&#x27;").replace('"', "&quot;")
        assert visible.count(escaped) == 1, shared
        assert sum(fold.count(escaped) for fold in folds) == 2, shared  # the two notices below fold it
    assert len(folds) == 2 and all("As in a notice above" in fold for fold in folds)


def test_a_label_ending_in_a_full_stop_gets_no_second_one_in_notices_and_statements(
    login, owner, page, factchecker, staff_user
):
    satire = PostFactory(page=page)
    # The default policy labels it "Satire." and does nothing else.
    DecisionFactory(post=satire, reviewer=factchecker, verdict="satire")
    what = satire.actions.get().statement.what
    assert what == 'Your post stays up, but it carries the label "Satire."'
    rated = PostFactory(page=page)
    # "False information. Checked by independent fact-checkers.", then more
    DecisionFactory(post=rated, reviewer=factchecker)
    assert rated.actions.get().statement.what.endswith('it carries the label "False information. '
                                                       'Checked by independent fact-checkers."')
    override_action(staff=staff_user, action_id=rated.actions.get().pk, feed_multiplier="0.6",
                    label="Disputed claim?", reason="Only partly false.")
    bodies = " ".join(Notification.objects.filter(user=owner).values_list("body", flat=True))
    assert 'feed distribution ×0.6, label "Disputed claim?"\n' in bodies
    client = login(owner)
    pages = text(client.get("/appeals/")) + text(client.get(f"/appeals/posts/{satire.pk}/"))
    for told in (bodies, pages.replace("&quot;", '"')):
        assert not DOUBLED.findall(told), DOUBLED.findall(told)


# After a label's own stop or question mark, another mark (before or after its closing quote) is one too many.
DOUBLED = re.compile(r'[.?!]["”]?[.;:,]|[.?!]\)[.]')


def test_an_owner_cannot_mark_someone_elses_notifications_read(login, owner, rated_post):
    other = UserFactory()
    theirs = Notification.objects.create(user=other, kind="decision", subject="s", body="b", created_at=timezone.now())
    login(owner).post("/appeals/notifications/read/", {"notification": str(theirs.pk)})
    theirs.refresh_from_db()
    assert theirs.read_at is None


def test_the_rating_that_makes_the_page_a_repeat_offender_says_so_in_its_notice_and_statement(
    login, owner, page, factchecker
):
    """The owner was told only the post's own multiplier ("shown about 80% less") of a post shown 90% less on a
    page that had stopped earning, while the exported statement said the page's monetisation was suspended."""
    posts = three_false_ratings(page, factchecker)
    first, third = (Post.objects.get(pk=post.pk).actions.get().statement for post in (posts[0], posts[2]))
    page_words = ("When this was decided your page was a repeat offender (3 fact-check strikes): while it is one, all "
                  "its posts are shown about 50% less on top of their own ratings, and it cannot earn money.")
    assert page_words in third.what and "decision_monetary" in third.transparency
    assert "repeat offender" not in first.what and "decision_monetary" not in first.transparency
    notice = Notification.objects.filter(user=owner, post=posts[2]).get()
    assert page_words in notice.body


def test_a_policy_that_takes_only_the_money_is_told_without_a_demotion(login, owner, page, factchecker):
    posts = three_false_ratings(page, factchecker, page_multiplier=1)
    what = Post.objects.get(pk=posts[2].pk).actions.get().statement.what
    assert what.endswith("When this was decided your page was a repeat offender (3 fact-check strikes): while it is "
                         "one, it cannot earn money.")
    assert "shown about 0%" not in what


def test_a_dispute_sent_twice_on_a_removed_post_says_it_is_already_open(login, owner, rated_post):
    """A second submit of the dispute (double click, another tab) while the post's removal can still be appealed:
    told the dispute is open, the text shown back apart, not left in a form offering only a removal appeal."""
    remove_post(staff=StaffFactory(), post_id=rated_post.pk, ground="harassment", reason="Named a private person.")
    client = login(owner)
    file(client, rated_post, statement="First, from another tab.")
    response = file(client, rated_post, statement="SECOND-CLICK-TEXT")
    assert response.redirect_chain == [(f"/appeals/posts/{rated_post.pk}/", 302)]
    page_text = text(response)
    assert "An appeal against this decision is already open." in page_text
    assert "Choose what you appeal" not in page_text
    assert "What you wrote (not saved)" in page_text and "SECOND-CLICK-TEXT" in page_text
    assert Appeal.objects.count() == 1


def test_a_dispute_written_while_staff_lifted_the_posts_removal_is_filed(login, owner, rated_post):
    """The page showed the rating and the removal; staff lifted the removal meanwhile. The dispute is against the
    rating, as the page showed it: filed, not refused as if the decision it appeals had changed."""
    removal = remove_post(staff=StaffFactory(), post_id=rated_post.pk, ground="harassment", reason="Named a person.")
    client = login(owner)
    seen = seen_on(client.get(f"/appeals/posts/{rated_post.pk}/"))
    lift_action(actor=StaffFactory(), action_id=removal.pk, reason="Reviewed: a public figure.")
    response = file(client, rated_post, statement="DISPUTE-TEXT", seen=seen)
    assert response.status_code == 200 and "was filed" in text(response)
    assert Appeal.objects.get().kind == "dispute"


def test_a_form_shown_again_with_its_errors_carries_the_decisions_the_page_shows_now(login, owner, rated_post):
    """Sent without a kind after staff removed the post: the page shows the removal now, so the form it shows again
    says so, and a removal appeal filed from it is not refused as if the owner had not read it."""
    client = login(owner)
    seen = seen_on(client.get(f"/appeals/posts/{rated_post.pk}/"))
    remove_post(staff=StaffFactory(), post_id=rated_post.pk, ground="harassment", reason="Named a private person.")
    again = file(client, rated_post, kind="", statement="REMOVAL-TEXT", seen=seen)
    assert "Choose what you appeal" in text(again)
    response = file(client, rated_post, kind="removal", statement="REMOVAL-TEXT", seen=seen_on(again))
    assert response.status_code == 200 and "was filed" in text(response)
    assert Appeal.objects.get().kind == "removal"
