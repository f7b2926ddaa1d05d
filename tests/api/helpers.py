"""Request bodies for the API tests: valid flags to vary, and JSON posting."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

from django.test import Client

_numbers = itertools.count(1)


def flag_payload(
    *, post: dict[str, Any] | None = None, page: dict[str, Any] | None = None, **top: Any
) -> dict[str, Any]:
    """A valid flag as the platform sends it; `post`/`page` update those objects, `top` the flag."""
    n = next(_numbers)
    flag: dict[str, Any] = {
        "idempotency_key": f"api-flag-{n}",
        "source": "user_report",
        "reason": "Says a miracle cure exists",
        "flagged_at": "2026-03-01T10:00:00Z",
        "post": {
            "external_id": f"api-post-{n}",
            "url": f"https://social.example/posts/{n}",
            "text": "Drinking bleach cures the flu, doctors confirm.",
            "language": "en",
            "country": "GB",
            "media_type": "text",
            "posted_at": "2026-03-01T08:00:00+00:00",
            "views": 12000,
            "shares": 800,
            "page": {"external_id": f"api-page-{n}", "name": "Health Truths Daily", "is_politician": False},
        },
    }
    flag["post"].update(copy.deepcopy(post or {}))
    flag["post"]["page"].update(copy.deepcopy(page or {}))
    flag.update(copy.deepcopy(top))
    return flag


def post_json(client: Client, url: str, data: Any):
    return client.post(url, data=json.dumps(data), content_type="application/json")
