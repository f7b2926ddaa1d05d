"""Names and words from anywhere in the world, inside the page's own lines (an audit of text from around the world):
a page name or post id holding an unclosed right-to-left override (U+202E) turned the rest of the line round
("waiting 1 min" read "nim 1 gnitiaw", a post's "eg" country read "GE"), and an Arabic post with a Latin name in it
read out of order. Names and ids are isolated (<bdi>) wherever they sit inside a line of the page's words, in the
queue, the post page, the rated list, the public claim page, the owner's portal and the admin's post list; blocks of
people's words take their own direction (static/css/factdesk.css, `unicode-bidi: plaintext`)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from factcheck.models import Verdict
from tests.factories import DecisionFactory, PageFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db

OVERRIDE = "\u202e"
NAME = f"{OVERRIDE}Ministry of Health"
POST_ID = f"post-{OVERRIDE}42"


@pytest.fixture
def posts(factchecker):
    owner = UserFactory()
    page = PageFactory(name=NAME)
    page.owners.add(owner)
    waiting = PostFactory(page=page, language="en", country="GB")
    rated = PostFactory(page=page, external_id=POST_ID, url="https://social.example/p/42", language="en", country="GB")
    rating = DecisionFactory(post=rated, reviewer=factchecker, verdict=Verdict.FALSE).rating  # a public page
    return {"owner": owner, "waiting": waiting, "rated": rated, "rating": rating}


def isolated(page: str, value: str) -> list[str]:
    """The lines of the page where words of the page follow `value` shown neither in a <bdi> nor between Unicode's
    isolates (U+2068 and U+2069, in a notice's text). An attribute, the title, an option, a script's data and words
    only a screen reader reads are left out: no line of the page's own can be turned round there."""
    shown = re.sub(r'<(title|option|script)\b.*?</\1>|<span class="visually-hidden">[^<]*</span>|="[^"]*"', "", page,
                   flags=re.S)
    shown = re.sub(r"</t[dh]>", "\n", shown)  # a table's cell is a block of its own, as a line is
    wrapped = rf"<bdi[^>]*>{re.escape(value)}</bdi>|\u2068{re.escape(value)}\u2069"

    def turns_words_round(line: str) -> bool:  # the page's words follow the value, in its line
        line = re.sub(wrapped, "", line)
        return value in line and re.sub(r"<[^>]*>", "", line.split(value, 1)[1]).strip() != ""

    return [line.strip() for line in shown.splitlines() if turns_words_round(line)]


def test_names_and_ids_are_isolated_on_every_page_that_sets_them_in_a_line(login, factchecker, posts, client,
                                                                            staff_client):
    pages = {
        "queue": login(factchecker).get("/queue/"),
        "post": client.get(f"/queue/posts/{posts['waiting'].pk}/"),
        "rated post": client.get(f"/queue/posts/{posts['rated'].pk}/"),
        "rated list": client.get("/queue/rated/"),
        "public claim": client.get(f"/claims/{posts['rating'].pk}/"),
    }
    client.logout()
    pages["portal"] = login(posts["owner"]).get("/appeals/")
    pages["portal post"] = client.get(f"/appeals/posts/{posts['rated'].pk}/")
    pages["admin posts"] = staff_client.get("/admin/factcheck/post/")
    for where, response in pages.items():
        assert response.status_code == 200, where
        page = html.unescape(response.content.decode())
        assert NAME in page, where
        assert isolated(page, NAME) == [], where
        assert isolated(page, POST_ID) == [], where


def test_blocks_of_peoples_words_take_their_own_direction():
    css = (Path(__file__).resolve().parent.parent / "static" / "css" / "factdesk.css").read_text()
    rule = re.search(r"([^{}]*)\{ unicode-bidi: plaintext; \}", css)
    assert rule is not None
    for block in (".post-body", ".claim-text", ".rationale", ".outcome-reason", ".statement-preview"):
        assert block in rule.group(1)


def test_a_notice_sets_a_right_to_left_name_or_id_apart_and_leaves_others_as_they_are(posts, factchecker):
    from moderation.models import Notification

    notice = Notification.objects.get(user=posts["owner"], post=posts["rated"])
    assert f"\u2068{POST_ID}\u2069" in notice.subject
    assert f"your post \u2068{POST_ID}\u2069 on \u2068{NAME}\u2069 as False" in notice.body
    plain = PageFactory(name="Daily Wonders")
    plain.owners.add(posts["owner"])
    DecisionFactory(post=PostFactory(page=plain, external_id="wonder-1"), reviewer=factchecker, verdict=Verdict.FALSE)
    plain_notice = Notification.objects.get(user=posts["owner"], post__external_id="wonder-1")
    assert "your post wonder-1 on Daily Wonders as False" in plain_notice.body
    assert "\u2068" not in plain_notice.subject + plain_notice.body
