"""Near-duplicate matching through ingest and a real worker (PRODUCT.md, Near-duplicates; Lifecycle 6).

A copy of a rated claim is matched on arrival and never queued; copies of a waiting claim are grouped
under its first post and take its rating when it is rated; near-copies between the thresholds, and
guarded pairs, are offered to the rating's organisation; rejected pairs never come back; posts of
politicians' pages are never linked; a lost matching job is made good by the reconciler.
"""

from __future__ import annotations

from decimal import Decimal

import django_rq
import pytest

from audit.models import AuditEvent, AuditVerb
from factcheck import jobs as factcheck_jobs
from factcheck.matching.matcher import (
    MatchRefused,
    NotYourClaimsMatch,
    confirm_match,
    match_new_posts,
    match_posts,
    reject_match,
)
from factcheck.models import Match, Post, QueueState, Rating
from factcheck.queue import queued_posts
from moderation.models import Action, EnforcementPolicy, PostDistribution, StatementOfReasons
from tests.api.helpers import flag_payload, post_json
from tests.factcheck.matching_helpers import (
    CHANGED_NUMBER_COPY,
    CLAIM,
    COMMENTED_COPY,
    EXACT_COPY,
    NEAR_COPY,
    NEGATED_COPY,
    SHORT_CLAIM,
    UNRELATED,
    WORKER,
    arrive,
    flag,
    matched_action,
    post,
    rate,
)
from tests.factories import FactCheckerFactory


def rated_claim(reviewer, text: str = CLAIM, *, external_id: str = "source", url: str = "") -> Post:
    """A claim that arrived, was matched by its job (nothing to find) and was rated."""
    arrive(flag(external_id, text, page="page-source", url=url))
    match_new_posts(post_ids=[post(external_id).pk])
    rate(reviewer, post(external_id))
    return post(external_id)


def queue_ids() -> list[int]:
    """The posts the review queue lists, by id."""
    return sorted(queued_posts(organisation=None).values_list("id", flat=True))


# Matched on arrival ---------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_copy_of_a_rated_claim_is_matched_on_arrival_and_never_queued(factchecker, platform_user):
    source = rated_claim(factchecker)
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
@pytest.mark.parametrize(("text", "url", "method"), [
    (EXACT_COPY, "", "text"),
    (NEAR_COPY, "", "minhash"),
    (NEAR_COPY, "https://www.social.example/source?utm_source=share&fbclid=IwAR0#top", "url"),
], ids=["exact-text", "near-copy", "same-link"])
def test_each_match_on_arrival_records_its_method_and_score(factchecker, text, url, method):
    source = rated_claim(factchecker, url="https://social.example/source")
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
    rated_claim(factchecker)
    payload = flag_payload(post={"external_id": "api-copy", "text": NEAR_COPY})
    response = post_json(platform_client, "/api/v1/flags", payload)
    assert response.status_code == 201
    assert response.json()["results"][0]["queue_state"] == "matched"


@WORKER
def test_after_the_worker_a_copy_matched_on_arrival_carries_the_claims_rating(factchecker, platform_user, run_worker):
    arrive(flag("source", CLAIM, page="page-source"), by=platform_user)
    run_worker()
    rating = rate(factchecker, post("source"))
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
    assert statement.facts.startswith(f"A copy of a post rated False by {factchecker.organisation.name}")
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
    rating = rate(factchecker, post("first"))
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


# Suggestions -----------------------------------------------------------------------------------

@WORKER
def test_a_commented_copy_of_a_rated_claim_is_suggested_and_stays_in_the_queue(factchecker, platform_user, run_worker):
    source = rated_claim(factchecker)
    run_worker()
    [result] = arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    run_worker()

    copy = post("copy")
    assert result.queue_state == QueueState.QUEUED
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert copy.pk in queue_ids()
    match = Match.objects.get(post=copy)
    assert (match.source_id, match.state, match.method, match.guard) == (source.pk, "suggested", "minhash", "")
    assert 0.4 <= match.score < 0.7
    assert not Action.objects.filter(post=copy).exists()


@WORKER
def test_confirming_a_suggestion_links_the_copy_and_the_worker_gives_it_the_rating(
    factchecker, platform_user, run_worker
):
    source = rated_claim(factchecker)
    run_worker()
    arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    run_worker()
    colleague = FactCheckerFactory(organisation=factchecker.organisation)

    match = confirm_match(match_id=Match.objects.get(post=post("copy")).pk, reviewer=colleague)
    assert (match.state, match.decided_by) == ("confirmed", colleague)
    copy = post("copy")
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.MATCHED, source.pk)
    assert copy.pk not in queue_ids()
    run_worker()
    action = matched_action(copy)
    assert action is not None and action.rating == source.ratings.get(is_current=True)
    assert PostDistribution.objects.get(post=copy).multiplier == Decimal("0.2")
    assert AuditEvent.objects.filter(verb=AuditVerb.MATCH_CONFIRMED, post_id=copy.pk, actor=colleague).exists()


@pytest.mark.django_db
def test_a_rejected_suggestion_is_never_suggested_again(factchecker, platform_user):
    source = rated_claim(factchecker)
    arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match = reject_match(match_id=Match.objects.get(post=post("copy")).pk, reviewer=factchecker,
                         reason="Another claim: this one is about pharma.")
    assert (match.state, match.reason) == ("rejected", "Another claim: this one is about pharma.")

    # Every way matching runs again: the after-commit job, the reconciler, a new flag for the post.
    match_new_posts(post_ids=[post("copy").pk])
    Post.objects.filter(pk=post("copy").pk).update(matched_at=None)
    factcheck_jobs.match_unmatched()
    match_posts(post_ids=[post("copy").pk], rated_only=True)
    arrive(flag("copy", COMMENTED_COPY, page="page-copy", key="another-flag"), by=platform_user)

    assert list(Match.objects.filter(post=post("copy")).values_list("source_id", "state")) == [(source.pk, "rejected")]
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.QUEUED, None)
    with pytest.raises(MatchRefused):  # decided: it cannot be confirmed afterwards either
        confirm_match(match_id=match.pk, reviewer=factchecker)


@pytest.mark.django_db
def test_another_organisation_cannot_confirm_or_reject_a_suggestion_and_nothing_is_written(
    factchecker, platform_user, writes_nothing
):
    rated_claim(factchecker)
    arrive(flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match = Match.objects.get(post=post("copy"))
    outsider = FactCheckerFactory()  # another organisation, covering everything
    for decide in (confirm_match, reject_match):
        with writes_nothing(post("copy")):
            with pytest.raises(NotYourClaimsMatch) as refused:
                decide(match_id=match.pk, reviewer=outsider)
        assert refused.value.code == "not_your_rating"
    match.refresh_from_db()
    assert (match.state, match.decided_by, match.decided_at) == ("suggested", None, None)
    assert post("copy").duplicate_of_id is None


@pytest.mark.django_db
def test_a_suggestion_between_two_waiting_posts_is_confirmed_into_their_group(factchecker, platform_user):
    arrive(flag("first", CLAIM), flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match_new_posts(post_ids=[post("first").pk, post("copy").pk])
    match = Match.objects.get(post=post("copy"))
    assert match.state == "suggested"

    confirm_match(match_id=match.pk, reviewer=FactCheckerFactory())  # no rating yet: any fact-checker covering it
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.GROUPED, post("first").pk)
    assert queue_ids() == [post("first").pk]


@pytest.mark.django_db
def test_a_suggestion_whose_claim_has_since_joined_another_group_cannot_make_a_chain(factchecker, platform_user,
                                                                                      settings):
    settings.FACTDESK_MATCH_AUTO = 0.99  # every near-copy below is a suggestion
    arrive(flag("first", CLAIM), flag("second", NEAR_COPY, page="page-b"),
           flag("third", NEAR_COPY + " again", page="page-c"), by=platform_user)
    match_new_posts(post_ids=list(Post.objects.values_list("id", flat=True)))
    first, second, third = post("first"), post("second"), post("third")
    confirm_match(match_id=Match.objects.get(post=second, source=first).pk, reviewer=factchecker)
    assert post("second").duplicate_of_id == first.pk

    # "third" was suggested for "second" while that was a claim of its own; it is a copy now.
    with pytest.raises(MatchRefused):
        confirm_match(match_id=Match.objects.get(post=third, source=second).pk, reviewer=factchecker)
    assert (post("third").queue_state, post("third").duplicate_of_id) == (QueueState.QUEUED, None)
    confirm_match(match_id=Match.objects.get(post=third, source=first).pk, reviewer=factchecker)
    assert post("third").duplicate_of_id == first.pk  # a copy of the claim's first post, never of a copy
    rate(factchecker, first)
    assert {post(name).queue_state for name in ("second", "third")} == {QueueState.MATCHED}


@pytest.mark.django_db
def test_a_suggestion_for_a_post_of_a_page_that_became_a_politicians_cannot_be_confirmed(factchecker, platform_user):
    arrive(flag("first", CLAIM, page="mp"), flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match_new_posts(post_ids=list(Post.objects.values_list("id", flat=True)))
    match = Match.objects.get(post=post("copy"))
    arrive(flag("speech", UNRELATED, page="mp", politician=True), by=platform_user)
    assert post("first").queue_state == QueueState.NOT_ELIGIBLE

    with pytest.raises(MatchRefused):  # it would wait for a rating that never comes, out of the queue
        confirm_match(match_id=match.pk, reviewer=factchecker)
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.QUEUED, None)
    assert post("copy").pk in queue_ids()


@pytest.mark.django_db
def test_a_confirmed_copy_of_a_claim_rated_not_eligible_leaves_the_queue_as_matched(factchecker, platform_user):
    arrive(flag("first", CLAIM), flag("copy", COMMENTED_COPY, page="page-copy"), by=platform_user)
    match_new_posts(post_ids=list(Post.objects.values_list("id", flat=True)))
    rate(factchecker, post("first"), "not_eligible", rationale="An opinion, not a claim of fact.")

    confirm_match(match_id=Match.objects.get(post=post("copy")).pk, reviewer=factchecker)
    # As the claim's grouped copies do when it is rated: matched, never left waiting for a rating.
    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.MATCHED, post("first").pk)


# Guards never link automatically --------------------------------------------------------------

@WORKER
@pytest.mark.parametrize(("source_text", "copy_text", "guard"), [
    (CLAIM, NEGATED_COPY, "polarity"),
    (CLAIM, CHANGED_NUMBER_COPY, "numbers"),
    (SHORT_CLAIM, SHORT_CLAIM.upper() + "!!", "short_text"),
], ids=["negated", "changed-number", "short"])
def test_a_guarded_copy_of_a_rated_claim_stays_in_the_queue_with_a_suggestion(
    factchecker, platform_user, run_worker, source_text, copy_text, guard
):
    source = rated_claim(factchecker, source_text)
    run_worker()
    [result] = arrive(flag("copy", copy_text, page="page-copy"), by=platform_user)
    run_worker()

    copy = post("copy")
    assert result.queue_state == QueueState.QUEUED
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.QUEUED, None)
    assert copy.pk in queue_ids()
    match = Match.objects.get(post=copy)
    assert (match.source_id, match.state, match.guard) == (source.pk, "suggested", guard)
    assert not Action.objects.filter(post=copy).exists()


@WORKER
def test_a_negated_copy_of_a_waiting_claim_is_not_grouped_with_it(platform_user, run_worker):
    arrive(flag("first", CLAIM), flag("negated", NEGATED_COPY, page="page-b"), by=platform_user)
    run_worker()
    assert post("negated").queue_state == QueueState.QUEUED
    assert Match.objects.get(post=post("negated")).state == "suggested"
    assert queue_ids() == sorted([post("first").pk, post("negated").pk])


# Politicians' pages ---------------------------------------------------------------------------

@WORKER
def test_a_copy_on_a_politicians_page_is_never_linked_to_a_rated_claim(factchecker, platform_user, run_worker):
    rated_claim(factchecker)
    run_worker()
    [result] = arrive(flag("speech", EXACT_COPY, page="mp", politician=True), by=platform_user)
    run_worker()

    speech = post("speech")
    assert result.queue_state == QueueState.NOT_ELIGIBLE
    assert (speech.queue_state, speech.duplicate_of_id) == (QueueState.NOT_ELIGIBLE, None)
    assert not Match.objects.filter(post=speech).exists()
    assert not Action.objects.filter(post=speech).exists()


@WORKER
def test_a_copy_of_a_politicians_post_is_never_grouped_under_it(platform_user, run_worker):
    arrive(flag("speech", CLAIM, page="mp", politician=True), by=platform_user)
    run_worker()
    arrive(flag("copy", EXACT_COPY, page="page-b"), by=platform_user)
    run_worker()

    assert (post("copy").queue_state, post("copy").duplicate_of_id) == (QueueState.QUEUED, None)
    assert not Match.objects.exists()
    assert queue_ids() == [post("copy").pk]


@WORKER
def test_a_grouped_copy_whose_page_becomes_a_politicians_takes_no_rating(factchecker, platform_user, run_worker):
    arrive(flag("first", CLAIM), flag("copy", EXACT_COPY, page="mp"), by=platform_user)
    run_worker()
    assert post("copy").queue_state == QueueState.GROUPED
    # The platform now says the copy's page is a politician's.
    arrive(flag("other", UNRELATED, page="mp", politician=True), by=platform_user)
    run_worker()

    rate(factchecker, post("first"))
    run_worker()
    copy = post("copy")
    assert copy.queue_state != QueueState.MATCHED
    assert not Action.objects.filter(post=copy).exists()
    assert copy.pk not in queue_ids()


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
def test_a_copy_that_arrived_while_matching_was_off_is_linked_by_the_reconciler_and_takes_the_rating(
    factchecker, platform_user, run_worker, settings
):
    source = rated_claim(factchecker)
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
    source = rated_claim(factchecker)
    arrive(flag("copy", NEAR_COPY, page="page-copy"), by=platform_user)
    # It carries its claim's rating: changing that is the rating organisation's, with a reason.
    rate(factchecker, post("copy"), verdict="partly_false", change_reason="Only part of the claim is repeated.")
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
