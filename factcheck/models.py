"""The review side's records: organisations, pages, posts, flags, claims and ratings."""

from __future__ import annotations

from datetime import datetime

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.append_only import AppendOnlyError, content_triggers
from factcheck.coverage import clean_coverage
from factcheck.normalise import normalised_fields
from factcheck.timestamps import EARLIEST as TIMESTAMPS_FROM


class FlagSource(models.TextChoices):
    USER_REPORT = "user_report", "User report"
    CLASSIFIER = "classifier", "Classifier"
    PARTNER = "partner", "Partner"
    TRUSTED_FLAGGER = "trusted_flagger", "Trusted flagger"


class FlagCategory(models.TextChoices):
    """What a flag reports. Misinformation goes to the fact-checkers' queue; the rest are reports of harm,
    which go to trust-and-safety staff (PRODUCT.md, "Reports of harm go to trust-and-safety staff")."""

    MISINFORMATION = "misinformation", "Misinformation"
    VIOLENCE = "violence", "Violence"
    HATE = "hate", "Hate"
    HARASSMENT = "harassment", "Harassment"
    IMMINENT_HARM = "imminent_harm", "Misinformation risking imminent harm"


HARM_CATEGORIES = (FlagCategory.VIOLENCE, FlagCategory.HATE, FlagCategory.HARASSMENT, FlagCategory.IMMINENT_HARM)


class ReportStatus(models.TextChoices):
    """Where a flag stands for the one who sent it (DSA Art. 16(5)): open until a decision answers it; withdrawn
    once its sender took it back (factcheck.withdrawal), after which it counts for nothing and nothing answers it."""

    OPEN = "open", "Open"
    DECIDED = "decided", "Decided"
    WITHDRAWN = "withdrawn", "Withdrawn by its sender"


class ReportOutcome(models.TextChoices):
    REMOVED = "removed", "Removed"
    NO_VIOLATION = "no_violation", "No violation"
    SENT_TO_FACT_CHECKERS = "sent_to_fact_checkers", "Sent to fact-checkers"
    RATED = "rated", "Rated by fact-checkers"


# Open reports of harm, written as the partial index on them says it (so that PostgreSQL uses it).
OPEN_HARM_REPORTS = Q(status="open") & ~Q(category="misinformation")


class MediaType(models.TextChoices):
    TEXT = "text", "Text"
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"
    LINK = "link", "Link"


class QueueState(models.TextChoices):
    # No flag asks for a fact-check (it may have reports of harm, which trust and safety decide).
    UNFLAGGED = "unflagged", "Not flagged for fact-checking"
    QUEUED = "queued", "In the queue"
    CLAIMED = "claimed", "Claimed"
    RATED = "rated", "Rated"
    NOT_ELIGIBLE = "not_eligible", "Not eligible"
    # A copy of a claim that is waiting for review: it is reviewed once, with its group's first post.
    GROUPED = "grouped", "Queued with its copies"
    # A copy of a rated claim: it carries that rating (a matched_rating action) and skips the queue.
    MATCHED = "matched", "Matched to a rated claim"
    # Removed by trust and safety while it waited (or had no flag for fact-checkers): out of the queue, never
    # claimed or rated, until the removal is lifted (factcheck.routing).
    REMOVED = "removed", "Removed by trust and safety"


class Verdict(models.TextChoices):
    FALSE = "false", "False"
    ALTERED = "altered", "Altered"
    PARTLY_FALSE = "partly_false", "Partly false"
    MISSING_CONTEXT = "missing_context", "Missing context"
    SATIRE = "satire", "Satire"
    TRUE = "true", "True"
    NOT_ELIGIBLE = "not_eligible", "Not eligible"


class ClaimStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    RELEASED = "released", "Released"
    EXPIRED = "expired", "Expired"
    COMPLETED = "completed", "Completed (rated)"


class Organisation(models.Model):
    name = models.CharField(max_length=200, unique=True)
    url = models.URLField(blank=True)
    # ISO 639-1 and ISO 3166-1 alpha-2 codes it covers; empty means all (factcheck.coverage.clean_coverage).
    languages = models.JSONField(default=list, blank=True)
    countries = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs) -> None:
        # Whoever writes the coverage, it is real codes in the case posts store them (factcheck.coverage); a save of
        # other columns leaves a row written before that rule as it is.
        update_fields = kwargs.get("update_fields")
        if update_fields is None or {"languages", "countries"} & set(update_fields):
            self.languages, self.countries = clean_coverage(languages=self.languages, countries=self.countries)
        super().save(*args, **kwargs)


class Page(models.Model):
    external_id = models.CharField(max_length=200, unique=True)
    name = models.CharField(max_length=300)
    is_politician = models.BooleanField(default=False)  # posts and ads from politicians are not fact-checked
    owners = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="pages")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


NORMALISED_FIELDS = ("normalised_url", "url_key", "normalised_text", "text_key", "signature")
QUEUED = Q(queue_state="queued")  # the condition of the review queue's partial indexes


class Post(models.Model):
    external_id = models.CharField(max_length=200, unique=True)
    page = models.ForeignKey(Page, on_delete=models.PROTECT, related_name="posts", db_index=False)  # post_page_recent
    url = models.URLField(max_length=2000, blank=True)
    text = models.TextField(blank=True)
    # No index of its own (post_queue_coverage serves the queue): ANDed into a search it read 625,000 entries,
    # the statement 52 ms against 9 without it at a million posts.
    language = models.CharField(max_length=8, blank=True)
    # No index of its own either: post_queue_country serves the queues of organisations that cover countries.
    country = models.CharField(max_length=2, blank=True)
    media_type = models.CharField(max_length=10, choices=MediaType.choices, default=MediaType.TEXT)
    # What the post is about, as the platform says (optional, lower-case); a queue filter.
    topic = models.CharField(max_length=100, blank=True)
    posted_at = models.DateTimeField()
    views = models.BigIntegerField(default=0)
    shares = models.BigIntegerField(default=0)
    # factcheck.normalise's forms of `url` and `text`, kept with them: copies of a claim share them.
    normalised_url = models.TextField(blank=True)
    url_key = models.CharField(max_length=40, blank=True)  # indexed with the id: post_url_key
    normalised_text = models.TextField(blank=True)
    text_key = models.CharField(max_length=40, blank=True)  # indexed with the id: post_text_key
    # The normalised text's MinHash band keys (factcheck.matching.signature), space-separated; the
    # matcher indexes them in PostBand (every matched post) and RatedBand (rated claims).
    signature = models.TextField(blank=True)
    # Near-duplicates (factcheck.matching): the first post of the claim this post is a copy of,
    # linked by an automatic or confirmed Match; NULL for a claim's first post and unmatched posts.
    duplicate_of = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="duplicates"
    )
    # When the matcher last compared this post with every other; NULL until it has (the reconciler's cue).
    matched_at = models.DateTimeField(null=True, blank=True)

    # Kept up to date by factcheck.ingest and factcheck.queue so the queue is one index scan. The flag
    # figures count the flags for fact-checkers only (factcheck.routing.REVIEW_FLAGS): misinformation, and
    # reports of harm that staff sent to fact-checkers; a report of harm alone never queues a post.
    queue_state = models.CharField(max_length=20, choices=QueueState.choices, default=QueueState.UNFLAGGED)
    flag_count = models.PositiveIntegerField(default=0)
    flag_weight = models.FloatField(default=0)
    first_flagged_at = models.DateTimeField(null=True, blank=True)
    # When it last stopped waiting for a rating, or later; empty while it waits (factcheck.waiting, reports.rollup).
    left_queue_at = models.DateTimeField(null=True, blank=True)
    priority = models.FloatField(default=0)
    velocity_score = models.FloatField(default=0)
    flag_score = models.FloatField(default=0)
    age_score = models.FloatField(default=0)

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["-priority", "first_flagged_at"], name="post_queue_order", condition=QUEUED),
            # An organisation's queue by the languages or the countries it covers: a page's capped total reads each
            # counted post's id, language and country from one of them alone (migrations 0031 and 0032). Each is
            # keyed on one coverage column: the planner estimates a pair of columns by their statistics (migration
            # 0033), but an index on the pair as if they were independent, and ANDed its bitmap into searches.
            models.Index(fields=["language", "-priority"], include=["id", "country"], name="post_queue_coverage",
                         condition=QUEUED),
            models.Index(fields=["country"], include=["id", "language"], name="post_queue_country", condition=QUEUED),
            models.Index(fields=["page", "-posted_at"], name="post_page_recent"),
            models.Index(fields=["id"], name="post_not_yet_matched", condition=Q(matched_at__isnull=True)),
            # The posts sharing a text or a URL, oldest first: the matcher reads a key's first holders and stops
            # there (factcheck.matching.candidates), however many copies of one text there are. "" (no text, no
            # link) is never looked up.
            models.Index(fields=["text_key", "id"], name="post_text_key", condition=~Q(text_key="")),
            models.Index(fields=["url_key", "id"], name="post_url_key", condition=~Q(url_key="")),
            # Exact copies of rated claims are looked up by the words their ratings rated: RatedKeys' indexes.
            # The copies the matching and decision reconcilers look over every minute.
            models.Index(fields=["duplicate_of"], name="post_linked_copy",
                         condition=Q(queue_state__in=["grouped", "matched"])),
            # The few copies linked while unflagged (flagged for harm only), which regroup_rated looks over too.
            models.Index(fields=["duplicate_of"], name="post_unflagged_copy",
                         condition=Q(queue_state="unflagged", duplicate_of__isnull=False)),
            # A day's roll-up reads the posts waiting now (NULL) and those that left since (reports.rollup).
            models.Index(fields=["left_queue_at"], name="post_left_queue"),
        ]
        constraints = [
            # factcheck.timestamps: nothing before 2000 is a real post (and year 1 cannot even be read back).
            models.CheckConstraint(name="post_posted_since_2000", condition=Q(posted_at__gte=TIMESTAMPS_FROM)),
        ]
        # A post's language or country changed (a later flag, language detection): the pairs it is the copy of
        # say so (Match.post_language, post_country), in the same statement, after the post's row (docs/concurrency.md).
        triggers = [pgtrigger.Trigger(
            name="post_coverage_to_matches", when=pgtrigger.After, operation=pgtrigger.UpdateOf("language", "country"),
            condition=pgtrigger.AnyChange("language", "country"),
            func="UPDATE factcheck_match SET post_language = NEW.language, post_country = NEW.country"
                 " WHERE post_id = NEW.id; RETURN NULL;",
        )]

    def __str__(self) -> str:
        return self.external_id

    def save(self, *args, **kwargs) -> None:
        update_fields = kwargs.get("update_fields")
        if update_fields is None or {"url", "text"} & set(update_fields):
            (self.normalised_url, self.url_key, self.normalised_text,
             self.text_key, self.signature) = normalised_fields(url=self.url, text=self.text)
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, *NORMALISED_FIELDS}
        super().save(*args, **kwargs)


class Flag(models.Model):
    """One flag of a post, and what became of it: the answer its sender reads (GET /api/v1/flags/{key}).

    `status`, `outcome` and `decided_at` go from open to decided, and change again only when that decision is
    corrected: back to open (the removal that answered it lifted, staff reopening their decision; `reopened_at` says
    when), or to `removed` (a removal overruling staff's other decision). factcheck.routing and
    moderation.report_outcomes write them, each with its audit event and its `report.decided` webhook. Its sender may
    withdraw it (factcheck.withdrawal): it is kept, `withdrawn` for good, and counts for nothing any more; a decision
    that had answered it stands.
    """

    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="flags", db_index=False)  # (post, source)
    source = models.CharField(max_length=20, choices=FlagSource.choices)
    category = models.CharField(max_length=20, choices=FlagCategory.choices, default=FlagCategory.MISINFORMATION)
    reason = models.TextField(blank=True)
    flagged_at = models.DateTimeField()
    received_at = models.DateTimeField(auto_now_add=True)
    idempotency_key = models.CharField(max_length=200)  # unique per sending account: flag_key_per_account
    fingerprint = models.CharField(max_length=64, blank=True)  # factcheck.ingest.flag_fingerprint; "": sent before
    submitted_by = models.ForeignKey(  # indexed by flag_key_per_account
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False
    )
    status = models.CharField(max_length=10, choices=ReportStatus.choices, default=ReportStatus.OPEN)
    outcome = models.CharField(max_length=30, choices=ReportOutcome.choices, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # When its decision was last corrected by opening it again (moderation.report_outcomes.reopen_flags); None if
    # never. A reopened report of harm waits from then, not from its receipt (moderation.deadlines.waiting_since).
    reopened_at = models.DateTimeField(null=True, blank=True)
    # When and by whom its sender withdrew it (status `withdrawn`; `outcome` keeps what had answered it, if anything).
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    withdrawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_index=False
    )

    class Meta:
        indexes = [
            models.Index(fields=["post", "source"]),
            # A post's open reports of harm: what a decision closes, and what its queue row is counted from.
            models.Index(fields=["post"], name="flag_open_harm_report", condition=OPEN_HARM_REPORTS),
            # The figures' reads of a day's decided flags.
            models.Index(fields=["decided_at"], name="flag_decided_at", condition=Q(decided_at__isnull=False)),
            # The figures' reads of the reports withdrawn since a past day's end, open at it (reports.notices).
            models.Index(fields=["withdrawn_at"], name="flag_withdrawn_at", condition=Q(withdrawn_at__isnull=False)),
        ]
        constraints = [
            models.UniqueConstraint(fields=["submitted_by", "idempotency_key"], name="flag_key_per_account"),
            models.UniqueConstraint(fields=["idempotency_key"], name="flag_key_without_account",
                                    condition=Q(submitted_by__isnull=True)),
            models.CheckConstraint(name="flag_flagged_since_2000", condition=Q(flagged_at__gte=TIMESTAMPS_FROM)),
            models.CheckConstraint(
                name="flag_decided_with_outcome",
                condition=(Q(status="open", outcome="", decided_at__isnull=True, withdrawn_at__isnull=True)
                           | (Q(status="decided", decided_at__isnull=False, withdrawn_at__isnull=True)
                              & ~Q(outcome=""))
                           # Withdrawn while open, or after a decision answered it (which it keeps).
                           | (Q(status="withdrawn", withdrawn_at__isnull=False)
                              & (Q(outcome="", decided_at__isnull=True)
                                 | (Q(decided_at__isnull=False) & ~Q(outcome=""))))),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_source_display()} flag ({self.get_category_display()}) on post “{self.post.external_id}”"


class ClaimQuerySet(models.QuerySet):
    def live(self, now: datetime) -> ClaimQuerySet:
        """Claims that still hold their post at `now`: `Claim.is_live` as a query."""
        return self.filter(status=ClaimStatus.ACTIVE, expires_at__gt=now)

    def lapsed(self, now: datetime) -> ClaimQuerySet:
        """Active claims that no longer hold their post at `now` (the rest of the active ones): the expiry's."""
        return self.filter(status=ClaimStatus.ACTIVE, expires_at__lte=now)


class Claim(models.Model):
    """A reviewer's lease on a post; at most one active claim per post (database constraint).

    A claim holds its post while it is active and its lease has not run out (`is_live`, `Claim.objects.live`):
    an active claim past its time is one the periodic expiry has not reached yet, and anyone may take the post.
    """

    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="claims")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="claims",
                                 db_index=False)  # (reviewer, status)
    status = models.CharField(max_length=12, choices=ClaimStatus.choices, default=ClaimStatus.ACTIVE)
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    objects = ClaimQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["post"], condition=Q(status="active"), name="one_active_claim_per_post"
            )
        ]
        indexes = [
            models.Index(fields=["expires_at"], name="claim_active_expiry", condition=Q(status="active")),
            models.Index(fields=["reviewer", "status"]),
        ]

    def __str__(self) -> str:
        return f"Claim of post “{self.post.external_id}” by {self.reviewer} ({self.get_status_display().lower()})"

    def is_live(self, now: datetime) -> bool:
        """Whether the claim still holds its post at `now`."""
        return self.status == ClaimStatus.ACTIVE and self.expires_at > now


# The fields of a rating that record its supersession: the only ones that ever change.
SUPERSESSION_FIELDS = ("is_current", "superseded_by", "superseded_at")


class Rating(models.Model):
    """A fact-checker's verdict on a post. Never edited: a new rating supersedes it."""

    post = models.ForeignKey(Post, on_delete=models.PROTECT, related_name="ratings",
                             db_index=False)  # (post, -created_at)
    claim = models.ForeignKey(Claim, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ratings")
    organisation = models.ForeignKey(Organisation, on_delete=models.PROTECT, related_name="ratings")
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    rationale = models.TextField()
    sources = models.JSONField(default=list)
    article_url = models.URLField(max_length=2000, blank=True)
    # Why a current rating was changed (new evidence, an error); empty for a post's first rating.
    change_reason = models.TextField(blank=True)
    # The claim as it was rated: the post's text and URL when the rating was made (factcheck.ratings.claim_as_rated).
    # The platform may send a rated post again with other words or another link; the rating, its public page and
    # its ClaimReview keep what the fact-checker read, and the post page shows both when they differ.
    rated_text = models.TextField(blank=True)
    rated_url = models.URLField(max_length=2000, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    # When the organisation published it, if it was published outside Factdesk before it was
    # recorded here (an imported ClaimReview's datePublished); part of the immutable content.
    published_at = models.DateTimeField(null=True, blank=True)
    # Only these record the rating's supersession; everything else is its content, never changed.
    is_current = models.BooleanField(default=True)
    superseded_by = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supersedes"
    )
    superseded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["post"], condition=Q(is_current=True), name="one_current_rating_per_post")
        ]
        indexes = [models.Index(fields=["post", "-created_at"])]
        triggers = content_triggers("rating", mutable=SUPERSESSION_FIELDS)

    def __str__(self) -> str:
        return f"{self.get_verdict_display()} rating of post “{self.post.external_id}” by {self.organisation.name}"

    def save(self, *args, **kwargs) -> None:
        # The Python twin of the database trigger: an existing rating changes only its supersession.
        update_fields = kwargs.get("update_fields")
        if not self._state.adding and (update_fields is None or not set(update_fields) <= set(SUPERSESSION_FIELDS)):
            raise AppendOnlyError("a rating's content is never changed; record a new rating instead")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("ratings are never deleted; a new rating supersedes them")

    def rated_claim_differs(self, post: Post) -> bool:
        """Whether `post` is this rating's own post and now reads otherwise than the claim this rating rated: the
        platform sent it again with other words or another link since. Never for a copy carrying the rating."""
        return post.pk == self.post_id and (self.rated_text != post.text or self.rated_url != post.url)


# Their own modules only because this one is at its length; imported here so Django registers them.
import factcheck.models_bands  # noqa: E402,F401  (PostBand, RatedBand: import them from there)
import factcheck.models_media  # noqa: E402,F401  (PostMedia, MediaBand, RatedMediaBand: import them from there)
import factcheck.models_semantic  # noqa: E402,F401  (PostEmbedding, SemanticBand)
from factcheck.models_drafts import RatingDraft as RatingDraft  # noqa: E402
from factcheck.models_matches import LINKED_STATES as LINKED_STATES  # noqa: E402
from factcheck.models_matches import Match as Match  # noqa: E402
from factcheck.models_matches import MatchGuard as MatchGuard  # noqa: E402
from factcheck.models_matches import MatchMethod as MatchMethod  # noqa: E402
from factcheck.models_matches import MatchState as MatchState  # noqa: E402
from factcheck.models_membership import Membership as Membership  # noqa: E402
