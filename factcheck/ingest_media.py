"""A flag batch's media: what factcheck.ingest writes of the posts' pictures and videos (PRODUCT.md, "Media").

A flag that sends `post.media` (a list, even empty) says what the post carries now; one that leaves it
out says nothing about it. So a new post's media are stored as sent, and a post we already had has its
media replaced only when a flag sends a list that differs from what is stored (same items in the same
order: nothing is written), except that a rated post or a matched copy keeps the media it was decided on (a
flag may give it its first media, never others). A rated post's first images are indexed as a rated post's
are when it is rated (factcheck.matching.media.index_rated_media).

Set-based, as the rest of ingest: one read of the stored items, one delete per kind of row, one store
(factcheck.media.store_media) for the whole batch, in the batch's transaction, which holds the existing
posts' row locks (docs/concurrency.md), so two batches cannot replace one post's media at once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from factcheck.matching.media import index_rated_media
from factcheck.media import ITEM_FIELDS, MediaInput, store_media
from factcheck.models import Post, QueueState
from factcheck.models_media import PostMedia

# A post whose rating (its own, or its claim's) was made on the media it carries.
DECIDED_STATES = (QueueState.RATED, QueueState.MATCHED)


def replace_media(*, sent: Mapping[int, tuple[MediaInput, ...]], new_post_ids: set[int]) -> set[int]:
    """Store the media the batch sends (post id -> its items, as the post's last flag that sends them has them);
    `new_post_ids`: the posts this batch created, which carry nothing yet. Returns the posts whose media
    changed (new posts with at least one item among them). The caller holds the other posts' row locks."""
    had = [post_id for post_id in sent if post_id not in new_post_ids]
    stored: dict[int, list[MediaInput]] = defaultdict(list)
    stored_ids: dict[int, list[int]] = defaultdict(list)
    if had:
        for pk, post_id, *values in (PostMedia.objects.filter(post_id__in_array=had)
                                     .order_by("post_id", "position").values_list("id", "post_id", *ITEM_FIELDS)):
            stored[post_id].append(MediaInput(**dict(zip(ITEM_FIELDS, values, strict=True))))
            stored_ids[post_id].append(pk)
    # What was decided about a rated post or a matched copy was decided about the media it carried then: a later
    # flag may give such a post its first media (an imported review's post, say), never other media.
    decided = set(Post.objects.filter(id__in_array=had, queue_state__in=DECIDED_STATES)
                  .values_list("id", flat=True)) if had else set()
    changed = {post_id for post_id, items in sent.items()
               if tuple(stored.get(post_id, ())) != items and not (post_id in decided and stored.get(post_id))}
    gone = [pk for post_id in sorted(changed) for pk in stored_ids.get(post_id, ())]
    if gone:
        # The items' band keys (MediaBand, RatedMediaBand) have no foreign key in the database
        # (db_constraint=False): Django's on_delete=CASCADE deletes them, one DELETE per table, before the items.
        PostMedia.objects.filter(id__in_array=gone).delete()
    store_media({post_id: sent[post_id] for post_id in sorted(changed) if sent[post_id]})
    if changed - new_post_ids:
        # A rated post's first images join the rated ones (and its rating is carried to their copies), as when
        # it was rated; the others' do not.
        index_rated_media(post_ids=sorted(changed - new_post_ids))
    return changed
