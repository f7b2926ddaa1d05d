"""Appeals: filing, taking into review, deciding and withdrawing, one function per transition.

States: open -> in_review -> upheld | reversed | withdrawn (open may also go straight to a
decision or to withdrawn). Every transition locks the appeal row and checks the state it
expects, so two reviewers deciding at once cannot both win: the second is told the appeal was
already decided. A person always decides: never automation, and never the fact-checker who
made the rating (or the staff member who made the removal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import Truncator

from audit.models import AuditVerb
from audit.services import record_event
from core.formatting import day
from core.reasons import MAX_REASON
from core.refusals import Refusal
from factcheck.matching.matcher import linked_copies
from factcheck.models import Post, Rating
from factcheck.ratings import supersede_rating_on_appeal
from moderation.appeal_input import clean_appeal_input, clean_decision_input
from moderation.appeal_states import (
    COPIES_NAMED,
    can_decide,
    held_by_a_colleague,
    is_matched,
    outcome_notice,
    transition,
)
from moderation.as_read import still_as_read
from moderation.deadlines import is_past_target
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    Appeal,
    AppealEvent,
    AppealKind,
    AppealStatus,
    EndReason,
    NotificationKind,
)
from moderation.models.appeals import DECISION_TARGET, FILING_WINDOW, filing_closes_at, last_day_to_appeal
from moderation.notices import Notice, organisation_members, page_owners, send_notice, staff_members, told_of_outcome
from moderation.pipeline import lock_post
from moderation.propagation import propagate_after_commit
from moderation.publishing import publish_appeal
from moderation.selectors import (
    FactCheckDecision,
    active_removal,
    fact_check_decision,
    same_decision,
)
from moderation.staff_actions import RemovalRefused, lift_action
from moderation.unlinking import take_off_claim

__all__ = ["DECISION_TARGET", "FILING_WINDOW"]  # re-exported: the appeal rules' numbers

class AppealError(Refusal):
    """An appeal step was refused; the message is for the person who tried it."""


class NotAllowed(AppealError):
    """The user may not do this to this appeal."""

    code = "forbidden"


class AppealRefused(AppealError):
    """The request breaks a rule: nothing to appeal, window closed, wrong kind."""

    code = "appeal_refused"


class DecisionChanged(AppealRefused):
    """The decision appealed is not the one the owner's page showed: they appeal what they have read."""


DECISION_CHANGED = ("The decision changed after you opened this page (the post was rated again, or removed or "
                    "restored), so nothing was filed. Read it as it is now; what you wrote is still in the form.")


class AppealConflict(AppealError):
    """Another appeal is open for the decision, or the appeal was decided already."""

    code = "appeal_open"


class StaleAppeal(AppealConflict):
    """The appeal changed since the page the decision was made on was loaded."""

    code = "stale_appeal"


def is_overdue(appeal: Appeal, *, now: datetime | None = None) -> bool:
    return appeal.is_open and is_past_target(appeal.created_at, now=now or timezone.now())


def can_file(user, post: Post) -> bool:
    return getattr(user, "is_page_owner", False) and post.page.owners.filter(pk=user.pk).exists()


def nothing_to_dispute_message(decision: FactCheckDecision) -> str:
    """Why a fact-check decision that restricts nothing (moderation.selectors.FactCheckDecision.restricts) cannot be
    disputed or corrected: its rating does nothing to the post, or staff's override of a copy's match left it
    unrestricted."""
    if decision.overridden:
        return ("Trust and safety set aside the effect of the match: your post is not demoted or labelled for it "
                "now, so there is nothing to appeal.")
    return (f"This post is rated {decision.rating.get_verdict_display()}: that rating does not reduce its "
            "distribution or label it, so there is nothing to dispute or correct.")


def window_closed_message(notice_at: datetime, *, what: str = "decision") -> str:
    return f"The 6-month window to appeal this {what} closed at the end of {day(last_day_to_appeal(notice_at))}."


def _target(post: Post, kind: str) -> tuple[Rating | None, Action | None, datetime]:
    """The decision an appeal of this kind is against, and when the owner was told of it."""
    if kind == AppealKind.REMOVAL:
        action = active_removal(post)
        if action is None:
            raise AppealRefused("This post has not been removed, so there is no removal to appeal.")
        return None, action, action.created_at
    decision = fact_check_decision(post)
    if decision is None:
        raise AppealRefused("This post has no fact-check rating to dispute or correct.")
    if not decision.restricts:
        raise AppealRefused(nothing_to_dispute_message(decision))
    # A matched copy's appeal names the matched action too (overridden or not): it is against the match, not the
    # claim's rating.
    return decision.rating, decision.matched, decision.notice_at


def file_appeal(
    *, owner, post_id: int, kind: str, statement: str, evidence_urls: list[str] | None = None,
    correction_details: str = "", seen: str = "", now: datetime | None = None,
) -> Appeal:
    """An owner's appeal against the post's decision. Not durable: the demo seed files inside its own
    transaction. Takes the post's lock. `seen`: the decisions as the owner's page showed them
    (moderation.as_read.decisions_read; the portal's form sends it): refused (DecisionChanged) when the one
    appealed has changed since, a re-rating or a removal made or lifted meanwhile."""
    values = clean_appeal_input(
        kind=kind, statement=statement, evidence_urls=evidence_urls or [], correction_details=correction_details
    )
    now = now or timezone.now()
    try:
        with transaction.atomic():
            return _file(owner=owner, post_id=post_id, values=values, seen=seen, now=now)
    except IntegrityError as exc:  # a concurrent filing for the same decision won the race
        raise AppealConflict("An appeal against this decision is already open.") from exc


def _file(*, owner, post_id: int, values: dict, seen: str, now: datetime) -> Appeal:
    # The post lock orders filing against a reversal or a new rating of the same post, so an
    # appeal is never filed against a decision that is being replaced at this moment.
    post = lock_post(post_id)
    if not can_file(owner, post):
        raise NotAllowed("Only an owner of the post's page can appeal its decisions.")
    rating, action, notice_at = _target(post, values["kind"])
    if seen and not still_as_read(seen, kind=values["kind"], rating=rating, action=action):
        raise DecisionChanged(DECISION_CHANGED)
    if now >= filing_closes_at(notice_at):
        raise AppealRefused(window_closed_message(notice_at))
    # One open appeal per decision (a matched copy's stays one while its matched action is replaced under it).
    if Appeal.objects.filter(same_decision(post=post, rating=rating, action=action)).open().exists():
        raise AppealConflict("An appeal against this decision is already open.")
    appeal = Appeal.objects.create(
        post=post, rating=rating, action=action, filed_by=owner, created_at=now, decision_notice_at=notice_at,
        status=AppealStatus.OPEN, **values,
    )
    AppealEvent.objects.create(
        appeal=appeal, to_status=AppealStatus.OPEN, actor=owner, reason=values["statement"], created_at=now
    )
    record_event(actor=owner, verb=AuditVerb.APPEAL_CHANGED, target=appeal, post_id=post.pk,
                 reason=values["statement"][:1000], data={"from": "", "to": AppealStatus.OPEN, "kind": appeal.kind})
    # A removal appeal goes to staff; a dispute or correction to the rating's organisation, a matched
    # copy's too (it names its matched action as well, but the claim's rating is what it questions).
    candidates = staff_members() if appeal.kind == AppealKind.REMOVAL else organisation_members(rating.organisation_id)
    # Only those who may decide it are asked to: not the person whose decision is appealed, nor anyone whose
    # role changed (a page owner with a leftover membership was e-mailed "Please decide it" and got a 403).
    send_notice(
        Notice("appeal_received", {"appeal": appeal}, kind=NotificationKind.APPEAL_RECEIVED, appeal=appeal),
        users=[user for user in candidates if can_decide(user, appeal)], post=post, now=now,
    )
    publish_appeal(appeal, external_id=post.external_id)
    return appeal


def _locked(appeal_id: int) -> Appeal:
    # The row lock serialises every transition of one appeal; the loser re-reads the new state.
    # The post is locked first, as filing, rating and enforcement do (post, then the rest).
    post_id = Appeal.objects.values_list("post_id", flat=True).get(pk=appeal_id)
    lock_post(post_id)
    return (
        Appeal.objects.select_for_update(no_key=True, of=("self",))
        .select_related("rating__organisation", "action", "post__page", "reviewer")
        .get(pk=appeal_id)
    )


def check_version(appeal: Appeal, expected_version: int | None) -> None:
    """StaleAppeal when the decider's page showed another version of the appeal than it has now."""
    if expected_version is not None and expected_version != appeal.version:
        raise StaleAppeal(
            "This appeal changed since you opened it (someone took it into review, decided it or the owner "
            "withdrew it). Nothing was saved; read it as it is now and decide again."
        )


def _check_decider(appeal: Appeal, reviewer) -> None:
    if not can_decide(reviewer, appeal):
        if appeal.rating_id and reviewer.pk == appeal.rating.reviewer_id:
            raise NotAllowed("You made this rating, so another member of your organisation must decide the appeal.")
        raise NotAllowed("You cannot decide this appeal.")
    if not appeal.is_open:
        raise AppealConflict(f"This appeal was already {appeal.get_status_display().lower()}.")
    if held_by_a_colleague(appeal, reviewer, now=timezone.now()):
        raise AppealConflict(f"{appeal.reviewer} is already reviewing this appeal.")


@transaction.atomic(durable=True)
def start_review(
    *, appeal_id: int, reviewer, expected_version: int | None = None, now: datetime | None = None
) -> Appeal:
    appeal = _locked(appeal_id)
    _check_decider(appeal, reviewer)
    if appeal.status == AppealStatus.IN_REVIEW and appeal.reviewer_id == reviewer.pk:
        return appeal  # theirs already (a second click, another tab): nothing changed that they have not seen
    check_version(appeal, expected_version)
    if appeal.status == AppealStatus.IN_REVIEW:  # taking over (see _check_decider)
        appeal.reviewer = reviewer
        appeal.version += 1
        AppealEvent.objects.create(appeal=appeal, from_status=AppealStatus.IN_REVIEW, to_status=AppealStatus.IN_REVIEW,
                                   actor=reviewer, reason="taken over into review", created_at=now or timezone.now())
        appeal.save(update_fields=["version", "reviewer"])
        return appeal
    appeal.reviewer = reviewer
    transition(appeal, to=AppealStatus.IN_REVIEW, actor=reviewer, reason="taken into review",
                now=now or timezone.now())
    appeal.save(update_fields=["status", "version", "reviewer"])
    return appeal


@dataclass(frozen=True)
class Decision:
    """What the decider decided, by the rules (moderation.appeal_input.clean_decision_input).

    `reason` is the note to the page owner (their notice and timeline); `public_rationale` and `article_url`
    are what a reversed rating's successor publishes (its claim page and ClaimReview)."""

    outcome: str
    reason: str
    new_verdict: str = ""
    public_rationale: str = ""
    article_url: str = ""


@transaction.atomic(durable=True)
def decide_appeal(
    *, appeal_id: int, reviewer, outcome: str, reason: str, new_verdict: str = "", public_rationale: str = "",
    article_url: str = "", expected_version: int | None = None, now: datetime | None = None,
) -> Appeal:
    """Uphold or reverse an appeal. `expected_version`: the version the decider's page showed.

    `reason` goes to the page owner; a reversed rating's `public_rationale` (required) and `article_url`
    (optional) are the new rating's, published on its claim page and in its ClaimReview.

    As Mastodon's ApproveAppealService: lock, check, transition, the consequences of the outcome for the
    appeal's kind (one function each: `_consequences_of`), publish; all in one transaction.
    """
    now = now or timezone.now()
    appeal = _locked(appeal_id)
    decision = _check_decision(appeal, reviewer=reviewer, expected_version=expected_version, values=dict(
        outcome=outcome, reason=reason, new_verdict=new_verdict, public_rationale=public_rationale,
        article_url=article_url))
    carry_out_outcome = _consequences_of(appeal, outcome)
    appeal.reviewer = reviewer
    appeal.decided_at = now
    appeal.outcome_reason = decision.reason
    if carry_out_outcome is _reverse_rating:  # the decider's verdict replaces the rating's
        appeal.new_verdict = decision.new_verdict
    transition(appeal, to=outcome, actor=reviewer, reason=decision.reason, now=now)
    carry_out_outcome(appeal, reviewer=reviewer, decision=decision, now=now)
    appeal.save(
        update_fields=["status", "version", "reviewer", "decided_at", "outcome_reason", "new_verdict", "new_rating"]
    )
    publish_appeal(appeal, external_id=appeal.post.external_id)
    return appeal


def _check_decision(appeal: Appeal, *, reviewer, expected_version: int | None, values: dict[str, str]) -> Decision:
    """Refuse the decision, before anything is written, unless this reviewer may make it now; returns it clean."""
    _check_decider(appeal, reviewer)
    check_version(appeal, expected_version)
    matched = is_matched(appeal)
    decision = Decision(**clean_decision_input(kind=appeal.kind, matched=matched, **values))
    outcome = decision.outcome
    if outcome == AppealStatus.REVERSED and matched and appeal.post.duplicate_of_id != appeal.rating.post_id:
        raise AppealConflict(
            "This post is no longer a copy of that claim (it was rated on its own, or unlinked), so there is "
            "nothing to reverse. Uphold it to close it."
        )
    if outcome == AppealStatus.UPHELD and removal_lifted(appeal):
        # "The removal stands" would be false: the post is up again. (Staff lifting a removal grants its open
        # appeal at once, moderation.appeal_states; this is for an appeal left open before that was so.)
        raise AppealConflict(
            f"This removal was lifted on {day(appeal.action.ended_at)}: the post is restored, so the removal no "
            "longer stands. Accept the appeal to close it."
        )
    if outcome == AppealStatus.REVERSED and not matched and appeal.rating_id and not appeal.rating.is_current:
        # Reversing would overturn a newer rating (perhaps another organisation's) that nobody appealed.
        raise AppealConflict(
            "The rating this appeal is against has been replaced by a newer one since it was filed, so it "
            "cannot be reversed. Uphold it to close it; the owner can appeal the new rating."
        )
    return decision


def _consequences_of(appeal: Appeal, outcome: str) -> Callable[..., None]:
    """The function that carries out this outcome for this kind of appeal, and sends its one notice."""
    if outcome != AppealStatus.REVERSED:
        return _uphold
    if is_matched(appeal):
        return _unlink_copy
    return _lift_removal if appeal.kind == AppealKind.REMOVAL else _reverse_rating


def _uphold(appeal: Appeal, *, reviewer, decision: Decision, now: datetime) -> None:
    """Upheld: the decision stands; only the outcome notice goes out."""
    send_notice(outcome_notice(appeal), users=[appeal.filed_by, *page_owners(appeal.post)], post=appeal.post, now=now)


def _reverse_rating(appeal: Appeal, *, reviewer, decision: Decision, now: datetime) -> None:
    """A dispute or correction reversed: the decider's verdict supersedes the rating (factcheck.ratings'
    function for it), the new rating is applied to the post at once (the owner sees the outcome now, not
    when a job runs), and to the post's copies by a job after commit, whose owners told here are skipped.

    The new rating publishes the decider's public rationale and article (none: the claim page is its
    url) and the rating's sources, never the note to the owner nor the owner's evidence, which stay on the appeal
    (the owner's notice and timeline, the deciders' page)."""
    copies = list(
        linked_copies(source_post_id=appeal.post_id).filter(page__owners__in=told_of_outcome(appeal)).distinct()
        .select_related("page").order_by("id")[: COPIES_NAMED + 1]
    )
    try:
        appeal.new_rating = supersede_rating_on_appeal(
            rating_id=appeal.rating_id, reviewer=reviewer, verdict=appeal.new_verdict,
            rationale=decision.public_rationale,
            # The rating's own sources, which its organisation checked: never the owner's evidence URLs, which only
            # their form checked (any http link: an advert, credentials in a link) and which the claim page would
            # publish as the organisation's sources. The evidence stays on the appeal, for whoever decides it.
            sources=appeal.rating.sources,
            article_url=decision.article_url,
            # The fact-checkers' record of why the rating changed (every organisation's post page, the audit log):
            # which appeal, not the reason, a note to the owner that stays on the appeal (its page and timeline,
            # the deciding organisation's and the owner's).
            change_reason=f"appeal {appeal.pk} reversed", now=now,
        )
    except Refusal as exc:  # e.g. the page became a politician's meanwhile
        raise AppealConflict(str(exc)) from exc
    apply_rating(rating_id=appeal.new_rating.pk, now=now, end_reason=EndReason.REVERSED,
                 notice=outcome_notice(appeal, copies=copies))
    propagate_after_commit(rating_id=appeal.new_rating.pk, now=now)


def removal_lifted(appeal: Appeal) -> bool:
    """A removal appeal whose removal has ended (lifted by staff): only accepting it is true to the post."""
    return appeal.kind == AppealKind.REMOVAL and appeal.action.ended_at is not None


def _lift_removal(appeal: Appeal, *, reviewer, decision: Decision, now: datetime) -> None:
    """A removal appeal reversed: the removal is lifted (and its strike ends), the post restored. A removal
    already lifted has nothing left to undo: the owner is told the outcome."""
    if removal_lifted(appeal):
        send_notice(outcome_notice(appeal), users=[appeal.filed_by, *page_owners(appeal.post)], post=appeal.post,
                    now=now)
        return
    try:
        # Cut to the limit with its prefix: the reviewer's whole reason is the appeal decision's own.
        lift_action(actor=reviewer, action_id=appeal.action_id,
                    reason=Truncator(f"removal appeal reversed: {decision.reason}").chars(MAX_REASON),
                    end_reason=EndReason.REVERSED, now=now, notice=outcome_notice(appeal))
    except RemovalRefused as exc:  # staff lifted it meanwhile
        raise AppealConflict(f"{exc} Uphold the appeal to close it.") from exc


def _unlink_copy(appeal: Appeal, *, reviewer, decision: Decision, now: datetime) -> None:
    """A matched copy's appeal reversed ("not the same claim"): that post alone leaves the claim's
    group, never to be matched to it again, and its matched rating ends; the claim keeps its rating."""
    take_off_claim(
        post=appeal.post,  # locked by _locked
        actor=reviewer,
        # The pair's reason is read on the claim's and the copy's pages, by any organisation: not the note to the owner.
        pair_reason=f"appeal {appeal.pk} reversed: not the same claim",
        cause="matched rating reversed on appeal: not the same claim", end_reason=EndReason.REVERSED,
        end_note=f"appeal {appeal.pk} reversed: {decision.reason}", notice=outcome_notice(appeal), now=now,
    )


@transaction.atomic(durable=True)
def withdraw_appeal(*, appeal_id: int, owner, reason: str = "", now: datetime | None = None) -> Appeal:
    appeal = _locked(appeal_id)
    if appeal.filed_by_id != owner.pk and not appeal.post.page.owners.filter(pk=owner.pk).exists():
        raise NotAllowed("Only the page's owners can withdraw its appeals.")
    if not appeal.is_open:
        raise AppealConflict(f"This appeal was already {appeal.get_status_display().lower()}.")
    appeal.decided_at = now or timezone.now()
    transition(appeal, to=AppealStatus.WITHDRAWN, actor=owner, reason=reason or "withdrawn by the owner",
                now=appeal.decided_at)
    appeal.save(update_fields=["status", "version", "decided_at"])
    return appeal
