"""Posts' media: the items a flag carries, stored per item, and the arithmetic of their PDQ hashes.

PRODUCT.md, "Media: images and video". The platform hashes its images (PDQ, MD5) as it does for HMA;
Factdesk stores the hashes and never fetches a URL. A PDQ hash is kept as its 64 hex characters (the
form ThreatExchange and HMA exchange: the first bit of pdqhash's vector is the highest bit of the first
hex digit) and compared as a Python int: the distance of two hashes is the number of bits they differ by.

The keys (factcheck.models_media says why 16 chunks of 16 bits): `band_keys` are an image's own chunks, as
stored; `probe_keys` are every chunk value within `radius` bits of the image's, as looked up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import combinations

from django.conf import settings
from django.utils import timezone

from core.bulk import insert_rows, insert_rows_returning_ids
from factcheck.models_media import MediaBand, PostMedia

BITS = 256
CHUNKS = 16
CHUNK_BITS = BITS // CHUNKS
_CHUNK_MASK = (1 << CHUNK_BITS) - 1
# PDQ's own bar: a hash of a flat or tiny image (quality under 50) says little and matches too much.
MIN_QUALITY = 50
MAX_ITEMS = 10


@dataclass(frozen=True)
class MediaInput:
    """One media item of a flag's post, validated (factcheck.flag_input): hashes lower-case hex or ""."""

    kind: str
    url: str
    pdq: str = ""
    md5: str = ""
    alt_text: str = ""
    quality: int | None = None
    still_url: str = ""


# An item's fields as the flag sends them, in this order: its fingerprint (factcheck.ingest), the comparison with
# what is stored (factcheck.ingest_media) and the API's answer (moderation.api) all read them from here.
ITEM_FIELDS = tuple(field.name for field in fields(MediaInput))


def item_values(item: MediaInput) -> list:
    """The item's values in ITEM_FIELDS order."""
    return [getattr(item, name) for name in ITEM_FIELDS]


MEDIA_COLUMNS = ("post", "position", "kind", "url", "still_url", "pdq", "quality", "md5", "alt_text", "swept_at")


def pdq_int(pdq: str) -> int:
    return int(pdq, 16)


def pdq_hex(value: int) -> str:
    return f"{value:064x}"


def distance(a: int, b: int) -> int:
    """How many of the 256 bits two PDQ hashes differ by."""
    return (a ^ b).bit_count()


def similarity(bits_apart: int) -> float:
    """A match's score: the share of the 256 bits two hashes agree on (1.0 for the same file)."""
    return round(1 - bits_apart / BITS, 4)


# PDQ sets a bit where a frequency is above the median of all 256: an image's hash has about half its bits set.
# A hash far from that is of a flat or blank picture (all zeros, say), which would match every other one.
BALANCED_BITS = range(BITS // 2 - 28, BITS // 2 + 29)


def matchable(pdq: str, quality: int | None) -> bool:
    """Whether a hash takes part in matching: sent, not of low quality, and one a real picture can have
    (BALANCED_BITS). A hash sent without its quality is the platform's own, which it hashed as HMA does, refusing
    low-quality images itself. The bits are checked whatever quality the platform says: an all-zero hash sent with
    quality 100 gave an altered rating to an unrelated post carrying the same zeros."""
    if not pdq or (quality is not None and quality < MIN_QUALITY):
        return False
    return pdq_int(pdq).bit_count() in BALANCED_BITS


# The MD5 of no bytes at all: what a platform's failed download hashes to, for a picture and a video alike. Two
# posts carrying it share no file, so it matches nothing.
EMPTY_FILE_MD5 = "d41d8cd98f00b204e9800998ecf8427e"


def matchable_md5(md5: str) -> bool:
    return bool(md5) and md5 != EMPTY_FILE_MD5


def search_radius() -> int:
    """Bits each chunk is probed within: two hashes FACTDESK_MEDIA_MATCH_DISTANCE apart agree to within this
    many bits on at least one of the 16 chunks (pigeonhole)."""
    return settings.FACTDESK_MEDIA_MATCH_DISTANCE // CHUNKS


def _chunk_values(value: int) -> list[int]:
    return [(value >> (CHUNK_BITS * (CHUNKS - 1 - i))) & _CHUNK_MASK for i in range(CHUNKS)]


def band_keys(value: int) -> list[int]:
    """The image's 16 chunks, each as one integer key: its place (0-15) in the high bits, its value below."""
    return [(i << CHUNK_BITS) | chunk for i, chunk in enumerate(_chunk_values(value))]


def hash_words(value: int) -> tuple[int, int, int, int]:
    """The hash as four signed 64-bit words, highest first: how band rows carry it (factcheck.models_media)."""
    words = [(value >> (64 * (3 - i))) & (2**64 - 1) for i in range(4)]
    return tuple(word - 2**64 if word >= 2**63 else word for word in words)


def words_value(words) -> int:
    """The hash whose words (`hash_words`) these are."""
    value = 0
    for word in words:
        value = (value << 64) | (word & (2**64 - 1))
    return value


# The columns of a band row that hold its hash's words, highest first; a whole band row, in this order (`band_rows`).
WORD_COLUMNS = ("h1", "h2", "h3", "h4")
BAND_COLUMNS = ("band", "media", "post", *WORD_COLUMNS)


def band_rows(media_id: int, post_id: int, value: int) -> list[tuple]:
    """The rows of an item's hash in a band table: one per band key, each with the item's post and hash."""
    words = hash_words(value)
    return [(key, media_id, post_id, *words) for key in band_keys(value)]


_FLIPS = {r: [sum(1 << bit for bit in bits) for n in range(r + 1) for bits in combinations(range(CHUNK_BITS), n)]
          for r in range(3)}


def probe_keys(value: int, *, radius: int | None = None) -> list[int]:
    """Every key within `radius` bits (default `search_radius()`) of each of the image's chunks: 16 x 17 keys
    at radius 1, among which any image within FACTDESK_MEDIA_MATCH_DISTANCE has at least one of its own."""
    flips = _FLIPS[search_radius() if radius is None else radius]
    return [(i << CHUNK_BITS) | (chunk ^ flip) for i, chunk in enumerate(_chunk_values(value)) for flip in flips]


def store_media(items: Mapping[int, Sequence[MediaInput]]) -> list[int]:
    """Store posts' media (post id -> its items, in order), with the band keys of their hashes; the caller
    has removed what the posts carried before. Returns the new items' ids.

    Stored as swept (`swept_at` now): a post's items wait to be swept only once it is rated
    (factcheck.matching.media.index_rated_media), so the partial index of unswept items stays as small as the
    sweeps that are due, which the reconciler reads every minute."""
    swept_at = timezone.now()
    rows = [(post_id, position, item.kind, item.url, item.still_url, item.pdq, item.quality, item.md5,
             item.alt_text, swept_at)
            for post_id, post_items in items.items() for position, item in enumerate(post_items)]
    if not rows:
        return []
    ids = insert_rows_returning_ids(PostMedia, MEDIA_COLUMNS, rows)
    insert_rows(MediaBand, BAND_COLUMNS, sorted(
        {band for pk, row in zip(ids, rows, strict=True) if matchable(row[5], row[6])
         for band in band_rows(pk, row[0], pdq_int(row[5]))}))
    return ids
