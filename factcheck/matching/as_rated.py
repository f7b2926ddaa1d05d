"""A rated claim is matched by the words its rating rated, not by what the platform sent for its post since.

The platform may send a flag for a rated post with edited text or another link; the post takes them
(factcheck.ingest), and its own keys follow them: the queue's and staff's searches find it by what it says now. But
its rating is of the words the fact-checker read (`Rating.rated_text`, `rated_url`): a new post carrying the new
words must not inherit it, and a copy of the rated words must. So, as a claim, a post whose queue state is `rated`
is read with the keys of its current rating (RatedKeys), wherever the matcher reads a post (`rows`, and the
candidates' SQL of factcheck.matching.candidates: the judge, the guards of text, media and semantic pairs, the
band keys filed under the claim), and its exact copies are looked up by those keys. A new rating of the post is of
its words then, and writes its own keys (`store_rated_keys`).

Not a post that is not `rated`: a claim rated Not eligible is never matched to, and a copy carrying its claim's
rating is judged by its claim's words (a group is a star).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Case, F, Q, When

from factcheck.models import Post, QueueState, Rating
from factcheck.models_bands import RatedKeys
from factcheck.normalise import normalised_rows

# The post's fields that a rated claim reads from its rating instead (RatedKeys; the text from the rating itself).
AS_RATED_FIELDS = {
    "text": "rated_keys__rating__rated_text",
    "normalised_text": "rated_keys__normalised_text",
    "url_key": "rated_keys__url_key",
    "text_key": "rated_keys__text_key",
    "signature": "rated_keys__signature",
}
_READ_AS_RATED = Q(queue_state=QueueState.RATED, rated_keys__isnull=False)
# The same in the matcher's hand-written SQL (`matching_sql`).
_SQL_AS_RATED = {"text": "r.rated_text", **{name: f"k.{name}" for name in AS_RATED_FIELDS if name != "text"}}


def matching_fields(columns: Sequence[str]) -> list[str | Case]:
    """`columns` of Post for `values_list`, each a rated claim reads as rated in its rating's form."""
    return [Case(When(_READ_AS_RATED, then=F(AS_RATED_FIELDS[name])), default=F(name)) if name in AS_RATED_FIELDS
            else name for name in columns]


def matching_sql(columns: Sequence[str]) -> str:
    """`columns` as a SELECT list over `FROM_SQL` (p: the post, k: its RatedKeys when it is rated, r: their
    rating), for the matcher's hand-written statements: `matching_fields` in SQL."""
    return ", ".join(f"COALESCE({_SQL_AS_RATED[name]}, p.{name})" if name in AS_RATED_FIELDS else f"p.{name}"
                     for name in columns)


# The joins `matching_sql` reads. The condition on the state is in the join: a post not rated has no k and no r.
FROM_SQL = (f"factcheck_post p LEFT JOIN {RatedKeys._meta.db_table} k ON k.post_id = p.id "
            f"AND p.queue_state = '{QueueState.RATED.value}' "
            f"LEFT JOIN {Rating._meta.db_table} r ON r.id = k.rating_id")
# The rated claims whose keys as rated are looked up (`k.text_key = key`): they, their post and their rating.
RATED_FROM_SQL = (f"{RatedKeys._meta.db_table} k JOIN factcheck_post p ON p.id = k.post_id "
                  f"AND p.queue_state = '{QueueState.RATED.value}' "
                  f"JOIN {Rating._meta.db_table} r ON r.id = k.rating_id")


def store_rated_keys(*, post_id: int) -> bool:
    """The post was rated: its matching keys as rated are its current rating's (RatedKeys, written or replaced).
    Returns whether the signature changed (a new rating of other words): the caller files the claim's band keys
    again. In the rating's transaction, which holds the post's lock."""
    rating_id, text, url = (Rating.objects.filter(post_id=post_id, is_current=True)
                            .values_list("id", "rated_text", "rated_url").get())
    [(_, url_key, normalised_text, text_key, signature)] = normalised_rows([(url, text)])
    before = RatedKeys.objects.filter(post_id=post_id).values_list("signature", flat=True).first()
    RatedKeys.objects.update_or_create(post_id=post_id, defaults={
        "rating_id": rating_id, "normalised_text": normalised_text, "url_key": url_key, "text_key": text_key,
        "signature": signature})
    if before is None:  # the first rating: the post's own signature is what its claim's keys were filed from
        before = Post.objects.filter(pk=post_id).values_list("signature", flat=True).get()
    return before != signature
