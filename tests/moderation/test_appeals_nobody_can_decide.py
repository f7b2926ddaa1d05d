"""Appeals that nobody may decide: a dispute of a rating imported from an organisation with no fact-checker on
Factdesk, of a one-person organisation's rating, of a match confirmed by the only colleague; a removal appeal whose
remover is the only trust-and-safety member. They waited past every target with nobody told. Staff (who run the
organisations in the admin) see each on /staff/appeals/ with why and a link to add the person who may decide it,
and can filter the admin's appeals by it; the list follows `can_decide` exactly (checked against every active
account in each case).
"""

from __future__ import annotations

from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from accounts.password_reset import can_sign_in
from factcheck.matching.matcher import confirm_match
from factcheck.members import create_user, importer_account, organisation_of
from factcheck.models import Match
from moderation.appeal_states import can_decide, nobody_can_decide
from moderation.models import Appeal, AppealKind
from moderation.propagation import apply_matches
from tests.factcheck.matching_helpers import CLAIM, COMMENTED_COPY, arrive, flag, post
from tests.factories import AppealFactory, FactCheckerFactory, RatingFactory, StaffFactory, UserFactory
from tests.scenarios import rated_post, rated_post_with_open_dispute, removed_post

STAFF_APPEALS = reverse("moderation:staff_appeals")


def stuck() -> set[int]:
    """The appeals nobody may decide, and a check that this is exactly what `can_decide` says of every account
    someone can sign in to (the SQL and the Python read one rule)."""
    found = set(nobody_can_decide(Appeal.objects.all()).values_list("pk", flat=True))
    active = list(User.objects.filter(can_sign_in()))
    for appeal in Appeal.objects.open():
        assert (appeal.pk in found) == (not any(can_decide(user, appeal) for user in active)), appeal
    return found


def stuck_section(client) -> str:
    page = unescape(client.get(STAFF_APPEALS).content.decode())
    return page.split('id="stuck-title"', 1)[1].split("</section>", 1)[0] if 'id="stuck-title"' in page else ""


@pytest.mark.django_db
def test_a_dispute_of_an_imported_rating_is_shown_to_staff_and_an_administrator_adds_a_fact_checker_from_it(
    staff_client, client
):
    importer = importer_account(organisation_name="PolitiFact", organisation_url="https://www.politifact.com")
    owner = UserFactory()
    appeal = rated_post_with_open_dispute(owner=owner, rater=importer, external_id="imported-1")
    organisation = organisation_of(importer)
    assert stuck() == {appeal.pk}

    # Trust and safety may not add people (an administrator does): they are told whom to ask, and what for.
    section = stuck_section(staff_client)
    assert "Nobody can decide this appeal" in section
    assert "imported-1" in section
    assert "PolitiFact's rating was imported, and PolitiFact has no fact-checker on Factdesk." in section
    assert "An administrator adds people in the admin: ask one to add a fact-checker to PolitiFact." in section
    assert reverse("admin:accounts_user_add") not in section

    # An administrator's link opens the add page with the role and the organisation chosen.
    client.force_login(User.objects.create_superuser("admin", "admin@example.org", "x", role="trust_safety"))
    section = stuck_section(client)
    link = section.split('">Add a fact-checker to PolitiFact')[0].rsplit('href="', 1)[1]
    assert urlsplit(link).path == reverse("admin:accounts_user_add")
    assert parse_qs(urlsplit(link).query) == {"role": ["factchecker"], "organisation": [str(organisation.pk)]}
    form = client.get(link).context["adminform"].form
    assert (form.initial["role"], str(form.initial["organisation"])) == ("factchecker", str(organisation.pk))

    FactCheckerFactory(organisation=organisation)
    assert stuck() == set()
    assert stuck_section(staff_client) == ""


@pytest.mark.django_db
def test_a_one_person_organisations_dispute_is_listed_until_a_colleague_joins_and_again_once_they_leave(
    staff_client, factchecker
):
    appeal = rated_post_with_open_dispute(owner=UserFactory(), rater=factchecker)
    assert stuck() == {appeal.pk}
    name = organisation_of(factchecker).name
    assert f"{name} has no active fact-checker besides the one whose decision is appealed." in stuck_section(
        staff_client)

    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    FactCheckerFactory()  # of another organisation: decides nothing here
    assert stuck() == set()

    colleague.is_active = False
    colleague.save(update_fields=["is_active"])
    assert stuck() == {appeal.pk}


@pytest.mark.django_db
def test_a_dispute_of_a_copy_is_listed_while_the_only_colleague_is_the_one_who_confirmed_the_match(factchecker):
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    arrive(flag("source", CLAIM, page="page-source"))
    RatingFactory(reviewer=factchecker, post=post("source"))
    arrive(flag("commented", COMMENTED_COPY, page="page-c"))
    confirm_match(match_id=Match.objects.get(post=post("commented"), state="suggested").pk, reviewer=colleague)
    apply_matches(post_ids=[post("commented").pk])
    owner = UserFactory()
    appeal = AppealFactory(post=post("commented"), filed_by=owner)
    assert appeal.action.kind == "matched_rating"
    assert stuck() == {appeal.pk}
    client = Client()
    client.force_login(StaffFactory())
    assert ("The fact-checker who confirmed the match may instead unlink the copy on its page, which grants the "
            "appeal.") in stuck_section(client)
    # Not while they cannot: deactivated (a review found the list said it of someone who could not sign in).
    colleague.is_active = False
    colleague.save(update_fields=["is_active"])
    assert stuck() == {appeal.pk}
    assert "may instead unlink" not in stuck_section(client)
    colleague.is_active = True
    colleague.save(update_fields=["is_active"])

    FactCheckerFactory(organisation=organisation_of(factchecker))
    assert stuck() == set()


@pytest.mark.django_db
def test_a_removal_appeal_is_listed_while_its_remover_is_the_only_trust_and_safety_member(client):
    remover = StaffFactory()
    appeal = AppealFactory(post=removed_post(staff=remover, external_id="removed-1"), kind=AppealKind.REMOVAL)
    assert stuck() == {appeal.pk}
    client.force_login(remover)
    section = stuck_section(client)
    assert "removed-1" in section and "no other member of trust and safety is active" in section
    assert reverse("moderation:staff_appeal", args=[appeal.pk]) in section

    colleague = StaffFactory()
    assert stuck() == set()
    assert stuck_section(client) == ""
    colleague.is_active = False
    colleague.save(update_fields=["is_active"])
    assert stuck() == {appeal.pk}


@pytest.mark.django_db
def test_a_colleague_nobody_can_sign_in_as_does_not_count_as_someone_who_decides(factchecker, staff_client):
    appeal = rated_post_with_open_dispute(owner=UserFactory(), rater=factchecker)
    # As `add_user nadie --role factchecker --org X` made one before it refused it: no password, no address.
    nadie = create_user(username="nadie", role="factchecker", password=None,
                        organisation_name=organisation_of(factchecker).name)
    assert can_decide(nadie, appeal)

    assert stuck() == {appeal.pk}
    assert "Nobody can decide this appeal" in stuck_section(staff_client)

    # Given an address, nadie can set a password through the link sent there, and decide it.
    nadie.email = "nadie@verifact.example"
    nadie.save(update_fields=["email"])
    assert stuck() == set()


@pytest.mark.django_db
def test_decided_appeals_and_the_fact_checkers_desk_show_nothing_of_it(login, factchecker, staff_client):
    appeal = rated_post_with_open_dispute(owner=UserFactory(), rater=factchecker)
    assert stuck() == {appeal.pk}
    # The rater's desk lists the dispute as before, without the staff's list.
    assert 'id="stuck-title"' not in login(factchecker).get(reverse("moderation:factchecker_appeals")).content.decode()
    rated_post(rater=factchecker)  # a rating nobody appealed is not an appeal nobody can decide
    assert stuck() == {appeal.pk}


@pytest.mark.django_db
def test_the_admin_filters_appeals_nobody_can_decide(staff_client, factchecker):
    stuck_appeal = rated_post_with_open_dispute(owner=UserFactory(), rater=factchecker)
    colleague_org = FactCheckerFactory().membership.organisation
    rater = FactCheckerFactory(organisation=colleague_org)
    decidable = rated_post_with_open_dispute(owner=UserFactory(), rater=rater)
    listing = staff_client.get(reverse("admin:moderation_appeal_changelist"), {"decider": "nobody"})
    assert [a.pk for a in listing.context["cl"].result_list] == [stuck_appeal.pk]
    name = organisation_of(factchecker).name
    page = unescape(listing.content.decode())
    assert f"{name} has no active fact-checker besides the one whose decision is appealed." in page
    assert reverse("admin:accounts_user_add") not in page  # trust and safety may not add people
    # An administrator (who may not open the staff desk without the role) reads why there, and adds the person.
    admin_client = Client()
    admin_client.force_login(User.objects.create_superuser("admin", "admin@example.org", "x"))
    assert admin_client.get(reverse("moderation:staff_appeals")).status_code == 403
    page = unescape(admin_client.get(reverse("admin:moderation_appeal_changelist"), {"decider": "nobody"})
                    .content.decode())
    assert f"{name} has no active fact-checker besides the one whose decision is appealed." in page
    assert f'>Add a fact-checker to {name}</a>' in page
    assert f"{reverse('admin:accounts_user_add')}?role=factchecker&organisation=" in page
    everything = staff_client.get(reverse("admin:moderation_appeal_changelist"))
    assert {a.pk for a in everything.context["cl"].result_list} == {stuck_appeal.pk, decidable.pk}


@pytest.mark.django_db
def test_the_admin_index_counts_them_and_links_to_the_filtered_list(staff_client, factchecker):
    rated_post_with_open_dispute(owner=UserFactory(), rater=factchecker)
    page = unescape(staff_client.get(reverse("admin:index")).content.decode())
    row = page.split(">Appeals nobody can decide</a>", 1)[1].split("</tr>", 1)[0]
    assert "1 open with nobody able to sign in who may decide it" in row
    assert f'{reverse("admin:moderation_appeal_changelist")}?decider=nobody' in page
