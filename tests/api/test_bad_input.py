"""Bad input gets a clear 4xx and writes nothing; a bad row from before does not break anything.

Each hostile value the probes found (a year-1 timestamp, impossible offsets, a post dated 2100,
a 1 MB text, a lone surrogate, JSON nested 100,000 deep, one idempotency key twice in a batch)
is refused with its status and code, and no row is written.
"""

from __future__ import annotations

import json
import logging
import time

import pytest
from django.db import DataError, connection

from audit.models import AuditEvent
from factcheck.models import Flag, Page, Post
from factcheck.queue import refresh_priorities
from tests.api.helpers import flag_payload, post_json
from tests.factories import PostFactory

URL = "/api/v1/flags"
pytestmark = pytest.mark.django_db


def nothing_written() -> tuple[int, int, int, int]:
    return Post.objects.count(), Flag.objects.count(), Page.objects.count(), AuditEvent.objects.count()


def assert_refused(response, status: int, code: str, before) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    assert nothing_written() == before
    return error


def fields(error: dict) -> set[str]:
    return {e["field"] for e in error["details"]["errors"]}


@pytest.mark.parametrize(
    "where, value, message",
    [
        ("post.posted_at", "0001-01-01T00:00:00+14:00", "before 2000-01-01"),
        ("post.posted_at", "1999-12-31T23:59:59Z", "before 2000-01-01"),
        ("post.posted_at", "2100-01-01T00:00:00Z", "more than a day in the future"),
        # The last second Python has, pushed past it by its offset: it had said "before 2000-01-01".
        ("post.posted_at", "9999-12-31T23:59:59-12:00", "more than a day in the future"),
        ("post.posted_at", "2026-03-01T08:00:00+20:00", "no real timezone offset"),
        ("post.posted_at", "2026-03-01T08:00:00-13:00", "no real timezone offset"),
        ("flagged_at", "0001-01-01T00:00:00+14:00", "before 2000-01-01"),
        ("flagged_at", "2100-01-01T00:00:00Z", "more than a day in the future"),
    ],
)
def test_an_impossible_timestamp_is_refused_naming_the_field(platform_client, where, value, message):
    flag = flag_payload()
    target = flag["post"] if where.startswith("post.") else flag
    target[where.split(".")[-1]] = value
    before = nothing_written()
    error = assert_refused(post_json(platform_client, URL, flag), 422, "validation_error", before)
    assert fields(error) == {where}
    assert message in error["details"]["errors"][0]["message"]


def test_a_post_text_longer_than_facebooks_limit_is_refused(platform_client):
    before = nothing_written()
    flag = flag_payload(post={"text": "x" * 1_000_000})
    error = assert_refused(post_json(platform_client, URL, flag), 422, "validation_error", before)
    assert fields(error) == {"post.text"}
    flag = flag_payload(post={"text": "x" * 63_206})  # exactly the limit is fine
    assert post_json(platform_client, URL, flag).status_code == 201


@pytest.mark.parametrize("where", ["post.text", "post.page.name", "reason", "idempotency_key"])
def test_a_lone_surrogate_in_any_text_is_refused(platform_client, where):
    flag = flag_payload()
    body = json.dumps(flag)
    # Put the escape sequence in the raw JSON, as a hostile client would send it.
    key = where.split(".")[-1]
    value = {"post.text": flag["post"]["text"], "post.page.name": flag["post"]["page"]["name"],
             "reason": flag["reason"], "idempotency_key": flag["idempotency_key"]}[where]
    raw = body.replace(f'"{key}": "{value}"', f'"{key}": "bad \\ud800 text"', 1)
    assert "\\ud800" in raw
    before = nothing_written()
    response = platform_client.post(URL, data=raw, content_type="application/json")
    assert_refused(response, 422, "invalid_text", before)


def test_a_paired_surrogate_is_a_real_character_and_accepted(platform_client):
    raw = json.dumps(flag_payload(post={"text": "a real emoji: \U0001F600"}))  # \ud83d\ude00 in the JSON
    assert "\\ud83d\\ude00" in raw
    assert platform_client.post(URL, data=raw, content_type="application/json").status_code == 201


def test_json_nested_100000_deep_is_refused_before_parsing(platform_client):
    before = nothing_written()
    raw = '{"flags": ' + "[" * 100_000 + "]" * 100_000 + "}"
    error = assert_refused(
        platform_client.post(URL, data=raw, content_type="application/json"), 400, "too_deep", before
    )
    assert "32 levels" in error["message"]


def test_an_unclosed_string_of_escaped_quotes_is_refused_at_once(platform_client):
    # 200 KB: milliseconds; the string pattern before tried each escaped quote to the body's end (103 s at 160 KB).
    before = nothing_written()
    started = time.perf_counter()
    response = platform_client.post(URL, data='{"flags": "' + '\\"' * 100_000, content_type="application/json")
    assert time.perf_counter() - started < 3
    assert "not valid JSON" in assert_refused(response, 400, "malformed_json", before)["message"]


def test_the_same_idempotency_key_twice_in_one_batch_is_refused_naming_both_items(platform_client):
    first, second = flag_payload(), flag_payload()
    second["idempotency_key"] = first["idempotency_key"]
    before = nothing_written()
    error = assert_refused(post_json(platform_client, URL, {"flags": [first, second]}), 422, "validation_error", before)
    [problem] = error["details"]["errors"]
    assert (problem["item"], problem["field"]) == (1, "idempotency_key")
    assert "item 0" in problem["message"]


def _store_a_year_one_post_as_before_the_fix() -> int:
    """A row as the old API stored it: the check constraint is dropped inside this test's transaction."""
    post = PostFactory()
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending foreign-key checks before ALTER
        cursor.execute("ALTER TABLE factcheck_post DROP CONSTRAINT post_posted_since_2000")
        cursor.execute("UPDATE factcheck_post SET posted_at = '0001-01-01T00:00:00+14:00', queue_state = 'queued' "
                       "WHERE id = %s", [post.pk])
    return post.pk


def test_the_repair_makes_a_year_one_post_readable_again_and_audits_it(client, factchecker, login):
    from factcheck.repairs import repair_impossible_timestamps

    post_id = _store_a_year_one_post_as_before_the_fix()
    with pytest.raises(DataError):  # what the probes saw: the row cannot even be read back
        list(Post.objects.filter(pk=post_id).values_list("posted_at", flat=True))
    repair_impossible_timestamps(connection)
    post = Post.objects.get(pk=post_id)
    assert post.posted_at == post.created_at
    assert login(factchecker).get(f"/queue/posts/{post_id}/").status_code == 200
    event = AuditEvent.objects.get(verb="post.repaired", post_id=post_id)
    assert event.actor_label == "system:repair"


def test_the_database_refuses_a_timestamp_before_2000_from_any_path():
    from django.db import IntegrityError, transaction

    post = PostFactory()
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE factcheck_post SET posted_at = '1970-01-01T00:00:00Z' WHERE id = %s", [post.pk])


def test_one_post_that_cannot_be_scored_is_logged_and_skipped(monkeypatch, caplog):
    from factcheck import queue

    good, bad = PostFactory(queue_state="queued", views=10_000), PostFactory(queue_state="queued", views=66_666)
    real = queue.compute_priority

    def failing(**inputs):
        if inputs["views"] == bad.views:
            raise OverflowError("date value out of range")
        return real(**inputs)

    monkeypatch.setattr(queue, "compute_priority", failing)
    with caplog.at_level(logging.ERROR, logger="factcheck.queue"):
        assert refresh_priorities() == 1
    assert Post.objects.get(pk=good.pk).priority > 0
    assert f"cannot score post {bad.pk}" in caplog.text


def test_a_number_too_long_for_python_is_a_400_not_a_500(platform_client):
    before = nothing_written()
    raw = json.dumps(flag_payload(post={"views": 1})).replace('"views": 1', '"views": ' + "9" * 5000)
    response = platform_client.post(URL, data=raw, content_type="application/json")
    error = assert_refused(response, 400, "malformed_json", before)
    assert "4300 digits" in error["message"]
