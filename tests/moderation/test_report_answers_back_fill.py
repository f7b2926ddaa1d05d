"""Migration moderation 0022: every flag decided before answers were kept gets one, from its outcome and decision
time as they stand, in batches; open flags get none; and the figures then count those decisions on their day."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from factcheck.models import Flag
from moderation.models import ReportAnswer
from reports.dsa import report_lines
from tests.factories import FlagFactory

BEFORE = ("moderation", "0020_end_reason_unlinked")
AFTER = ("moderation", "0022_report_answers_back_filled")
DECIDED_AT = datetime(2025, 3, 4, 15, tzinfo=UTC)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_flags_decided_before_get_their_answer_and_open_ones_none(monkeypatch):
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    decided = [FlagFactory(category=category, status="decided", outcome=outcome, decided_at=DECIDED_AT)
               for category, outcome in (("hate", "no_violation"), ("violence", "removed"),
                                         ("misinformation", "rated"))]
    still_open = FlagFactory(category="harassment")
    monkeypatch.setattr(import_module("moderation.migrations.0022_report_answers_back_filled"), "BATCH", 2)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    # Every app forward (AFTER's fill among them): the figures below read today's models, which later migrations
    # of moderation made (0023's Action.restored), and a failure here must not leave the worker's database behind.
    executor.migrate(executor.loader.graph.leaf_nodes())

    answers = {(a.flag_id, a.outcome, a.answered_at, a.actor_id, a.replaces_id) for a in ReportAnswer.objects.all()}
    assert answers == {(flag.pk, flag.outcome, DECIDED_AT, None, None) for flag in decided}
    assert not Flag.objects.get(pk=still_open.pk).answers.exists()
    counted = {(line.section, line.item): line.count for line in report_lines(start=DECIDED_AT.date(),
                                                                               end=DECIDED_AT.date())
               if line.section == "notices_by_outcome" and line.count}
    assert counted == {("notices_by_outcome", "hate:no_violation"): 1, ("notices_by_outcome", "violence:removed"): 1,
                       ("notices_by_outcome", "misinformation:rated"): 1}
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # the later migrations back, for the tests after this one
