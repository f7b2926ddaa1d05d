"""Near-duplicate matching through ingest and a real worker (PRODUCT.md, Near-duplicates; Lifecycle 6):
the links it makes by itself.

A copy of a rated claim is matched on arrival and never queued; copies of a waiting claim are grouped
under its first post and take its rating when it is rated; matching twice records nothing new; a lost
matching job is made good by the reconciler; a copy rated on its own leaves its group. Suggestions,
guards and politicians' pages: test_matching_suggestions.py.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import django_rq
import pytest
from django.utils import timezone

from audit.models import AuditEvent, AuditVerb
from factcheck import jobs as factcheck_jobs
from factcheck.matching.matcher import (
    match_new_posts,
    match_posts,
    match_unmatched,
)
from factcheck.members import organisation_of
from factcheck.models import Match, Post, QueueState, Rating
from moderation.models import Action, EnforcementPolicy, PostDistribution, StatementOfReasons
from tests import scenarios
from tests.api.helpers import flag_payload, post_json
from tests.factcheck.matching_helpers import (
    CLAIM,
    COMMENTED_COPY,
    EXACT_COPY,
    NEAR_COPY,
    UNRELATED,
    WORKER,
    arrive,
    flag,
    matched_action,
    post,
    queue_ids,
)
from tests.factories import RatingFactory
from tests.jobs_support import redriven

# Matched on arrival ---------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_copy_of_a_rated_claim_is_matched_on_arrival_and_never_queued(factchecker, platform_user):
    source = scenarios.rated_claim(rater=factchecker)
    [result] = arrive(flag("copy", NEAR_COPY, page="page-copy"), by=platform_user)
    copy = post("copy")
    assert result.queue_state == QueueState.MATCHED
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.MATCHED, source.pk)
    assert copy.pk not in queue_ids()
    assert not AuditEvent.objects.filter(verb=AuditVerb.POST_QUEUED, post_id=copy.pk).exists()
    match = Match.objects.get(post=copy)
    assert (match.source_id, match.state, match.method, match.guard) == (source.pk, "auto", "minhash", "")
    assert 0.7 <= match.score < 1.0
    recorded = AuditEvent.objects.get(verb=AuditVerb.MATCH_RECORDED, post_id=copy.pk)
    assert recorded.data["method"] == "minhash" and recorded.data["state"] == "auto"


@pytest.mark.django_db
@pytest.mark.parametrize(("claim", "copy"), [
    ("The COVID-19 vaccine has killed more children than the virus itself, a new report from Ohio shows",
     "The Covid vaccine has killed more children than the virus itself, a new report from Ohio shows"),
    ("Matthew Perry died of a drug overdose in his home in Los Angeles last night, the police say",
     "#MatthewPerry died of a drug overdose in his home in Los Angeles last night, the police say"),
], ids=["covid-19-as-covid", "hashtag-of-the-name"])
def test_a_copy_naming_the_claims_name_without_its_number_or_as_a_hashtag_is_matched_on_arrival(
    factchecker, claim, copy
):
    source = scenarios.rated_claim(rater=factchecker, text=claim)
    arrive(flag("copy", copy, page="page-copy"))
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.MATCHED, source.pk)
    assert post("copy").pk not in queue_ids()
    match = Match.objects.get(post=post("copy"))
    assert (match.state, match.guard) == ("auto", "")


@pytest.mark.django_db
@pytest.mark.parametrize(("text", "url", "method"), [
    (EXACT_COPY, "", "text"),
    (NEAR_COPY, "", "minhash"),
    (NEAR_COPY, "https://www.social.example/source?utm_source=share&fbclid=IwAR0#top", "url"),
], ids=["exact-text", "near-copy", "same-link"])
def test_each_match_on_arrival_records_its_method_and_score(factchecker, text, url, method):
    source = scenarios.rated_claim(rater=factchecker, url="https://social.example/source")
    arrive(flag("copy", text, page="page-copy", url=url))
    match = Match.objects.get(post=post("copy"))
    assert (match.source_id, match.state, match.method) == (source.pk, "auto", method)
    if method == "minhash":
        assert 0.7 <= match.score < 1.0
    else:
        assert match.score == 1.0
    assert post("copy").queue_state == QueueState.MATCHED


@pytest.mark.django_db
def test_the_platform_is_told_a_copy_is_matched_in_the_flags_answer(factchecker, platform_client):
    scenarios.rated_claim(rater=factchecker)
    payload = flag_payload(post={"external_id": "api-copy", "text": NEAR_COPY})
    response = post_json(platform_client, "/api/v1/flags", payload)
    assert response.status_code == 201
    assert response.json()["results"][0]["queue_state"] == "matched"


@WORKER
def test_after_the_worker_a_copy_matched_on_arrival_carries_the_claims_rating(factchecker, platform_user, run_worker):
    arrive(flag("source", CLAIM, page="page-source"), by=platform_user)
    run_worker()
    rating = RatingFactory(reviewer=factchecker, post=post("source"))
    run_worker()
    arrive(flag("copy", NEAR_COPY, page="page-copy"), by=platform_user)
    run_worker()

    copy = post("copy")
    assert copy.queue_state == QueueState.MATCHED and copy.pk not in queue_ids()  # the match job kept it so
    action = Action.objects.get(post=copy)
    assert (action.kind, action.rating_id, action.verdict) == ("matched_rating", rating.pk, "false")
    assert action.ended_at is None
    statement = StatementOfReasons.objects.get(action=action)
    assert statement.transparency["automated_decision"] == "AUTOMATED_DECISION_PARTIALLY"
    assert statement.automated_decision is True
    assert statement.facts.startswith(f"A copy of a post rated False by {organisation_of(factchecker).name}")
    policy = EnforcementPolicy.objects.get(verdict="false").feed_multiplier
    assert PostDistribution.objects.get(post=copy).multiplier == policy == Decimal("0.2")
    # The source's own decision is a person's.
    own = StatementOfReasons.objects.get(action__post=post("source"))
    assert own.transparency["automated_decision"] == "AUTOMATED_DECISION_NOT_AUTOMATED"


# Grouping copies of a waiting claim ------------------------------------------------------------

@WORKER
def test_copies_of_a_waiting_claim_in_one_batch_are_grouped_under_the_first(platform_user, run_worker):
    results = arrive(flag("first", CLAIM), flag("second", EXACT_COPY, page="page-b"),
                     flag("third", NEAR_COPY, page="page-c"), by=platform_user)
    assert [r.queue_state for r in results] == ["queued"] * 3  # nothing rated to match on arrival
    run_worker()

    first, second, third = post("first"), post("second"), post("third")
    assert (first.queue_state, first.duplicate_of_id) == (QueueState.QUEUED, None)
    for copy in (second, third):
        assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.GROUPED, first.pk)
        assert Match.objects.get(post=copy).source_id == first.pk  # judged against the root, never a copy
    assert queue_ids() == [first.pk]


@WORKER
def test_copies_of_a_waiting_claim_arriving_in_several_batches_are_grouped_under_the_first(platform_user, run_worker):
    arrive(flag("first", CLAIM), by=platform_user)
    run_worker()
    arrive(flag("second", NEAR_COPY, page="page-b"), by=platform_user)
    run_worker()
    arrive(flag("third", EXACT_COPY, page="page-c"), flag("other", UNRELATED, page="page-d"), by=platform_user)
    run_worker()

    first = post("first")
    assert [(p.external_id, p.queue_state, p.duplicate_of_id) for p in Post.objects.order_by("id")] == [
        ("first", "queued", None), ("second", "grouped", first.pk), ("third", "grouped", first.pk),
        ("other", "queued", None),
    ]
    assert queue_ids() == sorted([first.pk, post("other").pk])


@WORKER
def test_rating_the_first_post_of_a_group_gives_every_copy_its_rating(factchecker, platform_user, run_worker):
    arrive(flag("first", CLAIM), flag("second", EXACT_COPY, page="page-b"), flag("third", NEAR_COPY, page="page-c"),
           by=platform_user)
    run_worker()
    rating = RatingFactory(reviewer=factchecker, post=post("first"))
    # In the rating's own transaction, the copies leave the group for "matched".
    assert {post(x).queue_state for x in ("second", "third")} == {QueueState.MATCHED}
    run_worker()

    for name in ("second", "third"):
        action = matched_action(post(name))
        assert action is not None and action.rating_id == rating.pk
        assert action.statement.transparency["automated_decision"] == "AUTOMATED_DECISION_PARTIALLY"
        assert PostDistribution.objects.get(post=post(name)).multiplier == Decimal("0.2")
    assert Action.objects.get(post=post("first")).kind == "fact_check"
    assert queue_ids() == []


@pytest.mark.django_db
def test_the_first_post_of_a_group_is_never_linked_under_a_claim_rated_later(factchecker, platform_user):
    # A group is a star: its first post keeps its copies, so a rated claim it copies is suggested to it, never made
    # its root (which would leave the copies pointing at a copy). Matched again against rated claims, as the posts
    # whose pictures a batch changes are.
    arrive(flag("first", EXACT_COPY), flag("copy", NEAR_COPY, page="page-b"), by=platform_user)
    match_posts(post_ids=[post("first").pk, post("copy").pk], rated_only=False)
    assert post("copy").duplicate_of_id == post("first").pk
    # Rated before its own match job ran (it would have grouped it under "first").
    arrive(flag("rated-later", CLAIM, page="page-source"), by=platform_user)
    rated = RatingFactory(reviewer=factchecker, post=post("rated-later")).post

    result = match_posts(post_ids=[post("first").pk], rated_only=True)
    assert (result.linked, result.suggested) == ([], 1)
    assert (post("first").queue_state, post("first").duplicate_of_id) == (QueueState.QUEUED, None)
    assert Match.objects.get(post=post("first"), source=rated).state == "suggested"
    assert post("copy").duplicate_of_id == post("first").pk


# Idempotence ------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_matching_the_same_posts_twice_records_no_second_match(platform_user):
    arrive(flag("first", CLAIM), flag("copy", NEAR_COPY, page="page-b"),
           flag("commented", COMMENTED_COPY, page="page-c"), by=platform_user)
    ids = list(Post.objects.order_by("id").values_list("id", flat=True))
    match_posts(post_ids=ids, rated_only=False)
    before = list(Match.objects.order_by("id").values_list("post_id", "source_id", "state"))
    assert sorted(state for _, _, state in before) == ["auto", "suggested"]

    again = match_posts(post_ids=ids, rated_only=False)
    match_new_posts(post_ids=ids)
    assert (again.linked, again.grouped, again.suggested) == ([], [], 0)
    assert list(Match.objects.order_by("id").values_list("post_id", "source_id", "state")) == before
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_RECORDED).count() == len(before)


# The reconciler --------------------------------------------------------------------------------

@WORKER
def test_posts_whose_match_job_was_lost_are_grouped_by_the_reconciler(platform_user, run_worker):
    arrive(flag("first", CLAIM), flag("copy", NEAR_COPY, page="page-b"), by=platform_user)
    django_rq.get_connection("default").flushdb()  # Redis lost the job
    assert run_worker() == 0
    assert post("copy").queue_state == QueueState.QUEUED

    assert factcheck_jobs.match_unmatched() == 2
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.GROUPED, post("first").pk)
    assert queue_ids() == [post("first").pk]
    assert factcheck_jobs.match_unmatched() == 0  # matched now: nothing left to look at


@WORKER
def test_the_matching_reconciler_warns_of_posts_left_unmatched_past_the_grace_and_not_of_those_just_in(
    platform_user, run_worker, caplog
):
    arrive(flag("first", CLAIM), flag("copy", NEAR_COPY, page="page-b"), by=platform_user)
    django_rq.get_connection("default").flushdb()  # Redis lost the job
    assert match_unmatched(now=timezone.now() + timedelta(minutes=3)) == 2
    assert redriven(caplog) == ["reconciler re-drove posts still not matched 30 s after they arrived: 2, the oldest "
                                "waiting 3 min - their jobs were lost or late, or matching was off"]

    caplog.clear()
    arrive(flag("other", UNRELATED, page="page-c"), by=platform_user)
    django_rq.get_connection("default").flushdb()
    # Just in: matched all the same, but its own job is most likely on its way, not lost.
    assert match_unmatched() == 1
    assert match_unmatched() == 0
    assert redriven(caplog) == []


@WORKER
def test_a_copy_that_arrived_while_matching_was_off_is_linked_by_the_reconciler_and_takes_the_rating(
    factchecker, platform_user, run_worker, settings
):
    source = scenarios.rated_claim(rater=factchecker)
    run_worker()
    settings.FACTDESK_MATCHING = False
    [result] = arrive(flag("copy", NEAR_COPY, page="page-copy"), by=platform_user)
    run_worker()
    assert result.queue_state == QueueState.QUEUED and post("copy").signature == ""

    settings.FACTDESK_MATCHING = True
    factcheck_jobs.match_unmatched()
    copy = post("copy")
    assert copy.signature != ""
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.MATCHED, source.pk)
    run_worker()
    assert matched_action(copy).rating == source.ratings.get(is_current=True)



# A copy's own rating and its first flag -------------------------------------------------------

@pytest.mark.django_db
def test_a_copy_rated_on_its_own_through_the_api_leaves_its_group_and_keeps_its_own_rating(factchecker, platform_user):
    source = scenarios.rated_claim(rater=factchecker)
    arrive(flag("copy", NEAR_COPY, page="page-copy"), by=platform_user)
    # It carries its claim's rating: changing that is the rating organisation's, with a reason.
    RatingFactory(reviewer=factchecker, post=post("copy"), verdict="partly_false",
                  change_reason="Only part of the claim is repeated.")
    copy = post("copy")
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.RATED, None)
    match = Match.objects.get(post=copy, source=source)
    assert match.state == "rejected" and "rated on its own" in match.reason
    assert Rating.objects.get(post=copy, is_current=True).verdict == "partly_false"
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_UNLINKED, post_id=copy.pk).exists()


@pytest.mark.django_db
def test_a_copy_linked_before_its_first_flag_waits_with_its_group_when_flagged(platform_user):
    from factcheck.matching.matcher import match_posts
    from tests.factories import PostFactory

    arrive(flag("claim", CLAIM), by=platform_user)
    match_posts(post_ids=[post("claim").pk], rated_only=False)
    unflagged = PostFactory(external_id="quiet-copy", text=EXACT_COPY, queue_state=QueueState.UNFLAGGED,
                            flag_count=0, flag_weight=0, first_flagged_at=None, priority=0)
    match_posts(post_ids=[unflagged.pk], rated_only=False)
    assert (post("quiet-copy").queue_state, post("quiet-copy").duplicate_of_id) == (QueueState.UNFLAGGED,
                                                                                      post("claim").pk)
    arrive(flag("quiet-copy", EXACT_COPY, key="first-flag-of-the-quiet-copy"), by=platform_user)
    assert post("quiet-copy").queue_state == QueueState.GROUPED
    assert post("quiet-copy").pk not in queue_ids()


@pytest.mark.django_db
def test_copies_waiting_under_a_post_whose_page_becomes_a_politicians_return_to_the_queue_alone(
    platform_user, staff_user
):
    from factcheck.pages import set_politician

    arrive(flag("claim", CLAIM, page="page-claim"), by=platform_user)
    arrive(flag("copy", EXACT_COPY, page="page-copy"), by=platform_user)
    factcheck_jobs.match_new_posts([post("claim").pk, post("copy").pk])
    assert post("copy").queue_state == QueueState.GROUPED
    set_politician(staff=staff_user, page_id=post("claim").page_id, is_politician=True, reason="A minister's page.")
    copy = post("copy")
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert copy.pk in queue_ids()
    assert Match.objects.get(post=copy).state == "rejected"


def test_two_long_posts_are_judged_at_once_whatever_their_length():
    import time

    from factcheck.matching.similarity import features, judge
    from factcheck.normalise import normalised_fields

    words = ["".join("abcdefghijklmnopqrstuvwxyz"[n // 26**k % 26] for k in range(4)) + "ly" for n in range(6000)]
    texts = (" ".join(words[:5000]), " ".join(words[:3500] + words[5000:]))
    pair = []
    for text in texts:
        _, url_key, normalised, text_key, _ = normalised_fields(url="", text=text)
        pair.append(features(text=text, normalised_text=normalised, url_key=url_key, text_key=text_key))
    started = time.perf_counter()
    judgement = judge(*pair, auto=0.65, suggest=0.1)
    assert judgement is not None and not judgement.automatic and judgement.guard == "wording"
    assert time.perf_counter() - started < 2  # quadratic word-by-word comparison took 47 s on such a pair
