"""Flags in: posts are created once, flags are stored once per idempotency key, the queue is updated.

Also the bulk helpers ingest writes through (core.bulk): JSON, NULLs, ids, the `in_array` and `any_array` lookups.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from audit.services import AUDIT_COLUMNS
from core.bulk import insert_rows_returning_ids, update_rows
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Flag, Organisation, Page, Post, QueueState
from factcheck.priority import SCORE_COLUMNS, priority_of
from factcheck.queue import refresh_priorities
from tests.factories import FlagFactory, PostFactory

NOW = timezone.now()


def flag(key: str, post: str = "p1", *, source: str = "user_report", page: str = "pg1", politician: bool = False,
         views: int = 1000, shares: int = 10, hours_old: float = 2, language: str = "en", country: str = "GB",
         ) -> FlagInput:
    now = NOW  # one time for the whole module: a flag built twice is the same flag (its fingerprint too)
    return FlagInput(
        idempotency_key=key, source=source, flagged_at=now, reason="suspicious",
        post=PostInput(
            external_id=post, page=PageInput(page, f"Page {page}", politician),
            posted_at=now - timedelta(hours=hours_old),
            url=f"https://social.example/{post}", text="Drinking bleach cures flu", language=language, country=country,
            views=views, shares=shares,
        ),
    )


@pytest.mark.django_db
def test_flags_for_one_post_accumulate_and_put_it_in_the_queue(platform_user):
    results = ingest_flags(flags=[flag("a"), flag("b", source="trusted_flagger")], submitted_by=platform_user)
    post = Post.objects.get(external_id="p1")
    assert [r.queue_state for r in results] == [QueueState.QUEUED, QueueState.QUEUED]
    assert post.flag_count == 2
    assert post.flag_weight == 1.0 + 5.0
    assert post.priority == pytest.approx(post.velocity_score + post.flag_score + post.age_score, abs=0.01)
    assert AuditEvent.objects.filter(verb=AuditVerb.FLAG_RECEIVED, post_id=post.pk).count() == 2
    assert AuditEvent.objects.filter(verb=AuditVerb.POST_QUEUED, post_id=post.pk).count() == 1


@pytest.mark.django_db
def test_a_later_flag_that_does_not_say_the_language_or_country_keeps_them_and_one_that_does_changes_them(
        platform_user):
    # An organisation's coverage reads them: a flag that leaves them out must not take the post out of it.
    ingest_flags(flags=[flag("k1")], submitted_by=platform_user)
    ingest_flags(flags=[flag("k2", language="", country="")], submitted_by=platform_user)
    assert Post.objects.values_list("language", "country").get(external_id="p1") == ("en", "GB")
    ingest_flags(flags=[flag("k3", language="fr", country="BE")], submitted_by=platform_user)
    assert Post.objects.values_list("language", "country").get(external_id="p1") == ("fr", "BE")


@pytest.mark.django_db
def test_flags_of_one_post_in_one_batch_leave_it_as_the_same_flags_in_two_batches(platform_user):
    ingest_flags(flags=[flag("k1", post="one", language="fr", country="FR"), flag("k2", post="one", language="",
                                                                                  country="")],
                 submitted_by=platform_user)
    ingest_flags(flags=[flag("k3", post="two", language="fr", country="FR")], submitted_by=platform_user)
    ingest_flags(flags=[flag("k4", post="two", language="", country="")], submitted_by=platform_user)
    assert dict(Post.objects.values_list("external_id", "country")) == {"one": "FR", "two": "FR"}
    assert set(Post.objects.values_list("language", flat=True)) == {"fr"}


@pytest.mark.django_db
def test_the_same_flag_sent_twice_is_stored_once(platform_user):
    ingest_flags(flags=[flag("same")], submitted_by=platform_user)
    results = ingest_flags(flags=[flag("same"), flag("same")], submitted_by=platform_user)
    assert [r.duplicate for r in results] == [True, True]
    assert Flag.objects.count() == 1
    assert Post.objects.get(external_id="p1").flag_count == 1


@pytest.mark.django_db
def test_posts_of_a_politicians_page_never_enter_the_queue(platform_user):
    results = ingest_flags(flags=[flag("x", post="speech", page="mp", politician=True)], submitted_by=platform_user)
    assert results[0].queue_state == QueueState.NOT_ELIGIBLE
    assert Page.objects.get(external_id="mp").is_politician
    assert AuditEvent.objects.filter(verb=AuditVerb.POST_NOT_ELIGIBLE).count() == 1


@pytest.mark.django_db
def test_spreading_fast_outranks_many_flags_which_outrank_age(platform_user):
    ingest_flags(flags=[flag(f"slow{i}", post="slow", views=50, shares=0, hours_old=48) for i in range(6)])
    ingest_flags(flags=[flag("viral", post="viral", views=2_000_000, shares=90_000, hours_old=3)])
    viral, slow = Post.objects.get(external_id="viral"), Post.objects.get(external_id="slow")
    assert viral.velocity_score > slow.velocity_score
    assert viral.priority > slow.priority


@pytest.mark.django_db
def test_refreshing_priorities_raises_the_age_part_of_waiting_posts(platform_user):
    ingest_flags(flags=[flag("a")])
    before = Post.objects.get(external_id="p1")
    refresh_priorities(now=timezone.now() + timedelta(hours=36))
    after = Post.objects.get(external_id="p1")
    assert after.age_score == pytest.approx(5.0, abs=0.1)
    assert after.age_score > before.age_score


def _row_versions(*posts: Post) -> dict[int, str]:
    """Each post's ctid: an UPDATE writes a new row version at a new place, even with the same values."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, ctid::text FROM factcheck_post WHERE id = ANY(%s)", [[p.pk for p in posts]])
        return dict(cursor.fetchall())


def _stored_scores(post: Post) -> tuple:
    return Post.objects.values_list(*SCORE_COLUMNS).get(pk=post.pk)


@pytest.mark.django_db
def test_refreshing_priorities_rewrites_only_the_queued_posts_whose_scores_moved():
    now = timezone.now()
    spreading = PostFactory(posted_at=now - timedelta(hours=3), first_flagged_at=now - timedelta(hours=1))
    # Waiting past the 3-day cap on its age part, with no reach: its scores no longer move with the clock.
    settled = PostFactory(
        posted_at=now - timedelta(days=9), first_flagged_at=now - timedelta(days=5), views=0, shares=0
    )
    rated = PostFactory(queue_state=QueueState.RATED, priority=1.0)

    assert refresh_priorities(now=now) == 2  # the factory's priority of 10 is neither queued post's score
    for post in (spreading, settled):
        post.refresh_from_db()
        assert _stored_scores(post) == priority_of(post, now=now).stored
    assert _stored_scores(rated)[0] == 1.0

    versions = _row_versions(spreading, settled, rated)
    assert refresh_priorities(now=now) == 0
    assert _row_versions(spreading, settled, rated) == versions  # nothing moved, nothing written

    later = now + timedelta(minutes=10)
    assert refresh_priorities(now=later) == 1
    after = _row_versions(spreading, settled, rated)
    assert after[spreading.pk] != versions[spreading.pk]
    assert {pk: after[pk] for pk in (settled.pk, rated.pk)} == {pk: versions[pk] for pk in (settled.pk, rated.pk)}
    spreading.refresh_from_db()
    assert _stored_scores(spreading) == priority_of(spreading, now=later).stored
    assert spreading.age_score > 0.1


@pytest.mark.django_db
def test_refreshing_priorities_goes_through_the_queue_in_batches_of_one_read_and_one_write(
    django_assert_num_queries,
):
    now = timezone.now()
    posts = PostFactory.create_batch(5, first_flagged_at=now - timedelta(hours=2))
    # 3 batches of at most 2 posts: a read and a write each, then the read that finds no more.
    with django_assert_num_queries(7):
        assert refresh_priorities(now=now, batch_size=2) == 5
    for post in posts:
        post.refresh_from_db()
        assert _stored_scores(post) == priority_of(post, now=now).stored


@pytest.mark.django_db
def test_a_batch_of_a_thousand_flags_uses_a_fixed_number_of_queries(platform_user, django_assert_max_num_queries):
    flags = [flag(f"k{i}", post=f"p{i}", page=f"pg{i % 50}") for i in range(1000)]
    with django_assert_max_num_queries(40):
        ingest_flags(flags=flags, submitted_by=platform_user)
    assert Post.objects.filter(queue_state=QueueState.QUEUED).count() == 1000


@pytest.mark.django_db
def test_each_flag_received_event_names_its_own_flag_and_post_in_a_batch_of_new_and_known_posts(platform_user):
    ingest_flags(flags=[flag("old", post="known")], submitted_by=platform_user)
    ingest_flags(flags=[flag("k1", post="known"), flag("k2", post="fresh"), flag("k3", post="other")],
                 submitted_by=platform_user)
    events = AuditEvent.objects.filter(verb=AuditVerb.FLAG_RECEIVED)
    stored = {f.idempotency_key: f for f in Flag.objects.select_related("post")}
    assert {e.data["idempotency_key"] for e in events} == {"old", "k1", "k2", "k3"}
    for event in events:
        f = stored[event.data["idempotency_key"]]
        assert (event.target_id, event.post_id) == (str(f.pk), f.post_id)
    assert {k: f.post.external_id for k, f in stored.items()} == {
        "old": "known", "k1": "known", "k2": "fresh", "k3": "other",
    }
    assert Post.objects.get(external_id="known").flag_count == 2


@pytest.mark.django_db
def test_rows_written_in_bulk_keep_json_values_and_nulls(platform_user):
    now = timezone.now()
    data = {"note": "naïve \"quoted\"\ttab", "n": [1, None, 2.5], "nested": {"ok": True}}
    ids = insert_rows_returning_ids(
        AuditEvent, AUDIT_COLUMNS,
        [(now, None, "system:test", AuditVerb.FLAG_RECEIVED, "factcheck.flag", "1", None, "", data),
         (now, platform_user.pk, platform_user.username, AuditVerb.POST_QUEUED, "factcheck.post", "2", 7, "r", {})],
    )
    first, second = (AuditEvent.objects.get(pk=pk) for pk in ids)
    assert (first.actor_id, first.post_id, first.data) == (None, None, data)
    assert (second.actor_id, second.post_id, second.data, second.verb) == (
        platform_user.pk, 7, {}, AuditVerb.POST_QUEUED
    )

    org = Organisation.objects.create(name="Bulk Checks", languages=["en"])
    update_rows(Organisation, ["url", "languages", "countries"], [(org.pk, "", ["fr", "de"], {"GB": None})])
    org.refresh_from_db()
    assert (org.languages, org.countries) == (["fr", "de"], {"GB": None})


@pytest.mark.django_db
def test_in_array_lookup_selects_what_in_selects():
    ingest_flags(flags=[flag(f"k{i}", post=f"p{i}") for i in range(5)])
    keys = ["p1", "p3", "missing", None]
    assert sorted(Post.objects.filter(external_id__in_array=keys).values_list("external_id", flat=True)) == ["p1", "p3"]
    post_ids = list(Post.objects.filter(external_id__in=["p0", "p4"]).values_list("pk", flat=True))
    assert sorted(
        Flag.objects.filter(post_id__in_array=post_ids).values_list("idempotency_key", flat=True)
    ) == ["k0", "k4"]
    assert Flag.objects.filter(post__in_array=post_ids).count() == 2
    assert list(Post.objects.filter(external_id__in_array=[])) == []
    # A key longer than the column never matches the stored key it starts with.
    long_key = "x" * 200
    ingest_flags(flags=[flag("k-long", post=long_key)])
    assert list(Post.objects.filter(external_id__in_array=[long_key + "tail"])) == []
    assert Post.objects.filter(external_id__in_array=[long_key]).count() == 1


@pytest.mark.django_db
def test_any_array_lookup_selects_what_in_selects_and_probes_the_index_of_a_lopsided_column():
    viral, quiet = PostFactory(), PostFactory()
    FlagFactory.create_batch(2, post=quiet)
    # A lopsided column: one post has thousands of flags, as a viral claim is the source of thousands of matches.
    Flag.objects.bulk_create(FlagFactory.build(post=viral) for _ in range(3000))
    absent = [viral.pk + 1000 + n for n in range(500)]
    assert Flag.objects.filter(post_id__any_array=[quiet.pk, None, *absent]).count() == 2
    assert Flag.objects.filter(post__any_array=[viral.pk]).count() == 3000
    assert list(Flag.objects.filter(post_id__any_array=[])) == []
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE factcheck_flag")
        sql, params = Flag.objects.filter(post_id__any_array=absent).values("id").query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = cursor.fetchall()[0][0]
    # Keys that are not there are estimated as not there, key by key (in_array's semi-join reads each as the
    # column's average, here 1,501 flags, and plans a scan of every row at any size).
    assert int(re.search(r"rows=(\d+)", plan).group(1)) <= 5, plan


@pytest.mark.django_db
def test_a_page_the_platform_marks_as_a_politicians_takes_all_its_posts_out_of_the_queue(platform_user, factchecker):
    from factcheck.claims import claim_next

    ingest_flags(flags=[flag("a", post="p1"), flag("b", post="p2"), flag("c", post="p3")], submitted_by=platform_user)
    claim_next(reviewer=factchecker)
    ingest_flags(flags=[flag("d", post="p1", politician=True)], submitted_by=platform_user)
    assert set(Post.objects.values_list("queue_state", flat=True)) == {QueueState.NOT_ELIGIBLE}
    assert claim_next(reviewer=factchecker) is None
    assert AuditEvent.objects.filter(verb=AuditVerb.PAGE_CHANGED, actor=platform_user).count() == 1
