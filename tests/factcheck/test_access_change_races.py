"""Staff changing a reviewer's access while that reviewer's rating is in flight, on real concurrent PostgreSQL
transactions. A review found the change deadlocking with the rating, which was lost: the admin's save wrote the user
(or organisation) row, a rename taking it FOR UPDATE, then locked the reviewer's claimed posts, while the rating held
a post's lock and, committing, checked its foreign key to that row (FOR KEY SHARE). The change now locks the posts
first (factcheck.claims.lock_claimed_posts): it waits for the rating, which commits, then writes."""

from __future__ import annotations

import pytest
from django.db import transaction

from factcheck.claims import claim_post
from factcheck.member_changes import change_organisation, change_user
from factcheck.models import Organisation, Rating
from factcheck.ratings import record_rating
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory, StaffFactory
from tests.pg import Backend, wait_until_blocked


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("changed", ["user", "organisation"])
def test_a_rename_with_an_access_change_waits_for_a_rating_in_flight_and_both_are_kept(changed):
    verifact = OrganisationFactory(name="Verifact", languages=[], countries=[])
    faktenwerk = OrganisationFactory(name="Faktenwerk", languages=["de"], countries=[])
    staff = StaffFactory()
    bob = FactCheckerFactory(username="bob", organisation=verifact)
    post = PostFactory(language="en")
    claim_post(reviewer=bob, post_id=post.pk)

    def rate(backend: Backend) -> None:
        with transaction.atomic():
            record_rating(reviewer=bob, post_id=post.pk, verdict="false",
                          rationale="The agency's archive dates the video to 2014.",
                          sources=["https://agency.example/archive"])
            backend.reached("rated")
            backend.wait_for("commit")

    def change(backend: Backend) -> None:
        if changed == "user":  # renamed (a unique column) and moved to an organisation that covers German only
            change_user(user_id=bob.pk, by=staff, values={"username": "bob-renamed"}, organisation=faktenwerk,
                        reason="Moved to the German desk.")
        else:  # renamed, and its coverage narrowed to French
            organisation = Organisation.objects.get(pk=verifact.pk)
            organisation.name, organisation.languages = "Verifact Ltd", ["fr"]
            change_organisation(organisation=organisation, by=staff, reason="Renamed; French only from today.")

    rater, changer = Backend(rate, name="rater"), Backend(change, name="changer")
    try:
        rater.start()
        rater.wait_until_reached("rated")
        changer.start()
        # The change waits for the post the rating holds, before it has written anything the rating's commit needs.
        wait = wait_until_blocked(changer, by=rater, statement='"factcheck_post"')
        assert wait.blocking_pids == [rater.pid]
        rater.release("commit")
        rater.join()
        changer.join()
    finally:
        rater.stop()
        changer.stop()

    assert Rating.objects.filter(post=post, reviewer=bob, is_current=True).exists()
    bob.refresh_from_db()
    verifact.refresh_from_db()
    assert (bob.username, verifact.name) == (("bob-renamed", "Verifact") if changed == "user"
                                             else ("bob", "Verifact Ltd"))
