"""Staff act from the admin: every decision asks for a reason, goes through its domain function and is audited."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from audit.models import AuditEvent, AuditVerb
from core.admin_decisions import BULK_CAP
from factcheck.models import Page, QueueState
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import Action, ActionKind, EndReason, Notification, PostDistribution
from moderation.staff_actions import remove_post
from tests.factories import PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

POSTS = "/admin/factcheck/post/"
PAGES = "/admin/factcheck/page/"
ACTIONS = "/admin/moderation/action/"


@pytest.fixture
def staff(ts_user):
    """The trust-and-safety member logged in as staff_client (tests/admin/conftest.py)."""
    return ts_user


def fact_check_action(factchecker, *, verdict: str = "false") -> Action:
    post = PostFactory()
    rating = record_rating(claim_if_unclaimed=True, reviewer=factchecker, post_id=post.pk, verdict=verdict,
                           rationale="No such cure.", sources=["https://who.example/facts"])
    apply_rating(rating_id=rating.pk)
    return Action.objects.get(post=post, ended_at__isnull=True)


def bulk(client: Client, changelist: str, action: str, rows, **data):
    selected = [row.pk for row in rows]
    return client.post(changelist, {"action": action, "_selected_action": selected, **data}, follow=True)


def text(response) -> str:
    return response.content.decode()


# Removal

def test_staff_remove_a_post_from_its_change_page_with_a_ground_and_a_reason(staff_client, staff):
    post = PostFactory()
    assert f'href="{POSTS}{post.pk}/remove/"' in text(staff_client.get(f"{POSTS}{post.pk}/change/"))
    form = staff_client.get(f"{POSTS}{post.pk}/remove/")
    assert form.status_code == 200
    assert '<label for="id_ground">Ground' in text(form) and '<label for="id_reason">Reason' in text(form)
    assert post.external_id in text(form)

    response = staff_client.post(f"{POSTS}{post.pk}/remove/", {"ground": "violence", "reason": "Calls for an attack."})

    assert response.status_code == 302 and response["Location"] == f"{POSTS}{post.pk}/change/"
    action = Action.objects.get(post=post, kind=ActionKind.REMOVAL)
    assert (action.ground, action.reason, action.created_by) == ("violence", "Calls for an attack.", staff)
    assert PostDistribution.objects.get(post=post).removed is True
    event = AuditEvent.objects.get(verb=AuditVerb.ACTION_CREATED, post_id=post.pk)
    assert (event.actor, event.reason) == (staff, "Calls for an attack.")
    page = staff_client.get(response["Location"])
    assert "removed (violence)" in text(page)
    assert "Restore the post" in text(page)


@pytest.mark.parametrize("data", [{"ground": "hate", "reason": "   "}, {"ground": "", "reason": "Slurs."},
                                  {"ground": "spam", "reason": "Slurs."}])
def test_a_removal_without_a_reason_or_a_valid_ground_is_refused_and_nothing_changes(staff_client, data):
    post = PostFactory()
    response = staff_client.post(f"{POSTS}{post.pk}/remove/", data)
    assert response.status_code == 200
    assert "Nothing has been changed" in text(response)
    assert not Action.objects.filter(post=post).exists()
    assert not AuditEvent.objects.filter(verb=AuditVerb.ACTION_CREATED).exists()


def test_a_removal_the_domain_refuses_shows_its_message_and_changes_nothing(staff_client, staff):
    post = PostFactory()
    remove_post(staff=staff, post_id=post.pk, ground="hate", reason="Slurs.")
    response = staff_client.post(f"{POSTS}{post.pk}/remove/", {"ground": "violence", "reason": "Again."}, follow=True)
    assert "This post is already removed." in text(response)
    assert Action.objects.filter(post=post).count() == 1


def test_bulk_removal_lists_the_posts_before_removing_each_with_the_ground_and_reason(staff_client, staff):
    posts = PostFactory.create_batch(3)
    confirmation = bulk(staff_client, POSTS, "remove", posts)
    assert confirmation.status_code == 200
    assert "3 posts will change" in text(confirmation)
    assert all(post.external_id in text(confirmation) for post in posts)
    assert not Action.objects.exists()

    done = bulk(staff_client, POSTS, "remove", posts, confirm="yes", ground="harassment", reason="Targeted abuse.")

    assert "done for 3 of 3" in text(done)
    removals = Action.objects.filter(kind=ActionKind.REMOVAL, ground="harassment", reason="Targeted abuse.")
    assert sorted(removals.values_list("post_id", flat=True)) == sorted(p.pk for p in posts)
    assert AuditEvent.objects.filter(verb=AuditVerb.ACTION_CREATED, actor=staff, reason="Targeted abuse.").count() == 3


def test_a_bulk_removal_without_a_reason_shows_the_form_again_and_removes_nothing(staff_client):
    posts = PostFactory.create_batch(2)
    response = bulk(staff_client, POSTS, "remove", posts, confirm="yes", ground="hate", reason="")
    assert "A reason is required" in text(response)
    assert not Action.objects.exists()


def test_a_bulk_removal_reports_each_refused_row_and_applies_the_others(staff_client, staff):
    removed, fresh = PostFactory(), PostFactory()
    remove_post(staff=staff, post_id=removed.pk, ground="hate", reason="Slurs.")
    response = bulk(staff_client, POSTS, "remove", [removed, fresh], confirm="yes", ground="violence",
                    reason="Threats.")
    refusal = f"{removed.external_id} on {removed.page.name}: This post is already removed. Nothing was changed for it."
    assert refusal in text(response)
    assert "done for 1 of 2" in text(response)
    assert Action.objects.filter(post=removed).count() == 1
    assert Action.objects.get(post=fresh).reason == "Threats."


def test_bulk_actions_refuse_more_rows_than_the_cap_and_change_nothing(staff_client):
    page = PageFactory()
    posts = PostFactory.create_batch(BULK_CAP + 1, page=page)
    response = bulk(staff_client, POSTS, "remove", posts, confirm="yes", ground="hate", reason="Slurs.")
    assert f"At most {BULK_CAP} rows per bulk action" in text(response)
    assert not Action.objects.exists()


def test_the_confirmation_page_reads_its_rows_in_a_fixed_number_of_queries(staff_client, django_assert_max_num_queries):
    posts = PostFactory.create_batch(40)
    with django_assert_max_num_queries(20):
        response = bulk(staff_client, POSTS, "remove", posts)
    assert "40 posts will change" in text(response)


# Restore, lift, override

def test_staff_restore_a_removed_post_from_the_action_page_with_a_reason(staff_client, staff):
    post = PostFactory()
    removal = remove_post(staff=staff, post_id=post.pk, ground="hate", reason="Slurs.")
    assert f'href="{ACTIONS}{removal.pk}/lift/"' in text(staff_client.get(f"{ACTIONS}{removal.pk}/change/"))

    refused = staff_client.post(f"{ACTIONS}{removal.pk}/lift/", {"reason": ""})
    assert refused.status_code == 200 and "A reason is required" in text(refused)
    assert Action.objects.get(pk=removal.pk).ended_at is None

    response = staff_client.post(f"{ACTIONS}{removal.pk}/lift/", {"reason": "It quoted a news report."}, follow=True)

    assert "removal lifted, post restored" in text(response)
    removal.refresh_from_db()
    assert (removal.end_reason, removal.ended_by) == (EndReason.LIFTED, staff)
    assert PostDistribution.objects.get(post=post).removed is False
    event = AuditEvent.objects.get(verb=AuditVerb.ACTION_ENDED, target_id=str(removal.pk))
    assert (event.actor, event.reason) == (staff, "It quoted a news report.")


def test_staff_override_a_fact_check_action_with_a_new_multiplier_and_label(staff_client, staff, factchecker):
    action = fact_check_action(factchecker)
    assert f'href="{ACTIONS}{action.pk}/override/"' in text(staff_client.get(f"{ACTIONS}{action.pk}/change/"))

    too_high = staff_client.post(f"{ACTIONS}{action.pk}/override/",
                                 {"feed_multiplier": "1.5", "label": "", "reason": "Too harsh."})
    assert "Ensure this value is less than or equal to 1" in text(too_high)
    assert Action.objects.get(pk=action.pk).ended_at is None

    staff_client.post(f"{ACTIONS}{action.pk}/override/",
                      {"feed_multiplier": "0.6", "label": "Disputed claim.", "reason": "Satire account."})

    override = Action.objects.get(post=action.post, kind=ActionKind.OVERRIDE)
    assert (override.feed_multiplier, override.label, override.created_by) == (Decimal("0.6"), "Disputed claim.", staff)
    assert Action.objects.get(pk=action.pk).end_reason == EndReason.OVERRIDDEN
    distribution = PostDistribution.objects.get(post=action.post)
    assert (distribution.multiplier, distribution.labels) == (Decimal("0.6"), ["Disputed claim."])
    assert AuditEvent.objects.filter(verb=AuditVerb.ACTION_CREATED, actor=staff, reason="Satire account.").exists()


def test_bulk_lift_ends_each_active_action_and_reports_the_ended_ones(staff_client, staff, factchecker):
    active, ended = fact_check_action(factchecker), fact_check_action(factchecker)
    staff_client.post(f"{ACTIONS}{ended.pk}/lift/", {"reason": "First lift."})

    response = bulk(staff_client, ACTIONS, "lift", [active, ended], confirm="yes", reason="Policy review.")

    assert "has already ended: lifted by staff (" in text(response)
    assert "done for 1 of 2" in text(response)
    active.refresh_from_db()
    assert (active.end_reason, active.ended_by) == (EndReason.LIFTED, staff)
    assert AuditEvent.objects.filter(verb=AuditVerb.ACTION_ENDED, reason="Policy review.").count() == 1


def test_bulk_override_lists_the_actions_then_overrides_each(staff_client, staff, factchecker):
    actions = [fact_check_action(factchecker), fact_check_action(factchecker, verdict="altered")]
    confirmation = bulk(staff_client, ACTIONS, "override", actions)
    assert "2 actions will change" in text(confirmation)
    assert '<label for="id_feed_multiplier">New feed multiplier' in text(confirmation)

    bulk(staff_client, ACTIONS, "override", actions, confirm="yes", feed_multiplier="0.8", label="", reason="Appeal.")

    overrides = Action.objects.filter(kind=ActionKind.OVERRIDE, feed_multiplier=Decimal("0.8"), created_by=staff)
    assert overrides.count() == 2


# Politicians' pages

def test_staff_mark_a_politicians_page_from_its_change_page_and_its_posts_leave_the_queue(staff_client, staff):
    post = PostFactory()
    page = post.page
    assert f'href="{PAGES}{page.pk}/mark_politician/"' in text(staff_client.get(f"{PAGES}{page.pk}/change/"))

    refused = staff_client.post(f"{PAGES}{page.pk}/mark_politician/", {"reason": ""})
    assert "A reason is required" in text(refused)
    assert Page.objects.get(pk=page.pk).is_politician is False

    response = staff_client.post(f"{PAGES}{page.pk}/mark_politician/", {"reason": "Elected member of parliament."},
                                 follow=True)

    assert "1 post(s) changed queue state" in text(response)
    assert f"{page.name} ({page.external_id}), now a politician&#x27;s page: marked; 1 post(s)" in text(response)
    assert Page.objects.get(pk=page.pk).is_politician is True
    post.refresh_from_db()
    assert post.queue_state == QueueState.NOT_ELIGIBLE
    event = AuditEvent.objects.get(verb=AuditVerb.PAGE_CHANGED)
    assert (event.actor, event.reason, event.data["is_politician"]) == (staff, "Elected member of parliament.", True)


def test_bulk_unmarking_politicians_pages_returns_their_flagged_posts_to_the_queue(staff_client, staff):
    posts = [PostFactory(page=PageFactory(is_politician=True), queue_state=QueueState.NOT_ELIGIBLE) for _ in range(2)]
    confirmation = bulk(staff_client, PAGES, "unmark_politician", [p.page for p in posts])
    assert "2 pages will change" in text(confirmation)

    bulk(staff_client, PAGES, "unmark_politician", [p.page for p in posts], confirm="yes", reason="Left office.")

    assert not Page.objects.filter(is_politician=True).exists()
    assert {p.queue_state for p in type(posts[0]).objects.filter(pk__in=[p.pk for p in posts])} == {QueueState.QUEUED}
    assert AuditEvent.objects.filter(verb=AuditVerb.PAGE_CHANGED, actor=staff, reason="Left office.").count() == 2


# Appeals

def test_removal_appeals_link_from_the_admin_to_the_staff_desk(staff_client, staff):
    owner = UserFactory()
    post = PostFactory()
    post.page.owners.add(owner)
    remove_post(staff=staff, post_id=post.pk, ground="hate", reason="Slurs.")
    appeal = file_appeal(owner=owner, post_id=post.pk, kind="removal", statement="It was a quotation.")
    desk = f'href="/staff/appeals/{appeal.pk}/"'
    assert desk in text(staff_client.get("/admin/moderation/appeal/"))
    change = staff_client.get(f"/admin/moderation/appeal/{appeal.pk}/change/")
    assert desk in text(change) and "Decide on the staff desk" in text(change)


# Who may act, and how

DECISION_URLS = [
    ("post", "remove", {"ground": "hate", "reason": "x"}),
    ("action", "lift", {"reason": "x"}),
    ("action", "override", {"feed_multiplier": "1", "label": "", "reason": "x"}),
    ("action", "restore_rating", {"reason": "x"}),
    ("post", "restore_rating", {"reason": "x"}),
    ("page", "mark_politician", {"reason": "x"}),
]


@pytest.fixture
def targets(staff, factchecker):
    action = fact_check_action(factchecker)
    return {"post": f"{POSTS}{action.post_id}", "action": f"{ACTIONS}{action.pk}",
            "page": f"{PAGES}{action.post.page_id}"}


@pytest.mark.parametrize("model, slug, data", DECISION_URLS)
def test_factcheckers_and_page_owners_are_sent_to_the_admin_login(client, factchecker, targets, model, slug, data):
    url = f"{targets[model]}/{slug}/"
    for user in (factchecker, UserFactory()):
        client.force_login(user)
        for response in (client.get(url), client.post(url, data)):
            assert response.status_code == 302 and response["Location"].startswith("/admin/login/")
    assert not Action.objects.filter(kind__in=[ActionKind.REMOVAL, ActionKind.OVERRIDE]).exists()
    assert not Action.objects.filter(ended_at__isnull=False).exists()
    assert not Page.objects.filter(is_politician=True).exists()


@pytest.mark.parametrize("model, slug, data", DECISION_URLS)
def test_staff_accounts_without_the_decision_permission_are_refused(client, targets, model, slug, data):
    client.force_login(StaffFactory())  # is_staff, but not in the trust_safety group
    url = f"{targets[model]}/{slug}/"
    assert client.get(url).status_code == 403
    assert client.post(url, data).status_code == 403
    assert not Action.objects.filter(ended_at__isnull=False).exists()


def test_changelist_offers_the_decisions_only_to_those_who_may_take_them(staff_client):
    PostFactory()
    assert '<option value="remove">Remove posts</option>' in text(staff_client.get(POSTS))
    reader = StaffFactory()
    reader.user_permissions.add(Permission.objects.get(codename="view_post"))
    other = Client()
    other.force_login(reader)
    listing = other.get(POSTS)
    assert listing.status_code == 200 and 'value="remove"' not in text(listing)


@pytest.mark.parametrize("model, slug, data", DECISION_URLS)
def test_decisions_are_refused_without_a_csrf_token(staff, targets, model, slug, data):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    assert client.post(f"{targets[model]}/{slug}/", data).status_code == 403
    changelist = targets[model].rsplit("/", 1)[0] + "/"
    bulk_post = client.post(changelist, {"action": slug, "_selected_action": ["1"], "confirm": "yes", **data})
    assert bulk_post.status_code == 403
    assert not Action.objects.filter(kind__in=[ActionKind.REMOVAL, ActionKind.OVERRIDE]).exists()
    assert not Action.objects.filter(ended_at__isnull=False).exists()
    assert not Page.objects.filter(is_politician=True).exists()


@pytest.mark.parametrize("selected", ["abc", "1.5", "7\x00", ""])
def test_a_bulk_action_whose_selection_is_no_id_changes_nothing_and_says_so(staff_client, selected):
    """A forged or mangled selection (Django filters the list by it) was a 500."""
    posts = [PostFactory(), PostFactory()]
    response = bulk(staff_client, POSTS, "remove", [], _selected_action=[posts[0].pk, selected], confirm="yes",
                    ground="hate", reason="Hate speech.")
    assert response.status_code == 200
    assert "is not the id of a post: nothing was changed." in text(response)
    assert not Action.objects.exists()


def test_a_bulk_action_on_rows_that_no_longer_exist_says_so_and_offers_nothing_to_confirm(staff_client):
    post = PostFactory()
    response = bulk(staff_client, POSTS, "remove", [], _selected_action=[post.pk + 1000])
    assert "None of the selected rows exists: nothing was changed." in text(response)
    assert "0 posts will change" not in text(response)


@pytest.mark.parametrize("reason", ["\x1b[2J mayor", "elected\x07"])
def test_a_reason_with_control_characters_is_refused_next_to_the_field_and_changes_nothing(staff_client, reason):
    """The escape sequence reached the audit log and its CSV (marking a page, revoking a token: the same form)."""
    page = PageFactory()
    response = staff_client.post(f"{PAGES}{page.pk}/mark_politician/", {"reason": reason})
    assert response.status_code == 200
    assert "Take out the control characters" in text(response)
    assert Page.objects.get(pk=page.pk).is_politician is False
    assert not AuditEvent.objects.filter(verb=AuditVerb.PAGE_CHANGED).exists()


def test_an_override_label_with_contact_details_is_refused_and_a_right_to_left_one_is_isolated_in_the_notice(
    staff_client, staff, factchecker
):
    """A label is shown with the post to everyone and quoted in its owner's notice: no phone numbers or e-mail
    addresses in it (as every text the owner reads), and one that turns the text round stays within its quotes."""
    action = fact_check_action(factchecker)
    owner = UserFactory()
    action.post.page.owners.add(owner)

    refused = staff_client.post(f"{ACTIONS}{action.pk}/override/", follow=True, data={
        "feed_multiplier": "0.3", "label": "Call +44 20 7946 0958 or me@x.example", "reason": "Adjusted."})
    assert "leave out e-mail addresses and phone numbers" in text(refused)
    assert Action.objects.get(pk=action.pk).ended_at is None

    staff_client.post(f"{ACTIONS}{action.pk}/override/", {
        "feed_multiplier": "0.3", "label": "\u202eDisputed claim", "reason": "Adjusted."})
    notice = Notification.objects.filter(user=owner).latest("pk")
    assert 'label "\u2068\u202eDisputed claim\u2069"' in notice.body
