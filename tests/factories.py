"""factory_boy factories for the suite: the records a test needs, nothing more."""

from __future__ import annotations

from datetime import timedelta

import factory
from django.utils import timezone

from accounts.models import Role, User
from factcheck.models import Flag, FlagSource, Organisation, Page, Post, QueueState

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
    role = Role.FACTCHECKER
    organisation = factory.SubFactory(OrganisationFactory)


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
