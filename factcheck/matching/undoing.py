"""Undoing a rejected suggestion ("Undo: this is the same claim after all"): who may, which rejections, and the step.

A fact-checker who rejects a suggested pair by mistake (factcheck.matching.matcher.reject_match, "not the same claim")
had no way back: a rejected pair is never suggested again (PRODUCT.md, "Near-duplicates"), so the copy never took the
claim's rating. Undoing puts the pair back to `suggested`, on the post pages and the organisation's suggestions, where
it is confirmed (or rejected again) as any suggestion is: confirming stays the one step that gives a copy a rating,
with what it shows beside its button (the verdict the copy takes, from whom) and its guards (a negation or other
numbers confirmed only "despite the warning", a copy claimed by another reviewer, rated, removed, outside coverage, a
claim rated since by another organisation), judged when it is confirmed, on the posts as they stand then.

- Who may: whoever may decide the pair as a suggestion (factcheck.matching.confirmable.decider_refusal): a
  fact-checker whose organisation covers the copy and, when the claim is rated, made that rating (for a `semantic`
  pair whose copy its raters do not cover, the organisations that cover it).
- Which rejections: a person's rejection of a suggestion only, the pair's latest word in the audit log. Not a pair
  taken out of its group (an owner's "not the same claim" appeal accepted, a fact-checker's unlinking of a confirmed
  copy: moderation.unlinking, whose owner was told; a group released), nor one marked "not the same claim" on the
  conflicts page, where two organisations' ratings disagree.
- Not when nobody could confirm the pair now (confirmable's lasting refusals: both posts rated, a copy of another
  claim already, removed, a politician's page): it would be a suggestion nobody can act on. A copy another reviewer
  holds is no bar: the pair waits as suggestions do.

The pair's row keeps only its state as it stands (suggested: no decider, no decision time, no reason); its history
is the audit log's: the rejection's event (who, when, why) and this one (who, why, naming the rejection it undid).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from audit.services import record_event
from core.reasons import KEPT_FOR_GOOD, required_reason
from core.refusals import Refusal
from factcheck.matching.confirmable import PairPost, confirmation
from factcheck.matching.matcher import locked_pair
from factcheck.models import Match, MatchState

MATCH_TARGET = Match._meta.label_lower
# The form's message too (factcheck.forms.MatchUndoForm): said the same wherever the reason is missing.
MISSING_REASON = "Say why this is the same claim after all: the reason is kept with the pair's history."


class UndoRefused(Refusal):
    """The rejection cannot be undone: not a rejected suggestion, not this person's to decide, or nobody could
    confirm the pair now."""

    code = "undo_refused"


def rejections(match_ids: Iterable[int]) -> dict[int, AuditEvent | None]:
    """Each pair's latest event in the audit log when it is a person's rejection of a suggestion, else None: one
    query (a pair has a handful of events: found, rejected, suggested again, ...)."""
    ids = [str(pk) for pk in match_ids]
    latest: dict[int, AuditEvent] = {}
    for event in (AuditEvent.objects.filter(target_type=MATCH_TARGET, target_id__in=ids)
                  .select_related("actor").order_by("created_at", "id")):
        latest[int(event.target_id)] = event
    return {int(pk): _of_suggestion(latest.get(int(pk))) for pk in ids}


def _of_suggestion(event: AuditEvent | None) -> AuditEvent | None:
    # The conflicts page's rejection names the conflict (factcheck.conflicts.mark_not_same_claim).
    if event is None or event.verb != AuditVerb.MATCH_REJECTED or (event.data or {}).get("conflict"):
        return None
    return event


def undo_refusal(*, match: Match, rejection: AuditEvent | None, facts, reviewer) -> Refusal | None:
    """Why `reviewer` may not undo the rejection of `match` (`rejection`: `rejections()`' answer for it; `facts`:
    facts_of both its posts), or None."""
    if match.state != MatchState.REJECTED:
        return UndoRefused(f"This pair is {MatchState(match.state).label.lower()} now, not rejected: there is no "
                           "rejection to undo.", code="not_rejected")
    if rejection is None:
        return UndoRefused("This pair was not rejected as a suggestion (a copy unlinked from its claim, or marked not "
                           "the same claim where two ratings disagree), so it is not suggested again here.",
                           code="not_a_rejected_suggestion")
    answer = confirmation(state=MatchState.SUGGESTED, method=match.method, post=facts[match.post_id],
                          source=facts[match.source_id], reviewer=reviewer)
    if answer.reject_refusal is not None:
        return answer.reject_refusal
    if answer.lasting:
        return UndoRefused(f"Nobody could confirm this pair now: {answer.refusal}", code="match_refused")
    return None


def undo_offers(matches: list[Match], *, reviewer, facts: Mapping[int, PairPost]) -> dict[int, Refusal | None]:
    """For each rejected pair of `matches`, why `reviewer` may not undo its rejection (None: they may): what the post
    page offers. `facts`: facts_of both posts of each rejected pair, which the page reads once with the rest of its
    pairs' (factcheck.views_matches.pair_facts). One query (the rejections), whatever the number of pairs."""
    rejected = [match for match in matches if match.state == MatchState.REJECTED]
    if not rejected:
        return {}
    found = rejections(match.pk for match in rejected)
    return {match.pk: undo_refusal(match=match, rejection=found[match.pk], facts=facts, reviewer=reviewer)
            for match in rejected}


@transaction.atomic(durable=True)
def undo_rejection(*, match_id: int, reviewer, reason: str, now: datetime | None = None) -> Match:
    """Put a pair rejected by mistake back to `suggested`, with the reason why it is the same claim after all (kept
    for good in the audit log, with who rejected it, when and why). Both posts, then the pair, locked as confirming
    locks them (matcher.locked_pair), so the rule is judged on the posts as they stand. Raises UndoRefused (or the
    rule's refusal: another organisation's rating, outside coverage) before anything is written."""
    now = now or timezone.now()
    reason, problem = required_reason(reason, missing=MISSING_REASON, read_by=KEPT_FOR_GOOD)
    if problem:
        raise UndoRefused(problem, code="invalid_reason" if reason else "reason_required", details={"field": "reason"})
    _, match, answer = locked_pair(match_id, reviewer=reviewer, now=now, as_state=MatchState.SUGGESTED)
    rejection = rejections([match.pk])[match.pk]
    if refusal := undo_refusal(match=match, rejection=rejection,
                               facts={answer.copy.id: answer.copy, answer.root.id: answer.root}, reviewer=reviewer):
        raise refusal
    match.state, match.decided_by, match.decided_at, match.reason = MatchState.SUGGESTED, None, None, ""
    match.save(update_fields=["state", "decided_by", "decided_at", "reason"])
    record_event(actor=reviewer, verb=AuditVerb.MATCH_REJECTION_UNDONE, target=match, post_id=match.post_id,
                 reason=reason, data={
                     "source": match.source_id, "score": match.score, "rejection": rejection.pk,
                     "rejected_by": rejection.actor_id, "rejected_at": rejection.created_at.isoformat(),
                 })
    return match
