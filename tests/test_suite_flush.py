"""The suite's own flush (tests/history_flush.py): what a transactional test leaves for the test after it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from factcheck.members import TRUST_SAFETY_GROUP
from moderation.models import EnforcementPolicy, RepeatOffenderPolicy


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_transactional_tests_flush_leaves_the_rows_the_migrations_wrote():
    """Whatever runs next (pytest-xdist hands a crashed worker's tests out after the transactional ones) finds the
    group and the policies the migrations made, as a test inside a transaction expects."""
    policies = sorted(EnforcementPolicy.objects.values_list("verdict", "feed_multiplier"))
    Group.objects.create(name="left by the test")

    call_command("flush", verbosity=0, interactive=False, inhibit_post_migrate=True)

    assert list(Group.objects.values_list("name", flat=True)) == [TRUST_SAFETY_GROUP]
    assert Group.objects.get(name=TRUST_SAFETY_GROUP).permissions.exists()
    assert sorted(EnforcementPolicy.objects.values_list("verdict", "feed_multiplier")) == policies != []
    assert RepeatOffenderPolicy.objects.exists()
