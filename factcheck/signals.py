"""What the review side announces. The decision side listens; this side never imports it."""

from django.dispatch import Signal

# Sent inside the transaction that recorded a rating, with `rating` (factcheck.models.Rating).
rating_recorded = Signal()
