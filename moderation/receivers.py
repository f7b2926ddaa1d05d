"""How the decision side hears from the review side: ratings, new posts and matched copies, each a job after commit;
flags that arrived for it to answer (reports of harm, flags answered on arrival), inside the ingest batch; flags
withdrawn by their sender, inside the withdrawal; and copies released from a claim with no rating, inside the
matching reconciler's run."""

from collections import defaultdict

from django.dispatch import receiver

from core.jobs import enqueue_on_commit
from factcheck.models import Flag
from factcheck.signals import (
    copies_edited,
    copies_released,
    flags_stored,
    flags_withdrawn,
    posts_created,
    posts_matched,
    rating_recorded,
)
from moderation import jobs
from moderation.harm_reports import follow_withdrawn_reports
from moderation.models import PageStanding
from moderation.publishing import publish_report_outcomes
from moderation.report_outcomes import record_answers
from moderation.report_queue import refresh_rows
from moderation.unlinking import release_edited_copies
from moderation.withdrawal import follow_released_copies


@receiver(rating_recorded, dispatch_uid="moderation.apply_rating_on_commit")
def apply_rating_after_commit(sender, rating, **kwargs) -> None:
    enqueue_on_commit(jobs.apply_rating, rating.pk)  # its post, then the copies linked to it


@receiver(posts_matched, dispatch_uid="moderation.apply_matches_on_commit")
def apply_matches_after_commit(sender, post_ids, **kwargs) -> None:
    enqueue_on_commit(jobs.apply_matches, list(post_ids))


@receiver(posts_created, dispatch_uid="moderation.new_posts_of_repeat_offenders")
def give_new_posts_their_pages_standing(sender, posts, now, **kwargs) -> None:
    """Every post of a repeat offender's page carries the page multiplier, new ones included.

    After commit, in a job of its own: the decisions feed's lock is never taken inside an ingest
    batch, so a decision never waits behind a 1,000-flag batch (docs/concurrency.md). If the job
    is lost, the hourly `age_out_strikes` job gives such posts their distribution.
    """
    page_ids = {page_id for _, page_id in posts}
    offenders = set(
        # One array parameter, not a placeholder per page (a batch names up to 1,000 pages).
        PageStanding.objects.filter(page_id__in_array=list(page_ids), is_repeat_offender=True)
        .values_list("page_id", flat=True)
    )
    post_ids = [post_id for post_id, page_id in posts if page_id in offenders]
    if post_ids:
        enqueue_on_commit(jobs.distribute_new_posts, post_ids)


@receiver(flags_stored, dispatch_uid="moderation.queue_reports_and_answer_arrivals")
def queue_reports_and_answer_arrivals(sender, reported_post_ids, decided_flag_ids, now, **kwargs) -> None:
    """Reports of harm join the staff's queue, and the senders of flags answered on arrival are told, inside
    the ingest batch's transaction: a report is never stored without its queue row, nor an answer without its
    event. Neither takes a lock the batch does not hold (the queue rows are its posts'; the outbox inserts)."""
    refresh_rows(post_ids=reported_post_ids, now=now)
    for outcome, flag_ids in _by_outcome(decided_flag_ids).items():
        record_answers(flag_ids, outcome=outcome, actor=None, now=now)
    publish_report_outcomes(list(decided_flag_ids))


@receiver(flags_withdrawn, dispatch_uid="moderation.withdrawn_reports_leave_the_desk")
def withdrawn_reports_leave_the_desk(sender, post_id, actor, reason, now, **kwargs) -> None:
    """A withdrawn report of harm leaves the staff's queue in the withdrawal's transaction, under its post's lock
    (which the withdrawal took first, as every decision of the post does)."""
    follow_withdrawn_reports(post_id=post_id, actor=actor, reason=reason, now=now)


@receiver(copies_released, dispatch_uid="moderation.released_copies_lose_the_withdrawn_rating")
def released_copies_lose_the_withdrawn_rating(sender, claim_id, post_ids, now, **kwargs) -> None:
    """Copies left matched under a claim whose rating was withdrawn, moved back to waiting by the matching reconciler:
    in its transaction, under their locks, what the withdrawal undid for its copies is undone for them."""
    follow_released_copies(claim_id=claim_id, post_ids=list(post_ids), now=now)


@receiver(copies_edited, dispatch_uid="moderation.edited_copies_leave_their_claims")
def edited_copies_leave_their_claims(sender, post_ids, now, **kwargs) -> None:
    """Copies edited so that they no longer make their claim: in the ingest transaction that stored the edit, under
    their locks, they leave it, and what its rating did to them ends."""
    release_edited_copies(post_ids=list(post_ids), now=now)


def _by_outcome(flag_ids) -> dict[str, list[int]]:
    """The flags answered on arrival, grouped by the outcome ingest gave them."""
    grouped: dict[str, list[int]] = defaultdict(list)
    for flag_id, outcome in Flag.objects.filter(pk__in=list(flag_ids)).order_by("id").values_list("id", "outcome"):
        grouped[outcome].append(flag_id)
    return grouped
