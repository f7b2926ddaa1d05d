"""Template filters for the app's one way of writing multipliers (core.formatting): `{{ m|times }}` gives
"×0.2", `{{ m|less }}` gives "shown 80% less", `{{ text|sentence }}` ends a sentence with one full stop; and
`{{ messages|refusals }}`, whether a page opens with a refusal."""

from __future__ import annotations

from django import template
from django.contrib.messages import ERROR

from core import formatting

register = template.Library()


@register.filter
def times(value) -> str:
    return "" if value in (None, "") else formatting.times(value)


@register.filter
def less(value) -> str:
    return "" if value in (None, "") else formatting.less(value)


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
