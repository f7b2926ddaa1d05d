""""Download my data" in the owners' portal (GDPR Art. 15 and 20; the DSA's statements of reasons): one JSON file
of the signed-in owner's account, the pages they own now, their posts with every decision, statement and appeal,
and their notifications; nothing of anyone else's page, no reporter, no flag reason, no fact-checker's name."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from audit.models import AuditEvent
from factcheck.claims import claim_post
from factcheck.members import organisation_of
from factcheck.models import Post, QueueState
from factcheck.models_media import PostMedia
from moderation.appeals import decide_appeal, file_appeal
from moderation.owner_export import EXPORTS_ALLOWED
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.factories import (
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)
from tests.moderation.portal.conftest import SHOWN
from tests.moderation.portal.pages import text

pytestmark = pytest.mark.django_db

EXPORT = "/appeals/export/"
EMAIL, PHONE = "jane.roe@example.com", "06 12 34 56 78"


def download(client) -> tuple[dict, str]:
    response = client.get(EXPORT)
    assert response.status_code == 200, response.status_code
    raw = b"".join(response.streaming_content).decode()
    return json.loads(raw), raw


def posts_by_id(document: dict) -> dict[str, dict]:
    return {post["external_id"]: post for post in document["posts"]}


@pytest.fixture
def two_pages(owner, page, rated_post, removed_post, factchecker):
    """The owner's second page, with a post carrying two images and one that nothing happened to, and the owner's
    dispute of `rated_post`'s rating, decided (upheld) by a colleague of the rater."""
    ledger = PageFactory(name="The Ledger", external_id="ledger")
    ledger.owners.add(owner)
    pictured = PostFactory(page=ledger, external_id="ledger-pics", text="Two pictures of the flood.")
    for position in (0, 1):
        PostMedia.objects.create(post=pictured, position=position, kind="image", alt_text=f"flood {position}",
                                 url=f"https://media.example/flood-{position}.jpg", pdq="a" * 64, md5="b" * 32)
    PostFactory(page=ledger, external_id="ledger-quiet", text="Nothing happened to this one.")
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind="dispute", statement="The quote is real.",
                         evidence_urls=["https://evidence.example/recording"])
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="The recording is edited.")
    return {"ledger": ledger, "appeal": appeal, "colleague": colleague}


def test_an_owner_with_two_pages_downloads_every_post_decision_statement_and_appeal(
    login, owner, page, rated_post, removed_post, factchecker, staff_user, two_pages
):
    response = login(owner).get(EXPORT)
    assert response["Content-Type"] == "application/json; charset=utf-8"
    today = timezone.localdate().isoformat()
    assert response["Content-Disposition"] == f'attachment; filename="factdesk-my-data-{today}.json"'
    document = json.loads(b"".join(response.streaming_content))

    assert document["account"]["username"] == owner.username
    assert document["account"]["email"] == owner.email
    assert {p["external_id"] for p in document["account"]["pages"]} == {page.external_id, "ledger"}
    pages = {p["external_id"]: p for p in document["pages"]}
    assert pages.keys() == {page.external_id, "ledger"}
    assert pages[page.external_id]["name"] == "Daily Wonders"
    assert pages[page.external_id]["restricted_now"] == {"posts": 2, "demoted": 1, "labelled": 1, "removed": 1}
    assert [s["post"] for s in pages[page.external_id]["strikes"]["fact_check"]] == [rated_post.external_id]
    assert [s["post"] for s in pages[page.external_id]["strikes"]["community_standards"]] == [
        removed_post.external_id]
    assert pages[page.external_id]["standing"]["repeat_offender"] is False

    posts = posts_by_id(document)
    assert posts.keys() == {rated_post.external_id, removed_post.external_id, "ledger-pics", "ledger-quiet"}
    assert posts["ledger-quiet"]["text"] == "Nothing happened to this one."
    assert posts["ledger-quiet"]["page"] == "ledger"
    assert posts["ledger-quiet"]["actions"] == [] and posts["ledger-quiet"]["decided"] is False
    assert [(m["url"], m["alt_text"]) for m in posts["ledger-pics"]["media"]] == [
        ("https://media.example/flood-0.jpg", "flood 0"), ("https://media.example/flood-1.jpg", "flood 1")]

    rated = posts[rated_post.external_id]
    assert rated["text"] == "A miracle cure was found." and rated["url"] == rated_post.url
    assert rated["flags_by_source"][0]["source"] == "classifier" and rated["flags_by_source"][0]["flags"] == 1
    [rating] = rated["ratings"]
    assert (rating["verdict_label"], rating["rationale"], rating["sources"], rating["article_url"]) == (
        "False", SHOWN["rationale"], SHOWN["sources"], SHOWN["article_url"])
    assert rating["organisation"] == organisation_of(factchecker).name
    [action] = rated["actions"]
    assert (action["kind"], action["verdict_label"], action["feed_multiplier"], action["active"]) == (
        "fact_check", "False", "0.2", True)
    assert action["rated_by"] == organisation_of(factchecker).name
    statement = action["statement_of_reasons"]
    assert statement["facts"] == f"Rated False by {organisation_of(factchecker).name}: {SHOWN['rationale']}"
    assert statement["transparency_database"]["decision_visibility"] == [
        "DECISION_VISIBILITY_CONTENT_DEMOTED", "DECISION_VISIBILITY_CONTENT_LABELLED"]
    assert rated["distribution"]["multiplier"] == "0.2"

    [appeal] = rated["appeals"]
    assert (appeal["kind"], appeal["status"], appeal["statement"], appeal["filed_by_you"]) == (
        "dispute", "upheld", "The quote is real.", True)
    assert appeal["evidence_urls"] == ["https://evidence.example/recording"]
    assert appeal["outcome_reason"] == "The recording is edited."
    assert appeal["decided_by"] == organisation_of(factchecker).name
    assert [(s["what"], s["by"]) for s in appeal["steps"]] == [
        ("Dispute appeal filed", "the page owner"), ("Appeal not accepted", organisation_of(factchecker).name)]

    [removal] = posts[removed_post.external_id]["actions"]
    assert (removal["kind"], removal["ground"], removal["reason"]) == (
        "removal", "harassment", "Targets a private person by name.")
    assert removal["decided_by"] == "Trust and safety"
    assert removal["statement_of_reasons"]["transparency_database"]["decision_visibility"] == [
        "DECISION_VISIBILITY_CONTENT_REMOVED"]

    subjects = [n["subject"] for n in document["notifications"]]
    assert len(subjects) >= 3  # the rating, the removal, the appeal's outcome
    assert any(n["kind"] == "appeal_decided" for n in document["notifications"])


def test_no_person_reporter_or_flag_reason_is_in_the_file(
    login, owner, rated_post, factchecker, staff_user, removed_post, two_pages
):
    FlagFactory(post=rated_post, reason="My neighbour says this is false", source="trusted_flagger",
                submitted_by=PlatformUserFactory(username="reporter-account"))
    _, raw = download(login(owner))
    for never in (factchecker.username, two_pages["colleague"].username, staff_user.username, "reporter-account",
                  "My neighbour says this is false", "looks false"):
        assert never not in raw, never


def test_another_owners_page_is_not_in_the_file(login, owner, rated_post):
    stranger = UserFactory()
    theirs = scenarios.rated_post(owner=stranger, page=PageFactory(name="Someone Else's Page", external_id="theirs"),
                                  text="Their secret post.", external_id="their-post")
    file_appeal(owner=stranger, post_id=theirs.pk, kind="dispute", statement="Their own appeal.")
    _, raw = download(login(owner))
    for never in ("Someone Else's Page", "theirs", "Their secret post.", "their-post", "Their own appeal.",
                  stranger.username):
        assert never not in raw, never
    assert rated_post.external_id in raw


def test_a_page_the_owner_was_removed_from_is_no_longer_in_the_file(login, owner, page, rated_post):
    left = PageFactory(name="Page They Left", external_id="left-page")
    left.owners.add(owner)
    post = scenarios.rated_post(owner=owner, page=left, external_id="left-post", text="Posted while an owner.")
    file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement="Filed while an owner.")
    before, _ = download(login(owner))
    assert "left-page" in {p["external_id"] for p in before["pages"]}

    left.owners.remove(owner)
    document, raw = download(login(owner))
    assert [p["external_id"] for p in document["pages"]] == [page.external_id]
    assert set(posts_by_id(document)) == {rated_post.external_id}
    for never in ("Posted while an owner.", "Filed while an owner."):
        assert never not in raw
    # The notices sent to them about it stay theirs, as the portal keeps them; no post of that page is named.
    assert all(n["post"] in (None, rated_post.external_id) for n in document["notifications"])


def test_an_owner_without_pages_gets_their_account_alone(login):
    lonely = UserFactory(username="lonely", email="lonely@example.org")
    PostFactory()  # somebody's post, on somebody's page
    document, _ = download(login(lonely))
    assert document["account"]["username"] == "lonely"
    assert document["account"]["email"] == "lonely@example.org"
    assert document["account"]["pages"] == [] and document["pages"] == []
    assert document["posts"] == [] and document["notifications"] == []


@pytest.fixture
def stored_before(monkeypatch):
    """Rows written as before reasons refused contact details (tests/moderation/test_contact_details_cleaned.py)."""
    monkeypatch.setattr("core.reasons.find_contact_details", lambda text: [], raising=False)


def test_other_peoples_contact_details_are_replaced_where_the_portal_replaces_them(stored_before, login, owner, page):
    post = PostFactory(page=page, text=f"Call me on {PHONE}")  # the owner's own words: kept, as the portal shows them
    reason = f"Posted the home address of Jane Roe (who reported it herself: {EMAIL}, {PHONE})."
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="harassment", reason=reason)
    rater = FactCheckerFactory()
    rated = scenarios.rated_post(rater=rater, owner=owner, page=page,
                                 rating={"rationale": f"The press office (press@ministry.example, {PHONE}) denies it."})
    appeal = file_appeal(owner=owner, post_id=rated.pk, kind="dispute", statement="It is true.")
    decide_appeal(appeal_id=appeal.pk, reviewer=FactCheckerFactory(organisation=organisation_of(rater)),
                  outcome="upheld", reason=f"Write to {EMAIL} with the text of the law.")

    document, raw = download(login(owner))
    posts = posts_by_id(document)
    removal = posts[post.external_id]["actions"][0]
    cleaned = "Posted the home address of Jane Roe (who reported it herself: [e-mail address removed], " \
              "[phone number removed])."
    assert removal["reason"] == cleaned
    assert removal["statement_of_reasons"]["facts"] == cleaned
    assert "[e-mail address removed]" in removal["statement_of_reasons"]["transparency_database"]["decision_facts"]
    rated_row = posts[rated.external_id]
    assert rated_row["ratings"][0]["rationale"] == \
        "The press office ([e-mail address removed], [phone number removed]) denies it."
    assert rated_row["appeals"][0]["outcome_reason"] == "Write to [e-mail address removed] with the text of the law."
    assert posts[post.external_id]["text"] == f"Call me on {PHONE}"
    assert EMAIL not in raw and "press@ministry.example" not in raw
    assert raw.count(PHONE) == 1  # the owner's own post


@pytest.mark.parametrize("make_user", [FactCheckerFactory, StaffFactory, PlatformUserFactory])
def test_factcheckers_staff_and_the_platform_are_refused_and_nothing_is_recorded(login, make_user, rated_post):
    response = login(make_user()).get(EXPORT)
    assert response.status_code == 403
    assert "This page is for page owners" in text(response)
    assert not AuditEvent.objects.filter(verb="owner.data_exported").exists()


def test_anonymous_visitors_are_sent_to_sign_in(client):
    response = client.get(EXPORT)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/appeals/export/")


def test_the_audit_log_records_the_download_but_not_what_it_held(login, owner, page, rated_post):
    download(login(owner))
    [event] = AuditEvent.objects.filter(verb="owner.data_exported")
    assert (event.actor_id, event.target_type, event.target_id) == (owner.pk, "accounts.user", str(owner.pk))
    assert event.data == {"pages": [page.external_id]}
    assert rated_post.text not in json.dumps(event.data) and event.post_id is None


def test_a_loop_of_downloads_is_refused_after_the_hours_allowance(login, owner, rated_post):
    client = login(owner)
    for _ in range(EXPORTS_ALLOWED):
        download(client)
    response = client.get(EXPORT)
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert f"You have downloaded your data {EXPORTS_ALLOWED} times within the last hour" in text(response)
    assert AuditEvent.objects.filter(verb="owner.data_exported").count() == EXPORTS_ALLOWED


def test_the_file_is_read_in_batches_whatever_the_number_of_posts(login, owner, page, django_assert_num_queries,
                                                                   monkeypatch):
    monkeypatch.setattr("moderation.owner_export.BATCH", 5)
    for n in range(12):
        post = scenarios.rated_post(owner=owner, page=page, external_id=f"many-{n}")
        if n % 2:
            file_appeal(owner=owner, post_id=post.pk, kind="dispute", statement=f"Appeal {n}.")
    client = login(owner)
    response = client.get(EXPORT)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        document = json.loads(b"".join(response.streaming_content))
    assert len(document["posts"]) == 12
    assert sum(len(post["appeals"]) for post in document["posts"]) == 6
    # Three batches of posts (5, 5, 2), each with six reads of what hangs on its posts (media, flags, ratings,
    # actions, appeals and their steps); the empty read that ends them; the notifications: never a read per post.
    assert len(queries) == 3 * 7 + 1 + 1


def test_the_portal_page_links_to_the_download_with_what_it_holds(login, owner, page):
    page_html = text(login(owner).get("/appeals/"))
    assert f'href="{EXPORT}" download aria-describedby="my-data-hint">Download my data</a>' in page_html
    assert 'id="my-data-hint">One JSON file: your account, your pages' in page_html


def test_the_download_says_decided_or_not_and_never_that_a_fact_check_is_in_progress(login, owner, page, rated_post):
    waiting = PostFactory(page=page, external_id="being-checked", text="Being looked at.", flag_count=1)
    FlagFactory(post=waiting)
    claim_post(reviewer=FactCheckerFactory(), post_id=waiting.pk)
    assert Post.objects.get(pk=waiting.pk).queue_state == QueueState.CLAIMED

    document, raw = download(login(owner))
    posts = posts_by_id(document)
    assert posts["being-checked"]["decided"] is False and posts[rated_post.external_id]["decided"] is True
    assert not any("queue_state" in post for post in document["posts"])
    assert "claimed" not in raw.lower()
