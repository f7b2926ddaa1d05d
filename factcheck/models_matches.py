"""Matches: that one post is a copy of another, how it was found and what became of the pair
(factcheck.matching records and decides them)."""

from __future__ import annotations

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import Q


class MatchMethod(models.TextChoices):
    URL = "url", "Same normalised URL"
    TEXT = "text", "Same normalised text"
    MINHASH = "minhash", "Near-duplicate text"
    MEDIA = "media", "Same or similar image"
    SEMANTIC = "semantic", "Same claim in other words"


class MatchState(models.TextChoices):
    AUTO = "auto", "Matched automatically"
    SUGGESTED = "suggested", "Suggested"
    CONFIRMED = "confirmed", "Confirmed by a fact-checker"
    REJECTED = "rejected", "Rejected"


# A pair in these states links the copy to its source: the source's rating reaches it.
LINKED_STATES = (MatchState.AUTO, MatchState.CONFIRMED)


class MatchGuard(models.TextChoices):
    NONE = "", "None"
    SHORT_TEXT = "short_text", "Under 8 words"
    LINKS = "links", "Links to other content"
    POLARITY = "polarity", "Negation or polarity differs"
    NUMBERS = "numbers", "Numbers differ"
    NAMES = "names", "Names differ"
    WORDING = "wording", "A word swapped for another"


SUGGESTED = Q(state=MatchState.SUGGESTED)


class Match(models.Model):
    """That `post` is a copy of `source`, the first post of a claim, with how it was found.
    Never deleted: a rejected pair stays, so that it is never suggested or matched again.
    The only transitions are factcheck.matching.matcher's (suggested -> confirmed | rejected,
    auto | confirmed -> rejected when a reversal unlinks the copy, confirmed -> rejected when a fact-checker takes the
    confirmation back) and factcheck.matching.undoing's (rejected -> suggested when a fact-checker undoes their
    rejection of a suggestion), each audited.
    """

    # Each indexed first in a pair of columns: (post, source), (post, state), (source, state).
    post = models.ForeignKey("factcheck.Post", on_delete=models.PROTECT, related_name="matches", db_index=False)
    source = models.ForeignKey("factcheck.Post", on_delete=models.PROTECT, related_name="copies", db_index=False)
    method = models.CharField(max_length=10, choices=MatchMethod.choices)
    score = models.FloatField()
    state = models.CharField(max_length=10, choices=MatchState.choices)
    # What held a pair that scored above the automatic threshold at suggestion; on a semantic pair (never automatic),
    # what its reviewer is warned of ("this copy negates the claim").
    guard = models.CharField(max_length=12, choices=MatchGuard.choices, blank=True)
    created_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    # The copy's (`post`'s) language and country, kept equal to the post's by the database (PostgreSQL: the trigger
    # below and Post's `post_coverage_to_matches`), so that an organisation's waiting suggestions stored this way
    # round are read from the indexes of the pairs whose copy it covers (factcheck.matching.confirmable) rather than
    # by walking every suggested pair. Every writer of a pair holds its post's lock (docs/concurrency.md lists them),
    # so the two triggers never miss each other. '' by default: SQLite, which has no triggers, never
    # reads them.
    post_language = models.CharField(max_length=8, blank=True, editable=False, db_default="")
    post_country = models.CharField(max_length=2, blank=True, editable=False, db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["post", "source"], name="one_match_per_pair"),
            models.CheckConstraint(name="match_not_to_itself", condition=~Q(post=models.F("source"))),
        ]
        indexes = [
            models.Index(fields=["source", "state"]),
            models.Index(fields=["post", "state"]),
            # The suggested pairs by their copy's language, and by its country, newest last (migration 0035): an
            # organisation's newest waiting suggestions are read backwards from its language's or country's pairs.
            models.Index(fields=["post_language", "id"], name="suggested_post_language", condition=SUGGESTED),
            models.Index(fields=["post_country", "id"], name="suggested_post_country", condition=SUGGESTED),
        ]
        triggers = [
            pgtrigger.Trigger(
                name="match_copy_coverage", when=pgtrigger.Before,
                operation=pgtrigger.Insert | pgtrigger.UpdateOf("post_id"),
                # One row whatever is found (an aggregate): a pair written before its post (the foreign keys are
                # checked at commit) keeps '' rather than a NULL in its NOT NULL columns.
                func="SELECT COALESCE(MAX(language), ''), COALESCE(MAX(country), '') INTO NEW.post_language,"
                     " NEW.post_country FROM factcheck_post WHERE id = NEW.post_id; RETURN NEW;",
            ),
        ]
        verbose_name_plural = "matches"

    def __str__(self) -> str:
        return f"Post “{self.post.external_id}” as a copy of “{self.source.external_id}” ({self.get_state_display()})"

    @property
    def linked(self) -> bool:
        return self.state in LINKED_STATES
