"""Job entry points of the decision side: thin, idempotent, safe to run twice."""

from django.db import transaction

from moderation import distribution, enforcement, notice_delivery, propagation, standing


def apply_rating(rating_id: int) -> int:
    """Turn a committed rating into its decision on its post, then send its copies theirs (a first rating, a
    re-rating) in a job of their own: a no-op where it was done already."""
    with transaction.atomic(durable=True):
        decision = enforcement.apply_rating(rating_id=rating_id)
        if propagation.has_copies(rating_id=rating_id):
            propagation.propagate_after_commit(rating_id=rating_id)
    return decision.pk


def propagate_rating(rating_id: int) -> int:
    """Give every copy linked to the rating's post the rating (an appeal's reversal, whose own post the
    appeal's decision already changed); returns how many copies were decided."""
    return propagation.propagate_rating(rating_id=rating_id)


def apply_matches(post_ids: list[int]) -> int:
    """Give posts just linked to a rated claim its rating."""
    return propagation.apply_matches(post_ids=post_ids)


def reconcile_decisions() -> int:
    """Ratings without their decision (on the decisions queue: a rating's own decision is urgent)."""
    return enforcement.reconcile_decisions()


def reconcile_matches() -> int:
    """Linked copies without their claim's rating (bulk work: under a copy-heavy load most of them only wait
    behind other bulk jobs, and deciding them here, on the decisions queue, held ratings up for 35 s)."""
    return propagation.reconcile_matches()


def age_out_strikes() -> int:
    """Strikes age out: recompute the standings of pages with strikes counted; returns flips."""
    return standing.age_out_strikes()


def email_notices(user_ids: list[int]) -> int:
    """E-mail each recipient's pending notifications, one e-mail each (RQ retries it on SMTP errors; what was sent
    is not sent again)."""
    return notice_delivery.email_notices_of(user_ids=user_ids)


# The e-mail jobs as they were enqueued before notices were grouped, by notification: a deploy can find some still
# on the queue. Each e-mails its notifications' recipients as `email_notices` does.
def send_notification_email(notification_id: int) -> int:
    return notice_delivery.email_notices_of(user_ids=notice_delivery.recipients_of([notification_id]))


def send_notification_emails(notification_ids: list[int]) -> int:
    return notice_delivery.email_notices_of(user_ids=notice_delivery.recipients_of(notification_ids))


def distribute_new_posts(post_ids: list[int]) -> int:
    """Give new posts of a repeat offender's page its multiplier; returns feed entries."""
    return len(distribution.distribute_new_posts(post_ids=post_ids))


def delete_old_notices() -> int:
    """Daily: notifications past FACTDESK_NOTIFICATION_DAYS and sent e-mails' rows past FACTDESK_NOTICE_EMAIL_DAYS."""
    return notice_delivery.delete_old_notices()


def send_unsent_emails() -> int:
    """E-mail the notifications whose job was lost (Redis down when they were made, a worker killed)."""
    return notice_delivery.send_unsent_emails()
