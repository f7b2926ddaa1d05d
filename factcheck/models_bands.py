"""The MinHash band keys of posts' texts, by which near-duplicates find each other (factcheck.matching.candidates).

PostBand files every matched post's keys under its claim; RatedBand the rated claims' (and their copies') keys, what
a new post is matched to on arrival. Each is a composite primary key and nothing else: a batch's keys are one B-tree
probe each, whatever the number of posts.
"""

from __future__ import annotations

from django.db import models


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
