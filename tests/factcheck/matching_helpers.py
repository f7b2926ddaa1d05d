"""What the near-duplicate tests share (tests/factcheck/test_matching*.py, tests/moderation/test_propagation.py):
one claim and its copies as people write them, flags that bring them in through ingest, and the queue they
stay out of. A rated claim that arrived through ingest is tests/scenarios.py's `rated_claim`.

The texts were chosen so that each pair lands where its name says with the settings' thresholds
(auto 0.7, suggest 0.4) and shares MinHash band keys with the claim (so it is a candidate at all):
tests/factcheck/test_similarity.py proves the scores and guards of each pair.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from factcheck.ingest import FlagInput, IngestResult, PageInput, PostInput, ingest_flags
from factcheck.models import Post
from factcheck.queue import queued_posts
from moderation.models import Action, ActionKind

# Jobs must be enqueued after a real commit and run by a real worker: committed rows, so the policy
# rows of the data migrations are restored after the flush.
WORKER = pytest.mark.django_db(transaction=True, serialized_rollback=True)

CLAIM = ("Scientists confirm that drinking hot lemon water for 5 minutes every morning cures type 2 diabetes "
         "within three weeks")
EXACT_COPY = ("SCIENTISTS CONFIRM that drinking hot lemon water for 5 minutes every morning cures type 2 diabetes "
              "within three weeks!!! 😱")
# A typo, a "BREAKING:" prefix and hashtags: minhash, about 0.79.
NEAR_COPY = ("BREAKING: Scientsts confirm that drinking hot lemon water for 5 minutes every morning cures type 2 "
             "diabetes within three weeks #health #share")
# The claim with a long comment of the reposter's added: minhash, about 0.61, no guard: a suggestion.
COMMENTED_COPY = CLAIM + ", the drug companies have been hiding it from us for years, tell your family"
NEGATED_COPY = ("Scientists confirm that drinking hot lemon water for 5 minutes every morning does not cure type 2 "
                "diabetes within three weeks")
CHANGED_NUMBER_COPY = ("Scientists confirm that drinking hot lemon water for 50 minutes every morning cures type 2 "
                       "diabetes within three weeks")
UNRELATED = "The city council approved a new budget for road repairs and public libraries on Tuesday evening"
SHORT_CLAIM = "Lemon water cures diabetes"


def flag(external_id: str, text: str, *, page: str = "page-a", politician: bool = False, url: str = "",
         key: str = "", source: str = "user_report", language: str = "en") -> FlagInput:
    """A flag of one post; each post has a link of its own unless `url` says otherwise."""
    now = timezone.now()
    return FlagInput(
        idempotency_key=key or f"flag-{external_id}", source=source, flagged_at=now, reason="looks false",
        post=PostInput(
            external_id=external_id, page=PageInput(page, f"Page {page}", politician),
            posted_at=now - timedelta(hours=2), url=url or f"https://social.example/{external_id}", text=text,
            language=language, country="GB", views=1000, shares=20,
        ),
    )


def arrive(*flags: FlagInput, by=None) -> list[IngestResult]:
    """The platform sends a batch of flags."""
    return ingest_flags(flags=list(flags), submitted_by=by)


def post(external_id: str) -> Post:
    return Post.objects.get(external_id=external_id)


def matched_action(target: Post) -> Action | None:
    """The post's active matched rating, if it has one."""
    return Action.objects.filter(post=target, kind=ActionKind.MATCHED_RATING, ended_at__isnull=True).first()


def queue_ids() -> list[int]:
    """The posts the review queue lists, by id."""
    return sorted(queued_posts(organisation=None).values_list("id", flat=True))
