"""Reads of the review side that pages, the API and the admin share: computed here, once.

Selectors only read; the rules that change state live in the domain modules beside them.
"""

from __future__ import annotations

from django.db.models import Count

from accounts.models import Role
from factcheck.models import Flag, FlagSource, Post, Rating


def may_read_post(user, post: Post) -> bool:
    """Whether an API caller may read this post and what was decided on it: page owners only their
    own pages' posts (to them any other post answers like a missing one), every other role any."""
    return user.role != Role.PAGE_OWNER or post.page.owners.filter(pk=user.pk).exists()


def flag_counts(post: Post) -> dict[str, int]:
    """The post's flags per source, every source present (0 where none), in FlagSource order."""
    counts = dict.fromkeys(FlagSource.values, 0)
    for row in Flag.objects.filter(post=post).values("source").annotate(n=Count("id")).order_by():
        counts[row["source"]] = row["n"]
    return counts


def recent_flags(post: Post, *, limit: int) -> list[Flag]:
    return list(Flag.objects.filter(post=post).order_by("-flagged_at", "-id")[:limit])


def current_rating(post: Post) -> Rating | None:
    """The post's current rating with who made it, or None."""
    return Rating.objects.filter(post=post, is_current=True).select_related("organisation", "reviewer").first()
