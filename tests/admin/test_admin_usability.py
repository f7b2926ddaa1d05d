"""Staff read the admin as people, not as a database: dates one way, names not ids, sentences, their own log."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.utils.html import escape

from audit.models import AuditEvent, AuditVerb
from factcheck.claims import claim_post
from factcheck.models import Post, Rating
from moderation.harm_reports import claim_report, decide_report
from moderation.models import (
    Action,
    ActionKind,
    AppealKind,
    EnforcementPolicy,
    RemovalGround,
    RepeatOffenderPolicy,
    StatementOfReasons,
)
from tests import scenarios
from tests.admin.test_admin_pages import MAX_QUERIES, story_models
from tests.factories import (
    AppealFactory,
    DecisionFactory,
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PostFactory,
    StaffFactory,
)

pytestmark = pytest.mark.django_db

POSTS = "/admin/factcheck/post/"
LOG = "/admin/audit/auditevent/"
RAW_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?(\+00:00)?")
# Names made of ids, as the models' __str__ writes them: "False on 21 by 1", "21: x0.2000", "Removal on 21 (active)".
INTERNAL_NAMES = [
    re.compile(r"\b(False|Altered|Partly false|Missing context|Satire|True) on \d+ by \d+"),
    re.compile(r"\b\d+: x\d\.\d+"),
    re.compile(r"\b(Removal|Fact-check|Staff override) on \d+ \((active|ended)\)"),
    re.compile(r"strike on \d+"),
]
RAW_CHOICES = ("user_report", "trusted_flagger", "fact_check", "community_standards", "in_review")


def main_content(html: str) -> str:
    """The page's own content, without the admin's navigation sidebar and scripts."""
    start = html.index('<div id="content"')
    return html[start:html.index('<div id="footer"', start) if '<div id="footer"' in html[start:] else None]


@pytest.fixture
def removed_post(ts_user):
    post = PostFactory(text="Meet at the square tonight and make them pay.", views=1_234_567, shares=45_678)
    FlagFactory(post=post, source="user_report")
    FlagFactory(post=post, source="trusted_flagger")
    DecisionFactory(post=post)
    scenarios.removed_post(post=post, staff=ts_user, ground=RemovalGround.VIOLENCE, reason="Calls for an attack.")
    AppealFactory(post=post, kind=AppealKind.REMOVAL, statement="It was a joke.", evidence_urls=[])
    return post


def test_the_post_page_shows_dates_one_way_names_not_ids_and_numbers_with_separators(
    removed_post, staff_client, django_assert_max_num_queries
):
    with django_assert_max_num_queries(MAX_QUERIES):  # the richest post page: rated, removed, appealed
        response = staff_client.get(f"{POSTS}{removed_post.pk}/change/")
    body = main_content(response.content.decode())
    assert not RAW_TIMESTAMP.search(body), RAW_TIMESTAMP.search(body).group(0)
    for pattern in INTERNAL_NAMES:
        assert not pattern.search(body), pattern.search(body).group(0)
    for raw in RAW_CHOICES:
        assert raw not in body
    assert "1,234,567" in body and "45,678" in body  # views and shares
    assert re.search(r"\b\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC\b", body)  # "3 Dec 2026, 08:41 UTC"
    assert "User report" in body and "Trusted flagger" in body
    assert "shown at 20%" in body  # the False rating's action, before the removal
    assert f"<td>{Rating.objects.get(post=removed_post).reviewer.username} (" in body  # the rater, by name
    assert "Removal appeal" in body


def test_the_busiest_post_page_that_is_not_removed_stays_within_the_bound(
    staff_client, ts_user, django_assert_max_num_queries
):
    """Reported for violence and misinformation, its report of harm sent to the fact-checkers by staff, rated, and a
    suggested copy of an earlier rated post (its audit log names that post, read for the link): the post page that
    is not removed which the populated admin pages test never builds. It took one query more than MAX_QUERIES while
    the flags table and the timeline each counted the post's flags (factcheck.selectors.counted_flags_by_source reads
    them once)."""
    earlier = scenarios.reported_post(reports=[("misinformation", "user_report")], external_id="earlier",
                                      text=scenarios.CLAIM)
    scenarios.rated_post(post=earlier)
    post = scenarios.reported_post(reports=[("violence", "user_report"), ("misinformation", "user_report")],
                                   external_id="busiest", text=scenarios.COMMENTED_COPY)
    claim_report(staff=ts_user, post_id=post.pk)
    decide_report(staff=ts_user, post_id=post.pk, outcome="sent_to_fact_checkers", reason="")
    scenarios.rated_post(post=post)
    assert AuditEvent.objects.filter(post_id=post.pk, data__source=earlier.pk).exists()  # the copy's event

    staff_client.get(f"{POSTS}{post.pk}/change/")  # the content-type cache warm, as in a running process
    with django_assert_max_num_queries(MAX_QUERIES):
        response = staff_client.get(f"{POSTS}{post.pk}/change/")
    body = response.content.decode()
    assert "Sent to the fact-checkers by trust and safety" in body
    assert f'href="{POSTS}{earlier.pk}/change/"' in body


def test_a_removed_post_says_removed_first_with_when_who_ground_and_reason(removed_post, staff_client):
    body = staff_client.get(f"{POSTS}{removed_post.pk}/change/").content.decode()
    banner = re.search(r'<p class="errornote factdesk-banner"[^>]*>(.*?)</p>', body, re.S)
    assert banner is not None
    assert body.index("factdesk-banner") < body.index("External id")  # above the record
    text = re.sub(r"<[^>]+>", "", banner.group(1))
    assert text.startswith("Removed ")
    assert "by sam (Violence)." in text and text.endswith("Reason: “Calls for an attack.”")

    other = PostFactory()
    assert '<p class="errornote factdesk-banner"' not in staff_client.get(f"{POSTS}{other.pk}/change/").content.decode()


def test_a_removals_page_shows_what_its_owner_was_told_its_strike_and_its_appeal(removed_post, staff_client):
    """Staff deciding a removal appeal could not read the statement of reasons anywhere in the admin."""
    removal = Action.objects.get(post=removed_post, kind=ActionKind.REMOVAL)
    body = main_content(staff_client.get(f"/admin/moderation/action/{removal.pk}/change/").content.decode())
    statement = StatementOfReasons.objects.get(action=removal)
    assert "Statement of reasons (what the page&#x27;s owners are given)" in body
    assert escape(statement.puid) in body and escape(statement.how_to_appeal) in body
    assert "Calls for an attack." in body  # the facts relied on
    assert "Community standards strike on" in body and ", active" in body
    appeal = removal.appeals.get()
    assert f'/admin/moderation/appeal/{appeal.pk}/change/">#{appeal.pk}</a>' in body and "Removal" in body


def test_view_on_site_opens_the_public_page_of_a_published_rating_and_is_absent_otherwise(removed_post, staff_client):
    post = PostFactory()
    rating = DecisionFactory(post=post).rating
    body = staff_client.get(f"{POSTS}{post.pk}/change/").content.decode()
    link = re.search(r'<a href="([^"]+)" class="viewsitelink">', body)
    assert link is not None and link.group(1) == f"/claims/{rating.pk}/"
    assert staff_client.get(link.group(1)).status_code == 200  # staff may go there

    # Not rated, or removed (removed content is not republished): no link rather than a refusal.
    for unpublished in (PostFactory(), removed_post):
        body = staff_client.get(f"{POSTS}{unpublished.pk}/change/").content.decode()
        assert "viewsitelink" not in body and "/queue/posts/" not in body


def test_staff_following_view_on_site_of_a_post_land_on_a_page_they_may_see(staff_client):
    post = PostFactory(text="Drinking salt water cures the flu in a day")
    DecisionFactory(post=post)
    body = staff_client.get(f"{POSTS}{post.pk}/change/").content.decode()
    link = re.search(r'<a href="([^"]+)" class="viewsitelink">', body).group(1)
    response = staff_client.get(link, follow=True)
    assert response.status_code == 200 and post.text in response.content.decode()
    # No redirect is left that would send staff to the fact-checkers' post page (which refuses them).
    redirect = staff_client.get(f"/admin/r/{ContentType.objects.get_for_model(Post).pk}/{post.pk}/")
    assert redirect.status_code == 404 and f"/queue/posts/{post.pk}/" not in redirect.get("Location", "")


def test_the_post_list_shows_the_start_of_each_posts_text_in_few_columns(staff_client):
    post = PostFactory(
        text="Drinking hot water with lemon every morning cures every known virus, doctors admit at last.")
    body = staff_client.get(POSTS).content.decode()
    assert "Drinking hot water with lemon every morning cures every known virus" in body
    assert post.text not in body  # truncated
    header = re.search(r'<thead>(.*?)</thead>', body, re.S).group(1)
    columns = re.findall(r'<th scope="col"', header)
    assert len(columns) <= 8  # with the checkbox: fits 1366 px
    assert not RAW_TIMESTAMP.search(main_content(body))


def test_the_removal_confirmation_shows_the_posts_text_page_and_reach(staff_client):
    post = PostFactory(text="They all deserve what is coming to them on Friday.", views=98_765, shares=4_321)
    body = staff_client.get(f"{POSTS}{post.pk}/remove/").content.decode()
    assert "They all deserve what is coming to them on Friday." in body
    assert post.page.name in body
    assert "98,765 views" in body and "4,321 shares" in body
    assert "is reviewing it" not in body
    # What is typed goes into a public statement: the field says so (names reached the DSA export).
    assert "which is public: no names of private people, addresses or contact details" in body


def test_the_removal_confirmation_says_whose_review_it_ends(staff_client):
    post = PostFactory()
    claim_post(reviewer=FactCheckerFactory(username="maria"), post_id=post.pk)
    body = staff_client.get(f"{POSTS}{post.pk}/remove/").content.decode()
    assert "<strong>maria is reviewing it</strong>" in body and "removing it ends that claim" in body


def test_the_removal_confirmation_says_who_is_deciding_its_reports_of_harm(staff_client):
    # Removed here while tariq decided "no violation" on the reports desk, the reporters were told no violation of a
    # post that is gone, and neither member of staff was warned.
    post = scenarios.reported_post(reports=[("harassment", "user_report")])
    claim_report(staff=StaffFactory(username="tariq"), post_id=post.pk)
    body = staff_client.get(f"{POSTS}{post.pk}/remove/").content.decode()
    assert "<strong>tariq is deciding its reports of harm</strong>" in body
    assert "the reporters are told their decision, not this removal" in body


def test_restoring_a_removed_post_says_first_that_it_decides_its_open_appeal(removed_post, staff_client):
    removal = Action.objects.get(post=removed_post, kind=ActionKind.REMOVAL)
    appeal = removal.appeals.get()
    body = staff_client.get(f"/admin/moderation/action/{removal.pk}/lift/").content.decode()
    assert f"Its owner's appeal #{appeal.pk} is open:</strong> restoring the post decides it as granted" in body


def test_each_staff_decision_in_the_admin_is_in_the_admin_log_and_its_recent_actions(staff_client, ts_user):
    post = PostFactory()
    assert "None available" in staff_client.get("/admin/").content.decode()  # nothing yet

    staff_client.post(f"{POSTS}{post.pk}/remove/", {"ground": "violence", "reason": "Calls for an attack."})

    entry = LogEntry.objects.get()
    assert (entry.user, entry.action_flag, entry.object_id) == (ts_user, CHANGE, str(post.pk))
    assert entry.get_edited_object() == post
    assert entry.object_repr.startswith(f"post {post.external_id} on {post.page.name}")
    assert entry.change_message == "Remove posts: removed (violence). Reason: Calls for an attack."
    index = staff_client.get("/admin/").content.decode()
    recent = index[index.index('id="recent-actions-module"'):]
    assert f"post {post.external_id} on {post.page.name}" in recent
    assert f'href="{POSTS}{post.pk}/change/"' in recent
    history = staff_client.get(f"{POSTS}{post.pk}/history/").content.decode()
    assert "Reason: Calls for an attack." in history

    # A refused decision (already removed) writes nothing to the log.
    staff_client.post(f"{POSTS}{post.pk}/remove/", {"ground": "hate", "reason": "Again."})
    assert LogEntry.objects.count() == 1


def test_the_index_counts_open_removal_appeals_and_links_to_the_staff_desk(removed_post, staff_client):
    body = staff_client.get("/admin/").content.decode()
    row = re.search(r'<a href="/staff/appeals/">Open removal appeals</a></th>\s*<td>([^<]*)</td>', body)
    assert row is not None and row.group(1) == "1 waiting for a staff decision"


def test_the_audit_log_reads_as_sentences_with_linked_people_and_posts(
    removed_post, staff_client, django_assert_max_num_queries
):
    rating = Rating.objects.get(post=removed_post)
    policy = EnforcementPolicy.objects.get(verdict="partly_false")
    staff_client.post(f"/admin/moderation/enforcementpolicy/{policy.pk}/change/", {
        "feed_multiplier": "0.4", "label": policy.label, "warn_sharers": "on", "reason": "Too harsh for a mix.",
    })
    with django_assert_max_num_queries(12):
        body = staff_client.get(LOG).content.decode()
    post = f'<a href="{POSTS}{removed_post.pk}/change/">post {removed_post.external_id}</a>'
    sam = '<a href="/admin/accounts/user/'
    assert re.search(rf'{sam}\d+/change/">sam</a> removed {re.escape(post)} \(Violence\): “Calls for an attack.”', body)
    checker = rating.reviewer.username
    rating_link = f'<a href="/admin/factcheck/rating/{rating.pk}/change/">False</a>'
    assert re.search(rf'>{checker}</a> rated {re.escape(post)} {re.escape(rating_link)}', body)
    assert re.search(
        rf'{sam}\d+/change/">sam</a> changed <a href="/admin/moderation/enforcementpolicy/{policy.pk}/change/">'
        r"the enforcement policy for Partly false</a>: feed multiplier 0.500 → 0.400: “Too harsh for a mix.”", body)
    assert "filed <a href=" in body and "a removal appeal</a> on " + post in body
    listing = re.search(r'<table id="result_list">(.*?)</table>', body, re.S).group(1)
    assert "moderation.enforcementpolicy" not in listing and "factcheck.post" not in listing
    assert not RAW_TIMESTAMP.search(listing)


def test_the_audit_log_page_costs_the_same_queries_whatever_its_events_name(populate, staff_client,
                                                                           django_assert_max_num_queries):
    populate(40)
    assert AuditEvent.objects.count() > 100
    with django_assert_max_num_queries(12):
        body = staff_client.get(LOG).content.decode()
    assert re.search(r'</a> rated <a href="/admin/factcheck/post/\d+/change/">post [^<]+</a> <a href=', body)
    with django_assert_max_num_queries(12):
        actions = staff_client.get(LOG, {"verb__exact": AuditVerb.ACTION_CREATED}).content.decode()
    assert re.search(r'took a fact-check action on <a href="/admin/factcheck/post/\d+/change/">post [^<]+</a>: '
                     r'shown at \d+%', actions)


def test_a_label_ending_in_a_full_stop_is_quoted_without_it_where_the_audit_sentence_goes_on(staff_client):
    DecisionFactory()  # the default policy's label: "False information. Checked by independent fact-checkers."
    body = staff_client.get(LOG, {"verb__exact": AuditVerb.ACTION_CREATED}).content.decode()
    assert "label “False information. Checked by independent fact-checkers”: “rated False”" in body
    assert ".”:" not in body


def test_a_policy_change_asks_for_a_reason_explains_its_numbers_and_says_saved_once(staff_client):
    policy = EnforcementPolicy.objects.get(verdict="false")
    url = f"/admin/moderation/enforcementpolicy/{policy.pk}/change/"
    form = staff_client.get(url).content.decode()
    assert "0.2 means shown 80% less" in form
    assert '<label class="required" for="id_reason">Reason for the change' in form

    data = {"feed_multiplier": "0.1", "label": policy.label, "warn_sharers": "on", "page_strike": "on"}
    refused = staff_client.post(url, data)
    assert refused.status_code == 200 and "A reason is required" in refused.content.decode()
    assert EnforcementPolicy.objects.get(pk=policy.pk).feed_multiplier == Decimal("0.2")

    response = staff_client.post(url, {**data, "reason": "Measured spread after labels."}, follow=True)
    shown = re.findall(r'<li class="(\w+)">(.*?)</li>', response.content.decode(), re.S)
    assert shown == [("success", "Saved: feed multiplier 0.200 → 0.100. The change applies to new decisions; past "
                                 "decisions keep their terms.")]
    event = AuditEvent.objects.get(verb=AuditVerb.POLICY_CHANGED)
    assert event.reason == "Measured spread after labels."

    repeat_url = f"/admin/moderation/repeatoffenderpolicy/{RepeatOffenderPolicy.current().pk}/change/"
    repeat = staff_client.get(repeat_url).content.decode()
    assert "on top of each post's own multiplier" in repeat


def test_every_list_writes_its_dates_one_way(populate, staff_client):
    populate(12)
    django_format = re.compile(r"\b(a\.m\.|p\.m\.|noon|midnight)")
    for model in story_models():
        opts = model._meta
        body = staff_client.get(f"/admin/{opts.app_label}/{opts.model_name}/").content.decode()
        listing = re.search(r'<table id="result_list">(.*?)</table>', body, re.S)
        assert listing is not None, opts.label
        assert not django_format.search(listing.group(1)), (opts.label, django_format.search(listing.group(1)))
        assert not RAW_TIMESTAMP.search(listing.group(1)), (opts.label, RAW_TIMESTAMP.search(listing.group(1)))


def test_a_pages_admin_page_shows_its_standing_strikes_posts_and_marking_history(staff_client, factchecker):
    """It had shown the page's owners, id, name and politician mark alone."""
    page = PageFactory(name="Health Truth Daily")
    posts = PostFactory.create_batch(3, page=page)
    for post in posts:
        DecisionFactory(reviewer=factchecker, post=post)
    other = PostFactory()
    body = main_content(staff_client.get(f"/admin/factcheck/page/{page.pk}/change/").content.decode())
    assert "Repeat offender since" in body
    assert "3 active strikes of the 3 that make a repeat offender in 90 days" in body
    assert body.count("Fact-check False: shown at 20%") == 3 and f"post {posts[0].external_id}</a>" in body
    posts_link = re.search(r'<a href="(/admin/factcheck/post/\?[^"]+)">The page\'s posts</a>', body).group(1)
    listed = staff_client.get(posts_link.replace("&amp;", "&")).content.decode()
    assert all(post.external_id in listed for post in posts) and other.external_id not in listed
    assert "/admin/audit/auditevent/?q=factcheck.page%23" in body
