"""Periodic jobs for `manage.py rqcron config.cron` (RQ's cron scheduler via django-rq)."""

from rq import cron

from factcheck import jobs as factcheck_jobs
from moderation import jobs as moderation_jobs
from reports import jobs as reports_jobs
from webhooks import jobs as webhooks_jobs

# Return expired claim leases to the queue.
cron.register(factcheck_jobs.expire_claims, "default", interval=60)
# Match posts whose matching job was lost (near-duplicates: factcheck.matching).
cron.register(factcheck_jobs.match_unmatched, "matching", interval=60)
# Keep queue priorities fresh: spread velocity and waiting time change with the clock.
cron.register(factcheck_jobs.refresh_priorities, "default", interval=300)
# Apply any committed rating that has no decision yet (its job was lost or failed).
cron.register(moderation_jobs.reconcile_decisions, "default", interval=60)
# Strikes age out: recompute repeat-offender standings and the distributions they affect.
cron.register(moderation_jobs.refresh_standings, "default", interval=3600)
# E-mail the notifications whose job was lost (Redis down when they were made).
cron.register(moderation_jobs.send_unsent_emails, "default", interval=120)
# Webhook retries that are due (the first within 30 s of a failure) and deliveries whose job was lost.
cron.register(webhooks_jobs.deliver_due, "default", interval=10)
# Tell owners of webhook endpoints disabled after 24 hours of failures (if the e-mail job was lost).
cron.register(webhooks_jobs.notify_disabled_endpoints, "webhooks", interval=300)
# The dashboard's daily figures (reports.rollup): today's so far, yesterday's to its end, missing recent days.
cron.register(reports_jobs.roll_up_figures, "default", interval=300)
