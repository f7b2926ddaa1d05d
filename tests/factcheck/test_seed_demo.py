"""`seed_demo`: the demo data set goes in through the real paths, once, and the decisions follow."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.db.models import F
from django.utils import timezone

from accounts.models import ApiToken, Role, User, hash_token
from audit.models import AuditEvent, AuditVerb
from factcheck.demo import DEMO_PASSWORD, POLITICIAN_PAGE, REPEAT_OFFENDER_PAGE
from factcheck.members import organisation_of
from factcheck.models import Flag, FlagSource, MediaType, Organisation, Page, Post, QueueState, Rating
from moderation.models import Action, PageStanding, PostDistribution, RatingDecision, Strike
from tests.factories import PlatformUserFactory

pytestmark = pytest.mark.django_db

COUNTED = (Organisation, Page, Post, Flag, Rating, User, ApiToken, Action, Strike, AuditEvent)


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


@pytest.fixture
def seeded(django_capture_on_commit_callbacks, run_worker) -> str:
    """Seed, then let a real RQ worker apply the decisions the ratings enqueued on commit."""
    with django_capture_on_commit_callbacks(execute=True):
        output = seed()
    # The match jobs link copies of rated claims, whose decisions are jobs enqueued when that commits.
    with django_capture_on_commit_callbacks(execute=True):
        run_worker()
    run_worker()
    return output


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in COUNTED}


def test_seed_demo_creates_organisations_pages_posts_and_flags_from_every_source(seeded):
    assert {(o.name, tuple(o.languages), tuple(o.countries)) for o in Organisation.objects.all()} == {
        ("Verifact", ("en",), ("GB", "IE", "US")),
        ("Faktenwerk", ("de", "fr"), ("DE", "AT", "FR", "BE")),
    }
    assert Page.objects.count() == 12
    assert Page.objects.filter(is_politician=True).count() == 1
    assert 200 <= Post.objects.count() <= 500
    assert set(Flag.objects.values_list("source", flat=True)) == set(FlagSource.values)
    assert set(Post.objects.values_list("language", flat=True)) == {"en", "de", "fr"}
    # Reach spreads over orders of magnitude.
    views = sorted(Post.objects.values_list("views", flat=True))
    assert views[0] < 1_000 and views[-1] > 100_000
    assert "Seeded 2 organisations, 12 pages" in seeded


def test_seed_demo_goes_through_ingest_so_flags_and_queue_entries_are_audited(seeded):
    assert AuditEvent.objects.filter(verb=AuditVerb.FLAG_RECEIVED).count() == Flag.objects.count()
    platform = User.objects.get(username="platform")
    assert not Flag.objects.exclude(submitted_by=platform).exists()
    # Copies of one claim wait under one queue row (grouped) or took its rating (matched).
    assert Post.objects.filter(queue_state=QueueState.QUEUED).count() > 150
    assert Post.objects.filter(queue_state=QueueState.GROUPED).exists()
    # Every post is flagged; those reported for harm only count no flag for the fact-checkers' queue.
    assert not Post.objects.filter(flags__isnull=True).exists()
    # (demo-r005 also has a misinformation flag: it waits in both queues.)
    assert set(Post.objects.filter(flag_count=0).values_list("external_id", flat=True)) == {
        "demo-r001", "demo-r002", "demo-r003", "demo-r004", "demo-r006"}


def test_seed_demo_copies_of_a_rated_claim_carry_its_rating_and_copies_of_a_waiting_one_are_grouped(seeded):
    pension = Post.objects.filter(text__startswith="New law: from June pensioners")
    rated = pension.get(queue_state=QueueState.RATED)
    copies = pension.exclude(pk=rated.pk)
    assert copies.exists()
    assert set(copies.values_list("queue_state", "duplicate_of")) == {(QueueState.MATCHED, rated.pk)}
    for copy in copies:
        action = Action.objects.get(post=copy, ended_at__isnull=True)
        assert (action.kind, action.rating.post_id) == ("matched_rating", rated.pk)
    grouped = Post.objects.filter(queue_state=QueueState.GROUPED).select_related("duplicate_of")
    assert all(post.duplicate_of.queue_state == QueueState.QUEUED for post in grouped)


def test_seed_demo_keeps_the_politicians_posts_out_of_the_queue(seeded):
    politician_posts = Post.objects.filter(page__external_id=POLITICIAN_PAGE)

    assert politician_posts.exists()
    assert set(politician_posts.values_list("queue_state", flat=True)) == {QueueState.NOT_ELIGIBLE}
    assert not Rating.objects.filter(post__page__external_id=POLITICIAN_PAGE).exists()


def test_seed_demo_ratings_become_decisions_and_make_one_page_a_repeat_offender(seeded):
    assert Rating.objects.count() >= 5
    # Each rating decided its own post (and, for the rated claims with copies, each copy too).
    assert RatingDecision.objects.filter(post_id=F("rating__post_id")).count() == Rating.objects.count()
    offender = PageStanding.objects.get(is_repeat_offender=True)
    assert offender.page.external_id == REPEAT_OFFENDER_PAGE
    # Its three False ratings, and two copies of the pension one that it posted again (a matched rating strikes too).
    assert offender.active_strikes == 5
    # Every post of the repeat offender is halved; its False-rated ones are at 0.2 x 0.5.
    multipliers = PostDistribution.objects.filter(post__page=offender.page).values_list("multiplier", flat=True)
    assert sorted({str(m) for m in multipliers}) == ["0.1000", "0.5000"]
    assert offender.page.posts.count() == len(multipliers)


def test_seed_demo_makes_every_demo_account_with_the_documented_password(seeded):
    expected = {
        "alice": (Role.FACTCHECKER, "Verifact"),
        "bob": (Role.FACTCHECKER, "Verifact"),
        "claire": (Role.FACTCHECKER, "Faktenwerk"),
        "sam": (Role.TRUST_SAFETY, None),
        "tariq": (Role.TRUST_SAFETY, None),
        "olivia": (Role.PAGE_OWNER, None),
        "platform": (Role.PLATFORM, None),
    }
    for username, (role, organisation) in expected.items():
        user = authenticate(username=username, password=DEMO_PASSWORD)
        assert user is not None, username
        assert (user.role, organisation_of(user).name if organisation_of(user) else None) == (role, organisation)
    assert User.objects.get(username="sam").is_staff
    olivia = User.objects.get(username="olivia")
    assert set(olivia.pages.values_list("external_id", flat=True)) == {REPEAT_OFFENDER_PAGE, "the-london-ledger"}
    for username in expected:
        assert username in seeded


def test_seed_demo_prints_a_platform_token_that_authenticates(seeded):
    line = next(line for line in seeded.splitlines() if line.startswith("API token for the platform account"))
    raw = line.rsplit(" ", 1)[1]

    token = ApiToken.objects.get(key_hash=hash_token(raw))
    assert token.user.username == "platform" and token.revoked_at is None


def test_seed_demo_run_twice_changes_nothing(seeded, django_capture_on_commit_callbacks, run_worker):
    before = counts()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        output = seed()
    run_worker()

    assert counts() == before
    assert callbacks == []
    assert "Demo data already present" in output
    assert "manage.py issue_token platform" in output


def test_seed_demo_refuses_when_a_demo_username_is_taken_and_writes_nothing():
    PlatformUserFactory(username="alice")

    with pytest.raises(CommandError, match="a user named 'alice' already exists"):
        seed()

    assert not Organisation.objects.exists()
    assert not Post.objects.exists()


def test_the_demo_has_an_open_dispute_for_bob_to_decide_and_alice_cannot(
    run_worker, django_capture_on_commit_callbacks
):
    from accounts.models import User
    from moderation.appeals import can_decide
    from moderation.models import Appeal

    with django_capture_on_commit_callbacks(execute=True):
        seed()
    appeal = Appeal.objects.select_related("rating", "filed_by").get(kind="dispute")
    assert (appeal.kind, appeal.status, appeal.filed_by.username) == ("dispute", "open", "olivia")
    assert can_decide(User.objects.get(username="bob"), appeal)
    assert not can_decide(User.objects.get(username="alice"), appeal)
    # sam removed a post and its owner appealed: the other staff member decides it, not sam.
    removal = Appeal.objects.select_related("action").get(kind="removal")
    assert removal.action.created_by.username == "sam"
    assert can_decide(User.objects.get(username="tariq"), removal)
    assert not can_decide(User.objects.get(username="sam"), removal)


def test_the_demo_history_spans_days_in_a_sane_order(seeded):
    from moderation.models import Appeal

    ratings = list(Rating.objects.select_related("post").order_by("created_at"))
    assert ratings[-1].created_at - ratings[0].created_at > timedelta(days=1)  # not all "just now"
    for rating in ratings:
        assert rating.post.first_flagged_at < rating.created_at  # flagged, then claimed, then rated
        decision = RatingDecision.objects.get(rating=rating, post=rating.post)
        assert decision.decided_at == rating.created_at  # decided when it was made
    for appeal in Appeal.objects.select_related("rating", "action"):
        contested = appeal.action.created_at if appeal.action_id else appeal.rating.created_at
        assert contested < appeal.created_at  # never filed before the decision it contests
        assert appeal.decision_notice_at <= appeal.created_at


def test_seed_demo_gives_the_staff_a_reports_queue_of_every_category(seeded):
    from moderation.report_queue import queue_page, waiting_counts

    rows, _ = queue_page(start=0, stop=10, now=timezone.now())
    assert {category for row in rows for category in row["reports"].by_category} == {
        "violence", "hate", "harassment", "imminent_harm"}
    # The trusted flagger's overdue report of violence first; one post waits for fact-checkers too.
    assert rows[0]["post__external_id"] == "demo-r001" and rows[0]["trusted"]
    assert waiting_counts(now=timezone.now()).overdue == 1
    mixed = Post.objects.get(external_id="demo-r005")
    assert mixed.queue_state == QueueState.QUEUED and mixed.pk in {row["post_id"] for row in rows}
    assert "reports of harm, for /staff/reports/" in seeded


def test_each_demo_rating_is_about_its_post(seeded):
    """Break 12 of issue 29: a pension-law post carried a rationale about hospitals. Each rated post and its
    rating are written as one pair (factcheck.demo_checks); the words of its topic are in both."""
    from factcheck.demo_checks import CHECKED, external_id_of

    ratings = {r.post.external_id: r for r in Rating.objects.filter(is_current=True).select_related("post")}
    assert set(ratings) == {external_id_of(number) for number in range(1, len(CHECKED) + 1)}
    for number, spec in enumerate(CHECKED, start=1):
        rating = ratings[external_id_of(number)]
        assert spec.topic, spec.text
        for word in spec.topic:
            assert word in rating.post.text.lower(), (word, rating.post.text)
            assert word in rating.rationale.lower(), (word, rating.rationale)
        assert (rating.verdict, rating.sources) == (spec.verdict, list(spec.sources))
    pension = Rating.objects.get(is_current=True, post__text__startswith="New law: from June pensioners")
    assert "pension" in pension.rationale and "hospital" not in pension.rationale
    assert {r.verdict for r in ratings.values()} == {
        "false", "partly_false", "altered", "missing_context", "satire", "true"}


def test_the_demo_appeals_and_the_removal_are_about_their_posts(seeded):
    from moderation.models import Appeal

    dispute = Appeal.objects.select_related("post").get(kind="dispute")
    for word in ("clinic", "vaccine", "fertility"):
        assert word in dispute.post.text.lower() and word in dispute.statement.lower(), word
    removal = Appeal.objects.select_related("post", "action").get(kind="removal")
    assert removal.post.external_id == "demo-r006"
    for text in (removal.post.text, removal.action.reason, removal.statement):
        assert "councillor" in text.lower(), text
    # The reason goes into the public statement of reasons: it says what the post does, not whom it names.
    assert "tom hale" in removal.post.text.lower() and "tom hale" not in removal.action.reason.lower()


def test_staff_have_reports_of_harm_waiting_and_the_removed_posts_reports_are_answered(seeded):
    from moderation.report_queue import queue_page, waiting_counts

    rows, counts = queue_page(start=0, stop=20, now=timezone.now())
    waiting = {row["post__external_id"] for row in rows}
    assert waiting == {"demo-r001", "demo-r002", "demo-r003", "demo-r004", "demo-r005"}
    assert counts.open == 5 and waiting_counts(now=timezone.now()).open == 5
    assert not Flag.objects.filter(post__external_id="demo-r006", status="open").exists()


def test_no_demo_flag_calls_a_post_without_a_picture_or_video_a_manipulated_image(seeded):
    pictured = Flag.objects.filter(reason__icontains="image").exclude(post__media_type=MediaType.TEXT)
    assert pictured.exists()  # the reason is in the demo, on the posts it fits
    assert not Flag.objects.filter(reason__icontains="image", post__media_type__in=[MediaType.TEXT, MediaType.LINK])
