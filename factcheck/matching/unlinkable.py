"""Who may take back a person's confirmation of a copy ("Not a copy: unlink"), and why not: the one home of that rule.

A fact-checker who confirms a suggested pair by mistake (factcheck.matching.matcher.confirm_match) takes it back here.
Before, only the owner's "not the same claim" appeal could, and neither the confirmer nor the claim's rater may decide
that appeal (moderation.appeal_states.can_decide): in a small organisation nobody could. Who may:

- a fact-checker of the organisation whose rating the copy carries (it decides the copy's disputes), the confirmer
  among them;
- whoever may decide the pair as a suggestion (factcheck.matching.confirmable.decider_refusal): for a claim not rated
  yet, the organisations that cover the copy; for a semantic pair whose copy the rating organisation does not cover,
  the organisations that cover it, as they are the ones who confirmed it.

Only a person's confirmation (state `confirmed`) is taken back here. A copy Factdesk linked automatically (state
`auto`: the same link or text, a near-duplicate at or above FACTDESK_MATCH_AUTO, an Altered picture) is the
matcher's, by the rules of PRODUCT.md's "Near-duplicates"; it leaves its claim when its owner's dispute is reversed.

moderation.unlinking asks this under the copy's lock and carries the unlinking out; the post page offers the button by
it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from core.refusals import Refusal
from factcheck.matching.confirmable import PairPost, decider_refusal, facts_of
from factcheck.members import organisation_id_of
from factcheck.models import LINKED_STATES, Match, MatchState, Post


class UnlinkRefused(Refusal):
    """The copy cannot be unlinked: no copy now, linked automatically, or not this person's to unlink."""

    code = "unlink_refused"


class UnlinkForbidden(UnlinkRefused):
    """Only an active fact-checker unlinks a copy."""

    code = "forbidden"


class NotACopy(UnlinkRefused):
    """The post is no copy of a claim now (unlinked, rated on its own), or of another claim than the one named."""

    code = "not_a_copy"


class AutomaticMatch(UnlinkRefused):
    """Factdesk linked the copy itself, not a person: its owner's dispute takes it off, not an unlinking."""

    code = "automatic_match"


@dataclass(frozen=True)
class Link:
    """A copy's link to its claim, as the rule reads it: its pair (None: the post is no copy now) and the facts of
    both posts (the claim's current rating among them)."""

    match: Match | None
    copy: PairPost | None = None
    claim: PairPost | None = None


def link_of(post: Post, *, now: datetime) -> Link:
    """The post's link to its claim, read as it stands (under the post's lock when the caller holds it)."""
    match = linked_pair(post)
    if match is None:
        return Link(match=None)
    return link_with(match, facts=facts_of([match.post_id, match.source_id], now=now))


def linked_pair(post: Post) -> Match | None:
    """The pair linking the copy `post` to its claim (with who confirmed it), or None: the post is no copy now."""
    if post.duplicate_of_id is None:
        return None
    return (Match.objects.filter(post=post, source_id=post.duplicate_of_id, state__in=LINKED_STATES)
            .select_related("decided_by").first())


def link_with(match: Match | None, *, facts: Mapping[int, PairPost]) -> Link:
    """The link `match` makes (linked_pair's answer), from facts_of both its posts read already: the post page reads
    them with its pairs' (factcheck.views_matches.pair_facts), in one query."""
    if match is None:
        return Link(match=None)
    return Link(match=match, copy=facts[match.post_id], claim=facts[match.source_id])


def unlink_refusal(*, user, post: Post, link: Link) -> Refusal | None:
    """Why `user` may not unlink the copy `post` from its claim (`link`: link_of(post)), or None."""
    if not getattr(user, "is_factchecker", False) or not getattr(user, "is_active", False):
        return UnlinkForbidden("Only fact-checkers unlink copies from a claim.")
    if link.match is None:
        return NotACopy(f"Post {post.external_id} is not a copy of a claim now (it was unlinked, or rated on its "
                        "own), so there is nothing to unlink.")
    if link.match.state != MatchState.CONFIRMED:
        return AutomaticMatch(
            f"Factdesk linked post {post.external_id} to this claim automatically "
            f"({link.match.get_method_display().lower()}), not a fact-checker, so it is not unlinked here: its owner "
            "can dispute it as “not the same claim”.")
    organisation_id = organisation_id_of(user)
    if organisation_id is not None and link.claim.rating_organisation_id == organisation_id:
        return None
    return decider_refusal(reviewer=user, copy=link.copy, root=link.claim, method=link.match.method)
