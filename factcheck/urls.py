"""The browser UI of the review side: `/` sends each role to its place, `/queue/` is the fact-checkers'."""

from django.urls import path

from accounts.views import home
from factcheck import (
    views,
    views_conflicts,
    views_drafts,
    views_matches,
    views_post,
    views_rated,
    views_suggestions,
)

app_name = "factcheck"
urlpatterns = [
    path("", home, name="home"),
    path("queue/", views.queue, name="queue"),
    path("queue/claim-next/", views.claim_next_view, name="claim_next"),
    path("queue/posts/<int:post_id>/", views_post.post_detail, name="post"),
    path("queue/posts/<int:post_id>/claim/", views_post.claim_view, name="claim"),
    path("queue/posts/<int:post_id>/release/", views.release_view, name="release"),
    path("queue/posts/<int:post_id>/extend/", views_post.extend_view, name="extend"),
    path("queue/posts/<int:post_id>/draft/", views_drafts.draft_view, name="draft"),
    path("queue/rated/", views_rated.rated_posts, name="rated"),
    path("queue/matches/<int:match_id>/confirm/", views_matches.confirm_match_view, name="confirm_match"),
    path("queue/matches/<int:match_id>/reject/", views_matches.reject_match_view, name="reject_match"),
    path("queue/matches/<int:match_id>/undo-rejection/", views_matches.undo_rejection_view, name="undo_rejection"),
    path("queue/suggestions/", views_suggestions.suggestions, name="suggestions"),
    path("queue/conflicts/", views_conflicts.conflicts, name="conflicts"),
    path("queue/conflicts/<int:match_id>/not-same-claim/", views_conflicts.not_same_claim_view, name="not_same_claim"),
]
