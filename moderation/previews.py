"""The decision side's answers to the review pages (factcheck.previews): what each verdict would do
to a post now, and the post's story. Registered in ModerationConfig.ready().

The preview reads the same rows the decision will (EnforcementPolicy, RepeatOffenderPolicy, the
page's active strikes) and follows moderation.enforcement's rule of which verdicts act, so a change
of policy in the admin changes the preview at once. It is a forecast: the decision is made when the
rating's job runs, by the rows of that moment.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.db.models import Count, Q
from django.utils import timezone

from core.formatting import times
from factcheck.models import Post, QueueState, Verdict
from factcheck.previews import AppealSummary, EffectPreview, PostStory, StoryEntry
from moderation.enforcement import NO_ACTION_VERDICTS
from moderation.models import (
    FACT_CHECK_KINDS,
    OPEN_STATUSES,
    Appeal,
    AppealKind,
    EnforcementPolicy,
    RepeatOffenderPolicy,
    Strike,
    StrikeKind,
)
from moderation.timeline import post_timeline

ONE = Decimal("1")



def _less(multiplier: Decimal) -> str:
    percent = int((ONE - multiplier) * 100)
    return f" (shown {percent}% less in feeds)" if 0 < percent < 100 else ""


def preview_effects(post: Post) -> dict[str, EffectPreview]:
    """Every verdict's effect on this post now, in three queries: the policy rows, the repeat-offender
    numbers, and the page's strikes in the window (with those a new rating of this post would end)."""
    now = timezone.now()
    policies = {row.verdict: row for row in EnforcementPolicy.objects.all()}
    repeat = RepeatOffenderPolicy.current()
    counts = Strike.objects.filter(
        page_id=post.page_id, kind=StrikeKind.FACT_CHECK, ended_at__isnull=True,
        created_at__gt=now - timedelta(days=repeat.window_days),
    ).aggregate(
        active=Count("id"),
        # A new rating ends the post's current fact-check actions, and their strikes with them.
        ending=Count("id", filter=Q(action__post_id=post.pk, action__kind__in=FACT_CHECK_KINDS,
                                    action__ended_at__isnull=True)),
    )
    active, ending = counts["active"], counts["ending"]
    repeat_now = active >= repeat.strike_threshold
    previews = {}
    for verdict in Verdict.values:
        policy = policies.get(verdict)
        acts = policy is not None and verdict not in NO_ACTION_VERDICTS and (policy.feed_multiplier < 1 or policy.label)
        post_multiplier = policy.feed_multiplier if acts else ONE
        strike = bool(acts and policy.page_strike)
        strikes_after = active - ending + (1 if strike else 0)
        repeat_after = strikes_after >= repeat.strike_threshold
        page_multiplier = repeat.page_multiplier if repeat_after else ONE
        lines = []
        if verdict == Verdict.NOT_ELIGIBLE:
            lines.append("Takes the post out of the queue with this reason; no restriction, no label.")
        elif not acts:
            lines.append("No restriction and no label" + ("; ends the post's current fact-check restriction."
                                                          if ending or post.queue_state == QueueState.RATED else "."))
        else:
            lines.append(f"Feed distribution {times(post_multiplier)}{_less(post_multiplier)}." if post_multiplier < ONE
                         else "Feed distribution unchanged.")
            # The label is quoted as it is shown: it carries its own full stop, so none is added after it.
            lines.append(f"Label: “{policy.label}”" if policy.label else "No label.")
            if policy.warn_sharers:
                lines.append("People who shared it are warned.")
        if strike:
            lines.append(f"A strike for the page ({strikes_after} in the last {repeat.window_days} days; "
                         f"{repeat.strike_threshold} make a repeat offender).")
        if repeat_after and not repeat_now:
            lines.append(f"This makes the page a repeat offender: every post of the page "
                         f"{times(repeat.page_multiplier)}, and its monetisation is suspended.")
        elif repeat_now and not repeat_after:
            lines.append("The page stops being a repeat offender (a strike ends with the rating it replaces).")
        elif repeat_after:
            lines.append(f"The page is a repeat offender: this post {times(repeat.page_multiplier)} more, "
                         f"{times((post_multiplier * page_multiplier).quantize(Decimal('0.0001')))} in all.")
        previews[verdict] = EffectPreview(
            verdict=verdict, multiplier=(post_multiplier * page_multiplier).quantize(Decimal("0.0001")),
            label=policy.label if acts else "", warn_sharers=bool(acts and policy.warn_sharers), strike=strike,
            makes_repeat_offender=repeat_after and not repeat_now, lines=tuple(lines),
        )
    return previews


def tell_post_story(post: Post) -> PostStory:
    """The post's timeline as fact-checkers read it (people named) and its appeals, newest first."""
    entries = [StoryEntry(at=e.at, kind=e.kind, title=e.title, detail=e.detail, by=e.by)
               for e in post_timeline(post, for_owner=False)]
    appeals = [
        AppealSummary(
            id=appeal.pk, kind=AppealKind(appeal.kind).label.split(" (")[0], status=appeal.status,
            status_label=appeal.get_status_display(), created_at=appeal.created_at, decided_at=appeal.decided_at,
            is_open=appeal.status in OPEN_STATUSES,
            organisation_id=appeal.rating.organisation_id if appeal.rating_id else None,
            outcome_reason=appeal.outcome_reason,
        )
        for appeal in Appeal.objects.filter(post=post).select_related("rating").order_by("-created_at", "-id")
    ]
    return PostStory(entries=entries, appeals=appeals)
