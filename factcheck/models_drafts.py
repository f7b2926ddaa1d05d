"""A reviewer's unsaved rating of a post, kept on the server as it is typed (factcheck.drafts).

Private to its reviewer: only that reviewer's post page reads it, to fill the rating form again after
a reload, a lapsed claim or a re-claim. Never in the API, the exports or anyone else's page. Deleted
when that reviewer's rating of the post is saved, or once nobody has saved it for FACTDESK_RATING_DRAFT_DAYS.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class RatingDraft(models.Model):
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="rating_drafts",
                                 db_index=False)  # one_rating_draft_per_reviewer_post
    post = models.ForeignKey("factcheck.Post", on_delete=models.CASCADE, related_name="+")
    # As typed: a draft is unfinished, so none of these is checked beyond its bounds (factcheck.drafts).
    verdict = models.CharField(max_length=20, blank=True)
    rationale = models.TextField(blank=True)
    sources = models.TextField(blank=True)  # one URL a line, as in the form
    article_url = models.CharField(max_length=2000, blank=True)
    change_reason = models.TextField(blank=True)
    # The rating the form saw as current when this was typed (None: none). A draft whose `replaces` is no
    # longer the post's current rating is stale: someone rated the post since, so the page shows it apart,
    # read-only, and never fills the form with it (factcheck.drafts).
    replaces = models.ForeignKey("factcheck.Rating", null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="+")
    updated_at = models.DateTimeField()

    class Meta:
        app_label = "factcheck"
        constraints = [models.UniqueConstraint(fields=["reviewer", "post"], name="one_rating_draft_per_reviewer_post")]

    def __str__(self) -> str:
        return f"Draft rating of post {self.post_id} by {self.reviewer_id}"
