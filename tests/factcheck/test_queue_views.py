"""The fact-checker's queue in the browser: sign-in, role rules, ordering, filters, claims, query counts."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.claims import claim_post
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.matching.leaving import unlink_copy
from factcheck.members import organisation_of
from factcheck.models import Claim, ClaimStatus, FlagSource, Match, MatchMethod, MatchState, Post, QueueState
from factcheck.views import PAGE_SIZE
from tests.factories import (
    PASSWORD,
    FactCheckerFactory,
    FlagFactory,
    OrganisationFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def rendered_post_ids(response) -> list[int]:
    """Post ids in the order the queue table shows them (each row links to its post page)."""
    html = response.content.decode()
    table = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in html else ""
    return [int(pk) for pk in re.findall(r'href="/queue/posts/(\d+)/" class="post-text"', table)]


# Sign-in and role rules


@pytest.mark.parametrize(
    "method, url",
    [("get", "/"), ("get", "/queue/"), ("get", "/queue/posts/1/"), ("post", "/queue/claim-next/"),
     ("post", "/queue/posts/1/claim/"), ("post", "/queue/posts/1/release/"), ("get", "/accounts/welcome/"),
     ("post", "/queue/matches/1/confirm/"), ("post", "/queue/matches/1/reject/")],
)
def test_anonymous_visitors_are_sent_to_the_login_page(client, method, url):
    response = getattr(client, method)(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("make_user", [UserFactory, PlatformUserFactory, StaffFactory])
@pytest.mark.parametrize(
    "method, url",
    [("get", "/queue/"), ("post", "/queue/claim-next/"), ("get", "/queue/posts/{id}/"),
     ("post", "/queue/posts/{id}/"), ("post", "/queue/posts/{id}/claim/"), ("post", "/queue/posts/{id}/release/")],
)
def test_people_who_are_not_factcheckers_are_refused_every_review_page(login, make_user, method, url):
    post = PostFactory()
    client = login(make_user())
    data = {"verdict": "false", "rationale": "x", "sources": "https://a.example"}
    response = getattr(client, method)(url.format(id=post.pk), data)
    assert response.status_code == 403
    assert "This page is for fact-checkers" in response.content.decode()
    assert not Claim.objects.exists()
    assert not post.ratings.exists()


def test_the_start_page_sends_each_role_to_its_place(login, client):
    assert login(FactCheckerFactory()).get("/")["Location"] == "/queue/"
    client.logout()
    assert login(StaffFactory()).get("/")["Location"] == "/admin/"
    client.logout()
    owner = login(UserFactory())
    assert owner.get("/")["Location"] == "/appeals/"
    welcome = owner.get("/accounts/welcome/")
    assert welcome.status_code == 200
    assert "appeals you can file" in welcome.content.decode()


def test_a_factchecker_signs_in_through_the_form_and_lands_on_the_queue(client):
    user = FactCheckerFactory(organisation=OrganisationFactory(name="Verifica"))
    response = client.post("/accounts/login/", {"username": user.username, "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == "/queue/"
    html = response.content.decode()
    assert "Review queue" in html
    assert f'Signed in as </span><strong>{user.username}</strong><span class="who-org"> · Verifica' in html


def test_a_wrong_password_shows_the_login_form_again(client):
    user = FactCheckerFactory()
    response = client.post("/accounts/login/", {"username": user.username, "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_signing_out_takes_a_post_and_returns_to_the_login_page(login):
    client = login(FactCheckerFactory())
    assert client.get("/accounts/logout/").status_code == 405
    response = client.post("/accounts/logout/")
    assert response["Location"] == "/accounts/login/"
    assert client.get("/queue/").status_code == 302


# What the queue shows


def test_queue_lists_posts_best_first_with_the_score_and_its_parts(login, factchecker):
    low = PostFactory(priority=12.5, velocity_score=8.0, flag_score=4.0, age_score=0.5, text="Low priority claim")
    high = PostFactory(priority=71.34, velocity_score=45.5, flag_score=20.84, age_score=5.0, views=123456, shares=789)
    mid = PostFactory(priority=40.0)
    PostFactory(queue_state=QueueState.RATED, priority=99.0)
    response = login(factchecker).get("/queue/")
    assert response.status_code == 200
    assert rendered_post_ids(response) == [high.pk, mid.pk, low.pk]
    html = response.content.decode()
    assert "71.3" in html and "velocity 45.5" in html and "flags 20.8" in html and "age 5.0" in html
    assert "123,456 views" in html and "789 shares" in html
    assert high.page.name in html and "Low priority claim" in html
    assert "My claims" not in html  # nothing claimed yet


def test_queue_rounds_scores_half_up_and_groups_reach_with_commas(login, factchecker):
    PostFactory(priority=2.25, velocity_score=0.25, flag_score=1234.56, age_score=0.0, views=0, shares=1_000_000)
    html = login(factchecker).get("/queue/").content.decode()
    assert '<strong class="score">2.3</strong>' in html
    assert "velocity 0.3" in html and "flags 1234.6" in html and "age 0.0" in html
    assert "0 views" in html and "1,000,000 shares" in html


def test_long_post_texts_are_cut_to_thirty_words_and_posts_without_text_show_their_id(login, factchecker):
    PostFactory(text=" ".join(f"w{i}" for i in range(40)), priority=2)
    PostFactory(text="", external_id="fb-9001", priority=1)
    html = login(factchecker).get("/queue/").content.decode()
    assert " ".join(f"w{i}" for i in range(30)) + " …</a>" in html and "w30" not in html
    assert 'class="post-text">fb-9001</a>' in html


def test_posts_of_politicians_pages_never_appear_in_the_queue(login, factchecker):
    now = timezone.now()
    ordinary = PageInput(external_id="pg-news", name="Daily Rumours")
    politician = PageInput(external_id="pg-mp", name="A. Minister MP", is_politician=True)
    ingest_flags(
        flags=[
            FlagInput(idempotency_key=f"k{i}", source=FlagSource.TRUSTED_FLAGGER, flagged_at=now,
                      post=PostInput(external_id=f"p{i}", page=page, posted_at=now - timedelta(hours=1),
                                     text=f"Post {i} by {page.name}", language="en", country="GB", views=5000))
            for i, page in enumerate([ordinary, politician])
        ],
        submitted_by=None,
    )
    html = login(factchecker).get("/queue/").content.decode()
    assert "Post 0 by Daily Rumours" in html
    assert "A. Minister MP" not in html
    assert Post.objects.get(external_id="p1").queue_state == QueueState.NOT_ELIGIBLE


def test_queue_filters_by_language_country_and_flag_source(login, factchecker):
    en_gb = PostFactory(language="en", country="GB", priority=30)
    en_ie = PostFactory(language="en", country="IE", priority=20)
    de_de = PostFactory(language="de", country="DE", priority=10)
    FlagFactory(post=en_gb, source=FlagSource.USER_REPORT)
    FlagFactory(post=en_ie, source=FlagSource.PARTNER)
    FlagFactory(post=de_de, source=FlagSource.PARTNER)
    client = login(factchecker)
    assert rendered_post_ids(client.get("/queue/", {"language": "en"})) == [en_gb.pk, en_ie.pk]
    assert rendered_post_ids(client.get("/queue/", {"country": "de"})) == [de_de.pk]
    assert rendered_post_ids(client.get("/queue/", {"source": "partner"})) == [en_ie.pk, de_de.pk]
    assert rendered_post_ids(client.get("/queue/", {"language": "en", "source": "partner"})) == [en_ie.pk]
    # An unknown source is no filter rather than an error page.
    assert rendered_post_ids(client.get("/queue/", {"source": "rumour"})) == [en_gb.pk, en_ie.pk, de_de.pk]


def test_an_organisation_sees_only_the_languages_and_countries_it_covers(login):
    reviewer = FactCheckerFactory(organisation=OrganisationFactory(languages=["fr"], countries=["FR", "BE"]))
    fr = PostFactory(language="fr", country="FR")
    be = PostFactory(language="fr", country="BE", priority=5)
    PostFactory(language="fr", country="CA")
    PostFactory(language="en", country="FR")
    response = login(reviewer).get("/queue/")
    assert rendered_post_ids(response) == [fr.pk, be.pk]
    html = response.content.decode()
    assert '<option value="BE">Belgium</option>' in html  # the country filter offers what it covers, by name


def test_each_organisation_gets_its_own_filter_choices_with_the_submitted_one_selected(login):
    french = FactCheckerFactory(organisation=OrganisationFactory(languages=["fr"]))
    german = FactCheckerFactory(organisation=OrganisationFactory(languages=["de", "en"]))
    html = login(german).get("/queue/", {"language": "de", "source": "partner"}).content.decode()
    assert '<option value="de" selected>German</option>' in html and '<option value="en">English</option>' in html
    assert '<option value="partner" selected>Partner</option>' in html
    assert '<option value="fr"' not in html
    html = login(french).get("/queue/", {"language": "de"}).content.decode()
    assert '<option value="fr">French</option>' in html and '<option value="de"' not in html


def test_queue_pages_through_posts_with_next_and_previous_links(login, factchecker):
    posts = [PostFactory(priority=100 - i) for i in range(PAGE_SIZE + 3)]
    client = login(factchecker)
    first = client.get("/queue/", {"language": "en"})
    assert rendered_post_ids(first) == [p.pk for p in posts[:PAGE_SIZE]]
    assert 'href="?language=en&amp;page=2" rel="next"' in first.content.decode()
    second = client.get("/queue/", {"language": "en", "page": 2})
    assert rendered_post_ids(second) == [p.pk for p in posts[PAGE_SIZE:]]
    html = second.content.decode()
    assert 'rel="next"' not in html and 'rel="prev"' in html
    assert client.get("/queue/", {"page": "abc"}).status_code == 200


# Claims from the queue


def test_claim_next_claims_the_best_post_matching_the_filters_and_opens_it(login, factchecker):
    PostFactory(language="en", priority=90)
    best_german = PostFactory(language="de", country="DE", priority=50)
    PostFactory(language="de", country="DE", priority=40)
    client = login(factchecker)
    response = client.post("/queue/claim-next/", {"language": "de"}, follow=True)
    assert response.redirect_chain[-1][0] == f"/queue/posts/{best_german.pk}/"
    assert "You claimed this post until" in response.content.decode()
    claim = Claim.objects.get()
    assert (claim.post_id, claim.reviewer_id, claim.status) == (best_german.pk, factchecker.pk, ClaimStatus.ACTIVE)
    best_german.refresh_from_db()
    assert best_german.queue_state == QueueState.CLAIMED


@pytest.mark.parametrize("stale", [{"sort": "unknown"}, {"source": "bogus"}, {"topic": "x" * 101}])
def test_one_field_a_stale_bookmark_gets_wrong_leaves_the_other_filters_in_force(login, factchecker, stale):
    """The page shows German chosen, so the list and Claim next hold to German, whatever else the link says."""
    PostFactory(language="en", priority=90)
    german = PostFactory(language="de", country="DE", priority=40)
    client = login(factchecker)
    assert rendered_post_ids(client.get("/queue/", {"language": "de", **stale})) == [german.pk]
    response = client.post("/queue/claim-next/", {"language": "de", **stale}, follow=True)
    assert response.redirect_chain[-1][0] == f"/queue/posts/{german.pk}/"


def test_claim_next_with_nothing_left_says_so_and_keeps_the_filters(login, factchecker):
    PostFactory(language="en")
    response = login(factchecker).post("/queue/claim-next/", {"language": "de"}, follow=True)
    assert response.redirect_chain[-1][0] == "/queue/?language=de"
    assert "No post is waiting that matches these filters." in response.content.decode()
    assert not Claim.objects.exists()


def test_claiming_a_chosen_post_opens_it_with_a_release_button(login, factchecker):
    post = PostFactory()
    response = login(factchecker).post(f"/queue/posts/{post.pk}/claim/", follow=True)
    assert response.redirect_chain[-1][0] == f"/queue/posts/{post.pk}/"
    html = response.content.decode()
    assert "You hold this post until" in html and ">Release</button>" in html
    assert Claim.objects.filter(post=post, reviewer=factchecker, status=ClaimStatus.ACTIVE).exists()


def test_claiming_a_post_another_reviewer_holds_is_refused_with_a_message(login, factchecker):
    post = PostFactory()
    other = FactCheckerFactory(organisation=organisation_of(factchecker))
    claim_post(reviewer=other, post_id=post.pk)
    reviewer = login(factchecker)
    response = reviewer.post(f"/queue/posts/{post.pk}/claim/", follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Another reviewer is working on this post." in html
    assert Claim.objects.get().reviewer_id == other.pk
    # An alert that takes the focus: a screen reader had heard the same page again and nothing of the refusal.
    box = html[html.index('<ul class="messages">') - 120:html.index('<ul class="messages">')]
    assert 'role="alert" tabindex="-1" autofocus' in box
    # A message that is no refusal stays a polite status.
    reviewer.post(f"/queue/posts/{PostFactory().pk}/claim/")
    assert 'role="status" aria-live="polite"' in reviewer.get("/queue/").content.decode()


def test_claiming_a_politicians_post_is_refused_with_a_message(login, factchecker):
    post = PostFactory(page__is_politician=True, queue_state=QueueState.NOT_ELIGIBLE)
    response = login(factchecker).post(f"/queue/posts/{post.pk}/claim/", follow=True)
    assert "Posts from politicians&#x27; pages are not fact-checked." in response.content.decode()
    assert not Claim.objects.exists()


def test_claiming_a_missing_post_is_a_404(login, factchecker):
    assert login(factchecker).post("/queue/posts/999999/claim/").status_code == 404


def test_my_claims_lists_the_reviewers_active_claims_with_time_left(login, factchecker):
    mine = PostFactory(text="Mine to check")
    theirs = PostFactory(text="Someone else's")
    claim_post(reviewer=factchecker, post_id=mine.pk)
    claim_post(reviewer=FactCheckerFactory(), post_id=theirs.pk)
    html = login(factchecker).get("/queue/").content.decode()
    section = html.split('id="my-claims-title"', 1)[1].split("</section>", 1)[0]
    assert "Mine to check" in section and "Someone else" not in section
    assert re.search(r"(29|30)\xa0minutes left", section)


def test_my_claims_leaves_out_a_claim_past_its_time_that_is_not_released_yet_and_lists_soonest_first(
    login, factchecker
):
    # The periodic release may not have reached an expired claim; the page does not offer it.
    first, second, lapsed = (PostFactory(text=text) for text in ("Claimed first", "Claimed second", "Lapsed"))
    for post in (first, second, lapsed):
        claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    client.get("/queue/")  # the reviewer's claims statement is built; the clock is not in it
    Claim.objects.filter(post=lapsed).update(expires_at=timezone.now() - timedelta(seconds=1))
    Claim.objects.filter(post=first).update(expires_at=timezone.now() + timedelta(minutes=40))
    section = client.get("/queue/").content.decode().split('id="my-claims-title"', 1)[1].split("</section>", 1)[0]
    assert "Lapsed" not in section
    assert section.index("Claimed second") < section.index("Claimed first")
    assert Claim.objects.get(post=lapsed).status == ClaimStatus.ACTIVE


def test_every_value_a_queue_row_shows_is_escaped(login, factchecker):
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    root = PostFactory(text=hostile, external_id=f"fb-{hostile}", page__name=f"Page {hostile}")
    PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED)
    html = login(factchecker).get("/queue/").content.decode()
    table = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert "<script>" not in table and "<img" not in table
    assert table.count("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;") == 3
    assert rendered_post_ids(login(factchecker).get("/queue/")) == [root.pk]


# Copies of a claim


def test_each_row_shows_how_many_copies_wait_with_it_and_their_combined_reach(login, factchecker):
    root = PostFactory(priority=50, views=100_000, shares=3_456, text="The dam upstream burst last night.")
    PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED, views=10_000, shares=0)
    PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED, views=5_000, shares=1_000)
    PostFactory(duplicate_of=root, queue_state=QueueState.UNFLAGGED, views=4_000, shares=0)  # linked, never flagged
    single = PostFactory(priority=40, text="A lone claim with no copies.")
    PostFactory(queue_state=QueueState.QUEUED, priority=1)  # an unrelated post is no copy
    response = login(factchecker).get("/queue/")
    assert rendered_post_ids(response)[:2] == [root.pk, single.pk]
    rows = response.content.decode().split("<tbody>", 1)[1].split("</tr>")
    assert "3 copies · combined reach 123,456" in rows[0]
    assert "combined reach" not in rows[1]


def test_copies_are_not_rows_of_their_own_and_one_copy_reads_singular(login, factchecker):
    root = PostFactory(priority=50, views=1_000, shares=0)
    copy = PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED, priority=99, views=500, shares=500)
    response = login(factchecker).get("/queue/")
    assert rendered_post_ids(response) == [root.pk]
    assert copy.pk not in rendered_post_ids(response)
    assert "1 copy · combined reach 2,000" in response.content.decode()


def test_a_copy_unlinked_on_appeal_leaves_its_former_group_and_is_a_row_again(login, factchecker):
    root = PostFactory(priority=50, views=1_000, shares=0)
    kept = PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED, views=10, shares=0)
    gone = PostFactory(duplicate_of=root, queue_state=QueueState.GROUPED, priority=1, views=99_999, shares=0)
    for copy in (kept, gone):
        Match.objects.create(post=copy, source=root, method=MatchMethod.TEXT, score=1.0, state=MatchState.AUTO,
                             created_at=timezone.now())
    unlink_copy(post=gone, actor=None, reason="appeal reversed: not the same claim", now=timezone.now())
    response = login(factchecker).get("/queue/")
    assert rendered_post_ids(response) == [root.pk, gone.pk]
    assert "1 copy · combined reach 1,010" in response.content.decode()


# Query counts


@pytest.mark.parametrize("rows, copies", [(5, 0), (5, 1), (40, 6)])
def test_queue_page_renders_in_a_fixed_number_of_queries(login, factchecker, django_assert_max_num_queries, rows,
                                                         copies):
    posts = [PostFactory(priority=i) for i in range(rows)]
    for post in posts:
        FlagFactory.create_batch(2, post=post)
        # Each row a group: its copies wait with it, out of the queue.
        PostFactory.create_batch(copies, duplicate_of=post, queue_state=QueueState.GROUPED)
    for post in posts[:3]:  # so "My claims" has rows too
        claim_post(reviewer=factchecker, post_id=post.pk)
    client = login(factchecker)
    # session, user with their organisation (accounts.backends), my claims with their posts, the queue
    # rows with their pages, total and copy groups
    # +1: the navigation's counts (issue 29); +1: the rows' media (issue 30); +4: JIT off around the page's
    # statement (core.jit: in the test's transaction SAVEPOINT, SET LOCAL, ROLLBACK TO and
    # RELEASE; a request sends SET LOCAL alone between its BEGIN and ROLLBACK)
    with django_assert_max_num_queries(10):
        response = client.get("/queue/", {"source": "user_report"})
    assert response.status_code == 200
    assert len(rendered_post_ids(response)) == min(rows - 3, PAGE_SIZE)
    html = response.content.decode()
    if copies:
        label = f"{copies} cop{'y' if copies == 1 else 'ies'} · combined reach {1050 * (copies + 1):,}"
        assert html.count(label) == min(rows - 3, PAGE_SIZE)
    else:
        assert "combined reach" not in html


def test_the_flag_source_filter_reads_only_the_flags_that_sent_the_post_to_fact_checkers(login, factchecker):
    from tests.scenarios import reported_post

    post = reported_post(reports=[("misinformation", "user_report"), ("violence", "classifier")])
    client = login(factchecker)
    assert rendered_post_ids(client.get("/queue/", {"source": "user_report"})) == [post.pk]
    assert rendered_post_ids(client.get("/queue/", {"source": "classifier"})) == []  # a report for staff
