"""Issue 29, break 9: staff find content in the admin as they remember it, filter posts by what happened to
them, read titles in words, and "View site" takes them to their own desks.

Search: a page's name, a word of the text, the start of an external id, with no prefix, on the post list and
on every list of rows about posts (factcheck.staff_search); without a sequential scan of the posts (EXPLAIN
on a larger table).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from factcheck.models import Post, Rating, Verdict
from moderation.models import Action, ActionKind, Appeal
from tests.factories import FactCheckerFactory, FlagFactory, OrganisationFactory, PageFactory, PostFactory, UserFactory
from tests.scenarios import rated_post_with_open_dispute, removed_post, reported_post

POSTS = "/admin/factcheck/post/"


@dataclass
class Workday:
    rated: Post  # rated False by Health Check Org (demoted), disputed by its owner
    removed: Post  # removed by staff
    reported: Post  # reported for violence
    other: Post  # on another page, nothing happened to it
    appeal: Appeal


@pytest.fixture
def workday(ts_user) -> Workday:
    org = OrganisationFactory(name="Health Check Org")
    checker = FactCheckerFactory(organisation=org)
    watch = PageFactory(name="Public Health Watch", external_id="phw-1")
    appeal = rated_post_with_open_dispute(
        owner=UserFactory(), rater=checker, verdict=Verdict.FALSE, page=watch, external_id="ab-123",
        text="Vaccines cause magnetism, says a viral clip.",
    )
    removed = removed_post(staff=ts_user, post=PostFactory(page=watch, external_id="cd-456",
                                                           text="Go and find her at the bakery on Mill Road."))
    reported = reported_post(external_id="ef-789", page=PageFactory(name="Harbour Town News"),
                             text="Bring weapons to the square tonight.", reports=(("violence", "user_report"),))
    other = PostFactory(page=PageFactory(name="Garden Club"), external_id="zz-1", text="Tomatoes like the sun.")
    FlagFactory(post=appeal.post)  # a misinformation flag
    return Workday(rated=appeal.post, removed=removed, reported=reported, other=other, appeal=appeal)


def listed(response, path: str) -> set[int]:
    assert response.status_code == 200
    return {int(pk) for pk in re.findall(rf'{re.escape(path)}(\d+)/change/', response.content.decode())}


def listed_posts(client, **params) -> set[int]:
    return listed(client.get(POSTS, params), POSTS)


# Search


def test_a_post_is_found_by_a_word_of_its_page_name_without_any_prefix(workday, staff_client):
    assert listed_posts(staff_client, q="health") == {workday.rated.pk, workday.removed.pk}
    assert listed_posts(staff_client, q="Health Watch") == {workday.rated.pk, workday.removed.pk}
    assert listed_posts(staff_client, q="harbour") == {workday.reported.pk}


def test_a_post_is_found_by_a_word_of_its_text_or_the_start_of_a_word(workday, staff_client):
    assert listed_posts(staff_client, q="magnetism") == {workday.rated.pk}
    assert listed_posts(staff_client, q="vaccine") == {workday.rated.pk}  # "Vaccines"
    assert listed_posts(staff_client, q="bakery mill") == {workday.removed.pk}
    assert listed_posts(staff_client, q="sunflower") == set()


def test_a_post_is_found_by_its_external_id_or_its_start_and_by_its_pages_id(workday, staff_client):
    assert listed_posts(staff_client, q="ab-123") == {workday.rated.pk}
    assert listed_posts(staff_client, q="ab-12") == {workday.rated.pk}
    assert listed_posts(staff_client, q="phw-1") == {workday.rated.pk, workday.removed.pk}
    assert listed_posts(staff_client, q=workday.rated.url) == {workday.rated.pk}


def test_the_text_prefix_still_finds_a_part_of_a_word(workday, staff_client):
    assert listed_posts(staff_client, q="text:agnetis") == {workday.rated.pk}


def test_a_search_with_control_characters_is_answered_not_an_error(workday, staff_client):
    assert listed_posts(staff_client, q="magnetism\x07") == {workday.rated.pk}
    assert staff_client.get(POSTS, {"q": "magne\x00tism"}).status_code == 200


@pytest.mark.parametrize(("path", "rows"), [
    ("/admin/factcheck/rating/", lambda w: set(Rating.objects.filter(post=w.rated).values_list("pk", flat=True))),
    ("/admin/factcheck/flag/", lambda w: set(w.rated.flags.values_list("pk", flat=True))),
    ("/admin/moderation/action/", lambda w: set(Action.objects.filter(post=w.rated).values_list("pk", flat=True))),
    ("/admin/moderation/appeal/", lambda w: {w.appeal.pk}),
    ("/admin/moderation/reportedpost/", lambda w: set()),
])
def test_lists_of_rows_about_posts_are_searched_the_same_way(workday, staff_client, path, rows):
    expected = rows(workday)
    assert listed(staff_client.get(path, {"q": "magnetism"}), path) == expected
    assert listed(staff_client.get(path, {"q": "Health Watch"}), path) >= expected


def test_reports_of_harm_are_listed_in_the_admin_and_found_by_page_name_and_text(workday, staff_client):
    path = "/admin/moderation/reportedpost/"
    assert listed(staff_client.get(path, {"q": "harbour"}), path) == {workday.reported.pk}
    body = staff_client.get(path, {"q": "weapons"}).content.decode()
    assert "post ef-789" in body and f"/staff/reports/{workday.reported.pk}/" in body


# Filters


def test_posts_filter_by_flag_category(workday, staff_client):
    assert listed_posts(staff_client, flag_category="violence") == {workday.reported.pk}
    assert listed_posts(staff_client, flag_category="hate") == set()
    assert workday.rated.pk in listed_posts(staff_client, flag_category="misinformation")


def test_posts_filter_by_removed_and_by_demoted(workday, staff_client):
    assert listed_posts(staff_client, removed="yes") == {workday.removed.pk}
    assert workday.removed.pk not in listed_posts(staff_client, removed="no")
    assert listed_posts(staff_client, demoted="yes") == {workday.rated.pk}
    assert listed_posts(staff_client, demoted="no") >= {workday.other.pk, workday.removed.pk}
    body = staff_client.get(POSTS).content.decode()
    for label in ("By flagged for", "Violence", "By removed", "By demoted", "Demoted (shown less)"):
        assert label in body


# Titles in words


def test_change_pages_name_their_objects_in_words_not_database_ids(workday, staff_client):
    rating = Rating.objects.get(post=workday.rated, is_current=True)
    action = Action.objects.get(post=workday.rated, kind=ActionKind.FACT_CHECK)
    pages = {
        f"/admin/factcheck/rating/{rating.pk}/change/": "False rating of post “ab-123” by Health Check Org",
        f"/admin/moderation/action/{action.pk}/change/": "Fact-check action on post “ab-123” (active)",
        f"/admin/moderation/appeal/{workday.appeal.pk}/change/": "Dispute appeal on post “ab-123” (open)",
    }
    for url, name in pages.items():
        body = staff_client.get(url).content.decode()
        title = re.search(r"<title>(.*?)</title>", body, re.S).group(1)
        breadcrumbs = re.search(r'<div class="breadcrumbs">(.*?)</div>', body, re.S).group(1)
        assert name in title and name in breadcrumbs and name in body
        assert not re.search(rf"\bon {workday.rated.pk}\b", title + breadcrumbs)


def test_every_model_reads_in_words():
    rating = Rating(post=Post(external_id="ab-123"), verdict=Verdict.FALSE,
                    organisation=OrganisationFactory.build(name="Health Check Org"))
    assert str(rating) == "False rating of post “ab-123” by Health Check Org"
    action = Action(post=Post(external_id="ab-123"), kind=ActionKind.FACT_CHECK)
    assert str(action) == "Fact-check action on post “ab-123” (active)"


def test_the_audit_log_names_events_in_words(workday, staff_client):
    from audit.models import AuditEvent

    event = AuditEvent.objects.filter(verb="action.created", post_id=workday.removed.pk).first()
    body = staff_client.get(f"/admin/audit/auditevent/{event.pk}/change/").content.decode()
    title = re.search(r"<title>(.*?)</title>", body, re.S).group(1)
    assert f"{event.actor_label}: Action created, " in title
    assert "#" not in title and "moderation.action" not in title


# View site


def test_view_site_leads_staff_to_the_reports_desk_not_back_to_the_admin(workday, staff_client):
    body = staff_client.get("/admin/").content.decode()
    link = re.search(r'<a href="([^"]+)">View site</a>', body)
    assert link and link.group(1) == "/staff/reports/"
    response = staff_client.get(link.group(1))
    assert response.status_code == 200
    assert "Reports of harm" in response.content.decode()


def test_a_superuser_outside_trust_and_safety_gets_no_view_site_link_to_a_desk_that_refuses_them(client, db):
    admin = User.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    assert "View site" not in client.get("/admin/").content.decode()


# Query counts


@pytest.mark.parametrize("extra", [0, 30])
def test_searched_and_filtered_lists_stay_within_a_fixed_number_of_queries(
    workday, staff_client, django_assert_max_num_queries, extra
):
    for i in range(extra):  # more rated, disputed posts on the same page: the counts must not grow
        rated_post_with_open_dispute(owner=UserFactory(), page=workday.rated.page, text=f"Magnetism claim {i}")
    pages = [
        (POSTS, {"q": "health"}), (POSTS, {"demoted": "yes", "flag_category": "misinformation"}),
        ("/admin/factcheck/rating/", {"q": "magnetism"}), ("/admin/moderation/action/", {"q": "health"}),
        ("/admin/moderation/appeal/", {"q": "health"}), ("/admin/moderation/appealevent/", {"q": "health"}),
        ("/admin/moderation/ratingdecision/", {"q": "health"}), ("/admin/moderation/reportedpost/", {}),
        ("/admin/factcheck/claim/", {"q": "health"}),
    ]
    for path, params in pages:
        with django_assert_max_num_queries(16):
            response = staff_client.get(path, params)
        assert response.status_code == 200, path


# No sequential scan of the posts


def _plans(queries: list[str]) -> list[str]:
    plans = []
    with connection.cursor() as cursor:
        for sql in queries:
            cursor.execute(f"EXPLAIN {sql}")
            plans.append("\n".join(row[0] for row in cursor.fetchall()))
    return plans


def test_a_word_search_reads_indexes_not_the_whole_posts_table(db):
    """On 20,000 posts (analysed), each query of a search is an index scan: the GIN index for words, the unique
    index for external ids, the page index for a page's posts. The same plans hold at a million (the report)."""
    from factcheck.staff_search import find_posts

    template = PostFactory(page=PageFactory(name="Public Health Watch"), external_id="template")
    PageFactory.create_batch(50)
    columns = [f.column for f in Post._meta.concrete_fields if f.column not in ("id", "external_id", "text")]
    names = ", ".join(f'"{c}"' for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO factcheck_post ({names}, "external_id", "text") '
            f"SELECT {names}, 'bulk-' || g, 'Filler claim number ' || g || CASE WHEN g %% 5000 = 0 THEN ' magnetism' "
            "ELSE '' END FROM factcheck_post, generate_series(1, 20000) g WHERE id = %s", [template.pk])
        cursor.execute("UPDATE factcheck_post SET page_id = (SELECT min(id) FROM factcheck_page) + id % 50 "
                       "WHERE external_id LIKE 'bulk-%%'")
        cursor.execute("ANALYZE factcheck_post")
        cursor.execute("ANALYZE factcheck_page")
    queries = []
    for term in ("magnetism", "health watch", "bulk-123", "bulk-12345", "magn"):
        for found in find_posts(Post.objects.all(), term):
            with CaptureQueriesContext(connection) as ctx:
                list(found.values_list("pk", flat=True)[:1000])
            queries.append(ctx.captured_queries[-1]["sql"])
    assert len(queries) >= 8
    for sql, plan in zip(queries, _plans(queries), strict=True):
        assert "Seq Scan on factcheck_post" not in plan, f"{sql}\n{plan}"
