"""Appeals nobody may decide (moderation.appeal_states.nobody_can_decide), as staff read them: each with why, and
the admin's add-user page with the role (and organisation) filled in, for whoever may add people there (an
administrator; trust and safety by default may not, and are told to ask). Shown above the staff's open removal
appeals (moderation.views_appeals) and in the admin's list of appeals filtered by them (moderation.admin.appeals).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, QuerySet
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.timesince import timesince

from accounts.models import Role, User
from factcheck.members import is_importer_account
from moderation.appeal_states import is_matched, nobody_can_decide, with_confirmer
from moderation.models import Appeal, AppealKind

# Listed at most (the oldest first); any more are counted.
STUCK_SHOWN = 20


@dataclass(frozen=True)
class Stuck:
    """Why nobody may decide an appeal, and what would let someone: `fix` ("add a fact-checker to PolitiFact"), the
    admin page that does it (`add`), and where the appeal is read (`url`: the staff desk, or the admin)."""

    why: str
    fix: str
    add: str
    url: str


def why_stuck(appeal: Appeal) -> Stuck:
    """For an appeal `nobody_can_decide` returned, read with its rating's organisation and reviewer and its action."""
    add_user = reverse("admin:accounts_user_add")
    if appeal.kind == AppealKind.REMOVAL:
        return Stuck(
            why=("Removal appeals are decided by trust and safety, never by who made the removal: no other member of "
                 "trust and safety is active."),
            fix="add a trust-and-safety account", add=f"{add_user}?{urlencode({'role': 'trust_safety'})}",
            url=reverse("moderation:staff_appeal", args=[appeal.pk]),
        )
    organisation, reviewer = appeal.rating.organisation, appeal.rating.reviewer
    imported = is_importer_account(reviewer)
    why = (f"{organisation.name}'s rating was imported, and {organisation.name} has no fact-checker on Factdesk."
           if imported else
           f"{organisation.name} has no active fact-checker besides the one whose decision is appealed.")
    if is_matched(appeal) and getattr(appeal, "confirmer_can_unlink", False):
        # A person's confirmation: they may take it back ("Not a copy: unlink"), which grants the appeal; said only
        # while they can (active, still a fact-checker of the rating's organisation).
        why += (" The fact-checker who confirmed the match may instead unlink the copy on its page, which grants the "
                "appeal.")
    return Stuck(why=why, fix=f"add a fact-checker to {organisation.name}",
                 add=f"{add_user}?{urlencode({'role': 'factchecker', 'organisation': organisation.pk})}",
                 url=reverse("admin:moderation_appeal_change", args=[appeal.pk]))


def with_unlinking_confirmer(appeals: QuerySet[Appeal]) -> QuerySet[Appeal]:
    """`with_confirmer`, and whether that confirmer can still take the confirmation back (`why_stuck` reads it)."""
    return with_confirmer(appeals).annotate(confirmer_can_unlink=Exists(User.objects.filter(
        pk=OuterRef("match_confirmer"), is_active=True, role=Role.FACTCHECKER,
        membership__organisation_id=OuterRef("rating__organisation_id"))))


def stuck_appeals(user, *, now: datetime) -> dict[str, object]:
    """The oldest STUCK_SHOWN appeals nobody may decide, each with `why_stuck`, how many there are, and whether `user`
    may add people (two queries of their rights, asked only when there is something to add)."""
    stuck = with_unlinking_confirmer(nobody_can_decide(Appeal.objects.all()).select_related(
        "post__page", "rating__organisation", "rating__reviewer", "action")).order_by("created_at", "id")
    found = list(stuck[: STUCK_SHOWN + 1])
    rows = [{"appeal": appeal, "stuck": why_stuck(appeal), "age": timesince(appeal.created_at, now)}
            for appeal in found[:STUCK_SHOWN]]
    return {"rows": rows, "total": stuck.count() if len(found) > STUCK_SHOWN else len(found),
            "can_add_people": bool(rows) and user.has_perms(["accounts.add_user", "accounts.change_user"])}
