"""A copy leaving its claim's group, the one way it happens (factcheck.matching.matcher says how groups form).

A copy leaves when a reversed "not the same claim" appeal, a fact-checker taking back a confirmation made by mistake
(moderation.unlinking) or a rating of its own unlinks it (`unlink_copy`), when
its group's first post can no longer be reviewed (`release_group`), and when its own rating conflicts with its
claim's (factcheck.conflicts). Every time it then stands alone (`stand_alone`): linked to nothing, in the state its
caller gives, its band keys filed under itself again and no longer under its claim (`refile_groups`), waiting for a
rating again unless it has one of its own, and matched again by the reconciler, which embeds it (a linked copy has
no embedding).

Callers hold the copies' post locks (docs/concurrency.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime

from audit.models import AuditVerb
from audit.services import record_event
from factcheck.eligibility import fact_checkable, is_removed, removed_posts, restored_state, returning_state
from factcheck.matching.candidates import index_bands, refile_groups, rows
from factcheck.models import LINKED_STATES, Match, MatchState, Post, QueueState
from factcheck.waiting import waits_again


def stand_alone(states: Mapping[int, str], *, now: datetime) -> int:
    """The copies `states` names leave their groups, each into the queue state given, and take their band keys with
    them (their claims hold their remaining groups' keys: refile_groups); returns how many changed."""
    roots = sorted(set(Post.objects.filter(id__in=list(states), duplicate_of__isnull=False)
                       .values_list("duplicate_of_id", flat=True)))
    by_state: dict[str, list[int]] = defaultdict(list)
    for pk, state in states.items():
        by_state[state].append(pk)
    changed = sum(
        Post.objects.filter(id__in=ids).update(duplicate_of=None, queue_state=state, updated_at=now, matched_at=None)
        for state, ids in by_state.items()
    )
    refile_groups(roots)
    index_bands(rows(list(states)))  # later copies find them at once, not only once the reconciler has run
    waits_again(list(states))  # a copy with a rating of its own never waits again: waits_again leaves it
    return changed


def unlink_copy(*, post: Post, actor, reason: str, now: datetime) -> Match | None:
    """A reversed "not the same claim" appeal, a fact-checker's unlinking of a copy confirmed by mistake (both through
    moderation.unlinking.take_off_claim), or a rating of the copy's own: the copy, whose lock the caller holds,
    leaves its group and goes back to the queue (if flagged); the pair is rejected, so never matched again. `post`
    is read again as it now stands."""
    match = Match.objects.filter(post=post, source_id=post.duplicate_of_id, state__in=LINKED_STATES).first()
    if match is not None:
        match.state, match.decided_by, match.decided_at, match.reason = MatchState.REJECTED, actor, now, reason[:2000]
        match.save(update_fields=["state", "decided_by", "decided_at", "reason"])
    source_id = post.duplicate_of_id
    # Where its page and flags say, as a released copy goes (factcheck.eligibility.restored_state): a copy on a page
    # marked a politician's since it was linked (a matched copy keeps its state then) is not eligible, never queued.
    state = QueueState.REMOVED if is_removed(post=post) else restored_state(
        politician=post.page.is_politician, flagged=post.flag_count > 0)
    stand_alone({post.pk: state}, now=now)
    post.refresh_from_db(fields=["duplicate_of", "queue_state", "updated_at", "matched_at", "left_queue_at"])
    record_event(actor=actor, verb=AuditVerb.MATCH_UNLINKED, target=match or post, post_id=post.pk,
                 reason=reason[:1000], data={"source": source_id})
    return match


def release_group(*, root_ids: list[int], reason: str, now: datetime) -> int:
    """Copies waiting under these roots (which can no longer be reviewed) go back to the queue on their
    own; their pairs are rejected with the reason, so they are not grouped under those roots again.

    In the caller's transaction, which holds the roots' locks (take_out_of_queue); it locks the copies
    after them (higher ids), in id order."""
    copies = list(Post.objects.select_for_update(no_key=True, of=("self",))
                  .filter(fact_checkable(), duplicate_of_id__in=root_ids, queue_state=QueueState.GROUPED)
                  .order_by("id").values_list("id", flat=True))
    if not copies:
        return 0
    Match.objects.filter(post_id__in=copies, source_id__in=root_ids, state__in=LINKED_STATES).update(
        state=MatchState.REJECTED, decided_at=now, reason=reason[:2000])
    # A grouped copy is flagged; one removed while grouped waits for its removal to be lifted, not in the queue.
    removed = set(Post.objects.filter(removed_posts(), id__in=copies).values_list("id", flat=True))
    return stand_alone({pk: returning_state(flagged=True, removed=pk in removed) for pk in copies}, now=now)
