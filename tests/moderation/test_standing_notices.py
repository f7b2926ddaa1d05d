"""A page's owners are told when it becomes or stops being a repeat offender, whatever did it: a third strike, a
rating changed, strikes ageing out, the repeat-offender policy changed. The page lost monetisation and every post
was shown half as often without a word to its owner (the portal showed it to whoever looked), and its recovery
was silent too.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.urls import reverse
from django.utils import timezone

from factcheck.models import Verdict
from moderation.models import Notification, NotificationKind, RepeatOffenderPolicy
from moderation.notice_delivery import email_notices
from moderation.policy import save_policy
from moderation.standing import age_out_strikes
from tests.factories import DecisionFactory, PageFactory, PostFactory, StaffFactory, UserFactory

WEEK = timedelta(days=7)


def standing_notices(owner) -> list[Notification]:
    return list(Notification.objects.filter(user=owner, kind=NotificationKind.STANDING).order_by("id"))


@pytest.fixture
def owned_page(db):
    owner = UserFactory()
    page = PageFactory(name="Health Truth Daily")
    page.owners.add(owner)
    return owner, page


def strike(factchecker, page, *, at=None, verdict=Verdict.FALSE):
    post = PostFactory(page=page)
    DecisionFactory(reviewer=factchecker, post=post, verdict=verdict, **({"decided_at": at} if at else {}))
    return post


@pytest.mark.django_db
def test_the_third_strike_tells_the_owner_the_page_is_a_repeat_offender_what_it_costs_and_until_when(
    factchecker, owned_page, client
):
    owner, page = owned_page
    start = timezone.now() - 3 * WEEK
    first = strike(factchecker, page, at=start)
    strike(factchecker, page, at=start + WEEK)
    assert standing_notices(owner) == []
    strike(factchecker, page)

    [notice] = standing_notices(owner)
    assert notice.post_id is None
    assert notice.subject == "Your page Health Truth Daily is now a repeat offender"
    first_strike_at = first.actions.get().created_at
    assert notice.body.startswith(
        "Your page Health Truth Daily has 3 fact-check strikes from the last 90 days, and a page with 3 or more is a "
        "repeat offender. From now on every post of the page is shown 50% less in news feeds (×0.5, on top of each "
        "post's own rating), and the page loses monetisation. Unless a new strike counts, this ends on "
        f"{(first_strike_at + timedelta(days=90)):%-d %b %Y} (UTC), when enough of the strikes have aged out."
    )
    # The owner reads it in the portal, and by e-mail, which links to their notices (it is about no one post).
    client.force_login(owner)
    assert notice.subject in client.get(reverse("moderation:portal")).content.decode()
    Notification.objects.filter(user=owner).exclude(pk=notice.pk).update(emailed_at=timezone.now())  # sent before
    email_notices(user_id=owner.pk)
    [message] = [m for m in mail.outbox if m.to == [owner.email]]
    assert message.subject == f"[Factdesk] {notice.subject}"
    assert message.body.startswith(notice.body)
    assert "/appeals/?notifications=open#notifications" in message.body


@pytest.mark.django_db
def test_strikes_ageing_out_tell_the_owner_the_page_is_no_longer_a_repeat_offender(factchecker, owned_page):
    owner, page = owned_page
    long_ago = timezone.now() - timedelta(days=89)
    for _ in range(3):
        strike(factchecker, page, at=long_ago)
    assert [n.subject for n in standing_notices(owner)] == ["Your page Health Truth Daily is now a repeat offender"]

    assert age_out_strikes(now=timezone.now() + timedelta(days=2)) == 1
    recovered = standing_notices(owner)[-1]
    assert recovered.subject == "Your page Health Truth Daily is no longer a repeat offender"
    assert recovered.body.startswith(
        "Your page Health Truth Daily has 0 fact-check strikes from the last 90 days, under the 3 that make a page a "
        "repeat offender. Its posts are no longer shown less for the page's standing (each post's own rating still "
        "applies), and monetisation is restored."
    )
    # The hourly pass that finds nothing to change tells nobody anything again.
    assert age_out_strikes(now=timezone.now() + timedelta(days=3)) == 0
    assert len(standing_notices(owner)) == 2


@pytest.mark.django_db
def test_a_rating_changed_that_takes_the_page_under_the_threshold_tells_the_owner(factchecker, owned_page):
    owner, page = owned_page
    posts = [strike(factchecker, page) for _ in range(3)]
    DecisionFactory(reviewer=factchecker, post=posts[0], verdict=Verdict.TRUE)
    assert [n.subject for n in standing_notices(owner)] == [
        "Your page Health Truth Daily is now a repeat offender",
        "Your page Health Truth Daily is no longer a repeat offender",
    ]


@pytest.mark.django_db
def test_a_policy_change_that_flips_pages_tells_their_owners_each_way(factchecker, owned_page):
    owner, page = owned_page
    for _ in range(2):
        strike(factchecker, page)
    other_owner = UserFactory()
    other = PageFactory(name="The London Ledger")
    other.owners.add(other_owner)
    for _ in range(3):
        strike(factchecker, other)
    assert standing_notices(owner) == [] and len(standing_notices(other_owner)) == 1

    policy = RepeatOffenderPolicy.current()
    policy.strike_threshold = 2
    save_policy(row=policy, changed_by=StaffFactory(), reason="Two strikes are enough now.")
    age_out_strikes()  # what saving the policy enqueues, run here
    assert [n.subject for n in standing_notices(owner)] == ["Your page Health Truth Daily is now a repeat offender"]
    assert "a page with 2 or more is a repeat offender" in standing_notices(owner)[0].body
    assert len(standing_notices(other_owner)) == 1  # still one: nothing changed for The London Ledger

    policy.strike_threshold = 4
    save_policy(row=policy, changed_by=StaffFactory(), reason="Back, and one more.")
    age_out_strikes()
    assert standing_notices(owner)[-1].subject == "Your page Health Truth Daily is no longer a repeat offender"
    assert standing_notices(other_owner)[-1].subject == "Your page The London Ledger is no longer a repeat offender"


@pytest.mark.django_db
def test_a_page_without_owners_flips_and_tells_nobody(factchecker):
    page = PageFactory()
    for _ in range(3):
        strike(factchecker, page)
    assert not Notification.objects.filter(kind=NotificationKind.STANDING).exists()


@pytest.mark.django_db
def test_a_policy_change_of_the_page_multiplier_tells_the_owners_of_repeat_offenders_what_it_costs_now(
    factchecker, owned_page
):
    # A review: a multiplier of 1 changed to 0.2 showed every post of a repeat offender 80% less without a word.
    owner, page = owned_page
    for _ in range(3):
        strike(factchecker, page)
    policy = RepeatOffenderPolicy.current()
    policy.page_multiplier = "0.2"
    save_policy(row=policy, changed_by=StaffFactory(), reason="Repeat offenders lose more reach.")
    age_out_strikes()
    notice = standing_notices(owner)[-1]
    assert notice.subject == "What your page Health Truth Daily's standing costs has changed"
    assert notice.body.startswith(
        "Your page Health Truth Daily is still a repeat offender (3 fact-check strikes from the last 90 days; 3 or "
        "more make one), and trust and safety changed what that costs: every post of the page is now shown 80% less "
        "in news feeds (×0.2, on top of each post's own rating), where it was shown 50% less (×0.5). The page still "
        "has no monetisation."
    )
    assert len(standing_notices(owner)) == 2
    age_out_strikes()  # nothing changed since: nobody is told again
    assert len(standing_notices(owner)) == 2


@pytest.mark.django_db
def test_with_a_page_multiplier_of_1_the_notices_speak_of_monetisation_alone(factchecker, owned_page):
    owner, page = owned_page
    policy = RepeatOffenderPolicy.current()
    policy.page_multiplier = "1"
    save_policy(row=policy, changed_by=StaffFactory(), reason="Monetisation only.")
    posts = [strike(factchecker, page) for _ in range(3)]
    became = standing_notices(owner)[-1]
    assert "From now on the page loses monetisation." in became.body
    assert "news feeds" not in became.body.split("\n\n")[0]
    DecisionFactory(reviewer=factchecker, post=posts[0], verdict=Verdict.TRUE)
    recovered = standing_notices(owner)[-1]
    assert recovered.subject == "Your page Health Truth Daily is no longer a repeat offender"
    assert "3 that make a page a repeat offender. Monetisation is restored." in recovered.body
    assert "shown less" not in recovered.body
