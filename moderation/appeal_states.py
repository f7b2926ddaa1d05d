"""Who decides an appeal, its state changes and the notice of its outcome, shared by the two places that close
appeals.

moderation.appeals decides appeals (a person upholds or reverses); moderation.staff_actions lifts a removal,
which grants the removal's open appeal (the owner asked for exactly that). Both change an appeal's state
through `transition` and tell the owner through `outcome_notice`, so an appeal closed either way reads
the same in the portal, the notices and the webhooks. What became of the decision appealed (`outcome_now`:
replaced or lifted since, or standing) is read here for the notice and for the portal alike. Who may decide an
appeal (`can_decide`) and whether someone else still holds it (`held_by_a_colleague`) are answered here for both,
and for the pages.

Every function here that writes runs in its caller's transaction, which holds the appeal's post row lock: every
transition of an appeal takes its post's lock first (moderation.appeals._locked, moderation.pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from accounts.models import Role, User
from accounts.password_reset import can_sign_in
from audit.models import AuditVerb
from audit.services import record_event
from factcheck.members import organisation_id_of
from factcheck.models import Match, Post, Rating, Verdict
from moderation.deadlines import is_past_target
from moderation.models import (
    OPEN_STATUSES,
    Action,
    ActionKind,
    Appeal,
    AppealEvent,
    AppealKind,
    AppealStatus,
    Notification,
    NotificationKind,
)
from moderation.notices import Notice
from moderation.selectors import FactCheckDecision, active_removal, rating_carried

# Copies named in an appeal's outcome notice at most; the rest are counted.
COPIES_NAMED = 10


def is_matched(appeal: Appeal) -> bool:
    """A matched copy's appeal ("not the same claim"): it names the copy's matched action."""
    return appeal.action_id is not None and appeal.action.kind == ActionKind.MATCHED_RATING


def can_decide(user, appeal: Appeal) -> bool:
    """Who decides an appeal: staff a removal's, the rating's organisation a dispute's or a correction's; never the
    person whose decision is appealed (who removed the post, made the rating, confirmed the match). Here rather than
    in moderation.appeals, which re-exports it, so that `held_by_a_colleague` asks it too."""
    if appeal.kind == AppealKind.REMOVAL:
        return getattr(user, "is_trust_safety", False) and appeal.action.created_by_id != user.pk
    return (
        getattr(user, "is_factchecker", False)
        and organisation_id_of(user) == appeal.rating.organisation_id
        and user.pk != appeal.rating.reviewer_id
        and user.pk != confirmed_by(appeal)
    )


def nobody_can_decide(appeals: QuerySet[Appeal]) -> QuerySet[Appeal]:
    """The open appeals among `appeals` that no account anyone can sign in to may decide, by `can_decide`'s rule read
    in SQL: a dispute of a rating imported from an organisation with no fact-checker on Factdesk (its importer account
    signs nobody in), of a one-person organisation's rating, of a rating whose colleagues have all left or have no
    way in (no password, and no address to set one: accounts.password_reset.can_sign_in); a removal whose remover is
    the only such trust-and-safety member. They wait past every target until staff give the organisation (or the
    desk) a person who may decide them (moderation.views_appeals shows them to staff)."""
    active = User.objects.filter(can_sign_in())
    # Who confirmed the match a matched copy's appeal is about (`confirmed_by`).
    confirmed_it = Match.objects.filter(
        post_id=OuterRef(OuterRef("post_id")), source_id=OuterRef(OuterRef("rating__post_id")),
        decided_by_id=OuterRef("pk"),
    )
    fact_checkers = (
        active.filter(role=Role.FACTCHECKER, membership__organisation_id=OuterRef("rating__organisation_id"))
        .exclude(pk=Coalesce(OuterRef("rating__reviewer_id"), Value(0)))
        .exclude(Exists(confirmed_it))
    )
    staff = active.filter(role=Role.TRUST_SAFETY).exclude(pk=Coalesce(OuterRef("action__created_by_id"), Value(0)))
    # Each kind apart, as a set of ids: one OR of the two correlated NOT EXISTS made PostgreSQL test every open
    # appeal against both (0.59 s over 10,000 open disputes in 50 organisations of 100 members; 0.03 s so).
    open_appeals = Appeal.objects.open()
    removals = open_appeals.filter(kind=AppealKind.REMOVAL).filter(~Exists(staff)).values("pk")
    ratings = open_appeals.exclude(kind=AppealKind.REMOVAL).filter(~Exists(fact_checkers)).values("pk")
    return appeals.open().filter(Q(pk__in=removals) | Q(pk__in=ratings))


def with_confirmer(appeals: QuerySet[Appeal]) -> QuerySet[Appeal]:
    """These appeals, each with who confirmed the match it is about (if any) read in the same query: `confirmed_by`
    then asks nothing more, so a desk lists any number of copies' disputes in a fixed number of queries."""
    return appeals.annotate(match_confirmer=Subquery(
        Match.objects.filter(post_id=OuterRef("post_id"), source_id=OuterRef("rating__post_id"))
        .values("decided_by_id")[:1]))


def confirmed_by(appeal: Appeal) -> int | None:
    """Who confirmed the match a matched copy's appeal is about: they made that decision, so they may not decide it."""
    if appeal.action_id is None or appeal.action.kind != ActionKind.MATCHED_RATING:
        return None
    if hasattr(appeal, "match_confirmer"):  # read through `with_confirmer`
        return appeal.match_confirmer
    return Match.objects.filter(post_id=appeal.post_id, source_id=appeal.rating.post_id).values_list(
        "decided_by_id", flat=True).first()


def held_by_a_colleague(appeal: Appeal, user, *, now: datetime) -> bool:
    """Whether someone other than `user` is reviewing the appeal and still holds it: a colleague may take over from a
    reviewer who left (deactivated, moved to another organisation, no longer in the role that decides it: whoever
    may no longer decide it holds nothing), or who let it go past its target. Deciding it (moderation.appeals) and
    lifting the removal it is against (moderation.staff_actions) both give way to such a holder."""
    reviewer = appeal.reviewer
    return (appeal.status == AppealStatus.IN_REVIEW and reviewer is not None and reviewer.pk != user.pk
            and reviewer.is_active and can_decide(reviewer, appeal) and not is_past_target(appeal.created_at, now=now))


def appeals_let_go(user) -> int:
    """How many appeals `user` is reviewing that they may no longer decide (deactivated, moved to another
    organisation, another role): nobody holds them now (`held_by_a_colleague`), and a colleague may take each over.
    What the admin's user page says after staff change a person's access (factcheck.previews)."""
    user = User.objects.select_related("membership").get(pk=user.pk)  # as the change left them
    held = with_confirmer(Appeal.objects.filter(status=AppealStatus.IN_REVIEW, reviewer=user)
                          .select_related("action", "rating"))
    return sum(1 for appeal in held if not (user.is_active and can_decide(user, appeal)))


def transition(appeal: Appeal, *, to: str, actor, reason: str, now: datetime) -> None:
    """Move the appeal to state `to`: its event (append-only), its version, the audit log. The caller saves
    the appeal's fields. An appeal that closes (decided, withdrawn) is no longer work: the notices that asked
    its deciders to decide it are marked read, so they neither count as unread nor ask any more."""
    event = AppealEvent.objects.create(
        appeal=appeal, from_status=appeal.status, to_status=to, actor=actor, reason=reason, created_at=now
    )
    appeal.status = to
    appeal.version += 1
    if to not in OPEN_STATUSES:
        Notification.objects.filter(appeal=appeal, kind=NotificationKind.APPEAL_RECEIVED,
                                    read_at__isnull=True).update(read_at=now)
    record_event(
        actor=actor, verb=AuditVerb.APPEAL_CHANGED, target=appeal, post_id=appeal.post_id, reason=reason,
        data={"from": event.from_status, "to": to, "kind": appeal.kind},
    )


@dataclass(frozen=True)
class OutcomeNow:
    """What became of the decision an appeal was against, as its owner may truly be told now. An upheld appeal's
    decision "stands" only while the post still carries it: the rating may have been replaced since the appeal was
    filed (the post or the claim it copies re-rated, or reversed on another owner's appeal) or since it was decided,
    and a removal lifted. Verdicts are their labels; "" where none applies."""

    appealed: str  # the verdict of the rating appealed
    new: str  # a reversal's new verdict
    replaced: bool  # upheld, and the post no longer carries the rating appealed
    carried: str  # then the verdict of the rating it carries instead ("" when none)
    lifted: bool  # upheld, and the removal appealed has been lifted since
    removed_again: bool = False  # lifted, and the post removed again since by another decision


def outcome_now(appeal: Appeal, *, carried: Rating | None) -> OutcomeNow:
    """`carried`: the rating the appeal's post carries now (moderation.selectors.rating_carried)."""
    upheld = appeal.status == AppealStatus.UPHELD
    replaced = upheld and appeal.rating_id is not None and (carried is None or carried.pk != appeal.rating_id)
    lifted = upheld and appeal.kind == AppealKind.REMOVAL and appeal.action.ended_at is not None
    return OutcomeNow(
        appealed=appeal.rating.get_verdict_display() if appeal.rating_id else "",
        new=Verdict(appeal.new_verdict).label if appeal.new_verdict else "",
        replaced=replaced,
        carried=carried.get_verdict_display() if replaced and carried is not None else "",
        lifted=lifted,
        # Read only for a lifted removal's appeal: "your post is restored" is false of a post removed again since.
        removed_again=lifted and active_removal(appeal.post) is not None,
    )


def outcomes_now(appeals: list[Appeal], *, post: Post, decision: FactCheckDecision | None = None) -> list[OutcomeNow]:
    """Each of the post's appeals' `outcome_now`, the rating the post carries read once, and only when an upheld
    dispute or correction is among them (no other outcome depends on it). `decision`: as `rating_carried` takes it."""
    needed = any(appeal.status == AppealStatus.UPHELD and appeal.rating_id is not None for appeal in appeals)
    carried = rating_carried(post, decision=decision) if needed else None
    return [outcome_now(appeal, carried=carried) for appeal in appeals]


# Who closed an appeal that no reviewer decided: granted because its post was edited and no longer makes the claim
# it was matched to (moderation.unlinking.release_edited_copies).
CLOSED_BY_EDIT = "the edit of the post"


def decided_by(appeal: Appeal) -> str:
    """Who decides (or decided) the appeal, as the owner reads it: the rating's organisation, or trust and safety;
    nobody's name for an appeal closed by the post's edit."""
    if appeal.decided_at is not None and appeal.reviewer_id is None and appeal.status == AppealStatus.REVERSED:
        return CLOSED_BY_EDIT
    return appeal.rating.organisation.name if appeal.rating_id else "Trust and safety"


def outcome_notice(appeal: Appeal, *, copies: list[Post] | None = None) -> Notice:
    """The one notice of the outcome (the owner who filed, the page's owners). A reversal's consequences
    send it with the change they make; it names the copies of the post the reversal reaches next on the
    same people's pages (they get no notice of their own)."""
    copies, decider = copies or [], decided_by(appeal)
    context = {
        "appeal": appeal,
        "decided_by": decider,
        "closed_by_edit": decider == CLOSED_BY_EDIT,
        "outcome": outcomes_now([appeal], post=appeal.post)[0],
        "matched": is_matched(appeal),
        "copies": copies[:COPIES_NAMED],
        "more_copies": len(copies) > COPIES_NAMED,
    }
    return Notice("appeal_decided", context, kind=NotificationKind.APPEAL_DECIDED, appeal=appeal)


def open_removal_appeals() -> QuerySet[Appeal]:
    """Owners' appeals of removals, while they are open."""
    return Appeal.objects.open().filter(kind=AppealKind.REMOVAL)


def open_removal_appeal(removal: Action) -> Appeal | None:
    """The owner's open appeal of this removal, if any."""
    return (open_removal_appeals().filter(action=removal)
            .select_related("post__page", "action", "filed_by", "reviewer").first())


def grant_removal_appeal(appeal: Appeal, *, actor, reason: str, now: datetime) -> Appeal:
    """Staff lift a removal: its open appeal is granted (reversed: the post is restored, as the owner asked), by
    the person who lifted it and with their reason. Returns the appeal, for the caller to send its outcome notice
    (instead of the "lifted" one: one change, one notice) and publish after the lift."""
    return grant_appeal(appeal, actor=actor, outcome_reason=f"Trust-and-safety staff lifted the removal: {reason}",
                        now=now)


def open_matched_appeal(post: Post) -> Appeal | None:
    """The owner's open appeal of the post's matched rating ("not the same claim"), if any: one at most (filing)."""
    return (Appeal.objects.open().filter(post=post, action__kind=ActionKind.MATCHED_RATING)
            .select_related("post__page", "action", "rating__organisation", "filed_by", "reviewer").first())


def grant_appeal(appeal: Appeal, *, actor, outcome_reason: str, now: datetime, reviewed: bool = True) -> Appeal:
    """An open appeal granted (reversed) by the act that does what the owner asked: staff lifting a removal, a
    fact-checker unlinking a copy (moderation.unlinking), or, not `reviewed` (no reviewer: `decided_by`), the post's
    edit taking the copy off its claim, `actor` then the owner whose edit it is. The appeal's one outcome notice goes
    with that act's change; the caller publishes the appeal after it."""
    appeal.reviewer = actor if reviewed else None
    appeal.decided_at = now
    appeal.outcome_reason = outcome_reason
    transition(appeal, to=AppealStatus.REVERSED, actor=actor, reason=outcome_reason, now=now)
    appeal.save(update_fields=["status", "version", "reviewer", "decided_at", "outcome_reason"])
    return appeal
