"""Template filters for the app's one way of writing multipliers (core.formatting): `{{ m|times }}` gives
"×0.2", `{{ m|less }}` gives "shown 80% less", `{{ text|sentence }}` ends a sentence with one full stop."""

from __future__ import annotations

from django import template

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
