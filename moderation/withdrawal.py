"""A rating withdrawn by its organisation, and what that undoes: `withdraw_rating`, one transaction.

The review side says who may and takes the rating back (factcheck.withdrawals: no rating in its place, the post and
its copies back to waiting); here the actions the rating's decision took end through the pipeline, as when an appeal
reverses a rating (moderation.appeals) or a re-rating supersedes it, but with nothing created in their place: on the
post (its fact-check action, or staff's override of it) and on every copy that carried it (moderation.selectors'
`carried_by`), each with its strike, then the pages' standings, the distributions, the owners' notices, the decisions
feed and the `distribution.changed` webhooks.

Locks, in the global order (docs/concurrency.md): the post and the copies that carry its rating, in id order
(`_lock_rated_post_and_copies`; a re-rating, an appeal's filing or decision and a copy's own rating each take the
post's lock first, so they wait for the withdrawal or it for them, and the loser meets the rating as it is then:
stale, or under appeal), then the claim's refile lock, then, in the pipeline, the actions, the standings and the feed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck.models import Post, Rating
from factcheck.withdrawals import clean_withdrawal_reason, copies_to_release, withdraw
from moderation.appeal_states import grant_appeal, open_matched_appeal, outcome_notice
from moderation.models import FACT_CHECK_KINDS, Action, EndReason, Strike
from moderation.notice_delivery import end_hold
from moderation.notices import Notice
from moderation.pipeline import Change, Ending, active_post_actions, carry_out_many
from moderation.publishing import publish_appeal
from moderation.report_outcomes import reopen_rated
from moderation.selectors import carried_by


@transaction.atomic(durable=True)
def withdraw_rating(*, actor, post_id: int, rating_id: int, reason: str, now: datetime | None = None) -> Rating:
    """A fact-checker of the rating's organisation withdraws the post's current rating `rating_id`, with `reason`
    (required; the owners of the post and of its copies read it). Refused before anything is written: a bad reason
    (ValidationError), another organisation's rating (NotYourRating), a rating no longer current (StaleRating), an
    open appeal against it (AppealOpen), a rating not of this post (RatingNotFound). Returns the withdrawn rating."""
    reason = clean_withdrawal_reason(reason)
    now = now or timezone.now()
    post, copies = _lock_rated_post_and_copies(post_id)
    rating, carrying = withdraw(reviewer=actor, post=post, rating_id=rating_id, reason=reason, copies=copies, now=now)
    # The flags the rating answered `rated` wait again, so the next rating answers them (or the removal does).
    reopen_rated([post, *carrying], actor=actor, now=now, why=f"the rating was withdrawn: {reason}")
    verdict = rating.get_verdict_display()
    context = {"rating": rating, "reason": reason}
    ending = active_post_actions(post)
    struck = set(Strike.objects.filter(action__in=ending, ended_at__isnull=True).values_list("action__post_id",
                                                                                            flat=True))
    changes = [Change(
        post=post, cause=f"{verdict} rating withdrawn by its fact-checker", actor=actor,
        end=[Ending(action, EndReason.WITHDRAWN, f"rating {rating.pk} withdrawn: {reason}") for action in ending],
        # The owner is told when they were told of the rating ("rated" is told when it does something to the post),
        # even if staff have lifted what it did since: the rating they read of disappears otherwise.
        notice=(Notice("rating_withdrawn", {**context, "struck": post.pk in struck, "lifted_before": not ending})
                if ending or owner_was_told(post, rating) else None),
    )]
    carried: dict[int, list[Action]] = {copy.pk: [] for copy in carrying}
    for action in carried_by(list(carried)).order_by("id"):
        carried[action.post_id].append(action)
    copies_changes, appeals = _undone_for_copies(carrying, carried, rating=rating, actor=actor, reason=reason, now=now)
    # The rating's own notices may still be held for its copies (moderation.notice_delivery): released with these.
    end_hold(rating_id=rating.pk)
    carry_out_many(sorted([*changes, *copies_changes], key=lambda change: change.post.pk), now=now)
    _publish_granted(carrying, appeals)
    return rating


def follow_released_copies(*, claim_id: int, post_ids: list[int], now: datetime) -> None:
    """Copies that a match job linked to the claim while its rating was being withdrawn (`_lock_rated_post_and_copies`
    read the copies before that link committed), which the matching reconciler has now moved back to waiting
    (factcheck.matching.unrated.release_unrated, in its savepoint, holding their locks): what the withdrawal did to
    the copies it saw is done to these, in its fact-checker's name and with their reason, as it was for the others.
    Flags answered `rated` while they were matched wait again; a matched rating (or staff's override of it) that its
    job gave them before the withdrawal committed ends, strike and all, and their owners are told; an open appeal of
    it is granted."""
    rating = (Rating.objects.select_related("organisation").filter(post_id=claim_id, is_current=False,
                                                                     superseded_by__isnull=True)
              .order_by("-superseded_at").first())
    event = (AuditEvent.objects.select_related("actor").filter(
        verb=AuditVerb.RATING_WITHDRAWN, target_type=Rating._meta.label_lower, target_id=str(rating.pk)).first()
        if rating is not None else None)
    if event is None:  # no withdrawn rating: nothing was done in its name, so nothing is undone
        return
    actor, reason = event.actor, event.reason
    posts = list(Post.objects.select_related("page").filter(pk__in=post_ids).order_by("id"))
    reopen_rated(posts, actor=actor, now=now, why=f"the rating was withdrawn: {reason}")
    carried: dict[int, list[Action]] = defaultdict(list)
    for action in carried_by(post_ids).filter(rating=rating).order_by("id"):
        carried[action.post_id].append(action)
    carrying = [post for post in posts if post.pk in carried]
    changes, appeals = _undone_for_copies(carrying, carried, rating=rating, actor=actor, reason=reason, now=now)
    carry_out_many(changes, now=now)
    _publish_granted(carrying, appeals)


def _undone_for_copies(copies: list[Post], carried: dict[int, list[Action]], *, rating: Rating, actor, reason: str,
                       now: datetime) -> tuple[list[Change], dict]:
    """What the withdrawal of `rating` does to the copies that carried it (locked by the caller, in id order), whose
    actions of it `carried` holds by copy id: each one's Change (those actions end, strike and all; the owner is told,
    by the outcome of their appeal of it when one was open, which is granted here), and the granted appeals by copy
    id, published once the changes are carried out (`_publish_granted`)."""
    struck = set(Strike.objects.filter(action__in=[a for actions in carried.values() for a in actions],
                                       ended_at__isnull=True).values_list("action__post_id", flat=True))
    appeals = _grant_appeals_of_copies(copies, rating=rating, actor=actor, reason=reason, now=now)
    context = {"rating": rating, "reason": reason}
    changes = [
        Change(
            post=copy, actor=actor,
            cause=f"the claim it copies is no longer rated {rating.get_verdict_display()}: its rating was withdrawn",
            end=[Ending(action, EndReason.WITHDRAWN, f"the claim's rating {rating.pk} was withdrawn: {reason}")
                 for action in carried[copy.pk]],
            notice=(_appeal_closed_notice(appeals[copy.pk]) if copy.pk in appeals
                    else Notice("matched_withdrawn", {**context, "struck": copy.pk in struck}) if carried[copy.pk]
                    else None),
        )
        for copy in copies
    ]
    return changes, appeals


def _publish_granted(copies: list[Post], appeals: dict) -> None:
    for copy in copies:
        if copy.pk in appeals:
            publish_appeal(appeals[copy.pk], external_id=copy.external_id)


def owner_was_told(post: Post, rating: Rating) -> bool:
    """Whether the post's owner was told of the rating: it decided the post with an action (ended since or not)."""
    return Action.objects.filter(post=post, rating=rating, kind__in=FACT_CHECK_KINDS).exists()


def _grant_appeals_of_copies(carrying: list[Post], *, rating: Rating, actor, reason: str, now: datetime) -> dict:
    """A copy owner's open "not the same claim" appeal was against the matched rating the withdrawal ends: granted
    (reversed) by the withdrawal, as staff lifting a removal grants its appeal (the decision appealed is gone), its
    outcome the owner's one notice. The copy stays linked to the claim (nobody decided it is not the same claim):
    a later rating reaches it again, and they may appeal that. By copy id."""
    granted = {}
    for copy in carrying:
        if (appeal := open_matched_appeal(copy)) is not None:
            granted[copy.pk] = grant_appeal(appeal, actor=actor, now=now, outcome_reason=(
                f"{rating.organisation.name} withdrew the {rating.get_verdict_display()} rating your post carried, "
                f"so the restriction you appealed has ended: {reason}"))
    return granted


def _appeal_closed_notice(appeal) -> Notice:
    """The granted appeal's notice, saying whether the copy still waits with the claim (a new rating reaches it) or
    stands alone now (the claim no longer waits in the queue, or was posted after it): as the release left it."""
    notice = outcome_notice(appeal)
    linked = Post.objects.filter(pk=appeal.post_id, duplicate_of__isnull=False).exists()
    return replace(notice, context={**notice.context, "rating_withdrawn": True, "still_linked": linked})


def _lock_rated_post_and_copies(post_id: int) -> tuple[Post, list[Post]]:
    """Lock the post and the copies that carry its rating, in id order (docs/concurrency.md: posts, several in id
    order). NO KEY: as `lock_post`, others only insert rows that reference them. The copies are read before their
    locks; `withdraw` keeps those still linked once they are held. A copy that a match job links meanwhile, having read
    the claim as rated, is left matched with no rating to carry: the matching reconciler moves it back to waiting
    (factcheck.matching.unrated.release_unrated)."""
    ids = sorted({post_id, *copies_to_release(post_id)})
    posts = list(Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page")
                 .filter(pk__in=ids).order_by("id"))
    post = next((p for p in posts if p.pk == post_id), None)
    if post is None:
        raise Post.DoesNotExist(f"No post {post_id}.")
    return post, [p for p in posts if p.pk != post_id]
