"""What the portal tests do as a page owner: file an appeal through the post page's form, read a page."""

from __future__ import annotations


def file(client, post, **data):
    payload = {"kind": "dispute", "statement": "The quote is real.", "evidence_urls": "", "correction_details": ""}
    payload.update(data)
    return client.post(f"/appeals/posts/{post.pk}/", payload, follow=True)


def text(response) -> str:
    return response.content.decode()
