"""A busy database, a superuser's and a trust-and-safety login for the admin tests."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from core.outbound import Answer
from factcheck.claims import claim_post
from factcheck.models import Match, MatchGuard, MatchMethod, MatchState, Post, Verdict
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import (
    AppealKind,
    AttemptOutcome,
    RemovalGround,
    StatementOfReasons,
    StatementSubmission,
    StatementSubmissionAttempt,
    SubmissionOutcome,
)
from moderation.staff_actions import remove_post
from tests.factories import (
    PASSWORD,
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    UserFactory,
)
from tests.scenarios import reported_post
from webhooks.delivery import deliver
from webhooks.models import Delivery, Endpoint

ENDPOINT = "https://tdb.example/api/v1/statements"
VERDICTS = [Verdict.FALSE, Verdict.PARTLY_FALSE, Verdict.MISSING_CONTEXT, Verdict.TRUE]


@pytest.fixture
def root() -> User:
    """A superuser: people (users, organisations, pages' owners) are theirs to manage in the admin."""
    return User.objects.create_superuser(username="root", email="root@example.org", password=PASSWORD)


@pytest.fixture
def admin(root) -> Client:
    """A browser signed in as `root`."""
    client = Client()
    assert client.login(username="root", password=PASSWORD)
    return client


@dataclass
class Busy:
    posts: list[Post]
    staff: User
    owner: User


@pytest.fixture
def populate(ts_user):
    """Build `n` posts through the domain functions, so every admin list has rows and audit events.

    Half are rated (then applied) and a quarter are claimed, a third of the rated posts are removed
    by staff, every fourth rated post is disputed by its owner, and every post has two flags; pages
    are shared so some become repeat offenders; the second post is also reported for violence.
    """

    def build(n: int) -> Busy:
        # A platform endpoint, so every decision below also writes its webhook event and delivery.
        endpoint = Endpoint.objects.create(
            owner=PlatformUserFactory(), url="https://hooks.platform.example/in", secret="whsec_test",
            events=["distribution.changed", "appeal.filed", "appeal.decided"], created_at=timezone.now(),
        )
        owner = UserFactory()
        checker = FactCheckerFactory()
        pages = [PageFactory() for _ in range(max(2, n // 10))]
        for page in pages:
            page.owners.add(owner)
        posts = []
        for i in range(n):
            post = PostFactory(page=pages[i % len(pages)])
            FlagFactory(post=post)
            FlagFactory(post=post, source="classifier")
            posts.append(post)
            if i % 2:
                if i % 4 == 1:
                    claim_post(reviewer=checker, post_id=post.pk)
                continue
            rating = record_rating(claim_if_unclaimed=True,
                reviewer=checker, post_id=post.pk, verdict=VERDICTS[(i // 2) % len(VERDICTS)],
                rationale="Checked against the primary source.", sources=["https://source.example/a"],
            )
            apply_rating(rating_id=rating.pk)
            if i % 3 == 0:
                remove_post(staff=ts_user, post_id=post.pk, ground=RemovalGround.HATE, reason="Slur against a group.")
            elif i % 4 == 0:
                file_appeal(owner=owner, post_id=post.pk, kind=AppealKind.DISPUTE, statement="The quote is real.",
                            now=timezone.now() - timedelta(hours=30))
        # Not strict: posts[4::5] is one longer when n is a multiple of 5 (its last source has no copy).
        for copy, source in zip(posts[5::5], posts[4::5], strict=False):  # near-duplicate pairs, some suggested
            Match.objects.create(post=copy, source=source, method=MatchMethod.MINHASH, score=0.71,
                                 state=MatchState.SUGGESTED, guard=MatchGuard.NUMBERS, created_at=timezone.now())
        if n > 1:  # a report of harm on an unrated post, so the reports' list has a row
            reported_post(post=posts[1], reports=(("violence", "user_report"),))
        record_submissions()
        attempt_deliveries(endpoint)
        return Busy(posts=posts, staff=ts_user, owner=owner)

    return build


def attempt_deliveries(endpoint: Endpoint) -> None:
    """Every other delivery answered 200, the rest 500 (pending, retried), as the receiver would."""
    answers = iter([Answer(200, b"ok"), Answer(500, b"<html>Internal Server Error</html>", "HTTP 500")] * 10_000)
    ids = list(Delivery.objects.filter(endpoint=endpoint).values_list("pk", flat=True))
    for delivery_id in ids:
        deliver(delivery_id=delivery_id, post=lambda *args, **kwargs: next(answers))


def record_submissions() -> None:
    """The statements as submit_statements would record them: accepted in batches of 10."""
    puids = list(StatementOfReasons.objects.order_by("pk").values_list("puid", flat=True))
    for start in range(0, len(puids), 10):
        batch = puids[start:start + 10]
        attempt = StatementSubmissionAttempt.objects.create(
            endpoint=ENDPOINT, run=uuid.uuid4(), sent_at=timezone.now(), puids=batch, http_status=201,
            outcome=AttemptOutcome.ACCEPTED,
        )
        StatementSubmission.objects.bulk_create([
            StatementSubmission(puid=puid, endpoint=ENDPOINT, outcome=SubmissionOutcome.ACCEPTED,
                                recorded_at=attempt.sent_at, answer={"uuid": str(uuid.uuid4())}, attempt=attempt)
            for puid in batch
        ])
