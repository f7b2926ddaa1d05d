"""What the decision side tells the review side's pages, without the review side importing it.

factcheck never imports moderation (the layering contract in pyproject.toml). The review pages
still need two answers only the decision side has: what each verdict would do to a post under the
enforcement policy as it stands (the rating form's effect preview), and a post's story as the
decision side records it (its timeline and appeals, on a rated post's page). moderation registers
the functions that answer them in its AppConfig.ready(); the pages ask here. The admin's user page asks a third:
how many appeals a person was reviewing that a change of their access let go (appeals_let_go). Without a registered
function (factcheck on its own) the answers are empty and the pages leave those parts out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from factcheck.models import Post


@dataclass(frozen=True)
class EffectPreview:
    """What rating a post with one verdict would do now, by the policy rows of that moment."""

    verdict: str
    # The post's feed multiplier after the rating: its own (the policy's) times the page's.
    multiplier: Decimal
    label: str = ""
    warn_sharers: bool = False
    strike: bool = False
    # The page crosses the repeat-offender threshold with this rating's strike.
    makes_repeat_offender: bool = False
    # Sentences for people, in the order the form shows them.
    lines: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        return " ".join(self.lines)


@dataclass(frozen=True)
class StoryEntry:
    """One step of a post's timeline: a flag burst, a rating, an action, an appeal's state change."""

    at: datetime
    kind: str
    title: str
    detail: str
    by: str


@dataclass(frozen=True)
class AppealSummary:
    """An appeal against a decision on the post, as a fact-checker's page lists it."""

    id: int
    kind: str
    status: str
    status_label: str
    created_at: datetime
    decided_at: datetime | None
    is_open: bool
    # The organisation whose rating it contests (None for a removal appeal): only its members decide it.
    organisation_id: int | None
    outcome_reason: str = ""
    rated_by_id: int | None = None  # who made the rating it contests: they may not decide it


@dataclass(frozen=True)
class PostStory:
    entries: list[StoryEntry] = field(default_factory=list)
    appeals: list[AppealSummary] = field(default_factory=list)


EffectPreviewer = Callable[[Post], dict[str, EffectPreview]]
Storyteller = Callable[..., PostStory]  # (post, *, organisation_id)

AppealsLetGo = Callable[[Any], int]  # (user) -> appeals they review and may no longer decide

_appeals_let_go: AppealsLetGo | None = None
_effect_previewer: EffectPreviewer | None = None
_storyteller: Storyteller | None = None


def register_effect_preview(fn: EffectPreviewer) -> EffectPreviewer:
    """Set the function that previews every verdict's effect on a post (one call, a fixed number of queries)."""
    global _effect_previewer
    _effect_previewer = fn
    return fn


def register_post_story(fn: Storyteller) -> Storyteller:
    """Set the function that tells a post's timeline and appeals."""
    global _storyteller
    _storyteller = fn
    return fn


def register_appeals_let_go(fn: AppealsLetGo) -> AppealsLetGo:
    """Set the function that counts the appeals a person reviews and may no longer decide."""
    global _appeals_let_go
    _appeals_let_go = fn
    return fn


def appeals_let_go(user) -> int:
    """How many appeals `user` was reviewing that they may no longer decide (deactivated, moved, another role), which
    a colleague may now take over; 0 without the decision side."""
    return _appeals_let_go(user) if _appeals_let_go is not None else 0


def effect_previews(post: Post) -> dict[str, EffectPreview]:
    """Each verdict's preview for this post, by verdict value; empty without the decision side."""
    return _effect_previewer(post) if _effect_previewer is not None else {}


def effect_preview(post: Post, verdict: str) -> EffectPreview | None:
    return effect_previews(post).get(verdict)


def post_story(post: Post, *, organisation_id: int | None) -> PostStory:
    """The post's story as a member of this organisation reads it (its own appeals only)."""
    return _storyteller(post, organisation_id=organisation_id) if _storyteller is not None else PostStory()
