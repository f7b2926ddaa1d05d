"""Times told to a person in a message (core.formatting.clock): their own time zone, named, and the day when it is
not today, so that a draft typed days ago does not read as this morning's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.utils import timezone

from core.formatting import clock

NOW = datetime(2026, 12, 6, 22, 30, tzinfo=UTC)


@pytest.fixture
def paris_now(monkeypatch):
    monkeypatch.setattr(timezone, "now", lambda: NOW)
    with timezone.override("Europe/Paris"):
        yield


@pytest.mark.parametrize(("moment", "told"), [
    (datetime(2026, 12, 6, 21, 5, tzinfo=UTC), "22:05 (Europe/Paris)"),  # today in Paris
    (datetime(2026, 12, 6, 23, 5, tzinfo=UTC), "7 Dec, 00:05 (Europe/Paris)"),  # tomorrow there already
    (datetime(2026, 12, 3, 16, 24, tzinfo=UTC), "3 Dec, 17:24 (Europe/Paris)"),
    (datetime(2025, 12, 31, 12, 0, tzinfo=UTC), "31 Dec 2025, 13:00 (Europe/Paris)"),
])
def test_a_moment_is_told_in_the_readers_zone_with_its_day_unless_today(paris_now, moment, told):
    assert clock(moment) == told
