"""An appeal in review by someone who can no longer decide it (an audit reproduced it: staff moved the reviewer to
another organisation, or changed their role, in the admin) is nobody's: a colleague takes it over or decides it at
once, as from a reviewer who was deactivated, instead of "only they can decide it now" until its 24-hour target
passed."""

from __future__ import annotations

import html as html_lib

import pytest

from moderation.appeals import file_appeal, start_review
from moderation.models import Appeal, AppealStatus
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.admin_forms import save_user
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

HELD = "is reviewing this appeal; only they can decide it now"


@pytest.fixture
def verifact():
    return OrganisationFactory(name="Verifact")


@pytest.fixture
def olivia(db):
    return UserFactory(username="olivia")


@pytest.fixture
def bob(verifact):
    return FactCheckerFactory(username="bob", organisation=verifact)


@pytest.fixture
def vera(verifact):
    return FactCheckerFactory(username="vera", organisation=verifact)


@pytest.fixture
def dispute(verifact, olivia, bob):
    """olivia's dispute of alice's rating, which bob took into review."""
    alice = FactCheckerFactory(username="alice", organisation=verifact)
    appeal = scenarios.rated_post_with_open_dispute(owner=olivia, rater=alice)
    start_review(appeal_id=appeal.pk, reviewer=bob)
    return appeal


def text(response) -> str:
    return html_lib.unescape(response.content.decode())


def appeal_of(appeal: Appeal) -> Appeal:
    return Appeal.objects.select_related("reviewer").get(pk=appeal.pk)


def test_a_colleague_takes_over_an_appeal_whose_reviewer_was_moved_to_another_organisation(
    admin_client, login, dispute, bob, vera
):
    faktenwerk = OrganisationFactory(name="Faktenwerk")
    save_user(admin_client, bob, **{"membership-0-organisation": str(faktenwerk.pk)})
    client = login(vera)
    page = text(client.get(f"/queue/appeals/{dispute.pk}/"))
    assert HELD not in page
    assert "bob took this appeal into review but can no longer decide it, so it is nobody's now" in page

    response = client.post(f"/queue/appeals/{dispute.pk}/review/", {"version": appeal_of(dispute).version})
    assert response.status_code == 302
    assert appeal_of(dispute).reviewer == vera
    response = client.post(f"/queue/appeals/{dispute.pk}/", {
        "outcome": "upheld", "reason": "The quote is not in the speech.", "version": appeal_of(dispute).version})
    assert response.status_code == 302
    assert appeal_of(dispute).status == AppealStatus.UPHELD


def test_an_appeal_held_by_a_reviewer_who_is_no_longer_a_fact_checker_is_decided_by_a_colleague(
    admin_client, login, dispute, bob, vera
):
    # The admin refuses a page owner with an organisation now (factcheck.members.check_place): it goes with the role.
    save_user(admin_client, bob, role="page_owner", **{"membership-0-DELETE": "on"})
    response = login(vera).post(f"/queue/appeals/{dispute.pk}/", {
        "outcome": "upheld", "reason": "The quote is not in the speech.", "version": appeal_of(dispute).version})
    assert response.status_code == 302, text(response)
    decided = appeal_of(dispute)
    assert (decided.status, decided.reviewer) == (AppealStatus.UPHELD, vera)


def test_a_removal_appeal_held_by_someone_no_longer_staff_is_decided_by_another_staff_member(
    admin_client, login, olivia
):
    kim, sam = StaffFactory(username="kim"), StaffFactory(username="sam")
    post = PostFactory()
    post.page.owners.add(olivia)
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="harassment", reason="Names a private person.")
    appeal = file_appeal(owner=olivia, post_id=post.pk, kind="removal", statement="It names a minister.")
    start_review(appeal_id=appeal.pk, reviewer=kim)
    save_user(admin_client, kim, role="page_owner", is_staff=None)

    client = login(sam)
    assert HELD not in text(client.get(f"/staff/appeals/{appeal.pk}/"))
    response = client.post(f"/staff/appeals/{appeal.pk}/", {
        "outcome": "reversed", "reason": "A minister is a public figure.", "version": appeal_of(appeal).version})
    assert response.status_code == 302, text(response)
    decided = appeal_of(appeal)
    assert (decided.status, decided.reviewer) == (AppealStatus.REVERSED, sam)


def test_an_appeal_in_review_by_a_colleague_who_may_still_decide_it_stays_theirs(login, dispute, vera):
    client = login(vera)
    assert "bob " + HELD in text(client.get(f"/queue/appeals/{dispute.pk}/"))
    response = client.post(f"/queue/appeals/{dispute.pk}/review/", {"version": appeal_of(dispute).version})
    assert response.status_code == 409 and "bob is already reviewing this appeal" in text(response)
