"""Job entry points of the decision side: thin, idempotent, safe to run twice."""

from moderation import distribution, enforcement, notifications, propagation, standing


def apply_rating(rating_id: int) -> int:
    """Turn a committed rating into its decision on its post, then on every copy linked to the post
    (a first rating, a re-rating, a reversal on appeal): each a no-op where it was done already."""
    decision = enforcement.apply_rating(rating_id=rating_id)
    propagation.propagate_rating(rating_id=rating_id)
    return decision.pk


def apply_matches(post_ids: list[int]) -> int:
    """Give posts just linked to a rated claim its rating."""
    return propagation.apply_matches(post_ids=post_ids)


def reconcile_decisions() -> int:
    """Ratings without their decision, and linked copies without their claim's rating."""
    return enforcement.reconcile_decisions() + propagation.reconcile_matches()


def refresh_standings() -> int:
    return standing.refresh_standings()


def send_notification_email(notification_id: int) -> bool:
    """E-mail one notification (RQ retries it on SMTP errors; a sent one is not sent again)."""
    return notifications.send_notification_email(notification_id=notification_id)


def send_notification_emails(notification_ids: list[int]) -> int:
    """E-mail several notifications (one decision reaching many posts); each is sent once."""
    return notifications.send_notification_emails(notification_ids=notification_ids)


def refresh_distributions(post_ids: list[int]) -> int:
    """Recompute some posts' distribution (new posts of a repeat offender's page); returns feed entries."""
    return len(distribution.refresh_posts(post_ids=post_ids))


def send_unsent_emails() -> int:
    """E-mail the notifications whose job was lost (Redis down when they were made)."""
    return notifications.send_unsent_emails()
