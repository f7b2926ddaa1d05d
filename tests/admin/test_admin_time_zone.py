"""The admin tells times in the staff member's own time zone, its lists as its change pages (config/formats)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.factories import AppealFactory

pytestmark = pytest.mark.django_db


def test_a_list_column_and_the_change_page_tell_the_same_time_in_the_readers_zone(ts_user, staff_client):
    # In Tokyo, the appeals list said "03:14 UTC" and the appeal's change page "12:14 JST".
    ts_user.time_zone = "Asia/Tokyo"
    ts_user.save(update_fields=["time_zone"])
    client = staff_client
    appeal = AppealFactory()
    with timezone.override("Asia/Tokyo"):
        local = timezone.localtime(appeal.created_at)
    told = f"{local.day} {local:%b %Y, %H:%M} JST"
    assert told in client.get("/admin/moderation/appeal/").content.decode()
    assert told in client.get(f"/admin/moderation/appeal/{appeal.pk}/change/").content.decode()
