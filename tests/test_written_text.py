"""What a person writes, as the record keeps it and its limits count it (core.reasons.written): each line break one
character, and nothing but white space and invisible format characters is nothing written (an audit of text from
around the world: a rationale of zero-width spaces was published, an appeal of one was filed)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from core.reasons import written
from factcheck.ratings import clean_rating_input


@pytest.mark.parametrize(("typed", "kept"), [
    ("  line one\r\nline two\rline three\n ", "line one\nline two\nline three"),
    ("\u200b\u200c\u200d\u2060\ufeff\u00ad \n\t", ""),  # zero-width space and joiners, word joiner, BOM, soft hyphen
    ("\u200b\u05d0", "\u200b\u05d0"),  # a letter shows: kept as typed
    ("\U0001F600", "\U0001F600"),
    (None, ""),
])
def test_written_keeps_what_shows_with_one_character_a_line_break(typed, kept):
    assert written(typed) == kept


def test_a_rationale_of_invisible_characters_is_no_rationale():
    with pytest.raises(ValidationError) as refused:
        clean_rating_input(verdict="false", rationale="\u200b" * 30, sources=["https://example.org/a"],
                           article_url="")
    assert refused.value.message_dict["rationale"] == ["A rationale is required."]


def test_the_admins_reason_counts_line_breaks_once_and_nothing_invisible_as_a_reason():
    from core.admin_decisions import ReasonForm

    typed = "\r\n".join(["x" * 49] * 40)  # 1,999 characters as the page counts them: 2,038 sent
    form = ReasonForm(data={"reason": typed})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["reason"] == typed.replace("\r\n", "\n")
    blank = ReasonForm(data={"reason": "\u200b \u2060"})
    assert not blank.is_valid()
    assert blank.errors["reason"] == ["A reason is required: every staff decision records why."]
