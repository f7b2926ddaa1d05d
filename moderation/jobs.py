"""Job entry points of the decision side: thin, idempotent, safe to run twice."""

from moderation import distribution, enforcement, notifications, standing


def apply_rating(rating_id: int) -> int:
    """Turn a committed rating into its decision (a no-op if it already has one)."""
    return enforcement.apply_rating(rating_id=rating_id).pk


def reconcile_decisions() -> int:
    return enforcement.reconcile_decisions()


def refresh_standings() -> int:
    return standing.refresh_standings()


def send_notification_email(notification_id: int) -> bool:
    """E-mail one notification (RQ retries it on SMTP errors; a sent one is not sent again)."""
    return notifications.send_notification_email(notification_id=notification_id)


def refresh_distributions(post_ids: list[int]) -> int:
    """Recompute some posts' distribution (new posts of a repeat offender's page); returns feed entries."""
    return len(distribution.refresh_posts(post_ids=post_ids))


def send_unsent_emails() -> int:
    """E-mail the notifications whose job was lost (Redis down when they were made)."""
    return notifications.send_unsent_emails()
