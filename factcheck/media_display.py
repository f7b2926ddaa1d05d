"""Which of a post's media a page may load or link, and how each item is shown (PRODUCT.md, "Media").

One rule for every page (the post page, the queue's rows, the owners' portal): an item's URL is put in an
`<img src>` or an `<a href>` only when it is https on a host of FACTDESK_MEDIA_HOSTS, matched as the page's
CSP matches it (config/settings.py adds `https://host` to img-src for each: a `*.` entry covers the
subdomains, not the bare host; a host without a port means port 443), or when it is one of the site's own
static files (the demo's pictures, `seed_demo`), shown by its path so that CSP's 'self' covers it whatever
host name the site is reached by. Anything else (another host, http, a user:password@ part) is shown as
text: its host, its alt text and its URL, never loaded and never a link.

Whether an image starts blurred is the person's choice (User.show_media); the templates take it as
`media_shown`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.templatetags.static import static

from core.public_site import public_url
from factcheck.models_media import MediaKind, PostMedia

# A static file's path as the site serves it: no "..", no backslash, no query (nothing a browser would
# resolve to another path of the site).
_STATIC_PATH = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._/-]*")
THUMBNAILS = 3  # a queue row shows at most this many of a post's items


@dataclass(frozen=True)
class ShownMedia:
    """One item as a page shows it: `src` (the image, or a video's link) and `still` (a video's still image)
    are what goes into the markup, "" when the rule above refuses the URL."""

    id: int
    kind: str
    url: str
    host: str
    alt: str
    src: str
    still: str

    @property
    def is_video(self) -> bool:
        return self.kind == MediaKind.VIDEO

    @property
    def label(self) -> str:
        return "Video" if self.is_video else "Image"


def _host_allowed(host: str, port: int | None) -> bool:
    for entry in settings.FACTDESK_MEDIA_HOSTS:
        name, _, entry_port = entry.partition(":")
        if (int(entry_port) if entry_port else 443) != (443 if port is None else port):
            continue
        if name.startswith("*."):  # the subdomains only, as CSP's https://*.host
            if host.endswith(name[1:]):
                return True
        elif host == name:
            return True
    return False


def _own_static(url: str) -> str:
    """The site's own static file's path ("/static/demo-media/a.jpg") for its public URL, or ""."""
    prefix = public_url("/" + settings.STATIC_URL.lstrip("/"))
    if not url.startswith(prefix):
        return ""
    name = url[len(prefix):]
    if not _STATIC_PATH.fullmatch(name) or ".." in name.split("/"):
        return ""
    return static(name)


def display_url(url: str) -> str:
    """What a page may put in `src` or `href` for this media URL: the URL itself (a media host's), the
    path of the site's own static file, or "" (not loaded, not linked)."""
    if not url:
        return ""
    own = _own_static(url)
    if own:
        return own
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a port out of range, a malformed IPv6 address
        return ""
    if parts.scheme != "https" or not parts.hostname or "@" in parts.netloc:
        return ""
    # The host as CSP compares it: a trailing dot ("media.example.") is another host to the browser.
    return url if _host_allowed(parts.hostname.lower(), port) else ""


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def shown(item: PostMedia) -> ShownMedia:
    return ShownMedia(id=item.pk, kind=item.kind, url=item.url, host=host_of(item.url), alt=item.alt_text,
                      src=display_url(item.url), still=display_url(item.still_url))


def media_of(post_id: int) -> list[ShownMedia]:
    """A post's items in the platform's order (one query)."""
    return [shown(item) for item in PostMedia.objects.filter(post_id=post_id).order_by("position")]


def media_by_post(post_ids: Iterable[int]) -> dict[int, list[ShownMedia]]:
    """The items of many posts (a page's rows) in one query, each post's in the platform's order."""
    ids = list(post_ids)
    found: dict[int, list[ShownMedia]] = defaultdict(list)
    if ids:
        for item in PostMedia.objects.filter(post_id__in=ids).order_by("post_id", "position"):
            found[item.post_id].append(shown(item))
    return found
