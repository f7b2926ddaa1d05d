"""Which posts the fact-checkers' queue takes: every rule of eligibility, in one place.

A post's queue state (factcheck.models.QueueState) says where it stands. The rules that decide it:

- a post that may not be fact-checked at all is NOT_ELIGIBLE: one of a politician's page (PRODUCT.md:
  posts and ads from politicians are not fact-checked);
- a post that is claimed, rated, not eligible by its rating, grouped under or matched to a claim keeps that
  state here: it leaves it only through claims, ratings and matching, which call `returning_state` when it
  goes back;
- otherwise a post with flags waits in the queue (QUEUED), or, if it is a copy linked to its claim's first
  post, waits with that post (GROUPED); a post without flags is UNFLAGGED;
- the flags that count are those that ask for a fact-check (`REVIEW_FLAGS`): misinformation, and reports of
  harm that trust-and-safety staff sent to fact-checkers. A report of harm alone (violence, hate, harassment,
  imminent harm) goes to staff and never puts a post in the queue. A flag its sender withdrew (`WITHDRAWN_FLAGS`)
  counts for nothing, a report staff sent to fact-checkers as much as a misinformation flag (staff's sending keeps
  its record, but it only routed the reports: no report left, nothing asks for the review): a post that waited for
  a review and has no flag left asking for one leaves the queue (`withdrawn_state`: UNFLAGGED, its claim ended), and
  a lifted removal puts it nowhere; a decided (rated, matched, removed) post keeps its decision;
- a post removed by trust and safety is out of the queue: one that waited (or had no flag to wait with) is
  REMOVED until the removal is lifted (`restored_state`), and none is claimed or rated while removed
  (`is_removed`). factcheck.routing moves posts by these rules when the decision side removes or restores.

`queue_state_for` answers for one post (`withdrawn_state` when its sender withdrew flags of it),
`queue_states_for` for a batch (ingest), `may_be_fact_checked` for a refusal (claiming, rating, confirming a match;
`left_by_withdrawal` says why a post is not waiting), and `fact_checkable` is the same rule as a query
condition (`removed_posts` is `is_removed`'s); `returning_state` and `rated_state` are where a post goes when a
claim, a group or a page's mark lets it go (REMOVED while its removal stands), and when it is rated. A new rule
of eligibility (which flags ask for a fact-check, which posts are out) is written here and nowhere else;
everyone else calls these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, TypeVar

from django.db.models import Q

from factcheck.models import Flag, FlagCategory, Post, QueueState, ReportOutcome, ReportStatus, Verdict

# Flags their sender withdrew (factcheck.withdrawal): kept as history, counted nowhere.
WITHDRAWN_FLAGS = Q(status=ReportStatus.WITHDRAWN)
# Flags that still count: every one but those withdrawn. What is read as a post's flags anywhere (its counts, a
# statement of reasons' sources, the owner's timeline and data export) is among these.
COUNTED_FLAGS = ~WITHDRAWN_FLAGS
# Flags of the kinds that ask for a fact-check, withdrawn or not.
REVIEW_KINDS = Q(category=FlagCategory.MISINFORMATION) | Q(outcome=ReportOutcome.SENT_TO_FACT_CHECKERS)
# Flags that ask for a fact-check: what a post's flag figures (flag_count, flag_weight, first_flagged_at) count.
# A report of harm staff sent to fact-checkers and then withdrawn counts no more than a withdrawn misinformation
# flag: the sending routed reports that no longer exist, and a post waiting on nothing but them would stay in the
# queue with nothing for staff to take back (the decision's reports are withdrawn, not decided, so none reopen).
REVIEW_FLAGS = REVIEW_KINDS & ~WITHDRAWN_FLAGS
# States a removal takes a post out of (to REMOVED): it waited, was claimed, or had no flag to wait with.
LEAVES_ON_REMOVAL = (QueueState.UNFLAGGED, QueueState.QUEUED, QueueState.CLAIMED)

# States a post leaves only through claims, ratings and matching, never by a new flag or a recount.
SETTLED_STATES = frozenset({
    QueueState.CLAIMED, QueueState.RATED, QueueState.NOT_ELIGIBLE, QueueState.GROUPED, QueueState.MATCHED,
})
# States of a post that is waiting for a review (its own, or its group's): what leaves when it stops being eligible.
WAITING_STATES = (QueueState.QUEUED, QueueState.CLAIMED, QueueState.GROUPED)

K = TypeVar("K")


class PostFacts(NamedTuple):
    """What a post's queue state depends on, as plain values (a batch of ingest has no Post objects)."""

    state: str = QueueState.UNFLAGGED  # its queue state now (a new post: UNFLAGGED)
    politician: bool = False  # its page is a politician's
    flagged: bool = False  # it has flags
    copy: bool = False  # it is linked to its claim's first post (duplicate_of)


def may_be_fact_checked(*, post: Post) -> bool:
    """Whether the post may be claimed, rated or take a claim's rating at all (the refusals' test; reads
    `post.page`, so select it with the post)."""
    return not post.page.is_politician


def fact_checkable(prefix: str = "") -> Q:
    """`may_be_fact_checked` as a query condition on posts (or on rows reaching a post through `prefix`,
    e.g. "post__")."""
    return Q(**{f"{prefix}page__is_politician": False})


def queue_state_for(*, state: str, politician: bool, flagged: bool, copy: bool = False) -> str:
    """The queue state a post should have, from its state now, its page, its flags and its link to a claim."""
    if state == QueueState.REMOVED:
        return state  # out of the queue until the removal is lifted, whatever arrives meanwhile
    if politician:
        return QueueState.NOT_ELIGIBLE
    if state in SETTLED_STATES:
        return state
    # A post in none of those states that was removed is REMOVED already (withdraw_for_removal).
    return returning_state(flagged=flagged, copy=copy, removed=False)


def queue_states_for(posts: Mapping[K, PostFacts]) -> dict[K, str]:
    """`queue_state_for` of each post of a batch, by the caller's key (ingest's external ids)."""
    return {key: queue_state_for(**facts._asdict()) for key, facts in posts.items()}


def returning_state(*, flagged: bool, removed: bool, copy: bool = False) -> str:
    """The state of an eligible post that is waiting for nothing else (a claim released, a group or a page's
    mark lifted, a copy unlinked): in the queue if it is flagged (with its group, if a copy), else unflagged.
    A post whose removal stands (`is_removed`: it was removed while grouped, or on a politician's page) is
    REMOVED instead, so that it waits for the removal to be lifted (`restored_state`), never in the queue."""
    if removed:
        return QueueState.REMOVED
    if not flagged:
        return QueueState.UNFLAGGED
    return QueueState.GROUPED if copy else QueueState.QUEUED


def rated_state(*, verdict: str) -> str:
    """The state of a post once rated: a Not eligible verdict takes it out as not eligible (opinion, a
    politician's speech, true when written), every other verdict leaves it rated."""
    return QueueState.NOT_ELIGIBLE if verdict == Verdict.NOT_ELIGIBLE else QueueState.RATED


def asks_for_fact_check(*, category: str, outcome: str = "", status: str = ReportStatus.OPEN) -> bool:
    """`REVIEW_FLAGS` for one flag: whether it counts among the post's flags for the fact-checkers' queue."""
    if status == ReportStatus.WITHDRAWN:
        return False
    return category == FlagCategory.MISINFORMATION or outcome == ReportOutcome.SENT_TO_FACT_CHECKERS


def withdrawn_state(
    *, state: str, politician: bool, flagged: bool, copy: bool = False, group_waits: bool = False,
) -> str:
    """Where a post goes when its sender withdrew flags of it (`flagged`: whether any flag still asks for a
    fact-check). One that waited for a review (queued, claimed, grouped) with none left is UNFLAGGED, as if never
    flagged, and a claim on it ends: nothing asks for the work any more. Unless copies wait with it as their
    claim's first post (`group_waits`): their flags ask for the claim's review, which is done through this post, so
    it keeps waiting with them. Anything else is `queue_state_for`'s: a rated, matched, not eligible or removed post
    keeps its state, since withdrawing a flag never undoes a decision."""
    if state in WAITING_STATES and not flagged:
        # Copies waiting with it: it keeps waiting (or its claim goes on), as their claim's first post.
        return state if group_waits else returning_state(flagged=False, removed=False, copy=copy)
    return queue_state_for(state=state, politician=politician, flagged=flagged, copy=copy)


def left_by_withdrawal(*, post: Post) -> bool:
    """Whether the post is out of the queue because its sender withdrew the flags that asked for its review: it is
    unflagged and has withdrawn flags (the refusals' test, so that a reviewer is told why their claim ended)."""
    return (post.queue_state == QueueState.UNFLAGGED
            and Flag.objects.filter(WITHDRAWN_FLAGS, REVIEW_KINDS, post_id=post.pk).exists())


def restored_state(*, politician: bool, flagged: bool, copy: bool = False) -> str:
    """Where a REMOVED post goes when its removal is lifted: where its page and flags say, as if it had just
    arrived (a politician's post is not eligible; a flagged one waits, with its group if a copy)."""
    return queue_state_for(state=QueueState.UNFLAGGED, politician=politician, flagged=flagged, copy=copy)


def removed_posts(prefix: str = "") -> Q:
    """`is_removed` as a query condition on posts (or on rows reaching a post through `prefix`)."""
    return Q(**{f"{prefix}queue_state": QueueState.REMOVED}) | Q(**{f"{prefix}distribution__removed": True})


def is_removed(*, post: Post) -> bool:
    """Whether trust and safety removed the post, so that it is neither claimed nor rated. A post that waited
    is REMOVED; a rated, matched or grouped one keeps its state, and its removal is read from the distribution
    the decision side derives from its active actions (through the relation: this side never imports that)."""
    if post.queue_state == QueueState.REMOVED:
        return True
    relation = Post._meta.get_field("distribution")
    if relation.is_cached(post):  # selected with the post (the post page does): no query
        distribution = relation.get_cached_value(post)
        return distribution is not None and distribution.removed
    return Post.objects.filter(pk=post.pk, distribution__removed=True).exists()
