"""Which strikes count toward a page's repeat-offender standing, and until when: the one rule that
moderation.standing (the standing itself), moderation.effect_preview (the rating form's forecast) and
moderation.selectors (the owners' portal) count by. Apart from moderation.standing, which tells owners of their
standing through the notices, so that the notices' readers (the portal's selectors among them) can count by it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, Q

from moderation.models import RepeatOffenderPolicy, Strike, StrikeKind


def counts_toward_standing(*, now: datetime, policy: RepeatOffenderPolicy) -> Q:
    """A strike that counts toward its page's repeat-offender standing now: a fact-check strike, not
    ended, given within the policy's window (community-standards strikes are counted apart)."""
    return Q(kind=StrikeKind.FACT_CHECK, ended_at__isnull=True, created_at__gt=now - timedelta(days=policy.window_days))


def strike_counts(*, page_ids: list[int], now: datetime, policy: RepeatOffenderPolicy) -> dict[int, int]:
    """The counted strikes of each of these pages (pages without any are absent), in one query."""
    return dict(
        Strike.objects.filter(counts_toward_standing(now=now, policy=policy), page_id__in=page_ids)
        .values("page_id").annotate(n=Count("id")).values_list("page_id", "n")
    )


def ages_out(strike: Strike, *, policy: RepeatOffenderPolicy) -> datetime:
    """When a fact-check strike stops counting."""
    return strike.created_at + timedelta(days=policy.window_days)
