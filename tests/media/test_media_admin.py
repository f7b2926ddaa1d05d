"""Staff see a post's media on its admin page: each item as the platform sent it, addresses as text."""

from __future__ import annotations

from factcheck.media import MediaInput, store_media
from tests.factories import PostFactory

PDQ = "f" * 32 + "0" * 32


def test_the_post_admin_page_lists_each_media_item_with_its_hashes(staff_client, db):
    post = PostFactory(text="A photo of the flood")
    store_media({post.pk: [
        MediaInput(kind="image", url="https://media.example.com/flood.jpg", pdq=PDQ, quality=87, md5="a" * 32,
                   alt_text="Water up to <the> roofs"),
        MediaInput(kind="video", url="https://media.example.com/clip.mp4"),
    ]})
    body = staff_client.get(f"/admin/factcheck/post/{post.pk}/change/").content.decode()
    assert "https://media.example.com/flood.jpg" in body
    assert f"{PDQ} (87)" in body and "a" * 32 in body
    assert "Water up to &lt;the&gt; roofs" in body  # escaped
    assert "Video" in body and "https://media.example.com/clip.mp4" in body
    assert 'href="https://media.example.com/flood.jpg"' not in body  # text, not a link


def test_a_post_without_media_says_so(staff_client, db):
    post = PostFactory()
    body = staff_client.get(f"/admin/factcheck/post/{post.pk}/change/").content.decode()
    assert "No media: a text post." in body
