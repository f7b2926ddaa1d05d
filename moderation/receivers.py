"""How the decision side hears about ratings: a job is enqueued when the rating commits."""

from django.dispatch import receiver

from config.jobs import enqueue_on_commit
from factcheck.signals import rating_recorded
from moderation import jobs


@receiver(rating_recorded, dispatch_uid="moderation.apply_rating_on_commit")
def apply_rating_after_commit(sender, rating, **kwargs) -> None:
    enqueue_on_commit(jobs.apply_rating, rating.pk)
