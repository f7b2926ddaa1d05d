"""What each verdict would do to a post now: the rating form's forecast (factcheck.previews asks for it); and what
withdrawing its rating would do (`preview_withdrawal`, the withdrawal's confirmation page).

The forecast reads the same rows the decision will and asks the same rules: what a verdict does is
moderation.policy.effect_of, which strikes count is moderation.strikes.counts_toward_standing. A
change of policy in the admin changes the forecast at once. It is a forecast: the decision is made
when the rating's job runs, by the rows of that moment. Registered in ModerationConfig.ready().
"""

from __future__ import annotations

from decimal import Decimal

from django.db.models import Count, Q
from django.utils import timezone

from core.formatting import times
from factcheck.models import Post, QueueState, Verdict
from factcheck.previews import EffectPreview
from moderation.models import FACT_CHECK_KINDS, Action, ActionKind, EnforcementPolicy, RepeatOffenderPolicy, Strike
from moderation.policy import effect_of
from moderation.strikes import counts_toward_standing

ONE = Decimal("1")
QUANTUM = Decimal("0.0001")


def _less(multiplier: Decimal) -> str:
    percent = int((ONE - multiplier) * 100)
    return f" (shown {percent}% less in feeds)" if 0 < percent < 100 else ""


def preview_effects(post: Post) -> dict[str, EffectPreview]:
    """Every verdict's effect on this post now, in three queries: the policy rows, the repeat-offender
    numbers, and the page's counted strikes (with those a new rating of this post would end)."""
    now = timezone.now()
    policies = {row.verdict: row for row in EnforcementPolicy.objects.all()}
    repeat = RepeatOffenderPolicy.current()
    counts = Strike.objects.filter(counts_toward_standing(now=now, policy=repeat), page_id=post.page_id).aggregate(
        active=Count("id"),
        # A new rating ends the post's current fact-check actions, and their strikes with them.
        ending=Count("id", filter=Q(action__post_id=post.pk, action__kind__in=FACT_CHECK_KINDS,
                                    action__ended_at__isnull=True)),
    )
    active, ending = counts["active"], counts["ending"]
    repeat_now = active >= repeat.strike_threshold
    previews = {}
    for verdict in Verdict.values:
        effect = effect_of(verdict, policy=policies.get(verdict))
        strikes_after = active - ending + (1 if effect.strike else 0)
        repeat_after = strikes_after >= repeat.strike_threshold
        page_multiplier = repeat.page_multiplier if repeat_after else ONE
        in_all = (effect.feed_multiplier * page_multiplier).quantize(QUANTUM)
        lines = []
        if verdict == Verdict.NOT_ELIGIBLE:
            lines.append("Takes the post out of the queue with this reason; no restriction, no label.")
        elif not effect.restricts:
            lines.append("No restriction and no label" + ("; ends the post's current fact-check restriction."
                                                          if ending or post.queue_state == QueueState.RATED else "."))
        else:
            lines.append(f"Feed distribution {times(effect.feed_multiplier)}{_less(effect.feed_multiplier)}."
                         if effect.feed_multiplier < ONE else "Feed distribution unchanged.")
            # The label is quoted as it is shown: it carries its own full stop, so none is added after it.
            lines.append(f"Label: “{effect.label}”" if effect.label else "No label.")
            if effect.warn_sharers:
                lines.append("People who shared it are warned.")
        if effect.strike:
            lines.append(f"A strike for the page ({strikes_after} in the last {repeat.window_days} days; "
                         f"{repeat.strike_threshold} make a repeat offender).")
        if repeat_after and not repeat_now:
            lines.append(f"This makes the page a repeat offender: every post of the page "
                         f"{times(repeat.page_multiplier)}, and its monetisation is suspended.")
        elif repeat_now and not repeat_after:
            lines.append("The page stops being a repeat offender (a strike ends with the rating it replaces).")
        elif repeat_after:
            lines.append(f"The page is a repeat offender: this post {times(repeat.page_multiplier)} more, "
                         f"{times(in_all)} in all.")
        previews[verdict] = EffectPreview(
            verdict=verdict, multiplier=in_all, label=effect.label, warn_sharers=effect.warn_sharers,
            strike=effect.strike, makes_repeat_offender=repeat_after and not repeat_now, lines=tuple(lines),
        )
    return previews


def preview_withdrawal(post: Post, *, copies: int, public: bool, told: bool) -> tuple[str, ...]:
    """What withdrawing the post's current rating would do now, as sentences for the confirmation page
    (moderation.views_withdraw): the same rows `withdraw_rating` will read. `copies`: how many copies carry it;
    `public`: whether it has a public page now (moderation.selectors.published_rating); `told`: whether its owner was
    told of it (`withdrawal.owner_was_told`), so is told of its withdrawal."""
    now = timezone.now()
    repeat = RepeatOffenderPolicy.current()
    ending = list(Action.objects.filter(post=post, kind__in=FACT_CHECK_KINDS, ended_at__isnull=True))
    counts = Strike.objects.filter(counts_toward_standing(now=now, policy=repeat), page_id=post.page_id).aggregate(
        active=Count("id"), ending=Count("id", filter=Q(action__in=ending)),
    )
    repeat_now = counts["active"] >= repeat.strike_threshold
    repeat_after = counts["active"] - counts["ending"] >= repeat.strike_threshold
    removed = Action.objects.filter(post=post, kind=ActionKind.REMOVAL, ended_at__isnull=True).exists()
    lines = ["The rating stops being current. It stays in the post's history, marked as withdrawn, and its public "
             "page says so; it is no longer published as ClaimReview." if public else
             "The rating stops being current. It stays in the post's history, marked as withdrawn (it has no public "
             "page to change)."]
    lifted = [what for what, present in (("its demotion", any(a.feed_multiplier < ONE for a in ending)),
                                         ("its label", any(a.label for a in ending))) if present]
    if lifted:
        after = Decimal("0") if removed else (repeat.page_multiplier if repeat_after else ONE)
        lines.append(f"What it does to the post ends: {' and '.join(lifted)} {'are' if len(lifted) > 1 else 'is'} "
                     f"lifted, and the post's distribution goes back to {times(after)}"
                     + (" (it stays removed)." if removed else "."))
    else:
        lines.append("It restricts nothing now, so the post's distribution does not change.")
    if counts["ending"]:
        lines.append(f"Its strike on the page ends ({counts['active'] - counts['ending']} left in the last "
                     f"{repeat.window_days} days).")
        if repeat_now and not repeat_after:
            lines.append("The page stops being a repeat offender.")
    if copies:
        lines.append(f"The {copies:,} {'copy that carries' if copies == 1 else 'copies that carry'} this rating "
                     "lose it too, and their owners are told.")
    flagged = post.flag_count > 0 and not post.page.is_politician and not removed
    lines.append("The post goes back to the review queue: it still has flags asking for a fact-check." if flagged
                 else "The post does not go back to the review queue: nothing asks for a fact-check of it now.")
    if told:
        lines.append("The page owner is told, with your reason, word for word.")
    return tuple(lines)
