"""A post's current distribution, derived from its active actions and its page's standing.

Current distribution = 0 if removed, else the multiplier of the current fact-check action
(1.0 if none) x the page multiplier (1.0 unless repeat offender), with the labels of the
active actions. `recompute_distributions` stores it for some posts and returns a feed entry, not
yet appended, for each post whose distribution actually changed: appending to the decisions feed
(and publishing to the webhook outbox) is the caller's last step, under the feed's lock
(moderation.feed). `distribute_new_posts` is such a caller with a transaction of its own.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from core.bulk import update_rows
from factcheck.models import Page, Post
from moderation.feed import append_and_publish
from moderation.models import FACT_CHECK_KINDS, Action, ActionKind, DistributionChange, PageStanding, PostDistribution

ONE = Decimal("1")
QUANTUM = Decimal("0.0001")


@dataclass
class Distribution:
    multiplier: Decimal = ONE
    labels: list[str] = field(default_factory=list)
    removed: bool = False
    reasons: list[dict] = field(default_factory=list)
    warn_sharers: bool = False

    def same_as(self, row: PostDistribution) -> bool:
        return (
            row.multiplier == self.multiplier
            and row.labels == self.labels
            and row.removed == self.removed
            and row.reasons == self.reasons
        )


def describe_action(action: Action) -> dict:
    if action.kind == ActionKind.REMOVAL:
        return {
            "code": "removal",
            "action_id": action.pk,
            "ground": action.ground,
            "text": f"Removed under the community standards ({action.get_ground_display()}).",
        }
    if action.kind == ActionKind.OVERRIDE:
        return {
            "code": "override",
            "action_id": action.pk,
            "text": f"Trust and safety set feed distribution x{action.feed_multiplier.normalize()}: {action.reason}",
        }
    organisation = action.rating.organisation.name if action.rating_id else "independent fact-checkers"
    return {
        "code": action.kind,
        "action_id": action.pk,
        "verdict": action.verdict,
        "text": (f"Rated {action.get_verdict_display()} by {organisation}; "
                 f"feed distribution x{action.feed_multiplier.normalize()}."),
    }


def compute_distribution(actions: list[Action], standing: PageStanding | None) -> Distribution:
    result = Distribution()
    actions = sorted(actions, key=lambda a: a.created_at)
    for action in actions:
        result.reasons.append(describe_action(action))
        if action.label:
            result.labels.append(action.label)
        result.warn_sharers = result.warn_sharers or action.warn_sharers
    if any(a.kind == ActionKind.REMOVAL for a in actions):
        result.removed = True
        result.multiplier = Decimal("0")
        return result
    fact_checks = [a for a in actions if a.kind in FACT_CHECK_KINDS]
    post_multiplier = fact_checks[-1].feed_multiplier if fact_checks else ONE
    page_multiplier = ONE
    if standing is not None and standing.is_repeat_offender:
        page_multiplier = standing.page_multiplier
        result.reasons.append(
            {
                "code": "repeat_offender",
                # No strike count here: it changes while the page stays a repeat offender, and the
                # feed must not report a change of distribution that did not happen.
                "text": f"The page is a repeat offender: all its posts x{standing.page_multiplier.normalize()}.",
            }
        )
    result.multiplier = (post_multiplier * page_multiplier).quantize(QUANTUM)
    return result


def current_distribution(post: Post) -> Distribution:
    """Read a post's stored distribution (the default when nothing ever acted on it)."""
    try:
        row = post.distribution
    except PostDistribution.DoesNotExist:
        return Distribution()
    return Distribution(multiplier=row.multiplier, labels=row.labels, removed=row.removed, reasons=row.reasons)


def recompute_page_distributions(
    *, post_ids: list[int], page: Page, cause: str, causes: dict[int, str] | None = None, now: datetime
) -> list[DistributionChange]:
    """Store the distribution of some posts of one page; returns the feed entries of those that changed, unsaved.
    Each entry's cause is `cause`, or the post's own in `causes` (a decision on it in the same step)."""
    if not post_ids:
        return []
    standing = PageStanding.objects.filter(page=page).first()
    own = causes or {}
    return _refresh(post_ids, standing_of=lambda post_id: standing, cause_of=lambda post_id: own.get(post_id, cause),
                    now=now)


def recompute_distributions(*, causes: dict[int, str], now: datetime) -> list[DistributionChange]:
    """Store the distribution of posts of any pages (post id -> the cause the feed shows); returns the feed
    entries of those that changed, unsaved."""
    if not causes:
        return []
    page_of = dict(Post.objects.filter(pk__in=list(causes)).values_list("id", "page_id"))
    standings = {s.page_id: s for s in PageStanding.objects.filter(page_id__in=set(page_of.values()))}
    return _refresh(sorted(causes), standing_of=lambda post_id: standings.get(page_of[post_id]),
                    cause_of=causes.__getitem__, now=now)


def _refresh(post_ids: list[int], *, standing_of, cause_of, now: datetime) -> list[DistributionChange]:
    active: dict[int, list[Action]] = defaultdict(list)
    for action in (
        Action.objects.filter(post_id__in=post_ids, ended_at__isnull=True)
        .select_related("rating__organisation")
        .order_by("created_at", "id")
    ):
        active[action.post_id].append(action)
    rows = {row.post_id: row for row in PostDistribution.objects.filter(post_id__in=post_ids)}
    to_create, to_update, changes = [], [], []
    for post_id in post_ids:
        new = compute_distribution(active[post_id], standing_of(post_id))
        row = rows.get(post_id)
        if row is None:
            if new.same_as(PostDistribution(multiplier=ONE, labels=[], removed=False, reasons=[])):
                continue
            row = PostDistribution(post_id=post_id)
            to_create.append(row)
        elif new.same_as(row):
            continue
        else:
            to_update.append(row)
        row.multiplier, row.labels, row.removed, row.reasons, row.updated_at = (
            new.multiplier, new.labels, new.removed, new.reasons, now,
        )
        changes.append(
            DistributionChange(
                post_id=post_id, multiplier=new.multiplier, labels=new.labels, removed=new.removed,
                reasons=new.reasons, warn_sharers=new.warn_sharers, cause=cause_of(post_id), created_at=now,
            )
        )
    PostDistribution.objects.bulk_create(to_create, batch_size=1000)
    fields = ["multiplier", "labels", "removed", "reasons", "updated_at"]
    update_rows(PostDistribution, fields, [(row.pk, *(getattr(row, f) for f in fields)) for row in to_update])
    return changes


def distribute_new_posts(*, post_ids: list[int], now: datetime | None = None) -> list[DistributionChange]:
    """Give some posts (new ones on repeat offenders' pages) the distribution their page's standing makes,
    in a transaction of its own, posts locked first (in id order); appends what changed to the feed and
    publishes it. Returns the feed entries."""
    now = now or timezone.now()
    changes: list[DistributionChange] = []
    with transaction.atomic(durable=True):
        posts = list(
            Post.objects.select_for_update(no_key=True, of=("self",)).select_related("page")
            .filter(pk__in=post_ids).order_by("id")
        )
        by_page: dict[int, list[Post]] = defaultdict(list)
        for post in posts:
            by_page[post.page_id].append(post)
        # Then their pages' standings (the lock order: posts, standing, feed), so a standing that is
        # flipping right now is read as it ends up, not as it was.
        list(PageStanding.objects.select_for_update(no_key=True).filter(page_id__in=list(by_page)).order_by("page_id"))
        for page_posts in by_page.values():
            changes += recompute_page_distributions(
                post_ids=[post.pk for post in page_posts], page=page_posts[0].page,
                cause="new post on a repeat offender's page", now=now,
            )
        return append_and_publish(changes)


def page_post_ids(page: Page) -> list[int]:
    return list(Post.objects.filter(page=page).values_list("id", flat=True))

