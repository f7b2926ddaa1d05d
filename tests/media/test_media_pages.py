"""Posts' media in the pages (issue 30): blurred on the post page and in the queue's rows unless the reviewer
chose otherwise, loaded only from FACTDESK_MEDIA_HOSTS (which the CSP names) or the site's own static files,
a video as a link with its still, and the owners' portal showing their own posts' pictures."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from factcheck.media import MediaInput, store_media
from factcheck.models import QueueState
from tests import scenarios
from tests.factories import FlagFactory, PageFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
PDQ = "f8f8f0cee0f4a84f06370a22038f63f0b36e2ed596621e1d33e6b39c4e9c9b22"


@pytest.fixture(autouse=True)
def media_hosts(settings):
    settings.FACTDESK_MEDIA_HOSTS = ["media.example", "*.cdn.example"]
    settings.FACTDESK_PUBLIC_URL = "https://factdesk.example"


class Tags(HTMLParser):
    """Every start tag of a page, with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))


def tags(response, tag_name: str, /, **having: str) -> list[dict[str, str]]:
    parser = Tags()
    parser.feed(response.content.decode())
    return [attrs for tag, attrs in parser.tags
            if tag == tag_name and all(value in attrs.get(key, "").split() or attrs.get(key) == value
                                   for key, value in having.items())]


def image(url: str, alt: str = "A flooded street", **fields) -> MediaInput:
    return MediaInput(kind="image", url=url, pdq=PDQ, md5="0" * 32, alt_text=alt, quality=100, **fields)


def with_media(post, *items: MediaInput):
    store_media({post.pk: list(items)})
    return post


def figures(response) -> list[dict[str, str]]:
    return tags(response, "figure")


# The post page


def test_an_image_from_a_media_host_is_shown_blurred_with_its_alt_text_and_a_caption(login, factchecker):
    post = with_media(PostFactory(), image("https://media.example/a.jpg", alt="A shark on the motorway"))

    response = login(factchecker).get(f"/queue/posts/{post.pk}/")

    (img,) = tags(response, "img", src="https://media.example/a.jpg")
    assert img["alt"] == "A shark on the motorway"
    (figure,) = figures(response)
    assert "is-hidden" in figure["class"].split()  # blurred and grey (static/css/media.css)
    # Without JavaScript the picture is a link that opens it as it is; static/js/media.js makes it a button.
    (toggle,) = tags(response, "a", **{"data-media-toggle": ""})
    assert toggle["href"] == "https://media.example/a.jpg" and toggle["aria-describedby"]
    assert "Image hidden: click to show" in response.content.decode()
    assert tags(response, "script", src="/static/js/media.js") and tags(response, "link", href="/static/css/media.css")


def test_a_subdomain_of_a_wildcard_host_is_shown_but_the_bare_domain_and_other_ports_are_not(login, factchecker):
    post = with_media(PostFactory(), image("https://img.cdn.example/1.jpg"), image("https://cdn.example/2.jpg"),
                      image("https://media.example:8443/3.jpg"), image("https://media.example:443/4.jpg"))

    response = login(factchecker).get(f"/queue/posts/{post.pk}/")

    assert [img["src"] for img in tags(response, "img")] == [
        "https://img.cdn.example/1.jpg", "https://media.example:443/4.jpg"]


@pytest.mark.parametrize("url", [
    "https://evil.example/a.jpg",
    "http://media.example/a.jpg",  # not https
    "https://user:pw@media.example/a.jpg",
    "https://media.example.evil.example/a.jpg",
])
def test_an_image_on_another_host_is_never_loaded_nor_linked_only_told(login, factchecker, url):
    post = with_media(PostFactory(), image(url, alt="The leaked memo"))

    response = login(factchecker).get(f"/queue/posts/{post.pk}/")

    page = response.content.decode()
    assert not tags(response, "img")
    assert not [a for a in tags(response, "a") if "evil.example" in a.get("href", "") or "user:pw" in a.get("href", "")]
    assert "Image not shown" in page and "not one of the media hosts" in page
    assert "Alt text: <bdi>The leaked memo</bdi>" in page
    assert url in page  # the URL as text, to copy


def test_the_sites_own_static_pictures_are_shown_from_the_site_by_their_path(login, factchecker):
    post = with_media(PostFactory(), image("https://factdesk.example/static/demo-media/shark-flood.jpg"),
                      image("https://factdesk.example/static/../accounts/logout/"),
                      image("https://factdesk.example/claims/1/"))

    response = login(factchecker).get(f"/queue/posts/{post.pk}/")

    # Under 'self' whatever host name the site is reached by; nothing but a static file of the site.
    assert [img["src"] for img in tags(response, "img")] == ["/static/demo-media/shark-flood.jpg"]
    assert response.content.decode().count("Image not shown") == 2


def test_with_the_setting_on_images_are_shown_as_they_are(login, factchecker):
    factchecker.show_media = True
    factchecker.save(update_fields=["show_media"])
    post = with_media(PostFactory(), image("https://media.example/a.jpg"))

    response = login(factchecker).get(f"/queue/posts/{post.pk}/")

    (figure,) = figures(response)
    assert "is-hidden" not in figure["class"].split()
    assert tags(response, "img", src="https://media.example/a.jpg")
    assert not tags(response, "a", **{"data-media-toggle": ""})
    assert "click to show" not in response.content.decode()


def test_a_video_is_a_link_with_its_still_blurred_and_one_without_a_still_a_plain_link(login, factchecker):
    post = with_media(
        PostFactory(),
        MediaInput(kind="video", url="https://media.example/clip.mp4", still_url="https://media.example/still.jpg",
                   alt_text="The rally"),
        MediaInput(kind="video", url="https://media.example/other.mp4"),
        MediaInput(kind="video", url="https://video.elsewhere.example/v/1", still_url="https://media.example/s2.jpg"),
    )

    response = login(factchecker).get(f"/queue/posts/{post.pk}/")

    page = response.content.decode()
    (still,) = tags(response, "img", src="https://media.example/still.jpg")
    assert still["alt"] == "The rally"
    video_figures = figures(response)
    assert "is-hidden" in video_figures[0]["class"].split()
    assert [a["href"] for a in tags(response, "a") if a.get("href", "").endswith(".mp4")] == [
        "https://media.example/clip.mp4", "https://media.example/other.mp4"]
    # A video on another host: its still is shown (a media host's), the video itself is not linked.
    assert tags(response, "img", src="https://media.example/s2.jpg")
    assert not tags(response, "a", href="https://video.elsewhere.example/v/1")
    assert "Video on video.elsewhere.example: not linked" in page


def test_the_csp_names_the_media_hosts_over_https():
    """config/settings.py builds img-src from FACTDESK_MEDIA_HOSTS: read from a page of a process started with it."""
    script = (
        "import django, json; django.setup(); from django.test import Client; "
        "r = Client().get('/accounts/login/'); print(json.dumps(r['Content-Security-Policy']))"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
           "FACTDESK_MEDIA_HOSTS": "media.example, *.cdn.example"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    policy = json.loads(done.stdout.strip().splitlines()[-1])
    img_src = re.search(r"img-src ([^;]*)", policy).group(1).split()
    assert img_src == ["'self'", "data:", "https://media.example", "https://*.cdn.example"]


# The queue


def queued_with_media(n: int, **post_fields) -> list:
    posts = []
    for i in range(n):
        post = PostFactory(priority=100 - i, **post_fields)
        FlagFactory(post=post)
        with_media(post, image(f"https://media.example/{i}.jpg", alt=f"Picture {i}"),
                   image(f"https://evil.example/{i}.jpg"))
        posts.append(post)
    return posts


def test_queue_rows_show_blurred_thumbnails_and_the_setting_unblurs_them(login, factchecker):
    queued_with_media(3)
    client = login(factchecker)

    response = client.get("/queue/")

    thumbs = tags(response, "img")
    assert [img["src"] for img in thumbs] == [f"https://media.example/{i}.jpg" for i in range(3)]
    assert all("is-hidden" in f["class"].split() for f in figures(response) if "media-blocked" not in f["class"])
    assert response.content.decode().count("Image not shown") == 3  # the other host's, as text

    factchecker.show_media = True
    factchecker.save(update_fields=["show_media"])
    shown = client.get("/queue/")
    assert not [f for f in figures(shown) if "is-hidden" in f["class"].split()]
    assert len(tags(shown, "img")) == 3


@pytest.mark.parametrize("rows", [2, 25])
def test_the_queues_thumbnails_take_one_query_for_the_whole_page(login, factchecker, django_assert_max_num_queries,
                                                                 rows):
    queued_with_media(rows)
    client = login(factchecker)
    # session, user with their organisation, my claims, the rows with their total and copy groups, the
    # navigation's counts, and the rows' media: the same for 2 rows as for 25 (+4: JIT off around the page's
    # statement, core.jit, in a savepoint of the test's transaction)
    with django_assert_max_num_queries(10):
        response = client.get("/queue/")
    assert len(tags(response, "img")) == rows


# The owners' portal


@pytest.fixture
def owner(db):
    return UserFactory()


def test_the_portal_shows_the_owners_own_pictures_as_they_are_and_no_other_pages(login, owner):
    mine = scenarios.rated_post(owner=owner, page=PageFactory(name="Mine"))
    with_media(mine, image("https://media.example/mine.jpg", alt="My picture"))
    theirs = scenarios.rated_post(owner=UserFactory(), page=PageFactory(name="Theirs"))
    with_media(theirs, image("https://media.example/theirs.jpg"))
    client = login(owner)

    listed = client.get("/appeals/")
    detail = client.get(f"/appeals/posts/{mine.pk}/")

    for response in (listed, detail):
        assert [img["src"] for img in tags(response, "img")] == ["https://media.example/mine.jpg"]
        # Their own post: shown as it is, not blurred.
        assert not [f for f in figures(response) if "is-hidden" in f["class"].split()]
    assert tags(detail, "img", alt="My picture")
    assert client.get(f"/appeals/posts/{theirs.pk}/").status_code == 404


def test_a_matched_copys_portal_page_shows_its_own_picture_not_the_claims(login, owner, factchecker):
    claim = scenarios.rated_claim(rater=factchecker)
    with_media(claim, image("https://media.example/claim.jpg"))
    copy = PostFactory(page=PageFactory(), duplicate_of=claim, queue_state=QueueState.MATCHED)
    copy.page.owners.add(owner)
    with_media(copy, image("https://media.example/copy.jpg"))

    response = login(owner).get(f"/appeals/posts/{copy.pk}/")

    assert [img["src"] for img in tags(response, "img")] == ["https://media.example/copy.jpg"]


# The setting


def test_a_reviewer_turns_the_setting_on_and_off_on_the_settings_page(login, factchecker):
    client = login(factchecker)
    form = client.get("/accounts/profile/")
    (box,) = tags(form, "input", name="show_media")
    assert box["type"] == "checkbox" and "checked" not in box
    assert tags(form, "label", **{"for": box["id"]})

    saved = client.post("/accounts/profile/", {"time_zone": "UTC", "show_media": "on"}, follow=True)
    factchecker.refresh_from_db()
    assert factchecker.show_media
    assert "Posts' images are shown as they are." in html.unescape(saved.content.decode())
    assert "checked" in tags(saved, "input", name="show_media")[0]

    client.post("/accounts/profile/", {"time_zone": "UTC"})
    factchecker.refresh_from_db()
    assert not factchecker.show_media


def test_a_page_owner_has_no_blur_setting_to_choose(login, owner):
    client = login(owner)
    assert not tags(client.get("/accounts/profile/"), "input", name="show_media")
    client.post("/accounts/profile/", {"time_zone": "Europe/Paris", "show_media": "on"})
    owner.refresh_from_db()
    assert owner.time_zone == "Europe/Paris" and not owner.show_media


def test_the_fact_checker_deciding_a_dispute_sees_the_disputed_picture_blurred(login, factchecker):
    # The owner may dispute what a picture shows: the appeal's page showed only the post's words (found by a walk
    # through every role's pages).
    from factcheck.members import organisation_of
    from tests.factories import FactCheckerFactory

    owner = UserFactory()
    appeal = scenarios.rated_post_with_open_dispute(owner=owner, rater=factchecker)
    with_media(appeal.post, image("https://media.example/flood.jpg", alt="A flooded street"))
    decider = FactCheckerFactory(organisation=organisation_of(factchecker))

    response = login(decider).get(f"/queue/appeals/{appeal.pk}/")
    assert response.status_code == 200
    (img,) = tags(response, "img", src="https://media.example/flood.jpg")
    assert img["alt"] == "A flooded street"
    (figure,) = figures(response)
    assert "is-hidden" in figure["class"].split()
    assert tags(response, "script", src="/static/js/media.js")
