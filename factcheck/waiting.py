"""When a post stops and starts again waiting for a rating: `Post.left_queue_at`, what the dashboard's roll-up
reads (reports.rollup, whose docstring says what waiting means) so that a day's figures read the posts waiting
now and those that left since, not every post ever flagged.

The one rule the roll-up relies on: a post that is not waiting has `left_queue_at` at or after the moment it last
stopped waiting. So the posts waiting at any moment T are among those with no `left_queue_at` or one at or after
T, and the roll-up's exact test (from the ratings, decisions and matches) needs to look at those only. A moment
later than the real one, or an empty one, costs the roll-up a little more reading; an earlier one would lose a
post from its figures. Hence:

- `left_queue`: a post rated (its own rating), given its claim's rating (an applied decision) or removed by trust
  and safety while it waited left now;
- `waits_again`: a copy unlinked from the claim whose rating it carried, or a post whose removal was lifted, waits
  again, unless it has a rating of its own (it never waits again then).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db.models import Exists, OuterRef

from factcheck.models import Post, Rating


def left_queue(post_ids: Iterable[int], *, now: datetime) -> None:
    Post.objects.filter(id__in=list(post_ids)).update(left_queue_at=now)


def waits_again(post_ids: Iterable[int]) -> None:
    (Post.objects.filter(id__in=list(post_ids), left_queue_at__isnull=False)
     .exclude(Exists(Rating.objects.filter(post=OuterRef("pk")))).update(left_queue_at=None))
