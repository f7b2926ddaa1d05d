"""Template filters for the app's one way of writing multipliers (core.formatting): `{{ m|times }}` gives
"×0.2", `{{ m|less }}` gives "shown 80% less", `{{ text|sentence }}` ends a sentence with one full stop; and
`{{ messages|refusals }}`, whether a page opens with a refusal; `{{ page.name|isolated }}`, someone's words inside the
page's own line (`isolated_in_text` in plain text: a notice, an e-mail); `{{ rating|rating_date }}`, when a rating is
dated, an imported one by its own publication date (core.formatting.rating_dated); `{{ text|without_contact_details }}`,
someone's words shown to others without the e-mail addresses and telephone numbers stored before they were refused.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC

from django import template
from django.contrib.messages import ERROR
from django.utils import dateformat, timezone
from django.utils.html import format_html

from core import formatting
from core.contact_details import without_contact_details as _without_contact_details

register = template.Library()


@register.filter
def preview(value, words: int) -> str:
    """`{{ post.text|preview:24 }}`: core.formatting.preview, so many words and no longer in any script."""
    return formatting.preview(str(value), int(words))


@register.filter
def times(value) -> str:
    return "" if value in (None, "") else formatting.times(value)


@register.filter
def less(value) -> str:
    return "" if value in (None, "") else formatting.less(value)


RATING_DATE_STYLES = {"day": formatting.DAY, "moment": formatting.MOMENT, "long": formatting.LONG_DAY}


@register.filter
def rating_date(rating, style: str = "day") -> str:
    """`{{ rating|rating_date:"moment" }}`: a rating's date in a <time> element ("day": "3 May 2026", "moment": with
    the time, "long": "3 May 2026" with the month's name), "published 30 Aug 2024 (imported 3 May 2026)" for one
    imported with its organisation's publication date; the element's datetime is the date the words lead with."""
    # A publication's day is the same everywhere (core.formatting.rating_dated): its element's datetime is in UTC.
    when = rating.published_at.astimezone(UTC) if rating.published_at else timezone.localtime(rating.created_at)
    words = formatting.rating_dated(rating.created_at, published=rating.published_at, style=RATING_DATE_STYLES[style])
    return format_html('<time datetime="{}">{}</time>', dateformat.format(when, "c"), words)


@register.filter
def rated_claim_differs(rating, post) -> bool:
    """`{% if rating|rated_claim_differs:post %}`: Rating.rated_claim_differs, for the pages that show both."""
    return rating is not None and post is not None and rating.rated_claim_differs(post)


@register.filter(is_safe=True)
def sentence(value) -> str:
    """`{% filter sentence %}… label "{{ label }}"{% endfilter %}`: one full stop, never '..' or '.".'."""
    return formatting.sentence(str(value))


@register.filter
def tagged(messages, tag: str) -> list:
    """`{{ messages|tagged:"copies" }}`: the messages a view gave this extra tag, shown beside what they are about
    (factcheck.views_matches tags a copy decision's)."""
    return [m for m in messages if tag in m.extra_tags.split()]


@register.filter
def untagged(messages, tag: str) -> list:
    """The messages without this extra tag: the rest, at the top of the page."""
    return [m for m in messages if tag not in m.extra_tags.split()]


@register.filter
def refusals(messages) -> bool:
    """Whether the page's messages hold an error (a refusal): base.html makes them an alert that takes the focus."""
    return any(message.level >= ERROR for message in messages)


@register.filter
def isolated(value) -> str:
    """`{{ page.name|isolated }}`: a name or id the platform or a person wrote, set in a line of the page's own words,
    inside a <bdi>: an Arabic name keeps its direction without turning the line's order round, and an unclosed
    direction override in it (U+202E) ends with it, where it reversed the rest of the line ("nim 1 gnitiaw")."""
    return format_html("<bdi>{}</bdi>", value)


# The bidirectional classes that can turn the words after a value round: right-to-left letters, and the explicit
# embeddings, overrides and isolates (an unclosed U+202E).
NOT_LEFT_TO_RIGHT = frozenset({"R", "AL", "RLE", "RLO", "LRE", "LRO", "PDF", "RLI", "LRI", "FSI", "PDI"})


@register.filter(is_safe=True)
def isolated_in_text(value) -> str:
    """`isolated` for plain text (a notice's subject and body, its e-mail): a value with right-to-left letters or
    direction controls between Unicode's first-strong isolate and pop directional isolate (U+2068, U+2069), which
    do in any text what <bdi> does in a page; any other value as it is."""
    value = str(value)
    if any(unicodedata.bidirectional(char) in NOT_LEFT_TO_RIGHT for char in value):
        return f"\u2068{value}\u2069"
    return value


@register.filter
def without_contact_details(value) -> str:
    """`{{ action.reason|without_contact_details }}`: a reason, rationale or report that others read word for word,
    its e-mail addresses and telephone numbers replaced (core.contact_details): what was stored before the forms
    refused them (a reporter's details in a removal reason, a rationale's phone number) is shown without them."""
    return _without_contact_details(str(value))
