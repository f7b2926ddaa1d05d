"""The pages an ingest batch names (factcheck.ingest): created, renamed, marked a politician's; and which of the
batch's posts we have are on a politician's page, by the page each is on."""

from __future__ import annotations

from typing import NamedTuple

from core.bulk import update_rows
from factcheck.ingest_input import PageInput
from factcheck.models import Page, Post


class PageRow(NamedTuple):
    """A page as this batch leaves it; plain tuples, as a batch names hundreds of pages."""

    pk: int
    name: str
    is_politician: bool


def _pages_by_external_id(keys: list[str]) -> dict[str, PageRow]:
    rows = Page.objects.filter(external_id__in_array=keys).values_list("external_id", "pk", "name", "is_politician")
    return {key: PageRow(pk, name, is_politician) for key, pk, name, is_politician in rows}


def upsert_pages(inputs: list[PageInput]) -> tuple[dict[str, PageRow], list[PageRow]]:
    """Create and update the batch's pages; returns them by external id, and those that became a politician's."""
    latest = {p.external_id: p for p in inputs}  # the last mention in a batch wins
    existing = _pages_by_external_id(list(latest))
    missing = [  # in key order, as every batch inserts them, so that two batches cannot deadlock on them
        Page(external_id=k, name=v.name, is_politician=v.is_politician) for k, v in sorted(latest.items())
        if k not in existing
    ]
    if missing:
        Page.objects.bulk_create(missing, ignore_conflicts=True)
        existing = _pages_by_external_id(list(latest))
    changed, now_politician = [], []
    for key, given in latest.items():
        page = existing[key]
        # A page once marked a politician's stays so unless staff change it.
        is_politician = page.is_politician or given.is_politician
        if is_politician and not page.is_politician:
            now_politician.append(page)
        if page.name != given.name or page.is_politician != is_politician:
            existing[key] = page = page._replace(name=given.name, is_politician=is_politician)
            changed.append(page)
    update_rows(Page, ["name", "is_politician"], sorted(changed))
    return existing, now_politician


def politicians_by_page(posts: dict[str, Post], *, pages: dict[str, PageRow]) -> dict[str, bool]:
    """For posts we have (by external id), whether the page each is on is a politician's, as this batch leaves the
    pages it names. A flag that names a post on another page does not move it (a post is on one page): its own page
    decides, read here when the batch does not name it (one query, for such posts only)."""
    named = {page.pk: page.is_politician for page in pages.values()}
    unnamed = {post.page_id for post in posts.values()} - named.keys()
    if unnamed:
        named.update(Page.objects.filter(pk__in=sorted(unnamed)).values_list("pk", "is_politician"))
    return {key: named[post.page_id] for key, post in posts.items()}
