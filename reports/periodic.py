"""The periodic schedule: which job functions run how often, written once.

Both schedulers read `SCHEDULE`: `manage.py rqcron config.cron` (RQ's cron, with REDIS_URL) registers
each entry on its queue (core.jobs.JOBS), and `manage.py run_periodic` (the embedded default, no RQ) runs the same
functions at the same intervals in its own process. It lives in reports, the top app layer, because it
names the jobs of every app and only the top layer may import them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accounts import jobs as accounts_jobs
from audit import jobs as audit_jobs
from core.jobs import queue_of
from factcheck import jobs as factcheck_jobs
from moderation import jobs as moderation_jobs
from reports import jobs as reports_jobs
from webhooks import jobs as webhooks_jobs

DAY = 24 * 3600


@dataclass(frozen=True)
class Periodic:
    func: Callable[[], int]
    interval: int  # seconds
    covers: str  # what it does, in words for staff (the embedded default's jobs page shows it)

    @property
    def name(self) -> str:
        return f"{self.func.__module__}.{self.func.__name__}"

    @property
    def queue(self) -> str:
        """The RQ queue rqcron puts it on, from core.jobs.JOBS (run_periodic runs every job itself)."""
        return queue_of(self.func)


SCHEDULE = (
    Periodic(factcheck_jobs.expire_claims, 60, "returns posts whose claim ran out to the queue"),
    # Near-duplicates: factcheck.matching.
    Periodic(factcheck_jobs.match_unmatched, 60,
             "matches posts whose matching was missed (copies of rated or waiting claims)"),
    # Same claim in other words (factcheck.matching.semantic_backfill): posts matched while it was off.
    Periodic(factcheck_jobs.embed_missed_posts, 60,
             "embeds posts matched without an embedding and suggests the claims they say in other words"),
    # A rating carried to the posts that already carry its images (factcheck.matching.sweep), when missed.
    Periodic(factcheck_jobs.reconcile_media_sweeps, 60,
             "carries ratings to posts with the same images where a sweep was missed"),
    # Spread velocity and waiting time change with the clock.
    Periodic(factcheck_jobs.refresh_priorities, 300, "keeps the queue's order fresh as posts spread and wait"),
    # A committed rating whose decision job was lost or failed.
    Periodic(moderation_jobs.reconcile_decisions, 60, "applies every rating that has no decision yet"),
    # Bulk work, after the copies' own jobs.
    Periodic(moderation_jobs.reconcile_matches, 60, "gives linked copies their claim's rating where it was missed"),
    # ... and the distributions the standings affect.
    Periodic(moderation_jobs.age_out_strikes, 3600, "ages strikes out and recomputes repeat-offender standings"),
    # Their job was lost (Redis down when they were made).
    Periodic(moderation_jobs.send_unsent_emails, 120, "e-mails the notifications that were not e-mailed"),
    # The first retry within 30 s of a failure.
    Periodic(webhooks_jobs.deliver_due, 10, "sends webhook retries that are due, and deliveries that were missed"),
    # After 24 hours of failures, if the e-mail job was lost.
    Periodic(webhooks_jobs.notify_disabled_endpoints, 300,
             "tells the owners of webhook endpoints disabled after a day of failures"),
    # Partitioned history (core.partitions): a month's partitions exist before its first row.
    Periodic(audit_jobs.make_history_months, 3600,
             "makes the coming months' partitions of the history tables (audit, decisions, appeals, webhooks)"),
    # Months past FACTDESK_WEBHOOK_RETENTION_DAYS dropped.
    Periodic(webhooks_jobs.keep_history_months, 3600, "drops the months of webhook history past their retention"),
    # reports.rollup: today's so far, yesterday's to its end, missing recent days.
    Periodic(reports_jobs.roll_up_figures, 300, "rolls up the dashboard's daily figures"),
    # What `clearsessions` and `axes_reset_logs` do, so that nothing needs scheduling outside the app.
    Periodic(accounts_jobs.clear_old_sign_in_records, DAY,
             "deletes expired sessions, sign-in records older than FACTDESK_SIGN_IN_LOG_DAYS and admin log entries "
             "older than FACTDESK_ADMIN_LOG_DAYS"),
    # factcheck.drafts: a draft of a post someone else rated, or one its reviewer left, would stay for good.
    Periodic(factcheck_jobs.delete_forgotten_drafts, DAY,
             "deletes rating drafts nobody typed into for FACTDESK_RATING_DRAFT_DAYS"),
    # moderation.notice_delivery: a notice is told, not the decision's record, which is kept for good.
    Periodic(moderation_jobs.delete_old_notices, DAY,
             "deletes notifications older than FACTDESK_NOTIFICATION_DAYS and notice e-mails sent before "
             "FACTDESK_NOTICE_EMAIL_DAYS"),
)
