"""`manage.py jobworker`: the RQ worker as Factdesk runs it (bin/jobs, deploy/).

django-rq's `rqworker` on every queue in urgency order (core.jobs.QUEUES: decisions, notices,
webhooks, copies, bulk, default), with RQ's scheduler, so that failed jobs' retries and scheduled jobs are
moved to their queue when due, and with a short heartbeat (FACTDESK_WORKER_TTL), so that `/healthz`
sees a dead worker within about a minute. `--urgent` takes only the urgent queues (core.jobs.URGENT_QUEUES:
decisions, notices, webhooks), for a worker that a long bulk job can never hold (bin/jobs runs one). Any
`rqworker` option may be given (`--burst`, `--name`); queue names, if given, replace the full list.
"""

from __future__ import annotations

from django.conf import settings
from django_rq.management.commands.rqworker import Command as RqWorker

from core.jobs import QUEUES, URGENT_QUEUES


class Command(RqWorker):
    help = "Run an RQ worker on every Factdesk queue in urgency order, with RQ's scheduler."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--urgent", action="store_true", help="Take only the urgent queues, never bulk work.")
        parser.set_defaults(with_scheduler=True, worker_ttl=settings.FACTDESK_WORKER_TTL)

    def handle(self, *args, urgent: bool = False, **options):
        return super().handle(*(args or (URGENT_QUEUES if urgent else QUEUES)), **options)
