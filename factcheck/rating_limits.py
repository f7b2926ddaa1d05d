"""How much a rating may hold: the one home of the limits that the rating rules (factcheck.ratings), the API's
schema and rating drafts (factcheck.drafts) all apply."""

from __future__ import annotations

from django.core.validators import URLValidator

MAX_RATIONALE = 5000
MAX_SOURCES = 20
MAX_CHANGE_REASON = 2000
MAX_URL = URLValidator.max_length  # the longest URL the rating's URL validator accepts
MAX_ARTICLE_URL = 2000  # Rating.article_url's column
