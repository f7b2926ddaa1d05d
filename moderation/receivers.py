"""How the decision side hears from the review side: ratings (a job after commit) and new posts."""

from django.dispatch import receiver

from core.jobs import enqueue_on_commit
from factcheck.signals import posts_created, rating_recorded
from moderation import jobs
from moderation.distribution import refresh_distributions
from moderation.models import PageStanding


@receiver(rating_recorded, dispatch_uid="moderation.apply_rating_on_commit")
def apply_rating_after_commit(sender, rating, **kwargs) -> None:
    enqueue_on_commit(jobs.apply_rating, rating.pk)


@receiver(posts_created, dispatch_uid="moderation.new_posts_of_repeat_offenders")
def give_new_posts_their_pages_standing(sender, posts, now, **kwargs) -> None:
    """Every post of a repeat offender's page carries the page multiplier, new ones included."""
    page_ids = {page_id for _, page_id in posts}
    for standing in PageStanding.objects.filter(page_id__in=page_ids, is_repeat_offender=True).select_related("page"):
        refresh_distributions(
            post_ids=[post_id for post_id, page_id in posts if page_id == standing.page_id], page=standing.page,
            cause="new post on a repeat offender's page", now=now,
        )
