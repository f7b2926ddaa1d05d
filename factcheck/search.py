"""The review side's text search: which posts have every word a reviewer typed, in their text or external id.

On PostgreSQL a search is the posts' stored words (`search_vector`, migration 0011) matched by a full-text
query that its GIN index answers; on SQLite, the embedded default, each word is a LIKE. The queue page
(factcheck.queue) and the list of rated posts (factcheck.selectors) filter with `matching_text`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from django.db import connection
from django.db.models import BooleanField, F, Func, Q, QuerySet, Value

from factcheck.models import Post

# Search words past this are ignored (each is one more probe of the text index).
MAX_SEARCH_WORDS = 8


def _combining_marks() -> str:
    """Every combining mark of Unicode (categories Mn, Mc, Me), as the contents of a character class."""
    return "".join(re.escape(chr(code)) for code in range(0x300, 0x30000) if unicodedata.category(chr(code))[0] == "M")


# Letters and digits in any script, with their combining marks: Hindi's vowel signs are marks (कोरोना split at them
# was क, र and न, and found nothing). The punctuation the index turns into spaces splits words here too.
_WORD = re.compile(rf"[^\W_](?:[^\W_]|[{_combining_marks()}])*")


class TextMatches(Func):
    """`search_vector @@ to_tsquery('simple', query)`: whether a post's words (its text and external id, as
    stored in the generated column of migration 0011 and indexed there, GIN) match the query. No stemming:
    ids, names and every language match as typed. The column is not a model field; the row's table is that
    of the query's primary key (a Post query's own table, or its alias in a subquery).
    """

    output_field = BooleanField()
    template = "%(table)s.search_vector @@ to_tsquery('simple'::regconfig, %(query)s)"

    def __init__(self, tsquery: str) -> None:
        super().__init__(F("pk"), Value(tsquery))

    def as_sql(self, compiler, connection, **extra):  # noqa: ANN001, ANN201 - Django's signature
        (pk, pk_params), (query, query_params) = (compiler.compile(part) for part in self.get_source_expressions())
        table = pk.rsplit(".", 1)[0]  # '"factcheck_post"."id"' or '"U0"."id"' -> its table or alias
        return self.template % {"table": table, "query": query}, [*pk_params, *query_params]


def search_words(query: str) -> list[str]:
    """The words of a search box's text, lower-case, at most MAX_SEARCH_WORDS."""
    return [word.lower() for word in _WORD.findall(query or "")][:MAX_SEARCH_WORDS]


def every_word(words: Sequence[str]) -> str:
    """The tsquery of posts that have each of the words, as a word or the start of one."""
    return " & ".join(f"{word}:*" for word in words)


def matching_text(qs: QuerySet, query: str, *, prefix: str = "") -> QuerySet:
    """Rows whose post (the row itself, or the one reached through `prefix`, e.g. "post__") has every word
    of `query` in its text or external id, each as a word or the start of one ("vacc" finds "vaccine").

    PostgreSQL: a full-text match of the stored words (TextMatches), which the planner answers from the GIN
    index (a probe per word and a bitmap of the posts that have them all) or, for words in many posts, by
    testing each post of an order's index as it walks it; SQLite scans with LIKE.
    """
    words = search_words(query)
    if not words:
        return qs
    if connection.vendor == "postgresql":
        if not prefix:
            return qs.filter(TextMatches(every_word(words)))
        # Rows of another table (ratings): their posts' ids, from a subquery on the posts.
        matching = Post.objects.filter(TextMatches(every_word(words))).values("pk")
        return qs.filter(**{f"{prefix}pk__in": matching})
    for word in words:
        qs = qs.filter(Q(**{f"{prefix}text__icontains": word}) | Q(**{f"{prefix}external_id__icontains": word}))
    return qs
