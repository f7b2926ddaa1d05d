"""How much a rating may hold: the one home of the limits that the rating rules (factcheck.ratings), the API's
schema and rating drafts (factcheck.drafts) all apply."""

from __future__ import annotations

MAX_RATIONALE = 5000
MAX_SOURCES = 20
MAX_CHANGE_REASON = 2000
# A source, an article or an evidence URL: Rating.article_url's column, and what the API's document says of each
# (Django's URL validator alone would take 2,048, and a longer article URL failed in the database: a 500).
MAX_URL = 2000
