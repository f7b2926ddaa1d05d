"""The authorisation matrix's world: one object of each kind a URL names, made as the app makes it.

A post rated and disputed, one rated and not appealed, one removed and appealed, one waiting in the
queue as a suggested copy; each role's user and API token; a row of every model the admin lists; a
webhook delivery, a statement submission and the job dashboard's job, result and worker.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib import admin
from django.utils import timezone

from accounts.models import ApiToken, User
from factcheck.members import create_user
from factcheck.models import Match, Post
from moderation.models import (
    Action,
    ActionKind,
    Appeal,
    AppealKind,
    AttemptOutcome,
    RemovalGround,
    StatementSubmission,
    StatementSubmissionAttempt,
    SubmissionOutcome,
)
from tests import scenarios
from tests.factories import (
    AppealFactory,
    DecisionFactory,
    FactCheckerFactory,
    FlagFactory,
    MatchFactory,
    OrganisationFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    UserFactory,
)
from webhooks.models import AttemptOutcome as DeliveryOutcome
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Endpoint, Event, EventType


@dataclass
class RqWorld:
    queue_index: int
    job_id: str
    result_id: str
    worker_key: str
    no_name: str = "no-such-thing"


@dataclass
class World:
    users: dict[str, User | None]
    tokens: dict[str, Any]
    page: Any
    rated_post: Post
    appeal: Appeal
    appealable_post: Post
    removed_post: Post
    removal_appeal: Appeal
    queued_post: Post
    suggestion: Match
    action: Action
    webhook_delivery: Delivery
    rq: RqWorld
    objects: dict[str, Any] = field(default_factory=dict)
    # Reported for hate by the platform: waiting in the staff's reports queue.
    reported_post: Post | None = None

    def pick(self, path: str | Callable[[World], Any]) -> Any:
        if callable(path):
            return path(self)
        value: Any = self
        for part in path.split("."):
            value = value[part] if isinstance(value, dict) else getattr(value, part)
        return value

    def admin_object(self, label: str) -> Any:
        return self.objects[label]


def build_rq_world() -> RqWorld:
    import django_rq
    from rq import SimpleWorker

    queue = django_rq.get_queue("default")
    # A job that ran (so it has a result), and a worker that registered itself: their pages exist.
    job = queue.enqueue("operator.add", 1, 2)
    SimpleWorker([queue], connection=queue.connection).work(burst=True, with_scheduler=False)
    result = job.latest_result()
    worker = SimpleWorker([queue], connection=queue.connection)
    worker.register_birth()
    return RqWorld(queue_index=0, job_id=job.id, result_id=result.id, worker_key=worker.key)




def build_world() -> World:
    """Every object a URL of the matrix names, made as the app makes it (see the module docstring)."""
    from axes.models import AccessAttempt
    from django.contrib.auth.models import Group

    organisation, other_organisation = OrganisationFactory(), OrganisationFactory()
    rater = FactCheckerFactory(organisation=organisation)
    colleague = FactCheckerFactory(organisation=organisation)
    other_checker = FactCheckerFactory(organisation=other_organisation)
    owner, other_owner = UserFactory(), UserFactory()
    staff = create_user(username="matrix-staff", role="trust_safety", password=None)
    remover = create_user(username="matrix-remover", role="trust_safety", password=None)
    superuser = User.objects.create_superuser("matrix-root", "root@example.org", None)
    platform = PlatformUserFactory()
    users = {
        "anonymous": None, "rater": rater, "colleague": colleague, "other_checker": other_checker, "owner": owner,
        "other_owner": other_owner, "staff": staff, "superuser": superuser, "platform": platform,
    }

    page, other_page = PageFactory(), PageFactory()
    page.owners.add(owner)
    other_page.owners.add(other_owner)
    # Rated False by the rater, decided, and disputed by the owner (the dispute is open).
    rated_post = FlagFactory(post__page=page).post
    DecisionFactory(reviewer=rater, post=rated_post)
    appeal = AppealFactory(post=rated_post, filed_by=owner, kind=AppealKind.DISPUTE, statement="The quote is real.")
    # Rated and decided, nothing appealed yet.
    appealable_post = scenarios.rated_post(rater=rater, page=page)
    # Removed by another staff member, and the removal appealed.
    removed_post = scenarios.removed_post(staff=remover, page=page, ground=RemovalGround.HATE,
                                          reason="A slur against a group.")
    removal_appeal = AppealFactory(post=removed_post, filed_by=owner, kind=AppealKind.REMOVAL, statement="No slur.")
    # Waiting in the queue, on another owner's page; suggested as a copy of the rated claim.
    queued_post = PostFactory(page=other_page)
    FlagFactory(post=queued_post)
    suggestion = MatchFactory(post=queued_post, source=rated_post, score=0.55)
    action = Action.objects.get(post=rated_post, kind=ActionKind.FACT_CHECK, ended_at__isnull=True)
    reported_post = scenarios.reported_post(reports=[("hate", "user_report")], platform=platform, page=other_page)

    tokens = {}
    for actor, user in users.items():
        if user is not None:
            token, raw = ApiToken.issue(user=user)
            token.raw = raw
            tokens[actor] = token

    AccessAttempt.objects.create(username="someone", ip_address="127.0.0.1", user_agent="t", failures_since_start=1)
    # One settled statement, as submit_statements records it.
    attempt = StatementSubmissionAttempt.objects.create(
        endpoint="https://tdb.example/api/v1/statements", run=uuid.uuid4(), sent_at=timezone.now(),
        puids=[action.puid], http_status=201, outcome=AttemptOutcome.ACCEPTED,
    )
    StatementSubmission.objects.create(
        puid=action.puid, endpoint=attempt.endpoint, outcome=SubmissionOutcome.ACCEPTED, recorded_at=attempt.sent_at,
        attempt=attempt,
    )

    # The platform's endpoint, disabled after a delivery that failed for 24 hours.
    endpoint = Endpoint.objects.create(
        owner=platform, url="https://hooks.platform.example/in", events=["distribution.changed"], secret="whsec_x",
        created_at=timezone.now(), disabled_at=timezone.now(), disabled_reason="every delivery failed for 24 hours",
    )
    event = Event.objects.create(type=EventType.DISTRIBUTION_CHANGED, post=removed_post, created_at=timezone.now(),
                                 data={"post": removed_post.external_id})
    webhook_delivery = Delivery.objects.create(
        event=event, endpoint=endpoint, post=removed_post, created_at=timezone.now(), status=DeliveryStatus.FAILED,
        attempts=1, next_attempt_at=timezone.now(), deadline=timezone.now(), failed_at=timezone.now(),
    )
    DeliveryAttempt.objects.create(delivery=webhook_delivery, number=1, started_at=timezone.now(), latency_ms=5000,
                                   outcome=DeliveryOutcome.TIMEOUT)

    objects = {}
    for model in admin.site._registry:
        label = model._meta.label_lower
        if model._meta.managed:
            objects[label] = model._default_manager.order_by("pk").values_list("pk", flat=True).first()
    objects["auth.group"] = Group.objects.get(name="trust_safety").pk
    objects["factcheck.post"] = rated_post.pk
    objects["moderation.appeal"] = appeal.pk
    objects["moderation.action"] = action.pk
    missing = [label for label, pk in objects.items() if pk is None]
    assert not missing, f"the world has no row for {missing}: add one so its change page is in the matrix"

    return World(
        users=users, tokens=tokens, page=page, rated_post=rated_post, appeal=appeal, appealable_post=appealable_post,
        removed_post=removed_post, removal_appeal=removal_appeal, queued_post=queued_post, suggestion=suggestion,
        action=action, webhook_delivery=webhook_delivery,
        rq=build_rq_world(), objects=objects, reported_post=reported_post,
    )
