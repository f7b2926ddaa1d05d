"""The demo's media: its pictures as files the site serves, and as the items the platform sends with its flags.

The pictures are drawn by factcheck.demo_pictures at seed time and written to DEMO_MEDIA_DIR (`var/demo-media/`),
a static directory (config/settings.py STATICFILES_DIRS serves it as `/static/demo-media/`; `bin/run` collects
it after seeding). Each item's URL is the site's own (FACTDESK_PUBLIC_URL), which factcheck.media_display shows from the
site whatever FACTDESK_MEDIA_HOSTS says; its PDQ, quality and MD5 come from the file's bytes through
factcheck.media_hashing, as `POST /api/v1/media/hash` computes them. The items go in with the flags
(PostInput.media), through ingest, so matching by media runs as it does for the platform's posts.

The story the demo tells: bob rated a picture of a shark on a flooded motorway `altered`
(factcheck.demo_checks); after that, four other pages posted copies of it, cropped, re-encoded at low quality,
captioned, or all three, with their own words (ALTERED_COPIES). Each copy is matched to the rated post on
arrival by its picture (method `media`) and carries its rating, whatever its text says.

The video posts carry their platform's video link (on the platform's video host, not a media host: shown as
text) and a still from the site.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from core.public_site import public_url
from factcheck.demo_pictures import altered_copy, memo, shark_flood, still, street_flood
from factcheck.ingest import FlagInput, PageInput, PostInput
from factcheck.media import MediaInput
from factcheck.media_hashing import hash_image
from factcheck.models import FlagSource, MediaType
from factcheck.models_media import MediaKind, PostMedia

FOLDER = "demo-media"
VIDEO_URL = "https://video.social.example/watch/{post}"
SHARK_ALT = "A shark's fin and tail above the water of a flooded motorway, a city's skyline behind it."
ALTERED = "shark-flood.jpg"

# Every fixed picture: its file name -> how it is drawn. The generated posts' pictures are named by their
# drawing and seed ("flood-1012.jpg", "memo-en-1040.jpg"), so that any of them can be drawn again from its name.
FIXED: dict[str, Callable[[], bytes]] = {
    ALTERED: shark_flood,
    "shark-flood-cropped.jpg": lambda: altered_copy(shark_flood(), crop=True),
    "shark-flood-low-quality.jpg": lambda: altered_copy(shark_flood(), low_quality=True),
    "shark-flood-captioned.jpg": lambda: altered_copy(shark_flood(), caption="SHARE BEFORE THEY DELETE THIS"),
    "shark-flood-every-change.jpg": lambda: altered_copy(shark_flood(), crop=True, low_quality=True,
                                                         caption="Hai auf der Autobahn!"),
    "clinic-interview-still.jpg": lambda: still(4002, banner="FERTILITY CLINIC: THE INTERVIEW"),
    "airport-gold-still.jpg": lambda: still(4005, banner="BREAKING: GOLD AT THE AIRPORT"),
    "trinkwasser-dokument.jpg": lambda: memo(4008, title="VERTRAULICH: RHEINWASSER"),
}
MEMO_TITLES = {"en": "INTERNAL MEMO", "de": "INTERNES DOKUMENT", "fr": "NOTE INTERNE"}
_GENERATED = re.compile(r"(flood)-(\d+)\.jpg|(memo)-([a-z]{2})-(\d+)\.jpg")


def folder() -> Path:
    return Path(settings.DEMO_MEDIA_DIR)


def url_of(name: str) -> str:
    """The picture's URL on the site, as the platform would send it (absolute)."""
    return public_url(f"/{settings.STATIC_URL.strip('/')}/{FOLDER}/{name}")


def _draw(name: str) -> bytes:
    if name in FIXED:
        return FIXED[name]()
    found = _GENERATED.fullmatch(name)
    if found is None:
        raise KeyError(f"no demo picture is named {name!r}")
    if found.group(1):
        return street_flood(int(found.group(2)))
    return memo(int(found.group(5)), title=MEMO_TITLES[found.group(4)])


def _write(name: str, data: bytes) -> None:
    path = folder() / name
    if not path.is_file() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


@lru_cache(maxsize=256)
def _drawn(name: str) -> bytes:
    return _draw(name)  # the same bytes every time: drawn once a process


def picture(name: str) -> bytes:
    """The picture's bytes, written to its file if the file is missing or differs."""
    data = _drawn(name)
    _write(name, data)
    return data


def image_item(name: str, alt: str = "") -> MediaInput:
    """A picture as the platform sends it: its URL, hashes and alt text."""
    hashed = _hashed(picture(name))
    return MediaInput(kind=MediaKind.IMAGE, url=url_of(name), pdq=hashed.pdq, md5=hashed.md5,
                      quality=hashed.quality, alt_text=alt)


@lru_cache(maxsize=256)
def _hashed(data: bytes):
    return hash_image(data)


def video_item(*, post: str, still_name: str, alt: str) -> MediaInput:
    picture(still_name)
    return MediaInput(kind=MediaKind.VIDEO, url=VIDEO_URL.format(post=post), still_url=url_of(still_name),
                      alt_text=alt)


def checked_media(external_id: str, spec_media: str) -> tuple[MediaInput, ...]:
    """A rated post's media, by the picture its spec names (factcheck.demo_checks): a still for a video."""
    if not spec_media:
        return ()
    if spec_media.endswith("-still.jpg"):
        return (video_item(post=external_id, still_name=spec_media, alt="A still of the video"),)
    return (image_item(spec_media, SHARK_ALT if spec_media == ALTERED else ""),)


def generated_media(*, number: int, template_index: int, language: str) -> tuple[MediaInput, ...]:
    """A generated post's picture, by its template (factcheck.demo.TEMPLATES): the leaked memo (2) or the flood
    photo (3), each drawn for this post; none for the others."""
    if template_index == 2:
        return (image_item(f"memo-{language}-{1000 + number}.jpg", "A photographed page stamped confidential."),)
    if template_index == 3:
        return (image_item(f"flood-{1000 + number}.jpg", "A flooded street, cars under water to their roofs."),)
    return ()


@dataclass(frozen=True)
class CopySpec:
    page: str  # a page of factcheck.demo.PAGES
    picture: str
    text: str
    posted_hours_ago: float
    views: int


# Copies of the altered picture, posted after it was rated, on pages that are not repeat offenders (each copy
# is a strike on its page, as a matched rating is).
ALTERED_COPIES = (
    CopySpec("the-london-ledger", "shark-flood-cropped.jpg",
             "Unbelievable scenes from Texas: a shark swimming down the motorway after the storm.", 20, 41_000),
    CopySpec("dublin-community-news", "shark-flood-low-quality.jpg",
             "Would you drive through this? A shark on a flooded highway in Houston last night.", 14, 8_300),
    CopySpec("wahrheit-jetzt", "shark-flood-captioned.jpg",
             "Ein Hai auf der überfluteten Autobahn in Houston! Das zeigen euch die Medien nicht.", 10, 23_000),
    CopySpec("le-vrai-journal", "shark-flood-every-change.jpg",
             "Un requin sur l'autoroute inondée de Houston, photo prise ce matin par un automobiliste.", 6, 15_500),
)


def external_id_of_copy(number: int) -> str:
    return f"demo-m{number:03d}"


def altered_copy_flags(*, page_names: dict[str, str], languages: dict[str, tuple[str, str]],
                       now: datetime) -> list[FlagInput]:
    """The copies' flags, one user report each, as the platform sends them: each post with its picture."""
    flags = []
    for number, spec in enumerate(ALTERED_COPIES, start=1):
        language, country = languages[spec.page]
        posted = now - timedelta(hours=spec.posted_hours_ago)
        external_id = external_id_of_copy(number)
        post = PostInput(
            external_id=external_id, page=PageInput(external_id=spec.page, name=page_names[spec.page]),
            posted_at=posted, url=f"https://social.example/{spec.page}/posts/m{number}", text=spec.text,
            language=language, country=country, media_type=MediaType.IMAGE, views=spec.views,
            shares=spec.views // 30, media=(image_item(spec.picture),),
        )
        flags.append(FlagInput(idempotency_key=f"demo-media-{number:03d}", source=FlagSource.USER_REPORT,
                               reason="Fake news", post=post, flagged_at=posted + timedelta(minutes=50)))
    return flags


def stored_picture_names() -> list[str]:
    """The demo pictures the stored posts show (images and stills), by file name."""
    prefix = url_of("")
    urls: Iterable[str] = (url for pair in PostMedia.objects.values_list("url", "still_url") for url in pair)
    return sorted({url[len(prefix):] for url in urls if url.startswith(prefix)})


def write_pictures(names: Iterable[str]) -> int:
    """Draw again any of these pictures whose file is missing (a fresh var/ under a database seeded before)."""
    written = 0
    for name in names:
        if not (folder() / name).is_file():
            _write(name, _drawn(name))
            written += 1
    return written
