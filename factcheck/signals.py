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

# Sent inside the ingest transaction, with `now`, when flags arrived that the decision side answers: the posts
# that received reports of harm (`reported_post_ids`: they wait for trust-and-safety staff) and the flags
# answered the moment they arrived (`decided_flag_ids`: factcheck.routing.arrival_outcome), whose senders are told.
flags_stored = Signal()

# Sent inside the transaction that withdrew a flag (factcheck.withdrawal), under its post's row lock, with `post_id`,
# `actor` (the sender), `reason` and `now`: a withdrawn report of harm leaves the staff's queue with it.
flags_withdrawn = Signal()

# Sent inside the matching reconciler's transaction that took copies off `matched` under a claim with no current rating
# (factcheck.matching.unrated.release_unrated), under their locks, with `claim_id`, `post_ids` (the claim's copies
# released) and `now`: a match job linked them while the claim's rating was being withdrawn, so what the withdrawal
# undid for the copies it saw is still theirs.
copies_released = Signal()

# Sent inside the ingest transaction, under the posts' locks, with `post_ids` and `now`: linked copies whose text a
# later flag changed so that they no longer say what they said when they were linked (factcheck.matching.edits); the
# decision side takes each off its claim, and what the claim's rating did to it ends.
copies_edited = Signal()
