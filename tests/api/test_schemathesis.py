"""Property-based fuzzing of the API from its own OpenAPI document (schemathesis, in-process WSGI).

Every operation of /api/openapi.json is called with generated requests, valid and invalid, as each
role (platform, fact-checker, page owner, trust-and-safety staff) and with no token, and with
schemathesis' boundary values as the operation's own role. Each answer must not be a server error,
must use a status code the operation documents, and must match the documented content type,
headers and body schema; an invalid request must be refused, and a success must not also come
without a token or with a made-up one.

Schemathesis' own pytest plugin (`schema.parametrize()`) does not run under pytest 9, so the
operations are parametrized here and each one's Hypothesis strategy (`as_strategy`) is driven
with `@given`, its checks run by `case.call_and_validate`.

The app runs in this process through its WSGI handler, inside pytest-django's test database:
each generated request runs in a savepoint that is rolled back, so a revoked token or a filed
appeal does not change what the next example meets. Bounded and derandomized for CI: a fixed
number of examples per operation and caller, no example database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.core.result import Ok
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.overrides import Override
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.models import ApiToken
from config.wsgi import application
from factcheck.models import Verdict
from factcheck.ratings import record_rating
from moderation.enforcement import apply_rating
from moderation.models import Action
from tests.factories import (
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)
from tests.savepoints import rolled_back

# How an invalid request may be refused: schemathesis' list, plus 413 (a batch of more than
# 1,000 flags is refused as too large, as the document says).
CONFIG = schemathesis.Config.from_dict({"checks": {"negative_data_rejection": {"expected-statuses": [
    "400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429",
]}}})
# Loading the document needs no database: the schema is built from the routers.
SCHEMA = schemathesis.openapi.from_wsgi("/api/openapi.json", application, config=CONFIG)
LOADED = list(SCHEMA.get_all_operations())
OPERATIONS = [(result.ok().path, result.ok().method.upper()) for result in LOADED if isinstance(result, Ok)]
ROLES = ("platform", "factchecker", "page_owner", "staff", "no_token")
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)

# Examples per operation and mode for the caller it is for, a third as many for the others (examples_for).
# FACTDESK_FUZZ_EXAMPLES=500 digs deeper, still derandomized.
MAX_EXAMPLES = int(os.environ.get("FACTDESK_FUZZ_EXAMPLES", "30"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    # A success with a token is asked again without it, and with a made-up one: both must be refused.
    ignored_auth,
]


# Who each operation is for: its boundary values are sent with that role's token (and a real
# post), so that they reach validation and the rules behind it rather than a 403 or a 404.
OWN_ROLE = {
    "/api/v1/flags": "platform",
    "/api/v1/flags/{idempotency_key}": "platform",
    "/api/v1/posts/{external_id}/ratings": "factchecker",
    "/api/v1/posts/{external_id}/ratings/{rating_id}/withdraw": "factchecker",
    "/api/v1/posts/{external_id}": "page_owner",
    "/api/v1/posts/{external_id}/appeals": "page_owner",
    "/api/v1/posts/{external_id}/unlink": "factchecker",
    "/api/v1/posts/{external_id}/claimreview": "platform",
    "/api/v1/decisions": "platform",
    "/api/v1/tokens": "staff",
    "/api/v1/tokens/{prefix}": "staff",
    "/api/v1/actions/{id}/statement-of-reasons": "page_owner",
    "/api/v1/webhooks": "platform",
    "/api/v1/webhooks/{id}": "platform",
    "/api/v1/stats": "staff",
    "/api/v1/media/hash": "platform",
}


def examples_for(path: str, role: str) -> int:
    """Examples a mode for `role` calling `path`: MAX_EXAMPLES for the caller the operation is for (OWN_ROLE), a third
    as many for the others. Most of those are refused by their token before the body is read (django-ninja checks
    authentication first), so more bodies meet the same 401 or 403; at 30 each they took about five minutes of the
    suite's worker time, and the caller an operation serves is where its rules are."""
    return MAX_EXAMPLES if OWN_ROLE.get(path) == role else max(5, MAX_EXAMPLES // 3)


@dataclass
class Fuzzed:
    tokens: dict[str, str]
    external_ids: list[str]
    prefixes: list[str]
    rated: str  # a post of the page owner's page, rated by the fact-checker
    staff_prefix: str
    action_ids: list[int]  # the rated post's action (with a statement) and one without
    rating_ids: list[int]  # the rated post's rating (its fact-checker's organisation may withdraw it)



@pytest.fixture
def fuzzed(db, settings) -> Fuzzed:
    """A few real posts (queued, rated, on the page owner's page) so path parameters can hit them."""
    settings.API_RATE_LIMIT = "1000000/m"  # the fuzzer is one token holder sending hundreds of requests
    settings.API_AUTH_FAILURE_LIMIT = "1000000/m"  # and sends made-up tokens from one address (accounts.api_auth)
    users = {
        "platform": PlatformUserFactory(),
        "factchecker": FactCheckerFactory(),
        "page_owner": UserFactory(),
        "staff": StaffFactory(),
    }
    page = PageFactory()
    page.owners.add(users["page_owner"])
    queued = PostFactory(page=page)
    FlagFactory(post=queued)
    rated = PostFactory(page=page)
    rating = record_rating(
        reviewer=users["factchecker"], post_id=rated.pk, verdict=Verdict.FALSE, rationale="Invented quote.",
        sources=["https://source.example/a"], claim_if_unclaimed=True,
    )
    apply_rating(rating_id=rating.pk)
    true_post = PostFactory(page=page)
    true_rating = record_rating(
        reviewer=users["factchecker"], post_id=true_post.pk, verdict=Verdict.TRUE, rationale="Checks out.",
        sources=["https://source.example/b"], claim_if_unclaimed=True,
    )
    apply_rating(rating_id=true_rating.pk)
    action_ids = list(Action.objects.filter(post__in=[rated, true_post]).order_by("pk").values_list("pk", flat=True))
    politician = PostFactory(page=PageFactory(is_politician=True))
    tokens, prefixes = {}, {}
    for role, user in users.items():
        token, raw = ApiToken.issue(user=user)
        tokens[role] = raw
        prefixes[role] = token.prefix
    return Fuzzed(tokens=tokens, external_ids=[queued.external_id, rated.external_id, politician.external_id],
                  prefixes=list(prefixes.values()), rated=rated.external_id, staff_prefix=prefixes["staff"],
                  action_ids=action_ids, rating_ids=[rating.pk])


@pytest.fixture
def in_process_requests() -> Iterator[None]:
    """Keep the test's connection open across requests, as Django's test client does.

    Django closes "unusable" connections when a request starts and finishes; inside the test's
    transaction every connection looks unusable (autocommit is off), so the WSGI handler would
    otherwise drop the test database transaction after the first request.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def cases(path: str, method: str, fuzzed: Fuzzed, *, headers: dict[str, str]) -> st.SearchStrategy:
    """Generated requests, valid and invalid; the caller's token is fixed, never mutated."""
    operation = SCHEMA[path][method]
    fixed = {"headers": headers} if headers else {}
    strategies = [operation.as_strategy(generation_mode=mode, **fixed) for mode in MODES]
    # Real ids too, so validation and the rules behind it are reached, not only the 404.
    for name, values in (("external_id", fuzzed.external_ids), ("prefix", fuzzed.prefixes),
                         ("id", fuzzed.action_ids), ("rating_id", fuzzed.rating_ids)):
        if "{" + name + "}" in path:
            strategies += [
                operation.as_strategy(generation_mode=mode, path_parameters={name: value}, **fixed)
                for mode in MODES for value in values
            ]
    return st.one_of(strategies)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_the_api_answers_as_documented(path, method, role, fuzzed, in_process_requests):
    token = fuzzed.tokens.get(role)
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    @hypothesis_settings(
        max_examples=examples_for(path, role) * len(MODES),
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
        print_blob=False,
    )
    @given(case=cases(path, method, fuzzed, headers=headers))
    def answers_as_documented(case) -> None:
        # One savepoint per example, rolled back: each example meets the same world.
        with rolled_back():
            case.call_and_validate(checks=CHECKS)

    answers_as_documented()


def call_in_savepoint(case) -> list[Failure]:
    """Send one case and run the checks, in a savepoint rolled back after; the failures found."""
    with rolled_back():
        try:
            case.call_and_validate(checks=CHECKS)
        except FailureGroup as group:
            return list(group.exceptions)
        except Failure as failure:
            return [failure]
    return []


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_boundary_values_answer_as_documented(path, method, fuzzed, in_process_requests):
    """Schemathesis' coverage phase: each constraint at, just inside and just past its limit, every
    enum value and every required field missing, valid and invalid, as the operation's own role."""
    operation = SCHEMA[path][method]
    role = OWN_ROLE[path]
    real_ids = {"external_id": fuzzed.rated, "prefix": fuzzed.staff_prefix, "id": fuzzed.action_ids[0],
                "rating_id": fuzzed.rating_ids[0]}
    override = Override(
        headers={"Authorization": f"Bearer {fuzzed.tokens[role]}"},
        path_parameters={name: value for name, value in real_ids.items() if "{" + name + "}" in path},
    )
    # The coverage phase's generator is not part of schemathesis' documented API (the pytest
    # plugin that runs it does not work with pytest 9); the version is pinned.
    generator = CoverageGenerator(
        operation=operation, generation_modes=list(MODES), generation_config=SCHEMA.config.generation_for(
            operation=operation), auth_storage=None, override=override, feedback=FeedbackSources(),
    )
    failures: dict[str, str] = {}
    sent = 0
    for case in generator:
        sent += 1
        for failure in call_in_savepoint(case):
            failures.setdefault(f"{failure.code} {failure.title}", f"{failure.message}\n{case.as_curl_command()}")
    assert sent > 0
    assert not failures, f"{len(failures)} kind(s) of failure in {sent} boundary cases:\n" + "\n\n".join(
        f"{title}\n{detail}" for title, detail in failures.items()
    )


def test_every_operation_of_the_document_loads_and_is_fuzzed():
    # An operation schemathesis cannot read would silently drop out of the parametrization above.
    errors = [result.err() for result in LOADED if not isinstance(result, Ok)]
    assert not errors
    assert {path for path, _ in OPERATIONS} >= {"/api/v1/flags", "/api/v1/posts/{external_id}", "/api/v1/decisions"}
