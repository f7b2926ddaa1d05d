"""The audit log is visible and filterable, and nobody, superusers included, changes it in the admin."""

from __future__ import annotations

import pytest

from accounts.models import User
from audit.models import AuditEvent, AuditVerb
from tests.factories import PASSWORD

LOG = "/admin/audit/auditevent/"


@pytest.fixture
def superuser_client(client, db):
    User.objects.create_superuser(username="root", email="root@example.org", password=PASSWORD)
    assert client.login(username="root", password=PASSWORD)
    return client


def test_a_superuser_cannot_add_change_or_delete_an_audit_event(populate, superuser_client):
    populate(6)
    event = AuditEvent.objects.first()
    before = AuditEvent.objects.count()
    assert superuser_client.get(f"{LOG}add/").status_code == 403
    assert superuser_client.post(f"{LOG}add/", {"verb": "policy.changed", "actor_label": "x"}).status_code == 403
    change = superuser_client.get(f"{LOG}{event.pk}/change/")
    assert change.status_code == 200 and 'name="reason"' not in change.content.decode()
    assert superuser_client.post(f"{LOG}{event.pk}/change/", {"reason": "edited"}).status_code == 403
    assert superuser_client.post(f"{LOG}{event.pk}/delete/", {"post": "yes"}).status_code == 403
    listing = superuser_client.get(LOG).content.decode()
    assert "delete_selected" not in listing and 'name="action"' not in listing
    bulk = superuser_client.post(LOG, {"action": "delete_selected", "_selected_action": [event.pk], "post": "yes"})
    assert bulk.status_code in (200, 302)
    assert AuditEvent.objects.count() == before
    event.refresh_from_db()
    assert event.reason != "edited"


def test_staff_filter_the_log_by_verb_target_type_post_and_search_by_post_external_id(populate, staff_client):
    busy = populate(12)
    post = busy.posts[0]
    removals = AuditEvent.objects.filter(verb=AuditVerb.ACTION_CREATED, target_type="moderation.action")
    body = staff_client.get(
        LOG, {"verb__exact": AuditVerb.ACTION_CREATED, "target_type": "moderation.action"}
    ).content.decode()
    assert removals.exists()
    assert all(f"{LOG}{e.pk}/change/" in body for e in removals)
    assert f"{LOG}{AuditEvent.objects.exclude(verb=AuditVerb.ACTION_CREATED).first().pk}/change/" not in body

    own = set(AuditEvent.objects.filter(post_id=post.pk).values_list("pk", flat=True))
    for params in ({"post_id": post.pk}, {"q": post.external_id}):
        body = staff_client.get(LOG, params).content.decode()
        assert all(f"{LOG}{pk}/change/" in body for pk in own)
        other = AuditEvent.objects.exclude(post_id=post.pk).first()
        assert f"{LOG}{other.pk}/change/" not in body

    target = AuditEvent.objects.filter(target_type="moderation.action").first()
    body = staff_client.get(LOG, {"q": f"moderation.action#{target.target_id}"}).content.decode()
    assert f"{LOG}{target.pk}/change/" in body
