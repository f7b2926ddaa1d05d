"""The keys by which near-duplicates find each other (factcheck.matching.candidates).

PostBand files every matched post's MinHash band keys under its claim; RatedBand the rated claims' (and their copies')
keys, what a new post is matched to on arrival. Each is a composite primary key and nothing else: a batch's keys are
one B-tree probe each, whatever the number of posts. RatedKeys holds a rated claim's text and URL keys as its rating
rated them (factcheck.matching.as_rated).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class PostBand(models.Model):
    """One MinHash band key of a post: near-duplicates share one. Written when the post is matched. The
    composite primary key is the only index: looking up a batch's keys is a B-tree probe each."""

    pk = models.CompositePrimaryKey("band", "post")
    band = models.IntegerField()
    post = models.ForeignKey("factcheck.Post", on_delete=models.CASCADE, related_name="+", db_constraint=False)

    def __str__(self) -> str:
        return f"{self.band} of {self.post_id}"


class RatedBand(models.Model):
    """The band keys of rated claims, each filed under its claim with its group's copies' keys, as in PostBand
    (factcheck.matching.candidates.index_rated_claim): what a new post is matched to on arrival, inside its
    ingest batch, a B-tree probe a key (the rated claims' groups only, a part of PostBand)."""

    pk = models.CompositePrimaryKey("band", "post")
    band = models.IntegerField()
    post = models.ForeignKey("factcheck.Post", on_delete=models.CASCADE, related_name="+", db_constraint=False)

    def __str__(self) -> str:
        return f"{self.band} of rated {self.post_id}"


class RatedKeys(models.Model):
    """A rated post's matching keys as its current rating rated it: `Rating.rated_text` and `rated_url` normalised
    (factcheck.normalise), written with each rating of the post (factcheck.matching.as_rated). The matcher reads a
    rated claim by these, not by the post's own keys, which follow what the platform sent last."""

    post = models.OneToOneField("factcheck.Post", on_delete=models.CASCADE, primary_key=True, related_name="rated_keys")
    rating = models.ForeignKey("factcheck.Rating", on_delete=models.PROTECT, related_name="+", db_index=False)
    normalised_text = models.TextField(blank=True)
    url_key = models.CharField(max_length=40, blank=True)
    text_key = models.CharField(max_length=40, blank=True)
    signature = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = "rated keys"
        indexes = [
            # A new post's exact copies of rated claims, looked up inside its ingest batch; "" is never looked up.
            models.Index(fields=["text_key", "post"], name="ratedkeys_text_key", condition=~Q(text_key="")),
            models.Index(fields=["url_key", "post"], name="ratedkeys_url_key", condition=~Q(url_key="")),
        ]

    def __str__(self) -> str:
        return f"keys of rated {self.post_id}"
