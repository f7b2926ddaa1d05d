"""What a search box's text may hold, for every search box: the review queues, the appeal and report
desks and the admin's lists.

Control characters (NUL among them, which PostgreSQL refuses in any text parameter: the query
fails) never belong in a search. They become spaces here, before any search reaches the database,
so a pasted or crafted one is ignored rather than answered with an error page.
"""

from __future__ import annotations

import re

from django import forms

# C0 and C1 control characters, and DEL.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SEARCH_MAX_CHARS = 200


def without_control_characters(value: str | None) -> str:
    """The text with each control character a space, stripped; as typed otherwise (the admin's exact searches)."""
    return CONTROL_CHARACTERS.sub(" ", value or "").strip()


def has_nul(value: str) -> bool:
    return "\x00" in value


def search_text(value: str | None, *, limit: int = SEARCH_MAX_CHARS) -> str:
    """A search box's words, single-spaced, without control characters, at most `limit` characters."""
    return " ".join(CONTROL_CHARACTERS.sub(" ", value or "").split())[:limit]


class SearchField(forms.CharField):
    """A search box in a form: its cleaned value is `search_text` of what was typed."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", SEARCH_MAX_CHARS)
        super().__init__(**kwargs)

    def to_python(self, value):  # noqa: ANN001, ANN201 - Django's signature
        return search_text(super().to_python(value), limit=self.max_length or SEARCH_MAX_CHARS)
