"""The decision side of the demo: each rating decided when it was made, a removal, and open appeals.

The review side's demo data (factcheck.demo) comes first; this adds what only moderation knows, with
timestamps in a sane order: a rating's decision at the rating's time, a removal some days ago, each
appeal hours after the decision it contests.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from accounts.models import User
from factcheck.demo_checks import CHECKED, external_id_of
from factcheck.demo_reports import REMOVED
from factcheck.models import Post, Rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import RemovalGround
from moderation.staff_actions import remove_post

# sam's removal of the London Ledger's post that sends readers after a councillor (factcheck.demo_reports), and
# its owner's appeal: the councillor's public surgery is at that address, and tariq, not sam, decides.
# Written as the removal form asks (the statement of reasons is public): what the post does, not whom it names.
REMOVAL_REASON = (
    "Harassment: names a local councillor, gives where to find him and tells readers to go round and not be "
    "polite about it."
)
REMOVAL_APPEAL = (
    "Tom Hale is an elected councillor and 12 Guild Street is the town hall, where he holds his public surgery "
    "every Tuesday at six. The post asks people to go and lobby their councillor about the bypass, which is what "
    "the surgery is for; it threatens nobody."
)


def decide_demo_ratings() -> int:
    """Apply each demo rating as of its own time, oldest first (the job after commit then finds it done)."""
    ratings = list(Rating.objects.filter(is_current=True).order_by("created_at", "id"))
    for rating in ratings:
        apply_rating(rating_id=rating.pk, now=rating.created_at)
    return len(ratings)


def seed_demo_appeals(*, now: datetime) -> int:
    """The repeat offender's owner disputes one of alice's False ratings, with the statement written beside it
    (factcheck.demo_checks; bob can decide it), and contests sam's removal of a London Ledger post (tariq, the
    other staff member, can decide it)."""
    owner = User.objects.get(username="olivia")
    filed = 0
    for number, spec in enumerate(CHECKED, start=1):
        if not spec.dispute:
            continue
        rating = Rating.objects.get(post__external_id=external_id_of(number), is_current=True)
        file_appeal(
            owner=owner, post_id=rating.post_id, kind="dispute", now=min(rating.created_at + timedelta(hours=5), now),
            statement=spec.dispute, evidence_urls=list(spec.evidence),
        )
        filed += 1
    post = Post.objects.get(external_id=REMOVED)
    removed_at = post.posted_at + timedelta(hours=7)  # its reports came 3 hours after it was posted
    remove_post(staff=User.objects.get(username="sam"), post_id=post.pk, ground=RemovalGround.HARASSMENT,
                reason=REMOVAL_REASON, now=removed_at)
    file_appeal(owner=owner, post_id=post.pk, kind="removal", now=min(removed_at + timedelta(hours=9), now),
                statement=REMOVAL_APPEAL)
    return filed + 1
