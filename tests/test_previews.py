"""Previews of someone's words are short in every script (core.formatting.preview): cut at so many words, and no
longer than that many words would be. Chinese, Japanese or Thai text and runs of emoji have no spaces to cut at: a
2,000-character statement was shown whole in every row of the appeal desk, and one 63,206-emoji post made the queue
page 280 KB (an audit of text from around the world)."""

from __future__ import annotations

import pytest

from core.formatting import PREVIEW_CHARS_A_WORD, preview
from factcheck.views import TEXT_PREVIEW_WORDS
from moderation.appeals import file_appeal
from moderation.views_appeals import STATEMENT_PREVIEW_WORDS
from tests import scenarios
from tests.factories import PostFactory, UserFactory

CHINESE = "卫生部长说新疫苗每天都在学校里杀死儿童这是政府隐瞒的真相" * 40


@pytest.mark.parametrize(("text", "shown"), [
    ("one two three four five", "one two three …"),
    ("one two", "one two"),
    ("\U0001F600" * 100, "\U0001F600" * (3 * PREVIEW_CHARS_A_WORD - 1) + "…"),
    (CHINESE, CHINESE[: 3 * PREVIEW_CHARS_A_WORD - 1] + "…"),
])
def test_a_preview_is_so_many_words_and_no_longer_than_they_would_be(text, shown):
    assert preview(text, 3) == shown


@pytest.mark.django_db
def test_the_queue_and_the_appeal_desk_show_text_without_spaces_cut_short(login, factchecker):
    PostFactory(text=CHINESE)
    queue = login(factchecker).get("/queue/").content.decode()
    assert CHINESE[: TEXT_PREVIEW_WORDS * PREVIEW_CHARS_A_WORD - 1] + "…" in queue
    assert CHINESE[: TEXT_PREVIEW_WORDS * PREVIEW_CHARS_A_WORD] not in queue

    owner = UserFactory()
    rated = scenarios.rated_post(owner=owner, rater=factchecker)
    file_appeal(owner=owner, post_id=rated.pk, kind="dispute", statement="\U0001F600" * 2000)
    desk = login(factchecker).get("/queue/appeals/").content.decode()
    assert "\U0001F600" * (STATEMENT_PREVIEW_WORDS * PREVIEW_CHARS_A_WORD - 1) + "…" in desk
    assert "\U0001F600" * (STATEMENT_PREVIEW_WORDS * PREVIEW_CHARS_A_WORD) not in desk
