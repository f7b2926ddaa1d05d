"""Views and shares are bounded so that no sum of them overflows PostgreSQL's bigint (issue 28, finding 6).

Each counter is at most 2^53 - 1 (factcheck.flag_input.MAX_COUNT), checked where a flag is validated, so the
API answers 422 naming the field and `import_posts` rejects the row with its line and reason and imports the
rest. Before, views + shares past 2^63 was a 500 ("bigint out of range") and crashed the importer's batch.
"""

from __future__ import annotations

import json

import pytest
from django.db.models import F

from factcheck.flag_input import MAX_COUNT
from factcheck.models import Post
from tests.api.helpers import flag_payload, post_json
from tests.factcheck.importers.helpers import import_posts

pytestmark = pytest.mark.django_db

HUGE = 2**62 + 1  # each fits a bigint; together they pass 2^63


def test_views_and_shares_that_together_pass_2_63_are_a_422_per_field(platform_client):
    response = post_json(platform_client, "/api/v1/flags", flag_payload(post={"views": HUGE, "shares": HUGE}))

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert {(e["item"], e["field"]) for e in error["details"]["errors"]} == {(0, "post.views"), (0, "post.shares")}
    assert all(f"{MAX_COUNT}" in e["message"].replace(",", "") for e in error["details"]["errors"])
    assert not Post.objects.exists()


def test_the_largest_counters_are_stored_and_their_sum_fits(platform_client):
    flag = flag_payload(post={"views": MAX_COUNT, "shares": MAX_COUNT})

    assert post_json(platform_client, "/api/v1/flags", flag).status_code == 201
    post = Post.objects.get()
    assert (post.views, post.shares) == (MAX_COUNT, MAX_COUNT)
    # The queue's "most reach" order and a copy group's reach add them up in SQL: no overflow.
    assert Post.objects.values_list(F("views") + F("shares"), flat=True).get() == 2 * MAX_COUNT


def test_the_importer_rejects_the_overflowing_row_with_its_line_and_imports_the_rest(tmp_path):
    rows = [flag_payload(), flag_payload(post={"views": HUGE, "shares": HUGE}), flag_payload()]
    path = tmp_path / "flags.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))

    out = import_posts(path, "jsonl")

    assert out[0] == "imported 2, already present 0, rejected 1"
    assert out[1].startswith("line 2: post.views: ") and "post.shares: " in out[1]
    assert sorted(Post.objects.values_list("external_id", flat=True)) == sorted(
        [rows[0]["post"]["external_id"], rows[2]["post"]["external_id"]])
