"""How people read dates and multipliers, one way across the app's pages, notices, messages and admin.

Dates: "2 Jun 2027"; moments: "2 Jun 2027, 14:05 UTC" (as config/formats writes them in templates), or in the
reader's own time zone: "14:05 (Europe/Paris)" (`clock`), "14 Dec 2026, 17:05 (Europe/Paris)" in an e-mail
(`local_moment`). A rating published elsewhere before it was imported:
"published 30 Aug 2024 (imported 2 Jun 2027)" (`rating_dated`).
Feed multipliers: "×0.2" (no trailing zeros), and as a share: "shown 80% less".
Durations: "3 h 10 min", "2 d 4 h", "under a minute".
Sentences that end in a label, a name or a reason: one full stop, never '..' or '.".'.
Previews of someone's words: so many words, and no longer than they would be in any script (`preview`).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from django.utils import dateformat, timezone
from django.utils.text import Truncator


def day(value: date | datetime) -> str:
    if isinstance(value, datetime):
        value = value.astimezone(UTC)
    return f"{value.day} {value:%b %Y}"


def clock(value: datetime) -> str:
    """A moment as the person reading it keeps time, in their own (the active) time zone: "14:05 (Europe/Paris)"
    today, "3 Dec, 14:05 (Europe/Paris)" another day (a draft from days ago read as today's)."""
    local, today = timezone.localtime(value), timezone.localdate()
    when = f"{local:%H:%M}" if local.date() == today else f"{local.day} {local:%b}, {local:%H:%M}"
    if local.year != today.year:
        when = f"{local.day} {local:%b %Y}, {local:%H:%M}"
    return f"{when} ({timezone.get_current_timezone_name()})"


def local_moment(value: datetime) -> str:
    """A moment in full, on the reader's clock (the active time zone), for text read days later, such as an
    e-mail: "14 Dec 2026, 17:05 (Europe/Paris)"."""
    local = timezone.localtime(value)
    return f"{local.day} {local:%b %Y, %H:%M} ({timezone.get_current_timezone_name()})"


def moment(value: datetime) -> str:
    value = value.astimezone(UTC)
    return f"{value.day} {value:%b %Y, %H:%M} UTC"


# The ways a page writes a rating's date (Django's date format characters, as templates use them).
DAY, MOMENT, LONG_DAY = "j M Y", "j M Y, H:i T", "j F Y"


def rating_dated(recorded: datetime, *, published: datetime | None = None, style: str = DAY) -> str:
    """When a rating is dated, for people reading it: the time it was recorded here, in `style` ("3 May 2026"), or,
    for one its organisation published before it was imported (a ClaimReview's datePublished, Rating.published_at),
    the publication's day first, then the import's: "published 30 Aug 2024 (imported 3 May 2026)". A reviewer
    weighing a fact-check reads when it was written, not when a file was loaded. Only the words: the record's own
    time (created_at) is still what figures, the feed and every order go by."""
    if published is None:
        return _unbroken(dateformat.format(timezone.localtime(recorded), style))
    # Days, both: a published date is one (ClaimReview's are mostly dates alone, read as midnight UTC), and the time
    # of day a file was loaded tells a reader nothing.
    day_style = LONG_DAY if style == LONG_DAY else DAY
    # The publication's day is a date (stored as its midnight UTC): the same day for every reader, where a reader in
    # New York read the 29th of a fact-check published on the 30th. The import is a moment, on the reader's clock.
    published_text = _unbroken(dateformat.format(published.astimezone(UTC), day_style))
    recorded_text = _unbroken(dateformat.format(timezone.localtime(recorded), day_style))
    return f"published {published_text} (imported {recorded_text})"


def _unbroken(date_text: str) -> str:
    """A date that a narrow line never splits ("4 / Dec 2026" on a phone), its spaces no-break ones; a moment may
    still break after its comma."""
    return ", ".join(part.replace(" ", "\u00a0") for part in date_text.split(", "))


def times(multiplier: Decimal | float | str) -> str:
    """A feed multiplier as a factor: 0.2000 -> "×0.2", 1 -> "×1"."""
    number = Decimal(str(multiplier)).normalize()
    return f"×{number:f}"


def less(multiplier: Decimal | float | str) -> str:
    """A feed multiplier as what it does: 0.2 -> "shown 80% less"; 1 -> "shown as usual"; 0 -> "not shown"."""
    percent = (Decimal(1) - Decimal(str(multiplier))) * 100
    if percent <= 0:
        return "shown as usual"
    if percent >= 100:
        return "not shown"
    return f"shown {percent.normalize():f}% less"


def duration(seconds: float) -> str:
    """ "3 h 10 min", "2 d 4 h", "12 min", "under a minute": a wait, to the minute."""
    minutes = int(max(seconds, 0) // 60)
    if minutes < 1:
        return "under a minute"
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min"


STOPS = (".", "!", "?", "…")
CLOSERS = "\"'”’»)]"


def sentence(text: str, stop: str = ".") -> str:
    """`text` ended with `stop`, unless it already ends with a stop before any closing quotes or brackets:
    'it carries the label "Satire."' stays as it is; 'the label "Satire"' and 'by Verifact' get their full stop."""
    if text.rstrip().rstrip(CLOSERS).endswith(STOPS):
        return text.rstrip()
    return f"{text.rstrip()}{stop}"


def unstopped(text: str) -> str:
    """`text` without its closing full stop, to quote it in a sentence that goes on: '“Satire”, active'."""
    text = text.rstrip()
    return text[:-1] if text.endswith(".") and not text.endswith("..") else text


# About how many characters a word of a preview is given: a cap for text with no spaces to cut at.
PREVIEW_CHARS_A_WORD = 8


def preview(text: str, words: int) -> str:
    """The first `words` words of `text`, and no more characters than that many words have (PREVIEW_CHARS_A_WORD
    each): Chinese, Japanese or Thai, or a run of emoji, has no spaces to cut at, so a 2,000-character statement
    showed whole in every row of the appeal desk and a 63,206-emoji post made a 280 KB queue page."""
    return Truncator(Truncator(text).words(words, truncate=" …")).chars(words * PREVIEW_CHARS_A_WORD, truncate="…")
