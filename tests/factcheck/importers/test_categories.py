"""Importers take a flag's category as the API does: a csv column or a jsonl field, misinformation when absent;
an unknown one is a rejection naming the field, and a key reused for another category a rejection too."""

from __future__ import annotations

import json

import pytest

from factcheck.models import Flag, Post, QueueState
from moderation.models import ReportedPost
from tests.factcheck.importers.helpers import import_posts

pytestmark = pytest.mark.django_db

HEADER = "idempotency_key,source,category,reason,external_id,posted_at,page_external_id,page_name\n"


def row(key: str, category: str, post: str) -> str:
    return f"{key},user_report,{category},A reason,{post},2026-03-01T08:00:00Z,page-1,Page one\n"


def test_a_csv_category_column_routes_each_row_and_an_empty_cell_is_misinformation(tmp_path):
    path = tmp_path / "flags.csv"
    path.write_text(HEADER + row("k1", "harassment", "only-harm") + row("k2", "", "plain")
                    + row("k3", "spam", "bad") + row("k4", "violence", "plain"))
    out = import_posts(path, "csv")
    assert out[0] == "imported 3, already present 0, rejected 1"
    assert out[1].startswith("line 4: category: Input should be 'misinformation', 'violence'")
    assert dict(Flag.objects.values_list("idempotency_key", "category")) == {
        "k1": "harassment", "k2": "misinformation", "k4": "violence"}
    assert Post.objects.get(external_id="only-harm").queue_state == QueueState.UNFLAGGED
    assert Post.objects.get(external_id="plain").queue_state == QueueState.QUEUED
    assert set(ReportedPost.objects.filter(open_reports__gt=0).values_list("post__external_id", flat=True)) == {
        "only-harm", "plain"}


def test_a_jsonl_category_field_is_read_and_a_key_reused_for_another_category_is_rejected(tmp_path):
    flag = {"idempotency_key": "j1", "source": "trusted_flagger", "category": "imminent_harm", "reason": "Bleach.",
            "post": {"external_id": "bleach", "posted_at": "2026-03-01T08:00:00Z",
                     "page": {"external_id": "page-1", "name": "Page one"}}}
    path = tmp_path / "flags.jsonl"
    path.write_text(json.dumps(flag) + "\n")
    assert import_posts(path, "jsonl")[0] == "imported 1, already present 0, rejected 0"
    path.write_text(json.dumps(flag) + "\n" + json.dumps({**flag, "category": "violence"}) + "\n")
    out = import_posts(path, "jsonl")
    assert out[0] == "imported 0, already present 1, rejected 1"
    assert out[1] == "line 2: idempotency_key: already names another flag"
    assert Flag.objects.get().category == "imminent_harm"
