"""factory_boy factories for the suite: the records a test needs, nothing more.

People, pages, posts and flags are rows. Ratings, decisions and appeals are made by the domain
functions a person's action calls (record_rating, the moderation pipeline's apply_rating,
file_appeal), so a world built here is one the application could have built: claims completed,
queue states moved, actions, strikes, statements and audit rows written. tests/scenarios.py builds
the common worlds from these.
"""

from __future__ import annotations

from datetime import timedelta

import factory
from django.utils import timezone

from accounts.models import Role, User
from factcheck.members import add_membership
from factcheck.models import (
    Flag,
    FlagSource,
    Match,
    MatchMethod,
    MatchState,
    Organisation,
    Page,
    Post,
    QueueState,
    Rating,
    Verdict,
)
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Appeal, AppealKind, RatingDecision

PASSWORD = "correct horse battery staple"


class OrganisationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organisation
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"Fact Org {n}")
    url = factory.LazyAttribute(lambda o: f"https://{o.name.lower().replace(' ', '-')}.example")


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    role = Role.PAGE_OWNER
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def save_password(obj, create, extracted, **kwargs):
        if create:
            obj.save()


class FactCheckerFactory(UserFactory):
    """A fact-checker with its Membership: `FactCheckerFactory(organisation=org)`, or a new organisation."""

    role = Role.FACTCHECKER

    @factory.post_generation
    def organisation(obj, create, extracted, **kwargs):
        if create:
            add_membership(user=obj, organisation=extracted or OrganisationFactory(**kwargs))


class PlatformUserFactory(UserFactory):
    role = Role.PLATFORM


class StaffFactory(UserFactory):
    role = Role.TRUST_SAFETY
    is_staff = True


class PageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Page

    external_id = factory.Sequence(lambda n: f"page-{n}")
    name = factory.Sequence(lambda n: f"Page {n}")


class PostFactory(factory.django.DjangoModelFactory):
    """A flagged, queued post with one user report."""

    class Meta:
        model = Post

    external_id = factory.Sequence(lambda n: f"post-{n}")
    page = factory.SubFactory(PageFactory)
    url = factory.LazyAttribute(lambda p: f"https://social.example/{p.external_id}")
    text = factory.Sequence(lambda n: f"Claim number {n}: a miracle cure was found.")
    language = "en"
    country = "GB"
    posted_at = factory.LazyFunction(lambda: timezone.now() - timedelta(hours=3))
    views = 1000
    shares = 50
    queue_state = QueueState.QUEUED
    flag_count = 1
    flag_weight = 1.0
    first_flagged_at = factory.LazyFunction(timezone.now)
    priority = 10.0


class FlagFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Flag

    post = factory.SubFactory(PostFactory)
    source = FlagSource.USER_REPORT
    reason = "looks false"
    flagged_at = factory.LazyFunction(timezone.now)
    idempotency_key = factory.Sequence(lambda n: f"flag-{n}")


class MatchFactory(factory.django.DjangoModelFactory):
    """A pair the matcher suggested between its thresholds, as it writes one: the copy is not linked.

    A linked pair is made by confirm_match (or by ingest, tests/factcheck/matching_helpers.py).
    """

    class Meta:
        model = Match

    post = factory.SubFactory(PostFactory)
    source = factory.SubFactory(PostFactory)
    method = MatchMethod.MINHASH
    score = 0.61
    state = MatchState.SUGGESTED
    guard = ""
    created_at = factory.LazyFunction(timezone.now)


class RatingFactory(factory.django.DjangoModelFactory):
    """A rating recorded by record_rating as the API records one: an unclaimed post is claimed for it.

    Its decision is left to the job after commit, which never runs inside a test's transaction
    (DecisionFactory makes it; a `transaction=True` test's worker runs the job). `created_at` is
    record_rating's `now`; `change_reason` is only kept when the post was rated before.
    """

    class Meta:
        model = Rating

    post = factory.SubFactory(PostFactory)
    reviewer = factory.SubFactory(FactCheckerFactory)
    verdict = Verdict.FALSE
    rationale = "The quote was never said."
    sources = factory.LazyFunction(lambda: ["https://evidence.example/1"])
    article_url = ""
    change_reason = "Re-checked with new evidence."
    published_at = None
    created_at = None

    @classmethod
    def _create(cls, model_class, *, post, reviewer, created_at, **values) -> Rating:
        return record_rating(reviewer=reviewer, post_id=post.pk, claim_if_unclaimed=True, now=created_at, **values)


class DecisionFactory(RatingFactory):
    """A rating and its decision on its post: RatingFactory's rating, enforced by apply_rating (the
    moderation pipeline) as the job after commit does. `.rating`, `.post` and `.action` (the
    restricting action, None for a verdict that restricts nothing) are the world it made.
    """

    class Meta:
        model = RatingDecision

    # When its job ran: when the rating was recorded, unless a test says otherwise.
    decided_at = factory.SelfAttribute("created_at")

    @classmethod
    def _create(cls, model_class, *, decided_at, **values) -> RatingDecision:
        rating = super()._create(Rating, **values)
        return apply_rating(rating_id=rating.pk, now=decided_at)


def _decided_post() -> Post:
    return DecisionFactory().post


class AppealFactory(factory.django.DjangoModelFactory):
    """An appeal filed by file_appeal, by an owner of the post's page (`filed_by` is made one: only
    owners appeal). The default is a dispute of a post rated False and decided."""

    class Meta:
        model = Appeal

    post = factory.LazyFunction(_decided_post)
    filed_by = factory.SubFactory(UserFactory)
    kind = AppealKind.DISPUTE
    statement = "The quote is real."
    evidence_urls = factory.LazyFunction(lambda: ["https://evidence.example/full"])
    correction_details = ""
    created_at = None

    @classmethod
    def _create(cls, model_class, *, post, filed_by, created_at, **values) -> Appeal:
        post.page.owners.add(filed_by)
        return file_appeal(owner=filed_by, post_id=post.pk, now=created_at, **values)
