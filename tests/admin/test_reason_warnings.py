"""Where staff type a reason the page owner reads word for word (their notice quotes it; a removal's and an
override's statement of reasons too), the form says so beside the field, before anything is decided: lifting an
action, restoring a removed post, overriding a fact-check's consequences, removing a post (in the admin and on the
reports desk)."""

from __future__ import annotations

import re
from html import unescape

import pytest

from moderation.models import Action
from moderation.staff_actions import remove_post
from tests.factories import DecisionFactory, PostFactory
from tests.scenarios import reported_post

pytestmark = pytest.mark.django_db

ACTIONS = "/admin/moderation/action/"
IN_THE_NOTICE = "The page owner reads this word for word in their notice"
AND_THE_STATEMENT = f"{IN_THE_NOTICE} and statement of reasons"
NOTHING_PRIVATE = "no reporter's details, no internal notes"


def help_beside(html: str, field: str) -> str:
    """The text of what the reason field's aria-describedby names: what a screen reader reads with the field, and
    what is shown beside it."""
    textarea = re.search(rf'<textarea[^>]*\bname="{re.escape(field)}"[^>]*>', html)
    assert textarea, f"no {field} field"
    described_by = re.search(r'aria-describedby="([^"]+)"', textarea.group(0))
    assert described_by, f"the {field} field names no description"
    texts = [re.search(rf'<(\w+)[^>]*\bid="{re.escape(pk)}"[^>]*>(.*?)</\1>', html, re.S)
             for pk in described_by.group(1).split()]
    return " ".join(unescape(re.sub(r"<[^>]+>", "", found.group(2))).strip() for found in texts if found)


def fact_check_action() -> Action:
    return DecisionFactory(post=PostFactory()).action


def test_lifting_a_fact_check_says_the_owner_reads_the_reason_word_for_word(staff_client):
    action = fact_check_action()
    for page in (staff_client.get(f"{ACTIONS}{action.pk}/lift/"),
                 staff_client.post(ACTIONS, {"action": "lift", "_selected_action": [action.pk]})):
        assert page.status_code == 200
        warning = help_beside(page.content.decode(), "reason")
        assert IN_THE_NOTICE in warning and NOTHING_PRIVATE in warning


def test_restoring_a_removed_post_says_the_owner_reads_the_reason_word_for_word(staff_client, ts_user):
    removal = remove_post(staff=ts_user, post_id=PostFactory().pk, ground="hate", reason="Slurs.")
    warning = help_beside(staff_client.get(f"{ACTIONS}{removal.pk}/lift/").content.decode(), "reason")
    assert IN_THE_NOTICE in warning and NOTHING_PRIVATE in warning


def test_overriding_a_fact_check_says_the_owner_reads_the_reason_in_the_notice_and_statement(staff_client):
    action = fact_check_action()
    for page in (staff_client.get(f"{ACTIONS}{action.pk}/override/"),
                 staff_client.post(ACTIONS, {"action": "override", "_selected_action": [action.pk]})):
        warning = help_beside(page.content.decode(), "reason")
        assert AND_THE_STATEMENT in warning and NOTHING_PRIVATE in warning


def test_removing_a_post_says_the_owner_reads_the_reason_in_the_notice_and_statement(staff_client):
    post = PostFactory()
    warning = help_beside(staff_client.get(f"/admin/factcheck/post/{post.pk}/remove/").content.decode(), "reason")
    assert AND_THE_STATEMENT in warning and NOTHING_PRIVATE in warning and "public" in warning


def test_removing_a_post_on_the_reports_desk_says_the_same(staff_client):
    post = reported_post()
    staff_client.post(f"/staff/reports/{post.pk}/claim/")
    html = staff_client.get(f"/staff/reports/{post.pk}/").content.decode()
    warning = help_beside(html, "removed-reason")
    assert AND_THE_STATEMENT in warning and NOTHING_PRIVATE in warning
