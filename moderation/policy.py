"""The enforcement policy: what a verdict does to a post, and editing the policy's numbers.

`effect_of` is the one rule of what a verdict does (its feed multiplier, label, warning to sharers
and page strike), by the EnforcementPolicy row of its verdict; `restricts` is the one rule of
whether a decision restricts a post (demotes, labels or removes it), for a verdict's effect and a
stored action alike (`RESTRICTS` is it as a query condition on actions, for lists that count them).
The decision (moderation.enforcement), its forecast on the rating form (moderation.effect_preview),
statements of reasons, the appeal rules and the owners' portal all ask here.

A change of the policy applies to decisions made after it; actions already taken keep the
multiplier and label they were made with (they are records of what was decided).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Q, QuerySet

from audit.models import AuditVerb
from audit.services import record_event
from core.jobs import enqueue_on_commit
from core.reasons import label_problem, reason_problem, written
from factcheck.models import Verdict
from moderation.models import Action, ActionKind, EnforcementPolicy, RepeatOffenderPolicy
from moderation.models.decisions import MAX_STRIKE_THRESHOLD, MAX_WINDOW_DAYS  # noqa: F401  (the admin's bounds)

ONE = Decimal("1")

# Verdicts that never restrict a post, whatever their policy row says: True lifts earlier
# fact-check actions, Not eligible only takes the post out of the queue.
NO_ACTION_VERDICTS = (Verdict.TRUE, Verdict.NOT_ELIGIBLE)


class Effect(Protocol):
    """What a decision does to a post: a verdict's effect, or an action taken (moderation.models.Action)."""

    feed_multiplier: Decimal
    label: str

    @property
    def removed(self) -> bool: ...


def restricts(effect: Effect) -> bool:
    """Whether a decision demotes, labels or removes the post: only such a decision carries a statement
    of reasons (DSA Art. 17), and only such a decision has something for its owner to appeal."""
    return effect.removed or effect.feed_multiplier < ONE or bool(effect.label)


# `restricts` of a stored action as a query condition (an Action's `removed` is its kind): change both together.
RESTRICTS = Q(kind=ActionKind.REMOVAL) | Q(feed_multiplier__lt=ONE) | ~Q(label="")


def restricting_actions() -> QuerySet[Action]:
    """The active actions that restrict their post (`restricts`, as a query)."""
    return Action.objects.filter(RESTRICTS, ended_at__isnull=True)


@dataclass(frozen=True)
class VerdictEffect:
    """What a rating with one verdict does to its post under the policy."""

    feed_multiplier: Decimal = ONE
    label: str = ""
    warn_sharers: bool = False
    strike: bool = False  # the page gets a fact-check strike

    @property
    def removed(self) -> bool:
        return False  # nothing in the fact-check path removes a post (PRODUCT.md)

    @property
    def restricts(self) -> bool:
        return restricts(self)


NO_EFFECT = VerdictEffect()


def effect_of(verdict: str, *, policy: EnforcementPolicy | None) -> VerdictEffect:
    """What a rating of this verdict does under `policy`, its verdict's row (None: no row, no effect).

    An effect that restricts nothing is no effect at all: no action, no strike, no warning.
    """
    if policy is None or verdict in NO_ACTION_VERDICTS:
        return NO_EFFECT
    effect = VerdictEffect(
        feed_multiplier=policy.feed_multiplier, label=policy.label, warn_sharers=policy.warn_sharers,
        strike=policy.page_strike,
    )
    return effect if effect.restricts else NO_EFFECT


def policy_for(verdict: str) -> EnforcementPolicy | None:
    return EnforcementPolicy.objects.filter(verdict=verdict).first()


def current_effect(verdict: str) -> VerdictEffect:
    """What a rating of this verdict does under the policy as it stands now."""
    return effect_of(verdict, policy=policy_for(verdict))


def _snapshot(row: models.Model, fields: list[str]) -> dict[str, str]:
    return {field: str(getattr(row, field)) for field in fields}


def changed_since(row: models.Model, *, seen: str) -> models.Model | None:
    """The policy row as it is now if it was saved since the version `seen` (its `updated_at`, ISO) was read, else
    None. Locks the row until the caller's transaction ends (the admin's, around the check and `save_policy`), so
    nobody saves it in between."""
    now = (type(row).objects.select_for_update(no_key=True, of=("self",)).select_related("updated_by")
           .filter(pk=row.pk).first())
    return now if now is not None and now.updated_at.isoformat() != seen else None


@transaction.atomic
def save_policy(*, row: models.Model, changed_by, reason: str = "") -> dict[str, list[str]]:
    """Save an EnforcementPolicy or RepeatOffenderPolicy row and audit what changed.

    Not durable: the admin's change form (its one caller) saves inside a transaction of its own.
    The numbers' bounds are the models' validators and check constraints (full_clean checks both)."""
    reason = written(reason)
    if message := reason_problem(reason, read_by=None):  # the audit log's, for staff
        raise ValidationError({"reason": [message]})
    if message := label_problem(getattr(row, "label", "")):
        raise ValidationError({"label": [message]})
    row.full_clean()
    fields = [f.name for f in row._meta.concrete_fields if f.name not in ("id", "updated_at", "updated_by")]
    before = {}
    previous = type(row).objects.select_for_update(no_key=True).filter(pk=row.pk).first() if row.pk else None
    if previous is not None:
        before = _snapshot(previous, fields)
        if "verdict" in before and before["verdict"] != str(row.verdict):
            raise ValidationError(
                {"verdict": ["A policy row belongs to its verdict; edit that verdict's row instead."]}
            )
        if all(getattr(previous, field) == getattr(row, field) for field in fields):  # 0.4 == 0.400
            return {}  # nothing changed: the row keeps its version (updated_at), and nothing is audited
    row.updated_by = changed_by
    row.save()
    row.refresh_from_db()  # compare stored values, not what the form typed ("0.4" vs "0.400")
    after = _snapshot(row, fields)
    changes = {field: [before.get(field, ""), after[field]] for field in fields if before.get(field) != after[field]}
    if changes and getattr(row, "verdict", None) in NO_ACTION_VERDICTS:
        raise ValidationError(f"A {row.get_verdict_display()} rating takes no action of its own, whatever this row "
                              "says: there is nothing here to change.")
    if changes:
        repeat_offenders = isinstance(row, RepeatOffenderPolicy)
        record_event(
            actor=changed_by, verb=AuditVerb.POLICY_CHANGED, target=row, reason=reason or "edited in the admin",
            data={"changes": changes, "applies_to": "every page's standing, from now" if repeat_offenders
                  else "decisions made from now on"},
        )
        if repeat_offenders:
            # A page's standing is read from the policy as it is: recompute every page with strikes now, rather
            # than at the next hourly pass, so that what the admin says on saving holds at once.
            enqueue_on_commit("moderation.jobs.age_out_strikes")
    return changes
