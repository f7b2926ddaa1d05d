"""The page owners' portal in the browser: who may see it, what it shows, filing and withdrawing appeals."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from dateutil.relativedelta import relativedelta
from django.utils import timezone

from factcheck.models import Match, MatchMethod, MatchState, Post, QueueState
from factcheck.ratings import record_rating
from moderation.appeals import decide_appeal, file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Appeal, AppealStatus, Notification, RatingDecision, RepeatOffenderPolicy, Strike
from moderation.propagation import apply_matched_rating
from moderation.staff_actions import override_action, remove_post
from tests.factories import (
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def rate(post, reviewer, *, verdict="false", rationale="The quote is invented.", **kw):
    rating = record_rating(claim_if_unclaimed=True, reviewer=reviewer, post_id=post.pk, verdict=verdict, rationale=rationale,
                           sources=["https://source.example/evidence"], article_url=kw.get("article_url", ""),
                           change_reason="Re-checked with new evidence.")
    apply_rating(rating_id=rating.pk)
    return rating


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def page(owner):
    page = PageFactory(name="Daily Wonders")
    page.owners.add(owner)
    return page


@pytest.fixture
def rated_post(page, factchecker):
    post = PostFactory(page=page, text="A miracle cure was found.")
    FlagFactory(post=post, source="classifier")
    rate(post, factchecker, article_url="https://factorg.example/miracle-cure")
    return post


@pytest.fixture
def removed_post(page, staff_user):
    post = PostFactory(page=page)
    remove_post(staff=staff_user, post_id=post.pk, ground="harassment", reason="Targets a private person by name.")
    return post


def file(client, post, **data):
    payload = {"kind": "dispute", "statement": "The quote is real.", "evidence_urls": "", "correction_details": ""}
    payload.update(data)
    return client.post(f"/appeals/posts/{post.pk}/", payload, follow=True)


def text(response) -> str:
    return response.content.decode()


# Who may see it


def portal_urls(post, appeal):
    return [
        ("get", "/appeals/"), ("post", "/appeals/notifications/read/"), ("get", f"/appeals/posts/{post.pk}/"),
        ("post", f"/appeals/posts/{post.pk}/"), ("post", f"/appeals/{appeal.pk}/withdraw/"),
    ]


def test_anonymous_visitors_are_sent_to_the_login_page_from_every_portal_url(client, owner, rated_post):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="Real quote.")
    for method, url in portal_urls(rated_post, appeal):
        response = getattr(client, method)(url, {"kind": "dispute", "statement": "x"})
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url
    assert Appeal.objects.count() == 1
    assert Appeal.objects.get().status == AppealStatus.OPEN


@pytest.mark.parametrize("make_user", [FactCheckerFactory, StaffFactory, PlatformUserFactory])
def test_factcheckers_staff_and_the_platform_are_refused_every_portal_url(login, make_user, owner, rated_post):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="Real quote.")
    client = login(make_user())
    for method, url in portal_urls(rated_post, appeal):
        response = getattr(client, method)(url, {"kind": "correction", "statement": "x", "correction_details": "y"})
        assert response.status_code == 403, url
        assert "This page is for page owners" in text(response)
    assert Appeal.objects.count() == 1
    assert Appeal.objects.get().status == AppealStatus.OPEN


def test_the_owner_of_another_page_sees_none_of_this_post_and_cannot_act_on_it(login, owner, rated_post):
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="Real quote.")
    other = UserFactory()
    PageFactory(name="Other Page").owners.add(other)
    client = login(other)
    portal = client.get("/appeals/")
    assert portal.status_code == 200
    assert rated_post.external_id not in text(portal) and "Daily Wonders" not in text(portal)
    assert client.get(f"/appeals/posts/{rated_post.pk}/").status_code == 404
    assert client.post(f"/appeals/posts/{rated_post.pk}/", {"kind": "correction", "statement": "x",
                                                            "correction_details": "y"}).status_code == 404
    assert client.post(f"/appeals/{appeal.pk}/withdraw/").status_code == 404
    assert Appeal.objects.count() == 1
    assert Appeal.objects.get().status == AppealStatus.OPEN


def test_a_page_owner_lands_on_the_portal_from_the_start_page(login, owner):
    assert login(owner).get("/")["Location"] == "/appeals/"


# What the portal shows


def test_the_portal_lists_decided_posts_with_distribution_rating_and_reasons(login, owner, rated_post, factchecker):
    PostFactory(page=rated_post.page, external_id="never-decided")
    response = login(owner).get("/appeals/")
    html = text(response)
    assert response.status_code == 200
    assert rated_post.external_id in html and "never-decided" not in html
    assert "Shown about 80% less in news feeds (×0.2)" in html
    assert "False information. Checked by independent fact-checkers." in html
    assert factchecker.organisation.name in html and "The quote is invented." in html
    assert "https://source.example/evidence" in html and "https://factorg.example/miracle-cure" in html
    assert "Statement of reasons: Your post stays up, but" in html
    assert "Detection: an automated classifier flagged it." in html
    assert "You can appeal until" in html


def test_the_portal_shows_repeat_offender_state_with_the_day_each_strike_ages_out(login, owner, page, factchecker):
    posts = [PostFactory(page=page) for _ in range(3)]
    for post in posts:
        rate(post, factchecker)
    window = RepeatOffenderPolicy.current().window_days
    html = text(login(owner).get("/appeals/"))
    assert "Repeat offender" in html and "Monetisation suspended." in html
    assert "3 fact-check strikes counted" in html
    for strike in Strike.objects.filter(page=page):
        assert f"ages out on <strong>{(strike.created_at + timedelta(days=window)):%-d %b %Y}</strong>" in html


def test_a_page_in_good_standing_and_a_removal_are_shown_as_such(login, owner, removed_post):
    html = text(login(owner).get("/appeals/"))
    assert "In good standing" in html and "monetisation active" in html
    assert "1 community-standards strike" in html
    assert "Removed</span> Not shown to anyone." in html
    assert "Community standards: Harassment" in html


def test_the_post_page_shows_reasons_the_filing_form_and_the_timeline(login, owner, rated_post, factchecker):
    html = text(login(owner).get(f"/appeals/posts/{rated_post.pk}/"))
    assert "Your post stays up, but your post is shown about 80% less in news feeds" in html
    assert "Misinformation policy" in html
    assert f"Rated False by {factchecker.organisation.name}: The quote is invented." in html
    assert "You can appeal until" in html
    for field, label in (("statement", "Your statement"), ("evidence_urls", "Evidence URLs"),
                         ("correction_details", "What was corrected, and where")):
        assert f'<label for="id_{field}">{label}' in html and f'id="id_{field}"' in html
    assert "Dispute (the rating is wrong)" in html and "Removal appeal" not in html
    assert "up to 2,000 characters" in html
    assert "Flagged (classifier)" in html and "Rated False" in html
    assert factchecker.username not in html  # owners read the organisation, never the person


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


def test_a_correction_without_details_is_refused_next_to_the_field(login, owner, rated_post):
    response = file(login(owner), rated_post, kind="correction", statement="Fixed.")
    assert "Say what you corrected, and where." in text(response)
    assert not Appeal.objects.exists()


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


def test_filing_after_the_six_month_window_is_refused_with_a_message(login, owner, page, factchecker):
    long_ago = timezone.now() - timedelta(days=200)
    # Rated and decided 200 days ago (history is append-only, so it is made in the past, not rewritten).
    old_post = PostFactory(page=page)
    rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=old_post.pk, verdict="false",
                           rationale="Invented.", sources=["https://source.example/evidence"], now=long_ago)
    apply_rating(rating_id=rating.pk, now=long_ago)
    response = file(login(owner), old_post)
    closed = long_ago + relativedelta(months=6)
    assert f"The 6-month window to appeal this decision closed on {closed.day} {closed:%b %Y}." in text(response)
    assert not Appeal.objects.exists()


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
    colleague = FactCheckerFactory(organisation=factchecker.organisation)
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="reversed",
                  new_verdict="true", reason="The full video shows it.")
    html = text(login(owner).get(f"/appeals/posts/{rated_post.pk}/"))
    assert "Full distribution" in html
    assert "Your appeal was accepted: the rating was changed to True." in html and "The full video shows it." in html
    assert "Appeal accepted" in html and "Appeal reversed" not in html  # the timeline, in plain words
    assert colleague.username not in html


def test_notifications_are_listed_and_marked_read_one_by_one_or_all_shown(login, owner, rated_post, page, factchecker):
    second = PostFactory(page=page)
    rate(second, factchecker, verdict="partly_false")
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


def test_notices_repeating_an_explanation_show_it_once_and_each_notices_own_facts(login, owner, page, factchecker):
    posts = [PostFactory(page=page) for _ in range(3)]
    for post in posts:
        rate(post, factchecker, rationale=LONG_RATIONALE)
    html = text(login(owner).get("/appeals/"))
    visible, folds = notices_shown(html)
    # Each notice's own facts stay in view: which post, what happened, until when it can be appealed.
    for post in posts:
        sor = Post.objects.get(pk=post.pk).actions.get().statement
        assert (f"rated your post {post.external_id} on Daily Wonders False. "
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
    rate(satire, factchecker, verdict="satire")  # the default policy labels it "Satire." and does nothing else
    what = satire.actions.get().statement.what
    assert what == 'Your post stays up, but it carries the label "Satire."'
    rated = PostFactory(page=page)
    rate(rated, factchecker)  # "False information. Checked by independent fact-checkers.", then more
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


# Escaping


def test_html_and_script_in_statements_reasons_and_notifications_are_shown_escaped(
    login, owner, page, factchecker, staff_user
):
    script = "<script>alert('x')</script>"
    rated = PostFactory(page=page, text=f"Post text {script}")
    rate(rated, factchecker, rationale=f"Rationale <b>bold</b> {script}")
    removed = PostFactory(page=page)
    remove_post(staff=staff_user, post_id=removed.pk, ground="hate", reason=f"Removal reason {script}")
    client = login(owner)
    file(client, rated, statement=f"Statement {script}", evidence_urls="https://e.example/?q=<img>")
    appeal = Appeal.objects.get()
    decide_appeal(appeal_id=appeal.pk, reviewer=FactCheckerFactory(organisation=factchecker.organisation),
                  outcome="upheld", reason=f"Outcome <img src=x onerror=alert(1)> {script}")
    pages = [client.get(url) for url in ("/appeals/", f"/appeals/posts/{rated.pk}/", f"/appeals/posts/{removed.pk}/")]
    for response in pages:
        html = text(response)
        assert "<script>" not in html and "<b>bold" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "Statement &lt;script&gt;" in text(pages[1]) and "Rationale &lt;b&gt;bold&lt;/b&gt;" in text(pages[1])
    assert "Outcome &lt;img src=x onerror=alert(1)&gt;" in text(pages[1])
    assert "Removal reason &lt;script&gt;" in text(pages[2])
    assert "Outcome &lt;img src=x" in text(pages[0])  # the notification of the decided appeal


# Query counts


def _decided_world(owner, factchecker, staff_user, *, pages: int, posts_per_page: int) -> list:
    posts = []
    for n in range(pages):
        page = PageFactory()
        page.owners.add(owner)
        for m in range(posts_per_page):
            post = PostFactory(page=page)
            FlagFactory(post=post, source="classifier")
            FlagFactory(post=post)
            rate(post, factchecker)
            if m % 2:
                remove_post(staff=staff_user, post_id=post.pk, ground="violence", reason="Threat.")
            file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Wrong.")
            posts.append(post)
    return posts


@pytest.mark.parametrize("pages, posts_per_page", [(1, 1), (4, 6)])
def test_the_portal_renders_in_a_fixed_number_of_queries(login, owner, factchecker, staff_user,
                                                         django_assert_max_num_queries, pages, posts_per_page):
    _decided_world(owner, factchecker, staff_user, pages=pages, posts_per_page=posts_per_page)
    RepeatOffenderPolicy.current()
    client = login(owner)
    with django_assert_max_num_queries(11):
        response = client.get("/appeals/")
    assert response.status_code == 200
    # 24 posts run past one page of 20: the rest are a click away.
    assert text(response).count('class="card owner-post"') == min(pages * posts_per_page, 20)
    assert ("Older →" in text(response)) == (pages * posts_per_page > 20)


@pytest.mark.parametrize("appeals", [1, 6])
def test_the_post_page_renders_in_a_fixed_number_of_queries(login, owner, page, factchecker, staff_user,
                                                            django_assert_max_num_queries, appeals):
    post = PostFactory(page=page)
    colleague = FactCheckerFactory(organisation=factchecker.organisation)
    for n in range(appeals):
        FlagFactory(post=post)
        rate(post, factchecker, rationale=f"Rating {n}.")
        appeal = file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=f"Wrong {n}.")
        decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason=f"Stands {n}.")
    remove_post(staff=staff_user, post_id=post.pk, ground="violence", reason="Threat.")
    client = login(owner)
    with django_assert_max_num_queries(11):
        response = client.get(f"/appeals/posts/{post.pk}/")
    assert response.status_code == 200
    assert text(response).count("Appeal not accepted") == appeals


# A copy matched to a rated claim (PRODUCT.md, Near-duplicates)


SOURCE_TEXT = "Doctors confirm that lemon water cures measles in three days, share before it is deleted."


def matched_copy(page, rating, *, state=MatchState.AUTO, text="Doctors confirm lemon water cures measles!!"):
    """A post of `page` linked to the rated claim, carrying its rating as a matched rating."""
    copy = PostFactory(page=page, text=text, duplicate_of=rating.post, queue_state=QueueState.MATCHED)
    Match.objects.create(post=copy, source=rating.post, method=MatchMethod.MINHASH, score=0.91, state=state,
                         created_at=timezone.now())
    apply_matched_rating(rating_id=rating.pk, post_id=copy.pk)
    return copy


@pytest.fixture
def claim_rating(factchecker):
    source = PostFactory(text=SOURCE_TEXT, page=PageFactory(name="Somebody else's page"))
    return rate(source, factchecker, article_url="https://factorg.example/lemon-measles")


def test_a_matched_post_says_which_rated_claim_it_was_matched_to_and_where_a_dispute_goes(
    login, owner, page, claim_rating
):
    copy = matched_copy(page, claim_rating)
    organisation = claim_rating.organisation.name
    client = login(owner)
    body = text(client.get(f"/appeals/posts/{copy.pk}/"))
    assert f"Your post was matched automatically to a claim that {organisation} rated False." in body
    assert "(near-duplicate text)" in body
    assert SOURCE_TEXT in body
    assert f'href="/claims/{claim_rating.pk}/"' in body
    assert f"Read {organisation}'s fact-check of that claim" in body
    assert "A <strong>dispute</strong> here means “my post does not make the same claim”" in body
    assert f"it goes to {organisation}, who rated that claim" in body
    # The claim's public page is there to read.
    assert client.get(f"/claims/{claim_rating.pk}/").status_code == 200

    response = file(client, copy, statement="My post is about measles vaccines, not lemon water.")
    assert f"Your dispute appeal was filed. {organisation} will review it" in text(response)
    appeal = Appeal.objects.get(post=copy)
    assert appeal.rating_id == claim_rating.pk
    assert appeal.action.kind == "matched_rating" and appeal.action.post_id == copy.pk
    assert "An appeal against this match is open." in text(client.get(f"/appeals/posts/{copy.pk}/"))


def test_a_confirmed_match_says_a_factchecker_confirmed_it(login, owner, page, claim_rating):
    copy = matched_copy(page, claim_rating, state=MatchState.CONFIRMED)
    body = text(login(owner).get(f"/appeals/posts/{copy.pk}/"))
    assert (f"Your post was matched to a claim that {claim_rating.organisation.name} rated False: it was found "
            "automatically, and a fact-checker confirmed that your post makes the same claim.") in body


def test_a_post_rated_on_its_own_shows_no_match(login, owner, rated_post):
    body = text(login(owner).get(f"/appeals/posts/{rated_post.pk}/"))
    assert "Your post was matched" not in body and "my post does not make the same claim" not in body


def test_the_portal_lists_a_matched_post_as_matched_to_the_claims_rating(login, owner, page, claim_rating):
    copy = matched_copy(page, claim_rating)
    body = text(login(owner).get("/appeals/"))
    card = body.split(f"Post <span class=\"mono\">{copy.external_id}</span>", 1)[1].split("</article>", 1)[0]
    assert re.search(rf"Matched to a claim that {claim_rating.organisation.name} rated <span[^>]*>False</span>", card)
    assert "Details, timeline and appeals" in card


@pytest.mark.parametrize("copies", [1, 8])
def test_the_portal_with_matched_posts_renders_in_a_fixed_number_of_queries(
    login, owner, page, claim_rating, django_assert_max_num_queries, copies
):
    for n in range(copies):
        matched_copy(page, claim_rating, text=f"Doctors confirm lemon water cures measles, copy {n}")
    RepeatOffenderPolicy.current()
    client = login(owner)
    with django_assert_max_num_queries(11):
        response = client.get("/appeals/")
    assert text(response).count("Matched to a claim that") == copies
    copy = Post.objects.filter(duplicate_of=claim_rating.post).first()
    # The matched post's own page: one query more than a rated post's, for how the match was made.
    with django_assert_max_num_queries(12):
        response = client.get(f"/appeals/posts/{copy.pk}/")
    assert "Your post was matched automatically" in text(response)
