"""A pair confirmed the other way round (factcheck.matching.confirmable): the older, unrated post becomes the
copy of the newer, rated one, so its link points to a higher id. docs/concurrency.md's lock order still holds:
a copy linked upwards is always `matched`, never `grouped`, and nothing that holds a root's lock locks its
matched copies (release_group and mark_group_rated take grouped copies only, which point down), nor does
anything that holds a matched copy's lock take its root's. Proved with two connections: each side's work
completes while the other post is locked (a wait would fail at `lock_timeout` instead of hanging)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import connection, transaction
from django.db.models import F

from factcheck.matching.leaving import release_group, unlink_copy
from factcheck.matching.matcher import confirm_match
from factcheck.models import Match, MatchState, Post, QueueState, Rating
from factcheck.pages import set_politician
from factcheck.ratings import record_rating
from moderation.models import Action, ActionKind
from moderation.propagation import apply_matched_rating
from moderation.staff_actions import remove_post
from tests.factories import (
    FactCheckerFactory,
    FlagFactory,
    MatchFactory,
    OrganisationFactory,
    StaffFactory,
)
from tests.pg import Backend

# Longer than any of these steps takes unblocked; a wait for the other post's lock fails here instead.
LOCK_TIMEOUT = "5s"


def turned_pair(checker) -> tuple[Post, Post]:
    """(copy, root): the older post, unrated, confirmed as a copy of the newer one, rated since matching
    suggested the pair (stored as matching stores it: the newer post may copy the older)."""
    older = FlagFactory(post__text="The miracle cure claim, as first seen.").post
    newer = FlagFactory(post__text="The miracle cure claim, copied.").post
    match = MatchFactory(post=newer, source=older)
    record_rating(reviewer=checker, post_id=newer.pk, verdict="false", rationale="No such cure exists.",
                  sources=["https://evidence.example/cure"], claim_if_unclaimed=True)
    confirm_match(match_id=match.pk, reviewer=checker)
    older.refresh_from_db()
    newer.refresh_from_db()
    return older, newer


def holding_lock(post: Post) -> Backend:
    """Another connection holding `post`'s row lock, as a decision, a rating or an appeal of it does."""

    def hold(backend: Backend):
        with transaction.atomic():
            Post.objects.select_for_update(no_key=True).get(pk=post.pk)
            backend.reached("locked")
            backend.wait_for("done")

    holder = Backend(hold, name=f"holder of {post.external_id}").start()
    holder.wait_until_reached("locked")
    return holder


def without_waiting(work: Callable[[], object], *, while_locked: Post) -> object:
    holder = holding_lock(while_locked)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
        return work()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
        holder.release("done")
        holder.stop()
        holder.join()


@pytest.fixture
def checker(db):
    return FactCheckerFactory(organisation=OrganisationFactory(name="Full Fact"))


@pytest.mark.django_db
def test_a_turned_confirmation_links_up_as_matched_and_only_grouped_links_point_down(checker):
    copy, root = turned_pair(checker)
    assert copy.pk < root.pk and copy.duplicate_of_id == root.pk and copy.queue_state == QueueState.MATCHED
    assert Match.objects.filter(post=copy, source=root, state=MatchState.CONFIRMED).exists()
    # The grouped copies a root's lock reaches after it are all above it.
    assert not Post.objects.filter(queue_state=QueueState.GROUPED, duplicate_of_id__gt=F("id")).exists()
    # Releasing the root's group (its page marked a politician's) leaves its matched copy as it is.
    assert release_group(root_ids=[root.pk], reason="test", now=root.updated_at) == 0
    # The copy's own page marked and unmarked: it never left `matched`, so it does not come back `grouped`.
    staff = StaffFactory()
    for marked in (True, False):
        set_politician(staff=staff, page_id=copy.page_id, is_politician=marked, reason="Checked the page.")
        copy.refresh_from_db()
        assert (copy.duplicate_of_id, copy.queue_state) == (root.pk, QueueState.MATCHED)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_roots_removal_and_re_rating_and_its_page_marked_never_wait_for_its_turned_copy(checker):
    copy, root = turned_pair(checker)
    staff = StaffFactory()

    def on_the_root():
        # Each takes the root's lock, then what it locks after it (release_group, mark_group_rated).
        with transaction.atomic():
            record_rating(reviewer=checker, post_id=root.pk, verdict="partly_false", rationale="Partly so.",
                          sources=["https://evidence.example/2"], change_reason="New evidence.")
        with transaction.atomic():
            remove_post(staff=staff, post_id=root.pk, ground="harassment", reason="Targets a person.")
        return set_politician(staff=staff, page_id=root.page_id, is_politician=True, reason="A minister's page.")

    without_waiting(on_the_root, while_locked=copy)
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (root.pk, QueueState.MATCHED)
    assert Action.objects.filter(post=root, kind=ActionKind.REMOVAL, ended_at__isnull=True).exists()


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_turned_copys_matched_rating_and_unlinking_never_wait_for_its_root(checker):
    copy, root = turned_pair(checker)
    rating = Rating.objects.get(post=root, is_current=True)

    def on_the_copy():
        decided = apply_matched_rating(rating_id=rating.pk, post_id=copy.pk)
        with transaction.atomic():
            locked = Post.objects.select_for_update(no_key=True).get(pk=copy.pk)  # as an appeal's reversal does
            unlink_copy(post=locked, actor=checker, reason="Not the same claim.", now=locked.updated_at)
        return decided

    assert without_waiting(on_the_copy, while_locked=root) is not None
    copy.refresh_from_db()
    assert copy.duplicate_of_id is None and copy.queue_state == QueueState.QUEUED
    assert Match.objects.get(post=copy, source=root).state == MatchState.REJECTED
