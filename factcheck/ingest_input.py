"""What an ingest batch is made of (factcheck.ingest): flags, each naming its post and the post's page, as the API's
validation (factcheck.flag_input), the importers and the demo build them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from factcheck.media import MediaInput
from factcheck.models import FlagCategory, MediaType


@dataclass(frozen=True)
class PageInput:
    external_id: str
    name: str
    is_politician: bool = False


@dataclass(frozen=True)
class PostInput:
    external_id: str
    page: PageInput
    posted_at: datetime
    url: str = ""
    text: str = ""
    language: str = ""
    country: str = ""
    media_type: str = MediaType.TEXT
    topic: str = ""
    views: int = 0
    shares: int = 0
    # None: the flag does not say (the stored media stay); a tuple, even empty, replaces them.
    media: tuple[MediaInput, ...] | None = None


@dataclass(frozen=True)
class FlagInput:
    idempotency_key: str
    source: str
    post: PostInput
    flagged_at: datetime
    reason: str = ""
    category: str = FlagCategory.MISINFORMATION
    # flag_fingerprint of the flag as sent; "" has ingest take it from the fields above.
    fingerprint: str = ""
