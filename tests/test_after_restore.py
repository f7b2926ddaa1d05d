"""After a restore: ids already handed out are not handed out again, and the decisions feed says so until they are.

pg_restore sets each sequence to its value in the dump, as `setval` does here: the ids handed out between the
backup and the failure (decisions a platform read past) come again, to other rows. `manage.py after_restore` moves
every id sequence past the restored rows; `GET /api/v1/decisions` refuses a cursor the feed never handed out
(409 `cursor_not_issued`) rather than answer `[]` until the feed catches up and then skip to it.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection

from audit.models import AuditEvent
from audit.services import record_event
from core.id_sequences import last_handed_out, sequence_of
from factcheck.models import Rating
from moderation.models import Action, Appeal, DistributionChange, StatementOfReasons
from tests.factories import DecisionFactory, PostFactory
from webhooks.models import Delivery, Event

pytestmark = pytest.mark.django_db

GAP = 1000  # the tests' own; the default (core.id_sequences.RESTORE_GAP) would leave later tests' ids past 10^9


def feed_sequence() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_serial_sequence('moderation_distributionchange', 'id')")
        return cursor.fetchone()[0]


def hand_out_lost_ids(count: int) -> int:
    """Ids the feed handed out after the backup (the decisions the platform read, lost with the database)."""
    with connection.cursor() as cursor:
        for _ in range(count):
            cursor.execute("SELECT nextval(%s)", [feed_sequence()])
        return cursor.fetchone()[0]


def restore_sequence_as_pg_restore_does() -> int:
    """The dump's `SELECT setval(seq, n)`, n being where the sequence stood at the backup: its highest row."""
    restored = DistributionChange.objects.order_by("-id").values_list("id", flat=True).first()
    with connection.cursor() as cursor:
        cursor.execute("SELECT setval(%s, %s)", [feed_sequence(), restored])
    return restored


def test_a_platform_cursor_past_the_restored_feed_is_refused_until_after_restore_then_sees_every_new_decision(
    platform_client, factchecker, capsys
):
    for post in PostFactory.create_batch(2):
        DecisionFactory(post=post, reviewer=factchecker)  # in the backup
    cursor = hand_out_lost_ids(2)  # the platform read two more decisions, then the database was lost
    restored = restore_sequence_as_pg_restore_does()

    refused = platform_client.get(f"/api/v1/decisions?after={cursor}")
    assert refused.status_code == 409
    error = refused.json()["error"]
    assert error["code"] == "cursor_not_issued"
    assert "manage.py after_restore" in error["message"] and "restored from a backup" in error["message"]
    assert error["details"] == {"after": cursor, "last_cursor_issued": restored}

    call_command("after_restore", "--gap", str(GAP))
    out = capsys.readouterr().out
    moved = f"moved    moderation_distributionchange: highest id {restored}, sequence {restored} -> {restored + GAP}"
    assert moved in out

    nothing_new = platform_client.get(f"/api/v1/decisions?after={cursor}").json()
    assert nothing_new == {"decisions": [], "next_cursor": str(cursor)}
    new = DecisionFactory(post=PostFactory(), reviewer=factchecker).post
    page = platform_client.get(f"/api/v1/decisions?after={cursor}").json()
    assert [d["post"] for d in page["decisions"]] == [new.external_id]  # not handed out under a cursor already read
    assert int(page["next_cursor"]) == restored + GAP + 1


def test_a_caught_up_cursor_is_never_refused_even_past_rolled_back_ids(platform_client, factchecker):
    DecisionFactory(post=PostFactory(), reviewer=factchecker)
    caught_up = platform_client.get("/api/v1/decisions").json()["next_cursor"]
    hand_out_lost_ids(3)  # drawn by transactions that rolled back: never rows, never cursors
    assert platform_client.get(f"/api/v1/decisions?after={caught_up}").json() == {
        "decisions": [], "next_cursor": caught_up,
    }


def test_after_restore_leaves_every_id_sequence_past_its_rows_and_a_second_run_moves_nothing(factchecker, capsys):
    DecisionFactory(post=PostFactory(), reviewer=factchecker)
    highest_audit = AuditEvent.objects.order_by("-id").values_list("id", flat=True).first()

    call_command("after_restore", "--gap", str(GAP))
    capsys.readouterr()
    with connection.cursor() as cursor:
        for model in (AuditEvent, DistributionChange, Appeal, Action, Rating, Event, Delivery, StatementOfReasons):
            highest = model.objects.order_by("-id").values_list("id", flat=True).first() or 0
            assert last_handed_out(cursor, sequence_of(cursor, model)) >= highest + GAP, model
    call_command("after_restore", "--gap", str(GAP))
    assert capsys.readouterr().out == (
        f"nothing to move: every sequence is {GAP:,} or more past its table's highest id\n"
    )

    event = record_event(actor=None, verb="test.after_restore", target=factchecker, reason="after a restore")
    assert event.pk > highest_audit + GAP
