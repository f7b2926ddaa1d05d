"""How staff find a post by what they remember of it: one rule for every admin list that shows posts, or
rows about one post (flags, claims, ratings, matches, actions, appeals, reports of harm).

What staff type is tried, without any prefix, as each of these, and the list shows every row found:

- a post's external id, exactly or its start ("ab-12"): the unique index on it, and its pattern index
  (`varchar_pattern_ops`, which Django adds beside a unique CharField's index on PostgreSQL) for LIKE 'ab-12%';
- a page's external id, exactly (the unique index on pages, then its posts by `post_page_recent`);
- a post's URL, as copies of a link share it (`url_key`, indexed; factcheck.normalise);
- words of a page's name ("health" finds "Public Health Watch"): the pages table, which is small beside the
  posts, then the named pages' posts by `post_page_recent`;
- words of a post's text or external id, each as a word or the start of one ("vacc", "ab-12"): the stored
  words of migration 0011 and their GIN index, through factcheck.search.matching_text (the queue's rule).

Each is its own query, answered by its own index, so none of them reads the posts table through
(tests/admin/test_admin_workday.py checks the plans). Measured on 1,000,000 posts and 2,000 pages: a rare word
0.07 ms, a word in 15% of the posts 210 ms (the GIN bitmap of all of them, of which the first 1,000 are read),
a page name 3 ms (the pages, then 500 posts by the page index), an external id or its start under 1 ms.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet

from factcheck.models import Page
from factcheck.normalise import digest, normalise_url
from factcheck.search import matching_text, search_words

# Pages named by a search: past this many, the words are too common to name a page (the text search still runs).
MAX_PAGES_NAMED = 200


def pages_named(query: str) -> list[int]:
    """Ids of the pages whose name has every word of `query` (case-insensitive), at most MAX_PAGES_NAMED."""
    words = search_words(query)
    if not words:
        return []
    condition = Q()
    for word in words:
        condition &= Q(name__icontains=word)
    return list(Page.objects.filter(condition).order_by().values_list("pk", flat=True)[:MAX_PAGES_NAMED])


def find_posts(rows: QuerySet, query: str, *, via: str = "") -> list[QuerySet]:
    """The rows of `rows` whose post matches `query` by one of the ways above, one queryset per way (the caller
    reads the first rows of each and shows their union). `via` reaches the post from a row of another table:
    "post__" for a rating, "action__post__" for a strike; "" when `rows` are posts."""
    term = query.strip()
    if not term:
        return []
    found = [
        rows.filter(**{f"{via}external_id": term}),
        rows.filter(**{f"{via}page__external_id": term}),
    ]
    if " " not in term:
        found.append(rows.filter(**{f"{via}external_id__startswith": term}))
    if "://" in term:
        found.append(rows.filter(**{f"{via}url_key": digest(normalise_url(term))}))
    if page_ids := pages_named(term):
        found.append(rows.filter(**{f"{via}page_id__in": page_ids}))
    if search_words(term):
        found.append(matching_text(rows, term, prefix=via))
    return found
