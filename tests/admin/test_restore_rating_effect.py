"""Staff take back a mistaken lift or override from the admin, where they see it: the ended action's page and the
post's page offer "Restore the rating's effect", with a reason."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from moderation.models import Action, ActionKind, EndReason, PageStanding, PostDistribution
from moderation.staff_actions import lift_action, override_action
from tests.factories import PageFactory, StaffFactory, UserFactory
from tests.scenarios import rated_post

pytestmark = pytest.mark.django_db

ACTIONS = "/admin/moderation/action/"
POSTS = "/admin/factcheck/post/"
LINK = "Restore the rating&#x27;s effect"
REASON = "My override was a mistake: the False rating's effect stands."


@pytest.fixture
def staff(ts_user):
    return ts_user


@pytest.fixture
def mistake(staff, factchecker):
    """Three posts of one page rated False (a repeat offender); staff override the first to full distribution with
    no label, then lift their override. Returns (the lifted override, the overridden fact-check action)."""
    page = PageFactory()
    page.owners.add(UserFactory())
    posts = [rated_post(rater=factchecker, page=page) for _ in range(3)]
    action = Action.objects.get(post=posts[0], ended_at__isnull=True)
    override = override_action(staff=staff, action_id=action.pk, feed_multiplier="1", label="", reason="Wrong post.")
    lift_action(actor=staff, action_id=override.pk, reason="Undoing my override.")
    return override, action


def text(response) -> str:
    return response.content.decode()


def test_the_lifted_override_offers_the_restore_and_it_restores_action_label_strike_and_standing(
    staff_client, staff, mistake
):
    override, overridden = mistake
    url = f"{ACTIONS}{override.pk}/restore_rating/"
    page = text(staff_client.get(f"{ACTIONS}{override.pk}/change/"))
    assert f'href="{url}"' in page and LINK in page
    overridden_page = text(staff_client.get(f"{ACTIONS}{overridden.pk}/change/"))
    assert f'href="{ACTIONS}{overridden.pk}/restore_rating/"' in overridden_page

    confirmation = text(staff_client.get(url))
    assert "as the enforcement policy gives it today: shown at 20%" in confirmation
    assert "a fact-check strike on" in confirmation and 'name="reason"' in confirmation
    without_reason = staff_client.post(url, {"reason": ""})
    assert without_reason.status_code == 200 and "A reason is required" in text(without_reason)
    assert not Action.objects.filter(post=override.post, ended_at__isnull=True).exists()

    done = staff_client.post(url, {"reason": REASON}, follow=True)

    assert "the False rating&#x27;s effect restored: shown at 20%" in text(done)
    restored = Action.objects.get(post=override.post, ended_at__isnull=True)
    assert (restored.kind, restored.created_by, restored.feed_multiplier) == (ActionKind.FACT_CHECK, staff,
                                                                              Decimal("0.2"))
    assert PostDistribution.objects.get(post=override.post).multiplier == Decimal("0.1")
    assert PageStanding.objects.get(page=override.post.page).is_repeat_offender
    # Nothing left to restore: the pages no longer offer it.
    assert LINK not in text(staff_client.get(f"{ACTIONS}{override.pk}/change/"))
    assert LINK not in text(staff_client.get(f"{POSTS}{override.post_id}/change/"))


def test_the_post_page_offers_the_restore_while_there_is_something_to_restore(staff_client, mistake, factchecker):
    override, _ = mistake
    url = f"{POSTS}{override.post_id}/restore_rating/"
    assert f'href="{url}"' in text(staff_client.get(f"{POSTS}{override.post_id}/change/"))
    untouched = rated_post(rater=factchecker)
    assert LINK not in text(staff_client.get(f"{POSTS}{untouched.pk}/change/"))

    staff_client.post(url, {"reason": REASON})

    assert Action.objects.get(post=override.post, ended_at__isnull=True).kind == ActionKind.FACT_CHECK


def test_a_second_restore_from_a_stale_page_is_refused_with_a_clear_message(staff_client, mistake):
    override, overridden = mistake
    first, stale = f"{ACTIONS}{override.pk}/restore_rating/", f"{ACTIONS}{overridden.pk}/restore_rating/"
    staff_client.get(first), staff_client.get(stale)  # two tabs, or two colleagues
    staff_client.post(first, {"reason": REASON})

    again = text(staff_client.post(stale, {"reason": REASON}, follow=True))

    assert "already stands on this post" in again and "Nothing was changed for it." in again
    assert Action.objects.filter(post=override.post, ended_at__isnull=True).count() == 1


def test_an_override_that_stands_is_ended_by_the_restore(staff_client, staff, factchecker):
    post = rated_post(rater=factchecker)
    action = Action.objects.get(post=post, ended_at__isnull=True)
    override = override_action(staff=staff, action_id=action.pk, feed_multiplier="1", label="", reason="Wrong post.")
    confirmation = text(staff_client.get(f"{ACTIONS}{override.pk}/restore_rating/"))
    assert "ends Staff override on post" in confirmation

    staff_client.post(f"{ACTIONS}{override.pk}/restore_rating/", {"reason": REASON})

    override.refresh_from_db()
    assert override.end_reason == EndReason.LIFTED


def test_other_roles_cannot_restore(client, mistake, factchecker):
    override, _ = mistake
    url = f"{ACTIONS}{override.pk}/restore_rating/"
    for user in (factchecker, UserFactory()):
        client.force_login(user)
        for response in (client.get(url), client.post(url, {"reason": REASON})):
            assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    other = Client()
    other.force_login(StaffFactory())  # is_staff, but not in the trust_safety group
    assert other.get(url).status_code == 403 and other.post(url, {"reason": REASON}).status_code == 403
    assert not Action.objects.filter(post=override.post, ended_at__isnull=True).exists()
