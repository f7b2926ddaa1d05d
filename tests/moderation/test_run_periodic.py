"""`run_periodic --once`: the embedded default's stand-in for rqcron runs the same jobs, from the one schedule."""

from __future__ import annotations

import importlib
import logging
import sys
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from core.jobs import QUEUES
from factcheck.claims import claim_post
from factcheck.models import Claim, ClaimStatus, Post, QueueState, Verdict
from factcheck.ratings import record_rating
from moderation.models import PostDistribution, RatingDecision
from reports import periodic
from reports.periodic import SCHEDULE, Periodic
from tests.factories import PostFactory

pytestmark = pytest.mark.django_db


def test_run_periodic_once_returns_expired_claims_to_the_queue(factchecker):
    post = PostFactory()
    claim_post(reviewer=factchecker, post_id=post.pk, now=timezone.now() - timedelta(hours=2))

    call_command("run_periodic", "--once")

    assert Claim.objects.get(post=post).status == ClaimStatus.EXPIRED
    assert Post.objects.get(pk=post.pk).queue_state == QueueState.QUEUED


def test_run_periodic_once_applies_a_rating_whose_decision_job_never_ran(factchecker):
    post = PostFactory()
    # Inside the test transaction nothing commits, so the on-commit decision job never runs.
    rating = record_rating(claim_if_unclaimed=True,
        reviewer=factchecker, post_id=post.pk, verdict=Verdict.FALSE, rationale="Fabricated quote.",
        sources=["https://example.org/evidence"], now=timezone.now() - timedelta(minutes=5),
    )
    assert not RatingDecision.objects.exists()

    call_command("run_periodic", "--once")

    assert RatingDecision.objects.get().rating == rating
    distribution = PostDistribution.objects.get(post=post)
    assert str(distribution.multiplier) == "0.2000"
    assert distribution.labels == ["False information. Checked by independent fact-checkers."]


def test_run_periodic_once_logs_each_job_it_ran(caplog):
    with caplog.at_level(logging.INFO, logger="factdesk.periodic"):
        call_command("run_periodic", "--once")

    ran = [record.getMessage() for record in caplog.records if " -> " in record.getMessage()]
    assert [line.split(" -> ")[0] for line in ran] == [job.name for job in SCHEDULE]


def load_config_cron() -> None:
    """Run config/cron.py afresh, as `rqcron config.cron` does at its start."""
    sys.modules.pop("config.cron", None)
    importlib.import_module("config.cron")


def test_rqcron_registers_every_job_of_the_schedule_on_its_queue_at_its_interval(monkeypatch):
    registered = []
    monkeypatch.setattr(
        "rq.cron.register",
        lambda func, queue_name, interval=None, **kw: registered.append((func, queue_name, interval)),
    )
    load_config_cron()

    assert registered == [(job.func, job.queue, job.interval) for job in SCHEDULE]
    assert {job.queue for job in SCHEDULE} <= set(QUEUES)  # the queues every worker serves (manage.py jobworker)


def test_both_schedulers_read_the_one_schedule(monkeypatch, caplog):
    ran = []
    only = Periodic(lambda: ran.append("ran") or 1, 5, "a test job")
    monkeypatch.setattr(periodic, "SCHEDULE", (only,))
    registered = []
    monkeypatch.setattr("rq.cron.register", lambda func, queue_name, interval=None, **kw: registered.append(func))
    load_config_cron()
    call_command("run_periodic", "--once")

    assert registered == [only.func]
    assert ran == ["ran"]
