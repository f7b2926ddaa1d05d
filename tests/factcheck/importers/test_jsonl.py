"""`import_posts --format jsonl`: one API flag per line, refused line by line as the API refuses a body."""

from __future__ import annotations

import json

import pytest

from factcheck.models import Post
from tests.api.helpers import flag_payload, post_json
from tests.factcheck.importers.helpers import FILES, copied, import_fails, import_posts, row_counts

pytestmark = pytest.mark.django_db


def test_each_line_is_a_flag_and_each_bad_line_a_rejection(tmp_path):
    out = import_posts(copied("flags.jsonl", tmp_path), "jsonl")
    assert out == [
        "imported 2, already present 1, rejected 8",
        "line 5: post.posted_at: Input should have timezone info",
        "line 6: post.posted_at: is before 2000-01-01",
        "line 7: Text may not contain NUL (\\u0000) characters.",
        "line 8: not valid JSON: Expecting value: line 2 column 1 (char 42)",
        "line 9: a flag must be a JSON object",
        "line 10: post.text: String should have at most 63206 characters",
        "line 11: source: Input should be 'user_report', 'classifier', 'partner' or 'trusted_flagger'",
        "line 12: not valid JSON: Unterminated string starting at: line 1 column 112 (char 111)",
    ]
    assert Post.objects.get(external_id="jsonl-post-2").text == "<img src=x onerror=alert(1)> HTML kept as text"


def test_a_line_gets_the_same_field_and_message_as_the_api(platform_client, tmp_path):
    bad = flag_payload(post={"posted_at": "2026-03-01T08:00:00", "country": "Britain"})
    answer = post_json(platform_client, "/api/v1/flags", bad)
    api = {(e["field"], e["message"]) for e in answer.json()["error"]["details"]["errors"]}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    reason = import_posts(path, "jsonl")[1].removeprefix("line 1: ")
    assert {tuple(part.split(": ", 1)) for part in reason.split("; ")} == api


def test_a_second_import_writes_nothing(tmp_path):
    path = copied("flags.jsonl", tmp_path)
    import_posts(path, "jsonl")
    before = row_counts()
    assert import_posts(path, "jsonl")[0] == "imported 0, already present 3, rejected 8"
    assert row_counts() == before


def test_text_that_is_not_utf8_refuses_the_file_and_writes_nothing():
    assert "line 2 is not UTF-8 text" in import_fails(FILES / "not_utf8.jsonl", "jsonl")
    assert row_counts()["flags"] == 0


def test_a_line_longer_than_the_api_body_limit_is_rejected_unread(settings, tmp_path):
    settings.API_MAX_BODY_BYTES = 1000
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(flag_payload(post={"text": "x" * 5000})) + "\n" + json.dumps(flag_payload()) + "\n")
    assert import_posts(path, "jsonl") == [
        "imported 1, already present 0, rejected 1",
        "line 1: the line is longer than 1,000 bytes, the API's limit for one request",
    ]


def test_a_number_too_long_for_python_is_a_rejection_not_a_traceback(tmp_path):
    huge = json.dumps(flag_payload(post={"views": 1})).replace('"views": 1', '"views": ' + "9" * 5000)
    path = tmp_path / "huge.jsonl"
    path.write_text(huge + "\n" + json.dumps(flag_payload()) + "\n")
    out = import_posts(path, "jsonl")
    assert out[0] == "imported 1, already present 0, rejected 1"
    assert out[1].startswith("line 1: not valid JSON: ") and "4300 digits" in out[1]
