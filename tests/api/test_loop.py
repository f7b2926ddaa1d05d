"""The whole loop through the API: flags in, a rating, a real worker, the decision out."""

from __future__ import annotations

import pytest

from factcheck.models import Post
from tests.api.helpers import flag_payload, post_json

FALSE_LABEL = "False information. Checked by independent fact-checkers."


@pytest.mark.django_db
def test_flag_rate_and_poll_shows_the_post_demoted_and_labelled(
    platform_client, factchecker_client, run_worker, django_capture_on_commit_callbacks
):
    flags = [flag_payload(), flag_payload(), flag_payload(source="trusted_flagger")]
    flags[1]["post"] = flags[0]["post"]  # two flags on the same post
    pushed = post_json(platform_client, "/api/v1/flags", {"flags": flags})
    assert pushed.status_code == 201
    external_id = flags[0]["post"]["external_id"]
    assert [r["queue_state"] for r in pushed.json()["results"]] == ["queued", "queued", "queued"]

    with django_capture_on_commit_callbacks(execute=True):
        rated = post_json(
            factchecker_client,
            f"/api/v1/posts/{external_id}/ratings",
            {
                "verdict": "false",
                "rationale": "No health authority has said this; bleach is poisonous.",
                "sources": ["https://who.example/bleach"],
                "article_url": "https://factorg.example/bleach-flu",
            },
        )
    assert rated.status_code == 201, rated.json()
    assert rated.json()["verdict_label"] == "False"
    assert run_worker() == 1

    post = platform_client.get(f"/api/v1/posts/{external_id}").json()
    assert post["queue_state"] == "rated"
    assert post["flags"]["count"] == 2
    assert post["rating"]["verdict"] == "false"
    assert post["distribution"]["multiplier"] == 0.2
    assert post["distribution"]["labels"] == [FALSE_LABEL]
    assert post["distribution"]["removed"] is False
    assert [(a["kind"], a["verdict"], a["active"]) for a in post["actions"]] == [("fact_check", "false", True)]
    assert post["appeals"] == []

    feed = platform_client.get("/api/v1/decisions").json()
    assert [d["post"] for d in feed["decisions"]] == [external_id]
    decision = feed["decisions"][0]
    assert decision["distribution"]["multiplier"] == 0.2
    assert decision["distribution"]["labels"] == [FALSE_LABEL]
    assert decision["warn_sharers"] is True
    assert feed["next_cursor"] == decision["cursor"]

    again = platform_client.get(f"/api/v1/decisions?after={feed['next_cursor']}").json()
    assert again == {"decisions": [], "next_cursor": feed["next_cursor"]}
    assert Post.objects.get(external_id=external_id).distribution.labels == [FALSE_LABEL]
