"""The OpenAPI document is exactly as strict as the server (issue 28, finding 19).

Each example the probe found documented as valid yet refused is now documented as invalid (checked
against the document with a JSON Schema validator) or accepted; control characters in external ids are
refused with 422; a body declared as anything but JSON is refused with 400 `unsupported_content_type`.
Then schemathesis, with positive data only, finds no valid request refused on the flags endpoint.
"""

from __future__ import annotations

import json
import re

import pytest
import schemathesis
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.specs.openapi.checks import positive_data_acceptance

from config.wsgi import application
from factcheck.models import Post
from tests.api.helpers import flag_payload, post_json
from tests.api.test_schemathesis import MAX_EXAMPLES, OWN_ROLE, fuzzed, in_process_requests  # noqa: F401  (fixtures)
from tests.savepoints import rolled_back

pytestmark = pytest.mark.django_db
URL = "/api/v1/flags"


@pytest.fixture(scope="module")
def document() -> dict:
    return json.loads(Client().get("/api/openapi.json").content)


def _matches(schema: dict, value: str) -> bool:
    return re.search(schema["pattern"], value) is not None


def _component(document: dict, name: str) -> dict:
    return document["components"]["schemas"][name]


def test_a_posting_time_before_2000_is_documented_as_invalid_and_refused(document, platform_client):
    posted_at = _component(document, "PostIn")["properties"]["posted_at"]
    assert not _matches(posted_at, "1999-12-31T23:59:59Z") and _matches(posted_at, "2001-01-01T00:00:00Z")
    assert not _matches(posted_at, "2020-01-01T00:00:00+15:00")  # no such offset
    response = post_json(platform_client, URL, flag_payload(post={"posted_at": "1999-12-31T23:59:59Z"}))
    assert response.status_code == 422


def test_a_whole_number_written_5_0_is_accepted_as_the_document_says(document, platform_client):
    assert _component(document, "PostIn")["properties"]["shares"]["type"] == "integer"  # JSON: 5.0 is one
    response = post_json(platform_client, URL, flag_payload(post={"shares": 5.0, "views": 12.0}))
    assert response.status_code == 201
    assert (Post.objects.get().shares, Post.objects.get().views) == (5, 12)
    assert post_json(platform_client, URL, flag_payload(post={"shares": 5.5})).status_code == 422


def test_a_url_the_server_refuses_is_documented_as_invalid(document):
    sources = document["paths"]["/api/v1/posts/{external_id}/ratings"]["post"]["requestBody"]["content"][
        "application/json"]["schema"]
    sources = _component(document, sources["$ref"].rsplit("/", 1)[1])["properties"]["sources"]["items"]
    for refused in ("HTTP://0", "https://", "http://exa mple.com", "http://-x.com"):
        assert not _matches(sources, refused), refused
    for accepted in ("HTTP://EXAMPLE.COM/a?b=1", "https://127.0.0.1:8000/", "http://localhost/"):
        assert _matches(sources, accepted), accepted


def test_a_day_that_does_not_exist_is_documented_as_invalid(document):
    [start] = [p for p in document["paths"]["/api/v1/stats"]["get"]["parameters"] if p["name"] == "from"]
    for missing in ("0000-00-00", "1999-12-31", "2025-02-29", "2025-04-31", "2025-13-01"):
        assert not _matches(start["schema"], missing), missing
    for real in ("2024-02-01", "2024-02-29", "2025-01-31", "2025-04-30"):
        assert _matches(start["schema"], real), real


def test_today_is_documented_as_valid_and_accepted(document, platform_client):
    # The document once admitted only the years up to last year, and days 01-28: a client checking today's
    # flags against it refused them, though the server takes them (found by a spec audit).
    now = timezone.now()
    posted_at = _component(document, "PostIn")["properties"]["posted_at"]
    [flagged_at] = [s for s in _component(document, "FlagIn")["properties"]["flagged_at"]["anyOf"] if "pattern" in s]
    [start] = [p for p in document["paths"]["/api/v1/stats"]["get"]["parameters"] if p["name"] == "from"]
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert _matches(posted_at, stamp) and _matches(flagged_at, stamp) and _matches(start["schema"], f"{now:%Y-%m-%d}")
    for day in (29, 30, 31):  # the last days of a month of 31 days, a year ago
        assert _matches(posted_at, f"{now.year - 1}-12-{day}T12:00:00+01:00")
    response = post_json(platform_client, URL, flag_payload(flagged_at=stamp, post={"posted_at": stamp}))
    assert response.status_code == 201


@pytest.mark.parametrize("field", ["post.external_id", "post.page.external_id"])
@pytest.mark.parametrize("control", ["\x01", "\x1b", "\x7f", "\x85", "\n"])
def test_control_characters_in_external_ids_are_a_422_naming_the_field(platform_client, field, control):
    flag = flag_payload()
    target = flag["post"] if field == "post.external_id" else flag["post"]["page"]
    target["external_id"] = f"id{control}x"
    response = post_json(platform_client, URL, flag)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["error"]["details"]["errors"]] == [field]
    assert not Post.objects.exists()


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml", ""])
@pytest.mark.parametrize("path", [URL, "/api/v1/webhooks"])
def test_a_body_not_declared_as_json_is_a_400(platform_client, content_type, path):
    body = json.dumps(flag_payload() if path == URL else {"url": "https://hooks.example/x", "events": []})
    response = platform_client.generic("POST", path, body, content_type=content_type)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "unsupported_content_type"
    assert not Post.objects.exists()


@pytest.mark.parametrize("content_type", ["application/json; charset=utf-8", "application/merge-patch+json"])
def test_json_and_json_based_types_are_accepted(platform_client, content_type):
    response = platform_client.generic("POST", URL, json.dumps(flag_payload()), content_type=content_type)
    assert response.status_code == 201


# Schemathesis with positive data only: every request the document calls valid is accepted, as the
# operation's own role. Refusals that no schema can say are allowed: 403 (coverage, role), 404 (an id that
# does not exist), 409 (a state: already claimed, an appeal open) and the 422s of NOT_IN_A_SCHEMA (a rule of
# the world, such as "no removal to appeal", or between two fields, such as `from` <= `to`: OpenAPI 3 has no
# way to say it; the operations' descriptions do). A webhook's host is resolved when it is registered: here
# every host resolves to a public address, as the document cannot know DNS. Two rules hold for every body and are
# said once, in the document's description rather than in each schema: no NUL characters and no unpaired
# surrogates anywhere in it (generation: allow-x00 false, codec utf-8).
POSITIVE_OPERATIONS = [
    ("/api/v1/flags", "POST"),
    ("/api/v1/posts/{external_id}/ratings", "POST"),
    ("/api/v1/posts/{external_id}/appeals", "POST"),
    ("/api/v1/posts/{external_id}/ratings/{rating_id}/withdraw", "POST"),
    ("/api/v1/webhooks", "POST"),
    ("/api/v1/stats", "GET"),
]


def _after_tomorrow_or_a_key_twice(error: dict) -> bool:
    """A batch refused only for a time more than a day ahead of the server's clock (which no pattern can follow), or
    for one idempotency key given to two different flags: a rule between items of the array, which JSON Schema
    cannot say (uniqueItems compares whole items; the operation's description says it). Generated batches were seen
    to repeat a key."""
    problems = (error.get("details") or {}).get("errors") or []
    return bool(problems) and all(
        "more than a day in the future" in problem["message"]
        or (problem.get("field") == "idempotency_key" and "repeats the idempotency key" in problem["message"])
        for problem in problems
    )


def _contact_details(error: dict) -> bool:
    """A rationale refused only for an e-mail address or a telephone number in it, which the field's description
    says and no pattern can follow."""
    problems = (error.get("details") or {}).get("errors") or []
    return bool(problems) and all(problem["field"] == "rationale" and "leave out e-mail addresses and phone numbers"
                                  in problem["message"] for problem in problems)


def _contact_details_in_reason(error: dict) -> bool:
    """A withdrawal's reason refused only for an e-mail address or a telephone number in it (the owner reads it), which
    the field's description says and no pattern can follow."""
    problems = (error.get("details") or {}).get("errors") or []
    return bool(problems) and all(problem["field"] == "reason" and "leave out e-mail addresses and phone numbers"
                                  in problem["message"] for problem in problems)


NOT_IN_A_SCHEMA = {
    "/api/v1/flags": _after_tomorrow_or_a_key_twice,
    "/api/v1/posts/{external_id}/appeals": lambda error: error["code"] == "appeal_refused",
    "/api/v1/posts/{external_id}/ratings": lambda error: error["code"] == "rating_refused" or _contact_details(error),
    "/api/v1/posts/{external_id}/ratings/{rating_id}/withdraw": _contact_details_in_reason,
    "/api/v1/stats": lambda error: (error["message"] in ("'from' must be on or before 'to'.",
                                                         "A range is at most 366 days.")
                                    or re.fullmatch(r"'(from|to)' must be a day from 2000-01-01 to [-\d]+\.",
                                                    error["message"]) is not None),
}
POSITIVE = schemathesis.openapi.from_wsgi("/api/openapi.json", application, config=schemathesis.Config.from_dict({
    "generation": {"allow-x00": False, "codec": "utf-8"},
    "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "403", "404", "409"]}},
}))


@pytest.mark.parametrize(("path", "method"), POSITIVE_OPERATIONS, ids=[f"{m} {p}" for p, m in POSITIVE_OPERATIONS])
def test_schemathesis_finds_no_valid_request_refused(
    path, method, fuzzed, in_process_requests, monkeypatch,  # noqa: F811  (fixtures)
):
    monkeypatch.setattr("webhooks.endpoints.resolve", lambda target, allow_private: ["93.184.216.34"])
    operation = POSITIVE[path][method]
    not_in_a_schema = NOT_IN_A_SCHEMA.get(path, lambda error: False)
    # The ratings go to a queued post; appeals to the page owner's rated one.
    real = fuzzed.external_ids[0] if path.endswith("ratings") else fuzzed.rated
    strategy = operation.as_strategy(
        generation_mode=GenerationMode.POSITIVE, headers={"Authorization": f"Bearer {fuzzed.tokens[OWN_ROLE[path]]}"},
        **({"path_parameters": {"external_id": real, **({"rating_id": fuzzed.rating_ids[0]}
                                                        if "{rating_id}" in path else {})}}
           if "{external_id}" in path else {}),
    )
    refused: list[str] = []

    @hypothesis_settings(max_examples=MAX_EXAMPLES, derandomize=True, database=None, deadline=None,
                         phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck),
                         print_blob=False)
    @given(case=strategy)
    def accepted(case) -> None:
        with rolled_back():
            response = case.call()
            if response.status_code == 422 and not_in_a_schema(response.json()["error"]):
                return
            try:
                case.validate_response(response, checks=[not_a_server_error, positive_data_acceptance])
            except (Failure, FailureGroup):
                refused.append(f"{response.status_code} {response.text[:400]}")

    accepted()
    assert not refused, f"{len(refused)} valid request(s) refused:\n" + "\n".join(sorted(set(refused))[:10])


def test_a_post_id_with_a_slash_is_a_422_and_documented_so(document, platform_client):
    # "/" splits the id in /api/v1/posts/{external_id}: such a post was stored, then could be neither read nor rated.
    assert not _matches(_component(document, "PostIn")["properties"]["external_id"], "page/77")
    response = post_json(platform_client, URL, flag_payload(post={"external_id": "page/77"}))
    assert response.status_code == 422
    [error] = response.json()["error"]["details"]["errors"]
    assert error["field"] == "post.external_id" and "'/'" in error["message"]
    assert not Post.objects.exists()
    # A page's id is in no URL: it may hold one.
    assert post_json(platform_client, URL, flag_payload(page={"external_id": "pages/77"})).status_code == 201


@pytest.mark.parametrize("field", ["rationale", "change_reason"])
def test_control_characters_in_what_a_reviewer_writes_are_a_422_and_documented_so(document, field, factchecker_client):
    # A hostile review stored ESC sequences in a rationale, which then reached the owners' plain-text e-mails,
    # ClaimReview and the DSA export.
    from tests.factories import PostFactory

    schema = document["paths"]["/api/v1/posts/{external_id}/ratings"]["post"]["requestBody"]["content"][
        "application/json"]["schema"]
    properties = _component(document, schema["$ref"].rsplit("/", 1)[1])["properties"]
    assert not _matches(properties[field], "Red\x1b[31m text") and _matches(properties[field], "Two\nlines\tand a tab")
    post = PostFactory()
    body = {"verdict": "false", "rationale": "The registry has no such law.", "sources": ["https://law.example/r"]}
    body[field] = "Looks fine\x1b[2J but clears the screen."
    response = post_json(factchecker_client, f"/api/v1/posts/{post.external_id}/ratings", body)
    if field == "change_reason":
        assert response.status_code == 201  # a first rating has no reason to change: the field is not read
        return
    assert response.status_code == 422
    [error] = response.json()["error"]["details"]["errors"]
    assert error["field"] == "rationale" and "control characters" in error["message"]


def test_an_appeal_statement_with_control_characters_is_a_422(document, platform_client):
    from moderation.models import Appeal
    from tests import scenarios
    from tests.conftest import bearer_client
    from tests.factories import UserFactory

    statement = _component(document, "AppealIn")["properties"]["statement"]
    assert not _matches(statement, "It is real\x07") and _matches(statement, "It is real.")
    owner = UserFactory()
    post = scenarios.rated_post(owner=owner)
    response = post_json(bearer_client(owner), f"/api/v1/posts/{post.external_id}/appeals",
                         {"kind": "dispute", "statement": "It is real\x1b[31m."})
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["error"]["details"]["errors"]] == ["statement"]
    assert not Appeal.objects.exists()


@pytest.mark.parametrize("external_id", [".", ".."])
def test_a_post_id_that_is_a_dot_segment_is_a_422(document, platform_client, external_id):
    # Clients resolve /api/v1/posts/../ratings to /api/v1/ratings: such a post could never be reached.
    assert not _matches(_component(document, "PostIn")["properties"]["external_id"], external_id)
    assert _matches(_component(document, "PostIn")["properties"]["external_id"], "...")
    response = post_json(platform_client, URL, flag_payload(post={"external_id": external_id}))
    assert response.status_code == 422 and "'..'" in response.json()["error"]["details"]["errors"][0]["message"]
    assert not Post.objects.exists()
