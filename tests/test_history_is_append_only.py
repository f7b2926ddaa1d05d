"""History cannot be rewritten by anyone: the database refuses it, superusers and raw SQL included.

PostgreSQL triggers (django-pgtrigger, installed by the migrations) refuse UPDATE and DELETE on
audit events, appeal events, the decisions feed, rating decisions, stored statements of reasons,
webhook events and delivery attempts, and any change to a rating's content or to which event a
webhook delivery carries to which endpoint; only the fields that record a rating's
supersession may change. These tests go around Django entirely with raw SQL, and through the
ORM's bulk paths that skip `save()`.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from audit.models import AuditEvent
from core.append_only import AppendOnlyError
from core.outbound import Answer
from factcheck.models import Rating
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import AppealEvent, DistributionChange, RatingDecision, ReportAnswer, StatementOfReasons
from tests.factories import FlagFactory, PlatformUserFactory, PostFactory, UserFactory
from webhooks.delivery import deliver
from webhooks.models import Delivery, DeliveryAttempt, Endpoint, Event

pytestmark = pytest.mark.django_db

PROTECTED = {
    "audit_auditevent": AuditEvent,
    "moderation_appealevent": AppealEvent,
    "moderation_distributionchange": DistributionChange,
    "moderation_ratingdecision": RatingDecision,
    "moderation_reportanswer": ReportAnswer,
    "moderation_statementofreasons": StatementOfReasons,
    "webhooks_event": Event,
    "webhooks_deliveryattempt": DeliveryAttempt,
}


@pytest.fixture
def history(factchecker):
    """A rated, decided and appealed post: one row in every protected table."""
    owner = UserFactory()
    endpoint = Endpoint.objects.create(owner=PlatformUserFactory(), url="https://hooks.example/in", secret="whsec_t",
                                       events=["distribution.changed"], created_at=timezone.now())
    post = PostFactory()
    post.page.owners.add(owner)
    FlagFactory(post=post)  # answered `rated` by the rating: a kept answer
    rating = record_rating(reviewer=factchecker, post_id=post.pk, verdict="false", rationale="Invented quote.",
                           sources=["https://evidence.example/1"], claim_if_unclaimed=True)
    apply_rating(rating_id=rating.pk)
    file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="The quote is real.")
    [delivery] = Delivery.objects.filter(endpoint=endpoint)
    deliver(delivery_id=delivery.pk, post=lambda *args, **kwargs: Answer(500, b"down"))
    for table, model in PROTECTED.items():
        assert model.objects.exists(), table
    return rating


def refused(sql: str, params=()) -> str:
    """Run SQL in a savepoint; return the database's refusal (fails the test if it was allowed)."""
    with pytest.raises(DatabaseError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
    return str(caught.value)


@pytest.mark.parametrize("table", sorted(PROTECTED))
def test_raw_sql_update_of_a_history_table_is_refused(history, table):
    column = "id"
    message = refused(f"UPDATE {table} SET {column} = {column}")  # even a no-op rewrite
    assert "Cannot update or delete rows" in message


@pytest.mark.parametrize("table", sorted(PROTECTED))
def test_raw_sql_delete_from_a_history_table_is_refused(history, table):
    count = PROTECTED[table].objects.count()
    assert "Cannot update or delete rows" in refused(f"DELETE FROM {table}")
    assert PROTECTED[table].objects.count() == count


@pytest.mark.parametrize("table", sorted(PROTECTED))
def test_the_orms_bulk_update_and_delete_are_refused_too(history, table):
    model = PROTECTED[table]
    with pytest.raises(DatabaseError), transaction.atomic():
        model.objects.all().update(id=models_id_expression())
    with pytest.raises(DatabaseError), transaction.atomic():
        model.objects.all()._raw_delete(model.objects.db)
    with pytest.raises(AppendOnlyError):
        model.objects.first().delete()


def models_id_expression():
    from django.db.models import F

    return F("id")


@pytest.mark.parametrize(
    "column, value",
    [
        ("rationale", "Rewritten rationale."),
        ("verdict", "true"),
        ("sources", '["https://other.example"]'),
        ("article_url", "https://other.example/article"),
        ("change_reason", "invented later"),
        ("rated_text", "Words the fact-checker never rated."),
        ("rated_url", "https://other.example/post"),
    ],
)
def test_a_ratings_content_cannot_be_changed_by_raw_sql(history, column, value):
    cast = "::jsonb" if column == "sources" else ""
    assert "Cannot update rows" in refused(f"UPDATE factcheck_rating SET {column} = %s{cast}", [value])
    history.refresh_from_db()
    assert (history.verdict, history.rationale) == ("false", "Invented quote.")


def test_a_ratings_author_organisation_and_time_cannot_be_changed_by_raw_sql(history, factchecker):
    for sql in (
        "UPDATE factcheck_rating SET reviewer_id = reviewer_id + 1",
        "UPDATE factcheck_rating SET organisation_id = organisation_id + 1",
        "UPDATE factcheck_rating SET created_at = created_at - interval '1 day'",
        "UPDATE factcheck_rating SET post_id = post_id + 1",
    ):
        assert "Cannot update rows" in refused(sql)


def test_a_rating_cannot_be_deleted_by_raw_sql(history):
    refused("DELETE FROM factcheck_rating")
    assert Rating.objects.filter(pk=history.pk).exists()


def test_a_ratings_rationale_cannot_be_changed_through_the_orm(history):
    history.rationale = "Rewritten."
    with pytest.raises(AppendOnlyError):
        history.save()
    with pytest.raises(AppendOnlyError):
        history.save(update_fields=["rationale"])
    with pytest.raises(DatabaseError), transaction.atomic():
        Rating.objects.filter(pk=history.pk).update(rationale="Rewritten by a bulk update.")
    history.refresh_from_db()
    assert history.rationale == "Invented quote."


def test_only_the_supersession_fields_of_a_rating_may_change(history):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE factcheck_rating SET is_current = false, superseded_at = now() WHERE id = %s",
                       [history.pk])
    history.refresh_from_db()
    assert history.is_current is False and history.superseded_at is not None


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE webhooks_delivery SET event_id = event_id + 1",
        "UPDATE webhooks_delivery SET endpoint_id = endpoint_id + 1",
        "UPDATE webhooks_delivery SET post_id = post_id + 1",
        "UPDATE webhooks_delivery SET created_at = created_at - interval '1 day'",
        "DELETE FROM webhooks_delivery",
    ],
)
def test_a_webhook_deliverys_event_endpoint_and_time_cannot_be_rewritten(history, sql):
    assert "Cannot" in refused(sql)
    assert Delivery.objects.count() == 1


def test_only_a_webhook_deliverys_progress_may_change(history):
    with connection.cursor() as cursor:
        cursor.execute("UPDATE webhooks_delivery SET status = 'failed', failed_at = now()")
    assert Delivery.objects.get().status == "failed"


def test_triggers_are_installed_by_the_migrations():
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname LIKE 'pgtrigger_%%'")
        tables = {row[0] for row in cursor.fetchall()}
    assert tables >= {*PROTECTED, "factcheck_rating", "webhooks_delivery"}
