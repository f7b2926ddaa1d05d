"""The decision side of the demo: each rating decided when it was made, a removal, and open appeals.

The review side's demo data (factcheck.demo) comes first; this adds what only moderation knows, with
timestamps in a sane order: a rating's decision at the rating's time, a removal some days ago, each
appeal hours after the decision it contests.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from accounts.models import User
from factcheck.demo import REPEAT_OFFENDER_PAGE
from factcheck.models import Post, Rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import RemovalGround
from moderation.staff_actions import remove_post

REMOVED_PAGE = "the-london-ledger"


def decide_demo_ratings() -> int:
    """Apply each demo rating as of its own time, oldest first (the job after commit then finds it done)."""
    ratings = list(Rating.objects.filter(is_current=True).order_by("created_at", "id"))
    for rating in ratings:
        apply_rating(rating_id=rating.pk, now=rating.created_at)
    return len(ratings)


def seed_demo_appeals(*, now: datetime) -> int:
    """The repeat offender's owner disputes one of alice's False ratings (bob can decide it), and contests
    sam's removal of a London Ledger post (tariq, the other staff member, can decide it)."""
    owner = User.objects.get(username="olivia")
    filed = 0
    rating = (
        Rating.objects.filter(post__page__external_id=REPEAT_OFFENDER_PAGE, reviewer__username="alice", is_current=True)
        .order_by("id")
        .first()
    )
    if rating is not None:
        file_appeal(
            owner=owner, post_id=rating.post_id, kind="dispute", now=min(rating.created_at + timedelta(hours=5), now),
            statement="This quotes a real interview with the clinic's director; the rating ignores the full video.",
            evidence_urls=["https://video.example/interviews/clinic-director-full"],
        )
        filed += 1
    post = (
        Post.objects.filter(page__external_id=REMOVED_PAGE, ratings__isnull=True, flag_count__gt=0)
        .order_by("first_flagged_at", "id").first()
    )
    if post is not None:
        removed_at = post.first_flagged_at + (now - post.first_flagged_at) / 3
        remove_post(staff=User.objects.get(username="sam"), post_id=post.pk, ground=RemovalGround.HARASSMENT,
                    reason="Names and mocks a private person, with their home street.", now=removed_at)
        file_appeal(
            owner=owner, post_id=post.pk, kind="removal", now=min(removed_at + timedelta(hours=9), now),
            statement="The person named is a councillor and the street is where the council meets, not a home.",
        )
        filed += 1
    return filed
