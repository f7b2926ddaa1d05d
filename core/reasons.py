"""The one length limit of a reason a person writes for a decision (staff's removals, lifts, overrides,
harm-report and policy decisions): the owner reads it, and it is cleaned (moderation.statements) and stored
with the decision. Every form and domain function checks it against this; a longer one is a clear error
next to the field, with the rest of the form kept.
"""

from __future__ import annotations

MAX_REASON = 2000


def too_long(reason: str) -> str | None:
    """The message for a reason over MAX_REASON, or None when it fits."""
    if len(reason) <= MAX_REASON:
        return None
    return f"Keep the reason to {MAX_REASON:,} characters (it has {len(reason):,})."
