"""Each post's sentence embedding, and the keys that find posts saying the same claim in other words.

PRODUCT.md, "Same claim, other words, other languages". The embedding (factcheck.semantic) is made after the
post's ingest commits, by the matching job, and stored as 512 signed bytes: cosine similarity is computed on
them as they are (the scale of each vector cancels out). Its random-hyperplane LSH keys
(factcheck.semantic.band_keys) are SemanticBand rows, as MediaBand holds images' and PostBand texts' keys: a
composite primary key that a batch of keys probes one B-tree lookup each (pgvector is not on the PostgreSQL
this project runs on).
"""

from __future__ import annotations

from django.db import models


class PostEmbedding(models.Model):
    """A post's text as a multilingual sentence embedding, by the model named in `model`."""

    post = models.OneToOneField("factcheck.Post", on_delete=models.CASCADE, primary_key=True,
                                related_name="embedding")
    # 512 int8 components (factcheck.semantic.to_bytes); a post without words to embed has none.
    vector = models.BinaryField()
    # The language of the text as embedded: the post's own, or detected (`language_detected`) when the
    # platform sent none; the detected one is written to the post too, so that coverage routes it.
    language = models.CharField(max_length=8, blank=True)
    language_detected = models.BooleanField(default=False)
    model = models.CharField(max_length=80)
    embedded_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"Embedding of post {self.post_id}"


class SemanticBand(models.Model):
    """One LSH key of a post's embedding (factcheck.semantic.band_keys): posts saying the same claim share some."""

    pk = models.CompositePrimaryKey("band", "post")
    band = models.IntegerField()
    post = models.ForeignKey("factcheck.Post", on_delete=models.CASCADE, related_name="+", db_constraint=False)
    # The post's 128-bit sketch (factcheck.semantic.sketch), in every row of the post: the primary key INCLUDEs it
    # (migration 0023), so that a probe ranks its candidates by an index-only scan, before any vector is read.
    sketch_high = models.BigIntegerField(default=0)
    sketch_low = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.band} of post {self.post_id}"


class SemanticBackfill(models.Model):
    """How far factcheck.matching.semantic_backfill has walked the posts, in id order, for the model named `model`:
    every matched post up to `through_post` has an embedding by it, or has no words to embed, or was a linked copy.
    A new model starts from the first post, so every post is embedded again."""

    model = models.CharField(max_length=80, primary_key=True)
    through_post = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.model} through post {self.through_post}"
