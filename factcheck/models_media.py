"""The media a post carries (PRODUCT.md, "Media: images and video"), and the keys that find similar images.

A post carries up to 10 items, each stored as a PostMedia row in the order the platform sent them. An
image's PDQ hash (256 bits, 64 hex characters) is cut into 16 chunks of 16 bits; each chunk is a band key
(factcheck.media.band_keys) in MediaBand, for every post's images, and in RatedMediaBand, for rated posts'
images only: what a new post is compared with on arrival, inside its ingest batch, as RatedBand is for text.
Two hashes at most 31 bits apart agree on at least one chunk to within one bit (16 chunks x 2 bits > 31),
so probing each chunk's value and its 16 one-bit neighbours finds every such pair (multi-index hashing,
as HMA's PDQ index does with faiss).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class MediaKind(models.TextChoices):
    IMAGE = "image", "Image"
    VIDEO = "video", "Video"


class PostMedia(models.Model):
    """One picture or video of a post, as the platform describes it: Factdesk never fetches it itself."""

    post = models.ForeignKey("factcheck.Post", on_delete=models.CASCADE, related_name="media",
                             db_index=False)  # media_position_per_post
    position = models.PositiveSmallIntegerField()  # 0 to 9, in the order the platform sent them
    kind = models.CharField(max_length=10, choices=MediaKind.choices)
    url = models.URLField(max_length=2000)
    # A video's still image, when the platform sends one (shown, blurred, as the link to the video).
    still_url = models.URLField(max_length=2000, blank=True)
    # The PDQ perceptual hash, 64 lower-case hex characters; "" when the platform sent none.
    pdq = models.CharField(max_length=64, blank=True)
    # PDQ's own quality figure (0-100), when the platform sent it; below 50 the hash is not matched.
    quality = models.PositiveSmallIntegerField(null=True, blank=True)
    # The exact file's MD5, 32 lower-case hex characters; "" when the platform sent none.
    md5 = models.CharField(max_length=32, blank=True)
    alt_text = models.TextField(blank=True)
    # When this item of a rated post was last compared with every post's media (factcheck.matching.media);
    # NULL while its post's latest rating has not been carried to the posts that carry the same image.
    swept_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["post", "position"], name="media_position_per_post"),
            models.CheckConstraint(name="media_position_under_ten", condition=Q(position__lt=10)),
        ]
        indexes = [
            models.Index(fields=["md5"], name="media_md5", condition=~Q(md5="")),
            models.Index(fields=["id"], name="media_not_swept", condition=Q(swept_at__isnull=True)),
        ]
        ordering = ["post", "position"]
        verbose_name_plural = "post media"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.position + 1} of post {self.post_id}"


class _HashWords(models.Model):
    """A band row carries its item's post and the item's whole hash as four signed 64-bit words
    (factcheck.media.hash_words), and the primary key INCLUDEs them (migration 0024): a probe finds each candidate's
    hash in the index's own pages and PostgreSQL counts the bits apart, so a lookup reads no item row and answers
    only the matches (factcheck.matching.media). Among a million stored hashes that took the lookup from 34.6 ms to
    about 6 ms, p95 (docs/performance.md, "Media"), for 1.1 GiB more per million hashes."""

    post = models.ForeignKey("factcheck.Post", on_delete=models.DO_NOTHING, related_name="+", db_constraint=False,
                             db_index=False)
    h1 = models.BigIntegerField()
    h2 = models.BigIntegerField()
    h3 = models.BigIntegerField()
    h4 = models.BigIntegerField()

    class Meta:
        abstract = True


class MediaBand(_HashWords):
    """One 16-bit chunk of an image's PDQ hash (factcheck.media.band_keys), for every post's images."""

    pk = models.CompositePrimaryKey("band", "media")
    band = models.IntegerField()
    media = models.ForeignKey(PostMedia, on_delete=models.CASCADE, related_name="+", db_constraint=False)

    def __str__(self) -> str:
        return f"{self.band} of media {self.media_id}"


class RatedMediaBand(_HashWords):
    """The chunks of rated posts' images: what a new post's images are compared with on arrival."""

    pk = models.CompositePrimaryKey("band", "media")
    band = models.IntegerField()
    media = models.ForeignKey(PostMedia, on_delete=models.CASCADE, related_name="+", db_constraint=False)

    def __str__(self) -> str:
        return f"{self.band} of rated media {self.media_id}"
