"""Issue 29, break 12: what owners, fact-checkers and staff read says things once and in plain grammar.
"Removal appeal appeal filed" stood on every timeline and in an e-mail subject, and a statement of reasons
said "a person at trust-and-safety staff decided"."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.core import mail

from factcheck.members import organisation_of
from moderation.appeals import decide_appeal, file_appeal
from moderation.models import Action, AppealKind, Notification, StatementOfReasons
from moderation.notice_delivery import email_notices
from moderation.staff_actions import override_action
from moderation.timeline import post_timeline
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

# A word said twice in a row ("appeal appeal", "the the"), whatever its case.
DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)


def doubled(*texts: str) -> list[str]:
    return [match.group(0) for text in texts for match in DOUBLED.finditer(text)]


@pytest.fixture
def people(db):
    rater = FactCheckerFactory()
    owner = UserFactory()
    page = PageFactory(name="Town Talk")
    page.owners.add(owner)
    return {
        "owner": owner, "page": page, "rater": rater,
        "colleague": FactCheckerFactory(organisation=organisation_of(rater)),
        "remover": StaffFactory(), "other_staff": StaffFactory(),
    }


def appealed(people, kind: str):
    """A post of the owner's page decided so that `kind` applies, and the owner's appeal of that kind."""
    post = PostFactory(page=people["page"], external_id=f"tt{kind[:3]}42")
    if kind == AppealKind.REMOVAL:
        scenarios.removed_post(staff=people["remover"], post=post)
    else:
        scenarios.rated_post(post=post, rater=people["rater"])
    extra = {"correction_details": "The headline now says it was a rumour."} if kind == AppealKind.CORRECTION else {}
    appeal = file_appeal(owner=people["owner"], post_id=post.pk, kind=kind, statement="Please look again.", **extra)
    return post, appeal


@pytest.mark.parametrize("kind", list(AppealKind))
def test_no_appeal_appeal_in_timelines_notices_and_emails_for_any_kind(login, people, kind):
    post, appeal = appealed(people, kind)
    name = f"{AppealKind(kind).noun} appeal"
    decider = people["other_staff"] if kind == AppealKind.REMOVAL else people["colleague"]
    decide_appeal(appeal_id=appeal.pk, reviewer=decider, outcome="upheld", reason="The decision stands.")

    for for_owner in (True, False):
        entries = post_timeline(post, for_owner=for_owner)
        assert f"{name.capitalize()} filed" in [entry.title for entry in entries]
        assert not doubled(*(f"{entry.title} {entry.detail} {entry.by}" for entry in entries))

    received = Notification.objects.get(appeal=appeal, user=decider, kind="appeal_received")
    assert received.subject == f"New {name} on post {post.external_id}"
    assert f"Town Talk filed a {name} on post {post.external_id}." in received.body
    decided = Notification.objects.get(appeal=appeal, user=people["owner"], kind="appeal_decided")
    assert f"reviewed your {name} on post {post.external_id} and did not accept it." in decided.body
    notices = Notification.objects.filter(post=post)
    assert not doubled(*(f"{n.subject}\n{n.body}" for n in notices))

    email_notices(user_id=received.user_id)
    assert mail.outbox[-1].subject == f"[Factdesk] New {name} on post {post.external_id}"

    # The pages that show them: the owner's post page and the decider's desk.
    html = login(people["owner"]).get(f"/appeals/posts/{post.pk}/").content.decode()
    assert f"{name.capitalize()} filed" in html and not re.search(r"appeal\s+appeal", html, re.IGNORECASE)


def test_the_filing_message_names_the_appeal_once(login, people):
    post = scenarios.removed_post(staff=people["remover"], post=PostFactory(page=people["page"]))
    response = login(people["owner"]).post(
        f"/appeals/posts/{post.pk}/", {"kind": "removal", "statement": "It was a quote."}, follow=True)
    assert "Your removal appeal was filed. Trust-and-safety staff will review it" in response.content.decode()


def test_a_staff_decision_is_said_to_be_a_staff_members_and_a_rating_a_person_at_the_organisation(people):
    scenarios.removed_post(staff=people["remover"], post=PostFactory(page=people["page"]))
    rated = scenarios.rated_post(post=PostFactory(page=people["page"]), rater=people["rater"])
    override_action(staff=people["remover"], action_id=Action.objects.get(post=rated).pk,
                    feed_multiplier=Decimal("0.5"), label="", reason="Only partly misleading.")
    organisation = organisation_of(people["rater"]).name
    said = {sor.action.kind: sor.automation for sor in StatementOfReasons.objects.select_related("action")}
    staff_decided = "Decision: a member of the trust-and-safety staff decided (no automated decision)."
    assert staff_decided in said["removal"] and staff_decided in said["override"]
    assert f"Decision: a person at {organisation} decided (no automated decision)." in said["fact_check"]
    assert not any("a person at trust-and-safety" in text for text in said.values())


def test_statements_say_each_thing_once(people):
    rated = scenarios.rated_post(post=PostFactory(page=people["page"]), rater=people["rater"])
    removed = scenarios.removed_post(staff=people["remover"], post=PostFactory(page=people["page"]))
    statement = StatementOfReasons.objects.get(action__post=rated)
    # Not "Your post stays up, but your post is shown ...".
    assert statement.what.startswith("Your post stays up, but it is shown about 80% less in news feeds")
    for sor in StatementOfReasons.objects.filter(action__post__in=[rated, removed]):
        assert not doubled(sor.what, sor.scope, sor.facts, sor.ground, sor.automation, sor.how_to_appeal)


def test_a_rating_notice_says_the_verdict_apart_from_the_page_name(people):
    # Not "rated your post tt1 on Town Talk Missing context": the page name ran into the verdict.
    post = scenarios.rated_post(post=PostFactory(page=people["page"], external_id="tt1"), rater=people["rater"],
                                verdict="missing_context")
    notice = Notification.objects.get(post=post, user=people["owner"])
    assert "rated your post tt1 on Town Talk as Missing context." in notice.body
    assert not doubled(notice.subject, notice.body)
