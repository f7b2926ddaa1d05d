"""A copy leaving the claim it was linked to, with what that undoes: `take_off_claim`, the one home of the steps a
reversed "not the same claim" appeal (moderation.appeals) and a fact-checker's unlinking share; and
`unlink_confirmed_copy`, a fact-checker taking back a confirmation made by mistake ("Not a copy: unlink" on the copy's
post page; who may is factcheck.matching.unlinkable's rule).

Locks, the dispute's reversal's, in its order (docs/concurrency.md): the copy's post (`lock_post`), then its open
appeal of the matched rating (granted here: written under the post's lock, as every appeal transition is), then its
pair (factcheck.matching.leaving.unlink_copy) and the claim's band keys (`refile_groups`' advisory lock), its flags
(opened again: moderation.report_outcomes.reopen_rated, which writes them under the post's lock as every writer of
flags does), then, in the pipeline, its actions, its page's standing and the feed.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from core.reasons import OWNER_READS, required_reason
from factcheck.matching.edits import EDITED
from factcheck.matching.leaving import unlink_copy
from factcheck.matching.unlinkable import Link, NotACopy, UnlinkRefused, link_of, unlink_refusal
from factcheck.members import organisation_of
from factcheck.models import Match, Post, Verdict
from moderation.appeal_states import grant_appeal, held_by_a_colleague, open_matched_appeal, outcome_notice
from moderation.models import EndReason
from moderation.notices import Notice
from moderation.pipeline import Change, Ending, carry_out, carry_out_many, lock_post
from moderation.publishing import publish_appeal
from moderation.report_outcomes import reopen_rated
from moderation.selectors import carried


class UnlinkAppealHeld(UnlinkRefused):
    """A colleague who may decide the owner's appeal of the match is reviewing it: it is theirs to decide."""

    code = "appeal_open"


def take_off_claim(
    *, post: Post, actor, pair_reason: str, cause: str, end_reason: str, end_note: str, notice: Notice | None,
    now: datetime,
) -> None:
    """The copy leaves its claim (unlink_copy: its pair rejected, so never matched again; back to the queue, or the
    state it returns to; audited), its flags that the claim's rating answered open again (`reopen_rated`), and the
    matched rating it carried ends through the pipeline, with its strike, the
    page's standing, the distribution, the owner's one `notice`, the decisions feed and the webhooks. Nothing is
    carried out for a copy that carried no rating and whose owner is told nothing (a copy of a claim not rated yet).

    In the caller's transaction, which holds the copy's lock (lock_post). `pair_reason` is the pair's (every
    organisation's post pages show it), `end_note` the ended action's (the audit log)."""
    change = _off_claim(post=post, actor=actor, pair_reason=pair_reason, cause=cause, end_reason=end_reason,
                        end_note=end_note, notice=notice, now=now)
    if change is not None:
        carry_out(change, now=now)


def _off_claim(
    *, post: Post, actor, pair_reason: str, cause: str, end_reason: str, end_note: str, notice: Notice | None,
    now: datetime,
) -> Change | None:
    """`take_off_claim` but the pipeline: the change it carries out, if any."""
    unlink_copy(post=post, actor=actor, reason=pair_reason, now=now)
    # Its flags, answered `rated` by the claim's rating it no longer carries, wait again for a rating of its own.
    reopen_rated([post], actor=actor, now=now,
                 why=f"no longer a copy of the claim whose rating answered them: {end_note}")
    # Its override too: one left behind kept the post demoted and labelled for a claim it does not make (a review).
    ending = [Ending(action, end_reason, end_note) for action in carried(post)]
    if ending or notice is not None:
        return Change(post=post, cause=cause, actor=actor, end=ending, notice=notice)
    return None


@transaction.atomic(durable=True)
def unlink_confirmed_copy(
    *, post_id: int, actor, reason: str, claim_id: int | None = None, now: datetime | None = None
) -> Match:
    """A fact-checker takes back a confirmation: the copy `post_id` leaves its claim as a reversed "not the same claim"
    appeal would take it off (`take_off_claim`), and its owner is told why (`reason`, required, read word for word).
    `claim_id`: the claim's first post as the fact-checker's page showed it; refused when the copy is linked to
    another since (or to none: unlinked meanwhile).

    The owner's open appeal of the matched rating asked for exactly this: it is granted (reversed) by the fact-checker,
    with their reason, and its outcome is the one notice, even when they confirmed the copy themselves (they may not
    uphold it, moderation.appeal_states.can_decide; taking their own confirmation back gives the owner what they
    asked). Refused while a colleague who may decide that appeal is reviewing it: it is theirs to decide."""
    reason, problem = required_reason(
        reason, missing="Say why this post is not a copy of the claim: its owner reads your reason.",
        read_by=OWNER_READS)
    if problem:
        # Named as the API names a field's problem (the browser shows the message).
        raise UnlinkRefused(problem, code="validation_error",
                            details={"errors": [{"field": "reason", "message": problem}]})
    now = now or timezone.now()
    post = lock_post(post_id)
    link = link_of(post, now=now)
    if link.match is not None and claim_id is not None and link.match.source_id != claim_id:
        raise NotACopy(f"Post {post.external_id} was unlinked from that claim and has since been linked to "
                       "another: read its page as it is now.")
    if refusal := unlink_refusal(user=actor, post=post, link=link):
        raise refusal
    match = link.match
    appeal = open_matched_appeal(post)
    if appeal is not None and held_by_a_colleague(appeal, actor, now=now):
        raise UnlinkAppealHeld(f"{appeal.reviewer} is reviewing the owner's appeal of this match: they decide it "
                               "(accepting it unlinks the copy).")
    if appeal is not None:
        grant_appeal(appeal, actor=actor, outcome_reason=f"A fact-checker unlinked your post from the claim: {reason}",
                     now=now)
    notice = outcome_notice(appeal) if appeal is not None else _unlinked_notice(post, actor=actor, link=link,
                                                                               reason=reason)
    take_off_claim(
        post=post, actor=actor, pair_reason=f"unlinked, not the same claim: {reason}",
        cause="matched rating ended: unlinked by a fact-checker, not the same claim", end_reason=EndReason.UNLINKED,
        end_note=f"unlinked by a fact-checker: {reason}", notice=notice, now=now,
    )
    if appeal is not None:
        publish_appeal(appeal, external_id=post.external_id)
    match.refresh_from_db()
    return match


def _unlinked_notice(post: Post, *, actor, link: Link, reason: str) -> Notice | None:
    """What the owner is told when no appeal of theirs asked for it; nothing for a copy that carried no rating (its
    claim not rated yet, or rated Not eligible): they were never told it was a copy."""
    if not carried(post).exists():
        return None
    organisation = organisation_of(actor)
    return Notice("unlinked", {"organisation": organisation.name if organisation is not None else "A fact-checker",
                               "verdict": Verdict(link.claim.rating_verdict).label, "reason": reason})



def release_edited_copies(*, post_ids: list[int], now: datetime) -> None:
    """Copies whose post was edited so that it no longer makes its claim (factcheck.matching.edits, at the end of the
    ingest transaction that stores the edit, under the posts' locks): each leaves its claim as an unlinked copy does
    (`take_off_claim`), in no one's name, and waits in the queue for a fact-check of its own. The owner's open appeal
    of the match asked for this: it is granted, by no reviewer (the owner's edit closed it: the appeal's event is
    theirs, and no reviewer's or organisation's figures count it), and its outcome is the one notice; otherwise the
    owner is told, when the claim's rating reached it. The pipeline carries out every copy's change at once, after
    all of them are off their claims: its locks (page standings, then the feed) in the order every decision takes
    them."""
    changes, appeals = [], []
    for post in Post.objects.filter(pk__in=post_ids, duplicate_of__isnull=False).select_related("page").order_by("id"):
        link = link_of(post, now=now)
        appeal = open_matched_appeal(post)
        if appeal is not None:
            grant_appeal(appeal, actor=appeal.filed_by, reviewed=False, now=now,
                         outcome_reason="Your post was edited and no longer makes the claim it was matched to, so it "
                                        "no longer carries that claim's rating.")
            appeals.append((appeal, post.external_id))
            notice = outcome_notice(appeal)
        elif carried(post).exists() and link.claim is not None and link.claim.rating_verdict:
            notice = Notice("edited_unlinked", {"verdict": Verdict(link.claim.rating_verdict).label})
        else:
            notice = None
        change = _off_claim(post=post, actor=None, pair_reason=EDITED, cause=f"matched rating ended: {EDITED}",
                            end_reason=EndReason.UNLINKED, end_note=EDITED, notice=notice, now=now)
        if change is not None:
            changes.append(change)
    carry_out_many(changes, now=now)
    for appeal, external_id in appeals:
        publish_appeal(appeal, external_id=external_id)
