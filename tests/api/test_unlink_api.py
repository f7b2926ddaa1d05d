"""POST /api/v1/posts/{external_id}/unlink: a fact-checker takes back a copy confirmed by mistake through the API,
by the browser's rules (moderation.unlinking, factcheck.matching.unlinkable), with its refusals as JSON codes.

The world is test_unlink_confirmed_copy's: bob rated a claim False, alice (his colleague) confirmed a suggested post
as its copy, so the copy took the False rating.
"""

from __future__ import annotations

import pytest

from factcheck.models import Match, MatchState, Post, QueueState
from moderation.appeals import file_appeal, start_review
from moderation.models import Action, ActionKind
from tests.api.helpers import post_json
from tests.conftest import bearer_client
from tests.factories import FactCheckerFactory, OrganisationFactory, PlatformUserFactory, UserFactory
from tests.moderation.test_unlink_confirmed_copy import (  # noqa: F401  (fixtures)
    REASON,
    alice,
    bob,
    carol,
    copy,
    olivia,
    org,
    pair,
)

pytestmark = pytest.mark.django_db


def unlink(user, post: Post, body):
    return post_json(bearer_client(user), f"/api/v1/posts/{post.external_id}/unlink", body)


def test_a_colleague_unlinks_the_copy_and_it_is_reviewed_on_its_own(copy, carol):  # noqa: F811
    source_id = copy.duplicate_of_id
    response = unlink(carol, copy, {"reason": REASON})
    assert response.status_code == 200
    assert response.json() == {"external_id": copy.external_id, "claim": Post.objects.get(pk=source_id).external_id,
                               "method": Match.objects.get(post=copy).method, "state": "rejected",
                               "queue_state": "queued"}
    copy.refresh_from_db()
    assert (copy.duplicate_of_id, copy.queue_state) == (None, QueueState.QUEUED)
    assert Match.objects.get(post=copy, source_id=source_id).state == MatchState.REJECTED
    assert not Action.objects.filter(post=copy, kind=ActionKind.MATCHED_RATING, ended_at__isnull=True).exists()


def test_refusals_are_json_with_codes_and_change_nothing(copy, alice, olivia):  # noqa: F811
    linked = copy.duplicate_of_id
    other_org = FactCheckerFactory(organisation=OrganisationFactory(name="Faktenwerk"))
    cases = [
        (alice, {"reason": "   "}, 422, "validation_error"),
        (alice, {"reason": "Wrong claim; mail me at someone@example.org"}, 422, "validation_error"),
        (other_org, {"reason": REASON}, 403, "not_your_rating"),
    ]
    for user, body, status, code in cases:
        response = unlink(user, copy, body)
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), body
    blank = unlink(alice, copy, {"reason": "   "}).json()["error"]["details"]["errors"]
    assert [error["field"] for error in blank] == ["reason"]
    # The field itself is required and bounded, as the document says.
    assert unlink(alice, copy, {}).status_code == 422
    too_long = unlink(alice, copy, {"reason": "x" * 2001})
    assert (too_long.status_code, too_long.json()["error"]["code"]) == (422, "validation_error")
    [problem] = too_long.json()["error"]["details"]["errors"]
    assert problem["field"] == "reason" and "Keep the reason to 2,000 characters" in problem["message"]
    # Other roles are refused by the token; an unknown post is a 404.
    for user in (olivia, PlatformUserFactory(), UserFactory()):
        assert unlink(user, copy, {"reason": REASON}).status_code == 403
    missing = post_json(bearer_client(alice), "/api/v1/posts/no-such-post/unlink", {"reason": REASON})
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
    copy.refresh_from_db()
    assert copy.duplicate_of_id == linked and copy.queue_state == QueueState.MATCHED


def test_a_post_that_is_no_copy_and_an_automatic_match_are_409(copy, alice, bob):  # noqa: F811
    assert unlink(alice, copy, {"reason": REASON}).status_code == 200
    again = unlink(alice, copy, {"reason": REASON})
    assert (again.status_code, again.json()["error"]["code"]) == (409, "not_a_copy")
    Match.objects.filter(post=copy).update(state=MatchState.AUTO)
    Post.objects.filter(pk=copy.pk).update(duplicate_of=Match.objects.get(post=copy).source,
                                           queue_state=QueueState.MATCHED)
    automatic = unlink(bob, Post.objects.get(pk=copy.pk), {"reason": REASON})
    assert (automatic.status_code, automatic.json()["error"]["code"]) == (409, "automatic_match")


def test_a_colleague_reviewing_the_owners_appeal_of_the_match_holds_it(copy, olivia, alice, carol):  # noqa: F811
    appeal = file_appeal(owner=olivia, post_id=copy.pk, kind="dispute", statement="Not the same claim at all.")
    start_review(appeal_id=appeal.pk, reviewer=carol)
    response = unlink(alice, copy, {"reason": REASON})
    assert (response.status_code, response.json()["error"]["code"]) == (409, "appeal_open")
    assert Post.objects.get(pk=copy.pk).queue_state == QueueState.MATCHED
