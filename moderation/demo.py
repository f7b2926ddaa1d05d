"""The decision side of the demo: an open appeal, so the appeal desks have something to show.

The review side's demo data (factcheck.demo) comes first; this adds what only moderation knows.
"""

from __future__ import annotations

from datetime import datetime

from accounts.models import User
from factcheck.demo import REPEAT_OFFENDER_PAGE
from factcheck.models import Rating
from moderation.appeals import file_appeal


def seed_demo_appeals(*, now: datetime) -> int:
    """The repeat offender's owner disputes one of alice's False ratings (bob can decide it)."""
    owner = User.objects.get(username="olivia")
    rating = (
        Rating.objects.filter(post__page__external_id=REPEAT_OFFENDER_PAGE, reviewer__username="alice", is_current=True)
        .order_by("id")
        .first()
    )
    if rating is None:
        return 0
    file_appeal(
        owner=owner, post_id=rating.post_id, kind="dispute", now=now,
        statement="This quotes a real interview with the clinic's director; the rating ignores the full video.",
        evidence_urls=["https://video.example/interviews/clinic-director-full"],
    )
    return 1
