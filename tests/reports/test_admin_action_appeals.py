"""An action's admin page lists the appeals against it, on its own post: the history of tests/reports has a copy
(copy1) whose matched rating names its claim's rating, which the claim's owner disputed."""

from __future__ import annotations

import pytest

from moderation.models import Action, ActionKind

pytestmark = pytest.mark.django_db


def test_a_copys_action_page_lists_no_appeal_of_its_claims_post(history, staff_client):
    matched = Action.objects.get(post=history.posts["copy1"], kind=ActionKind.MATCHED_RATING)
    dispute = history.appeals["claim1"]
    assert dispute.rating_id == matched.rating_id  # the claim's rating, which the copy's action names
    body = staff_client.get(f"/admin/moderation/action/{matched.pk}/change/").content.decode()
    assert f"/admin/moderation/appeal/{dispute.pk}/change/" not in body
    claim_action = Action.objects.filter(post=history.posts["claim1"], rating_id=matched.rating_id).earliest("id")
    body = staff_client.get(f"/admin/moderation/action/{claim_action.pk}/change/").content.decode()
    assert f"/admin/moderation/appeal/{dispute.pk}/change/" in body
