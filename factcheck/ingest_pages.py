"""The pages an ingest batch names (factcheck.ingest): created, renamed, marked a politician's; and the one rule that a
post is on one page, which a flag naming another page for it would break (refused whole: PageConflict)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from core.bulk import update_rows
from core.refusals import Refusal
from factcheck.ingest_input import PageInput, PostInput
from factcheck.models import Page, Post


class PageConflict(Refusal):
    """A flag names a post on another page than the post is on (as stored, or as another flag of the batch names it):
    a post is on one page, and the page decides whether it is fact-checked (a politician's is not), so the batch is
    refused whole and nothing is written. The platform sends the post's own page, or a new post."""

    code = "page_conflict"

    def __init__(self, conflicts: list[str]) -> None:
        shown = "; ".join(conflicts[:5]) + (f"; and {len(conflicts) - 5:,} more" if len(conflicts) > 5 else "")
        super().__init__(f"A post is on one page: {shown}. Nothing was stored.", details={"conflicts": conflicts})

    @classmethod
    def of_stored(cls, keys: list[str], *, named: dict[str, str]) -> PageConflict:
        on = dict(Post.objects.filter(external_id__in_array=keys).values_list("external_id", "page__external_id"))
        return cls([f"post {key!r} is on page {on[key]!r}, not {named[key]!r}" for key in keys])


def on_another_page(posts: Iterable[PostInput]) -> list[str]:
    """The batch's posts that two of its flags name on two pages, each said once."""
    first: dict[str, str] = {}
    conflicts = {}
    for post in posts:
        page = first.setdefault(post.external_id, post.page.external_id)
        if page != post.page.external_id and post.external_id not in conflicts:
            conflicts[post.external_id] = f"post {post.external_id!r} is named on page {page!r} and on page " \
                                          f"{post.page.external_id!r}"
    return list(conflicts.values())


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
