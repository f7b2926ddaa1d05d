"""What the review side announces. The decision side listens; this side never imports it."""

from django.dispatch import Signal

# Sent inside the transaction that recorded a rating, with `rating` (factcheck.models.Rating).
rating_recorded = Signal()

# Sent inside the ingest transaction with `posts` (a list of (post id, page id)) and `now`,
# for posts that did not exist before.
posts_created = Signal()

# Sent inside the transaction that linked posts to a rated claim (factcheck.matching), with
# `post_ids`: the decision side gives each the claim's rating as a matched rating, after commit.
posts_matched = Signal()
