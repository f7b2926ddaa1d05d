"""The authorisation matrix: every URL pattern the project serves, asked by every kind of caller.

The patterns are walked from the URLconf itself (`get_resolver()`, recursively: the site's pages,
the ninja API under /api/, the admin and django-rq under /admin/), so a new URL is in the matrix
the day it is added. What each caller must get is written once, in `TABLE`, keyed by the pattern's
route string or name; a pattern the table does not classify fails `test_every_url_pattern_is_classified`.

Callers (the columns of every row, in this order):

    anonymous      nobody signed in, no token
    rater          fact-checker of the organisation that rated the post
    colleague      another fact-checker of that organisation
    other_checker  fact-checker of another organisation
    owner          owner of the post's page
    other_owner    owner of another page
    staff          trust-and-safety staff (not the one who removed the post)
    superuser      a superuser without a role
    platform       the platform's account

Browser pages and the admin are asked with each caller's session; /api/ with each caller's
bearer token. Every request runs in a savepoint that is rolled back, so no cell sees another's
writes: each cell answers for the fixture world as built.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.util import find_spec
from typing import Any

import pytest
from django.conf import settings
from django.contrib import admin
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RegexPattern, RoutePattern
from django.utils import timezone

from accounts.models import ApiToken, User
from webhooks.models import AttemptOutcome as DeliveryOutcome
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Endpoint, Event, EventType
from factcheck.members import create_user
from factcheck.models import Match, MatchMethod, MatchState, Post, Verdict
from factcheck.ratings import record_rating
from moderation.appeals import file_appeal
from moderation.enforcement import apply_rating
from moderation.models import (
    Action,
    ActionKind,
    Appeal,
    AppealKind,
    AttemptOutcome,
    RemovalGround,
    StatementSubmission,
    StatementSubmissionAttempt,
    SubmissionOutcome,
)
from moderation.staff_actions import remove_post
from tests.factories import (
    FactCheckerFactory,
    FlagFactory,
    OrganisationFactory,
    PageFactory,
    PlatformUserFactory,
    PostFactory,
    UserFactory,
)

ACTORS = ("anonymous", "rater", "colleague", "other_checker", "owner", "other_owner", "staff", "superuser", "platform")


# --- What a cell expects -------------------------------------------------------------------------


@dataclass(frozen=True)
class Redirect:
    """A 302 whose Location starts with `to` (formatted with the world: "{w.rated_post.pk}")."""

    to: str

    def problem(self, response, world: World) -> str:
        target = self.to.format(w=world)
        location = response.get("Location", "").removeprefix("http://testserver")
        if response.status_code == 302 and location.startswith(target):
            return ""
        return f"expected 302 to {target}…, got {response.status_code} {location}".rstrip()

    def __str__(self) -> str:
        return f"302→{self.to}"


@dataclass(frozen=True)
class Page403:
    """The 403 page of that part of the site, rendered from its own template."""

    template: str

    def problem(self, response, world: World) -> str:
        used = [t.name for t in getattr(response, "templates", None) or []]
        if response.status_code == 403 and self.template in used:
            return ""
        return f"expected 403 from {self.template}, got {response.status_code} ({', '.join(used[:3]) or 'no template'})"

    def __str__(self) -> str:
        return f"403 {self.template}"


@dataclass(frozen=True)
class ApiError:
    """The API's JSON error: {"error": {"code": ...}} with this status."""

    status: int
    code: str

    def problem(self, response, world: World) -> str:
        try:
            code = json.loads(response.content)["error"]["code"]
        except (ValueError, KeyError, TypeError):
            code = None
        if response.status_code == self.status and code == self.code:
            return ""
        return f"expected {self.status} {self.code}, got {response.status_code} {code or response.content[:80]!r}"

    def __str__(self) -> str:
        return f"{self.status} {self.code}"


@dataclass(frozen=True)
class Status:
    """Any one of these statuses (for answers that are not about who asks)."""

    codes: frozenset[int]

    def problem(self, response, world: World) -> str:
        if response.status_code in self.codes:
            return ""
        return f"expected {sorted(self.codes)}, got {response.status_code}"

    def __str__(self) -> str:
        return "/".join(map(str, sorted(self.codes)))


def expect(value: Any):
    if isinstance(value, int):
        return Status(frozenset({value}))
    if isinstance(value, (set, frozenset)):
        return Status(frozenset(value))
    return value


LOGIN = Redirect("/accounts/login/?next=")
ADMIN_LOGIN = Redirect("/admin/login/?next=")
FC_403 = Page403("factcheck/forbidden.html")
PORTAL_403 = Page403("moderation/portal_forbidden.html")
DESK_403 = Page403("moderation/appeal_forbidden.html")
PAGE_403 = Page403("403.html")
UNAUTHORIZED = ApiError(401, "unauthorized")
FORBIDDEN = ApiError(403, "forbidden")
NOT_FOUND = ApiError(404, "not_found")
NOT_ALLOWED = ApiError(405, "method_not_allowed")


def row(*cells: Any) -> dict[str, Any]:
    """One row of the matrix: a cell per caller, in the order of ACTORS."""
    assert len(cells) == len(ACTORS), f"a row has {len(ACTORS)} cells, not {len(cells)}"
    return {actor: expect(cell) for actor, cell in zip(ACTORS, cells, strict=True)}


def every(cell: Any) -> dict[str, Any]:
    return row(*[cell] * len(ACTORS))


def staff_only(staff: Any, superuser: Any, *, gate: Any = ADMIN_LOGIN) -> dict[str, Any]:
    """Admin and job pages: everyone else is sent to the admin's login."""
    return row(gate, gate, gate, gate, gate, gate, staff, superuser, gate)


# --- The table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """What each caller gets from one URL pattern, per method, and how to fill the pattern in.

    `shadowed` says an earlier pattern answers all of this one's URLs; the test proves it.
    `args` maps each path parameter to a world attribute path ("rated_post.pk") or a callable of
    the world; `url` replaces the built URL for regex patterns; `data` is the request body by
    method (form fields for pages, JSON for the API).
    """

    methods: dict[str, dict[str, Any]]
    args: dict[str, str | Callable[[World], Any]] = field(default_factory=dict)
    url: str = ""
    data: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Unreachable: an earlier pattern (with a row of its own) answers every URL of this one.
    shadowed: bool = False


def route(
    *, args: dict[str, str | Callable[[World], Any]] | None = None, url: str = "",
    data: dict[str, dict[str, Any]] | None = None, shadowed: bool = False, **methods: dict[str, Any],
) -> Route:
    """A row per method: route(GET=row(...), POST=row(...), args={...})."""
    return Route(methods=methods, args=args or {}, url=url, data=data or {}, shadowed=shadowed)


FLAG = {
    "idempotency_key": "matrix-flag-1",
    "source": "user_report",
    "reason": "Says a miracle cure exists",
    "flagged_at": "2026-03-01T10:00:00Z",
    "post": {
        "external_id": "matrix-new-post", "url": "https://social.example/matrix", "text": "A miracle cure.",
        "language": "en", "country": "GB", "posted_at": "2026-03-01T08:00:00Z",
        "page": {"external_id": "matrix-new-page", "name": "Matrix page"},
    },
}
RERATING = {
    "verdict": "partly_false", "rationale": "New evidence from the registry.", "sources": ["https://registry.example/1"],
    "change_reason": "A second source changes the picture.",
}
RERATING_FORM = {**RERATING, "sources": "https://registry.example/1"}
DISPUTE = {"kind": "dispute", "statement": "The quote is real; here is the recording.", "evidence_urls": []}
UPHOLD = {"outcome": "upheld", "reason": "The sources stand."}


# Pages only fact-checkers use: anonymous to the login page, other roles to the fact-checkers' 403 page.
def factcheckers(ok: Any) -> dict[str, Any]:
    return row(LOGIN, ok, ok, ok, FC_403, FC_403, FC_403, FC_403, FC_403)


# The dashboard: fact-checkers, staff and superusers; anonymous to the login page, other roles to the 403 page.
def figures(ok: Any) -> dict[str, Any]:
    return row(LOGIN, ok, ok, ok, PAGE_403, PAGE_403, ok, ok, PAGE_403)


# The page owners' portal: anonymous to the login page, other roles to the portal's 403 page.
def owners(owner: Any, other_owner: Any) -> dict[str, Any]:
    return row(LOGIN, PORTAL_403, PORTAL_403, PORTAL_403, owner, other_owner, PORTAL_403, PORTAL_403, PORTAL_403)


def checker_desk(rater: Any, colleague: Any, other: Any) -> dict[str, Any]:
    return row(LOGIN, rater, colleague, other, DESK_403, DESK_403, DESK_403, DESK_403, DESK_403)


def staff_desk(staff: Any) -> dict[str, Any]:
    # The desk is trust-and-safety's: a superuser without that role is refused like anyone else.
    return row(LOGIN, DESK_403, DESK_403, DESK_403, DESK_403, DESK_403, staff, DESK_403, DESK_403)


# The admin, per registered model: what trust-and-safety staff and a superuser may do there
# ("v"iew, "a"dd, "c"hange, "d"elete). The gate sends everyone else to the admin's login.
ADMIN_MODELS: dict[str, tuple[str, str]] = {
    "auth.group": ("", "vacd"),
    # Locked-out sign-ins: read-only for everyone; staff unlock them with a reason (accounts.lockout).
    "axes.accessattempt": ("v", "v"),
    "accounts.user": ("", "vacd"),
    "accounts.apitoken": ("v", "v"),
    "audit.auditevent": ("v", "v"),
    "factcheck.organisation": ("v", "vacd"),
    "factcheck.page": ("v", "vacd"),
    "factcheck.post": ("v", "v"),
    "factcheck.flag": ("v", "v"),
    "factcheck.claim": ("v", "v"),
    "factcheck.rating": ("v", "v"),
    # Near-duplicate pairs: fact-checkers decide suggestions in the review UI; the admin only reads.
    "factcheck.match": ("v", "v"),
    "moderation.enforcementpolicy": ("vc", "vc"),
    "moderation.repeatoffenderpolicy": ("vc", "vc"),
    "moderation.action": ("v", "v"),
    "moderation.strike": ("v", "v"),
    "moderation.pagestanding": ("v", "v"),
    "moderation.ratingdecision": ("v", "v"),
    "moderation.postdistribution": ("v", "v"),
    "moderation.distributionchange": ("v", "v"),
    "moderation.appeal": ("v", "v"),
    "moderation.appealevent": ("v", "v"),
    "moderation.notification": ("v", "v"),
    # What the Transparency Database answered: read-only, written only by submit_statements.
    "moderation.statementsubmission": ("v", "v"),
    "moderation.statementsubmissionattempt": ("v", "v"),
    # Webhooks: read-only; staff redeliver and enable endpoints again through decisions with a reason.
    "webhooks.endpoint": ("v", "v"),
    "webhooks.event": ("v", "v"),
    "webhooks.delivery": ("v", "v"),
    "webhooks.deliveryattempt": ("v", "v"),
}


def admin_model_pages(label: str) -> dict[str, Route]:
    """The five pages of one registered model (and the old change URL that redirects to it)."""
    staff, superuser = ADMIN_MODELS[label]
    app, model = label.split(".")
    obj = {"object_id": lambda w, label=label: w.admin_object(label)}
    change_url = f"/admin/{app}/{model}/"

    def may(perms: str, letter: str, ok: Any = 200) -> Any:
        return ok if letter in perms else 403

    def viewer(perms: str) -> Any:
        return 200 if ("v" in perms or "c" in perms) else 403

    return {
        f"admin:{app}_{model}_changelist": route(GET=staff_only(viewer(staff), viewer(superuser))),
        f"admin:{app}_{model}_add": route(GET=staff_only(may(staff, "a"), may(superuser, "a"))),
        f"admin:{app}_{model}_change": route(GET=staff_only(viewer(staff), viewer(superuser)), args=obj),
        f"admin:{app}_{model}_history": route(GET=staff_only(viewer(staff), viewer(superuser)), args=obj),
        f"admin:{app}_{model}_delete": route(GET=staff_only(may(staff, "d"), may(superuser, "d")), args=obj),
        # The pre-1.9 change URL redirects to the change page.
        f"admin/{app}/{model}/<path:object_id>/": route(
            GET=staff_only(Redirect(change_url), Redirect(change_url)), args=obj,
        ),
    }


def staff_decision(label: str, slug: str, *, object_attr: Any) -> dict[str, Route]:
    app, model = label.split(".")
    return {
        f"admin:{app}_{model}_{slug}": route(GET=staff_only(200, 200), args={"object_id": object_attr}),
    }


# django-rq's job pages, twice: at /admin/rq/ (django_rq.urls) and inside the admin (its QueueAdmin).
RQ_PAGES: dict[str, tuple[dict[str, str], Any]] = {
    "home": ({}, 200),
    "jobs": ({"queue_index": "rq.queue_index"}, 200),
    "queue_details": ({"queue_index": "rq.queue_index"}, 200),
    "finished_jobs": ({"queue_index": "rq.queue_index"}, 200),
    "failed_jobs": ({"queue_index": "rq.queue_index"}, 200),
    "delete_failed_jobs": ({"queue_index": "rq.queue_index"}, 200),
    "scheduled_jobs": ({"queue_index": "rq.queue_index"}, 200),
    "started_jobs": ({"queue_index": "rq.queue_index"}, 200),
    "deferred_jobs": ({"queue_index": "rq.queue_index"}, 200),
    "clear": ({"queue_index": "rq.queue_index"}, 200),
    "requeue_all": ({"queue_index": "rq.queue_index"}, 200),
    "job_detail": ({"queue_index": "rq.queue_index", "job_id": "rq.job_id"}, 200),
    "result_detail": ({"queue_index": "rq.queue_index", "job_id": "rq.job_id", "result_id": "rq.result_id"}, 200),
    "delete_job": ({"queue_index": "rq.queue_index", "job_id": "rq.job_id"}, 200),
    "requeue_job": ({"queue_index": "rq.queue_index", "job_id": "rq.job_id"}, 200),
    "enqueue_job": ({"queue_index": "rq.queue_index", "job_id": "rq.job_id"}, 200),
    "stop_job": ({"queue_index": "rq.queue_index", "job_id": "rq.job_id"}, 405),  # POST only
    # The bulk actions' GET goes back to the queue.
    "confirm_action": ({"queue_index": "rq.queue_index"}, Redirect("/admin/")),
    "actions": ({"queue_index": "rq.queue_index"}, Redirect("/admin/")),
    "workers": ({"queue_index": "rq.queue_index"}, 200),
    "worker_details": ({"queue_index": "rq.queue_index", "key": "rq.worker_key"}, 200),
    "scheduler_jobs": ({"scheduler_index": "rq.queue_index"}, 200),
    "cron_scheduler_detail": ({"connection_index": "rq.queue_index", "scheduler_name": "rq.no_name"}, 404),
    "cron_job_detail": (
        {"connection_index": "rq.queue_index", "scheduler_name": "rq.no_name", "cron_job_name": "rq.no_name"}, 404,
    ),
}


RQ_SCHEDULER = find_spec("rq_scheduler") is not None


def rq_pages(name_prefix: str, url_prefix: str) -> dict[str, Route]:
    routes = {
        f"{name_prefix}{name}": route(
            GET=staff_only(ok, ok), args=args,
            # Without rq-scheduler, config/urls.py answers 404 before django-rq's page would raise (a 500).
            shadowed=name == "scheduler_jobs" and not RQ_SCHEDULER,
        )
        for name, (args, ok) in RQ_PAGES.items()
    }
    # The JSON statistics answer 401 (not the login page) to anyone but staff or a holder of RQ_API_TOKEN.
    routes[f"{name_prefix}home_json"] = route(GET=staff_only(200, 200, gate=401), url=f"{url_prefix}stats.json/")
    routes[f"{url_prefix.lstrip('/')}stats.json/(?P<token>[\\w]+)?/?$"] = route(
        GET=staff_only(200, 200, gate=401), url=f"{url_prefix}stats.json/nottheapitoken/"
    )
    return routes


TABLE: dict[str, Route] = {
    # ---- public ---------------------------------------------------------------------------------
    "healthz": route(GET=every(200)),
    # A published rating's page: read-only, for anyone.
    "moderation:claim": route(
        GET=every(200), POST=every(405), args={"rating_id": lambda w: w.rated_post.ratings.get(is_current=True).pk},
    ),
    # ---- signing in: a signed-in visitor of the login page is sent on to `/` --------------------
    "accounts:login": route(GET=row(200, *[Redirect("/")] * 8)),
    "accounts:logout": route(GET=every(405), POST=every(Redirect("/accounts/login/"))),
    "accounts:welcome": route(GET=row(LOGIN, *[200] * 8)),
    # One's own settings (the time zone): everyone signed in, for themselves only.
    "accounts:profile": route(
        GET=row(LOGIN, *[200] * 8), POST=row(LOGIN, *[Redirect("/accounts/profile/")] * 8),
        data={"POST": {"time_zone": "Europe/Paris"}},
    ),
    # `/` sends each role to its place.
    "factcheck:home": route(
        GET=row(LOGIN, Redirect("/queue/"), Redirect("/queue/"), Redirect("/queue/"), Redirect("/appeals/"),
                Redirect("/appeals/"), Redirect("/admin/"), Redirect("/admin/"), Redirect("/accounts/welcome/")),
    ),
    # ---- the fact-checkers' queue (reading a post outside coverage is allowed) ------------------
    "factcheck:queue": route(GET=factcheckers(200)),
    "factcheck:claim_next": route(GET=factcheckers(405), POST=factcheckers(Redirect("/queue/"))),
    "factcheck:post": route(
        GET=factcheckers(200),
        # Re-rating while the dispute is open is refused (rater, colleague), and so is another
        # organisation's re-rating: each is a message on the post page, nothing is written.
        POST=factcheckers(Redirect("/queue/posts/{w.rated_post.pk}/")),
        args={"post_id": "rated_post.pk"}, data={"POST": RERATING_FORM},
    ),
    "factcheck:claim": route(
        GET=factcheckers(405), POST=factcheckers(Redirect("/queue/posts/{w.queued_post.pk}/")),
        args={"post_id": "queued_post.pk"},
    ),
    "factcheck:release": route(
        GET=factcheckers(405), POST=factcheckers(Redirect("/queue/posts/{w.queued_post.pk}/")),
        args={"post_id": "queued_post.pk"},
    ),
    # Extending a claim: only its holder (nobody holds this post: a message, nothing written).
    "factcheck:extend": route(
        GET=factcheckers(405), POST=factcheckers(Redirect("/queue/posts/{w.queued_post.pk}/")),
        args={"post_id": "queued_post.pk"},
    ),
    # Rated by me / by my organisation: each fact-checker sees their own organisation's.
    "factcheck:rated": route(GET=factcheckers(200)),
    # A suggested copy of the rated claim: its organisation's fact-checkers decide it, another
    # organisation's is refused with a message; either way back to the copy's page.
    "factcheck:confirm_match": route(
        GET=factcheckers(405), POST=factcheckers(Redirect("/queue/posts/{w.queued_post.pk}/")),
        args={"match_id": "suggestion.pk"},
    ),
    "factcheck:reject_match": route(
        GET=factcheckers(405), POST=factcheckers(Redirect("/queue/posts/{w.queued_post.pk}/")),
        args={"match_id": "suggestion.pk"}, data={"POST": {"reason": "Another claim about another town."}},
    ),
    # ---- the page owners' portal: another page's post is a 404, not a 403 -----------------------
    "moderation:portal": route(GET=owners(200, 200)),
    "moderation:portal_notifications_read": route(
        GET=owners(405, 405), POST=owners(Redirect("/appeals/"), Redirect("/appeals/")),
    ),
    "moderation:portal_post": route(
        GET=owners(200, 404),
        # The owner's second dispute of the same rating: no form is offered while one is open, and the
        # post is sent back to its page, which says so and links to the open appeal.
        POST=owners(Redirect("/appeals/posts/{w.rated_post.pk}/"), 404),
        args={"post_id": "rated_post.pk"}, data={"POST": DISPUTE},
    ),
    "moderation:portal_withdraw": route(
        GET=owners(405, 405), POST=owners(Redirect("/appeals/posts/{w.rated_post.pk}/"), 404),
        args={"appeal_id": "appeal.pk"},
    ),
    # ---- deciding disputes: the rating's organisation, never the rater; others learn nothing ----
    "moderation:factchecker_appeals": route(GET=checker_desk(200, 200, 200)),
    "moderation:factchecker_appeal": route(
        GET=checker_desk(200, 200, 404), POST=checker_desk(DESK_403, Redirect("/queue/appeals/"), 404),
        args={"appeal_id": "appeal.pk"}, data={"POST": UPHOLD},
    ),
    "moderation:factchecker_appeal_review": route(
        GET=checker_desk(405, 405, 405), POST=checker_desk(DESK_403, Redirect("/queue/appeals/{w.appeal.pk}/"), 404),
        args={"appeal_id": "appeal.pk"},
    ),
    # ---- deciding removal appeals: trust-and-safety staff other than the remover ----------------
    "moderation:staff_appeals": route(GET=staff_desk(200)),
    "moderation:staff_appeal": route(
        GET=staff_desk(200), POST=staff_desk(Redirect("/staff/appeals/")),
        args={"appeal_id": "removal_appeal.pk"}, data={"POST": UPHOLD},
    ),
    "moderation:staff_appeal_review": route(
        GET=staff_desk(405), POST=staff_desk(Redirect("/staff/appeals/{w.removal_appeal.pk}/")),
        args={"appeal_id": "removal_appeal.pk"},
    ),
    # ---- the API: 401 without a token, 403 for the wrong role, 404 for another owner's post -----
    "api:openapi-json": route(GET=every(200)),
    "api:openapi-view": route(GET=every(200)),
    "api:api-root": route(GET=every(NOT_FOUND)),
    "api/.*$": route(GET=every(NOT_FOUND), url="/api/v1/no-such-endpoint"),
    "api:push_flags": route(
        GET=every(NOT_ALLOWED), POST=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 201), data={"POST": FLAG},
    ),
    "api:rate_post": route(
        GET=every(NOT_ALLOWED),
        # Re-rating is the rating organisation's, and not while the dispute is open.
        POST=row(UNAUTHORIZED, ApiError(409, "appeal_open"), ApiError(409, "appeal_open"),
                 ApiError(403, "not_your_rating"), *[FORBIDDEN] * 5),
        args={"external_id": "rated_post.external_id"}, data={"POST": RERATING},
    ),
    "api:get_post": route(
        # A superuser has no role, so no role's endpoint.
        GET=row(UNAUTHORIZED, 200, 200, 200, 200, NOT_FOUND, 200, FORBIDDEN, 200),
        args={"external_id": "rated_post.external_id"},
    ),
    "api:get_claimreview": route(
        GET=row(UNAUTHORIZED, 200, 200, 200, 200, NOT_FOUND, 200, FORBIDDEN, 200),
        args={"external_id": "rated_post.external_id"},
    ),
    "api:create_appeal": route(
        GET=every(NOT_ALLOWED),
        POST=row(UNAUTHORIZED, FORBIDDEN, FORBIDDEN, FORBIDDEN, 201, NOT_FOUND, FORBIDDEN, FORBIDDEN, FORBIDDEN),
        args={"external_id": "appealable_post.external_id"}, data={"POST": DISPUTE},
    ),
    # The statement of reasons holds no personal data: whoever may read the post may read it.
    "api:get_statement_of_reasons": route(
        GET=row(UNAUTHORIZED, 200, 200, 200, 200, NOT_FOUND, 200, FORBIDDEN, 200),
        args={"id": "action.pk"},
    ),
    "api:list_decisions": route(GET=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 200)),
    # Figures: staff the program, fact-checkers their organisation (reports.figures.scope_of).
    "api:stats": route(GET=row(UNAUTHORIZED, 200, 200, 200, FORBIDDEN, FORBIDDEN, 200, FORBIDDEN, FORBIDDEN)),
    "api:list_tokens": route(GET=row(UNAUTHORIZED, *[200] * 8)),
    # Webhook endpoints: the platform's own. One path lists (GET) and registers (POST); ninja answers both
    # methods from the first of its two patterns for that path.
    "api:create_webhook": route(
        GET=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 200),
        POST=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 201),
        data={"POST": {"url": "https://93.184.216.34/hooks", "events": ["distribution.changed"]}},
    ),
    "api:list_webhooks": route(GET=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 200), shadowed=True),
    "api:delete_webhook": route(
        GET=every(NOT_ALLOWED),
        DELETE=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 204),
        args={"id": "webhook_delivery.endpoint_id"},
    ),
    "api:delete_token": route(
        GET=every(NOT_ALLOWED),
        # The platform's token: another holder's prefix is the same 404 as a missing one.
        DELETE=row(UNAUTHORIZED, *[ApiError(404, "token_not_found")] * 7, 200),
        args={"prefix": "tokens.platform.prefix"},
    ),
    # ---- the dashboard: staff (the program) and fact-checkers (their organisation) ---------------
    "reports:dashboard": route(GET=figures(200), POST=every(405)),
    "reports:chart_csv": route(GET=figures(200), args={"slug": lambda w: "ratings"}),
    # The DSA report covers the whole program: staff only.
    "reports:transparency_report": route(
        GET=row(LOGIN, PAGE_403, PAGE_403, PAGE_403, PAGE_403, PAGE_403, 200, 200, PAGE_403),
    ),
    # ---- the admin: trust-and-safety staff and superusers; everyone else to its login -----------
    "admin:index": route(GET=staff_only(200, 200)),
    "admin:login": route(GET=row(200, 200, 200, 200, 200, 200, Redirect("/admin/"), Redirect("/admin/"), 200)),
    "admin:logout": route(
        GET=staff_only(405, 405, gate=Redirect("/admin/")),
        POST=staff_only(Redirect("/accounts/login/"), Redirect("/accounts/login/"), gate=Redirect("/admin/")),
    ),
    "admin:password_change": route(GET=staff_only(200, 200)),
    "admin:password_change_done": route(GET=staff_only(200, 200)),
    "admin:autocomplete": route(GET=staff_only(403, 403)),  # without its parameters
    "admin:jsi18n": route(GET=staff_only(200, 200)),
    "admin:app_list": route(GET=staff_only(200, 200), url="/admin/factcheck/"),
    "admin/(?P<url>.*)$": route(GET=staff_only(404, 404), url="/admin/no-such-page/"),
    # Every registered model: its changelist, change, add, history and delete pages.
    **{name: r for label in ADMIN_MODELS for name, r in admin_model_pages(label).items()},
    "admin:auth_user_password_change": route(GET=staff_only(403, 200), args={"id": "users.rater.pk"}),
    # Staff decisions in the admin (each a confirmation page first).
    **staff_decision("accounts.apitoken", "revoke", object_attr="tokens.platform.pk"),
    **staff_decision("axes.accessattempt", "unlock", object_attr=lambda w: w.objects["axes.accessattempt"]),
    **staff_decision("factcheck.page", "mark_politician", object_attr="page.pk"),
    **staff_decision("factcheck.page", "unmark_politician", object_attr="page.pk"),
    **staff_decision("moderation.action", "lift", object_attr="action.pk"),
    **staff_decision("webhooks.endpoint", "enable", object_attr="webhook_delivery.endpoint_id"),
    **staff_decision("webhooks.delivery", "redeliver", object_attr="webhook_delivery.pk"),
    **staff_decision("moderation.action", "override", object_attr="action.pk"),
    **staff_decision("factcheck.post", "remove", object_attr="queued_post.pk"),
    # django-rq's dashboard model in the admin: its own jobs dashboard (admin:django_rq_home) comes first.
    "admin:django_rq_dashboard_changelist": route(GET=staff_only(200, 200), shadowed=True),
    "admin:django_rq_dashboard_add": route(GET=staff_only(403, 403)),
    "admin:django_rq_dashboard_change": route(GET=staff_only(302, 302), args={"object_id": "rq.no_name"}),
    "admin:django_rq_dashboard_history": route(GET=staff_only(302, 302), args={"object_id": "rq.no_name"}),
    "admin:django_rq_dashboard_delete": route(GET=staff_only(403, 302), args={"object_id": "rq.no_name"}),
    "admin/django_rq/dashboard/<path:object_id>/": route(
        GET=staff_only(Redirect("/admin/django_rq/dashboard/"), Redirect("/admin/django_rq/dashboard/")),
        args={"object_id": "rq.no_name"},
    ),
    # ---- the job pages, at /admin/rq/ and inside the admin --------------------------------------
    **rq_pages("django_rq:", "/admin/rq/"),
    **rq_pages("admin:django_rq_", "/admin/django_rq/dashboard/"),
    **({} if RQ_SCHEDULER else {
        "no_rq_scheduler": route(GET=staff_only(404, 404), args={"scheduler_index": "rq.queue_index"}),
        "admin_no_rq_scheduler": route(GET=staff_only(404, 404), args={"scheduler_index": "rq.queue_index"}),
    }),
}


# --- The URLconf, walked -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    route: str  # as ResolverMatch.route spells it
    name: str | None  # namespaced
    parts: tuple[Any, ...]  # the pattern objects from the root down
    callback: Callable[..., Any]

    @property
    def key(self) -> str | None:
        """The TABLE key that classifies this pattern: its route string first, else its name."""
        if self.route in TABLE:
            return self.route
        if self.name in TABLE:
            return self.name
        return None


def _join_route(route1: str, route2: str) -> str:
    # As django.urls.resolvers.URLResolver._join_route: a regex part's leading ^ is dropped.
    return route1 + (route2[1:] if route2.startswith("^") else route2)


def walk(patterns=None, *, route: str = "", namespace: str = "", parts: tuple = ()) -> Iterator[Pattern]:
    for p in get_resolver().url_patterns if patterns is None else patterns:
        here = _join_route(route, str(p.pattern))
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            yield from walk(p.url_patterns, route=here, namespace=ns, parts=(*parts, p.pattern))
        else:
            assert isinstance(p, URLPattern)
            name = f"{namespace}{p.name}" if p.name else None
            yield Pattern(route=here, name=name, parts=(*parts, p.pattern), callback=p.callback)


def all_patterns() -> list[Pattern]:
    return list(walk())


# --- The world -----------------------------------------------------------------------------------


@dataclass
class RqWorld:
    queue_index: int
    job_id: str
    result_id: str
    worker_key: str
    no_name: str = "no-such-thing"


@dataclass
class World:
    users: dict[str, User | None]
    tokens: dict[str, Any]
    page: Any
    rated_post: Post
    appeal: Appeal
    appealable_post: Post
    removed_post: Post
    removal_appeal: Appeal
    queued_post: Post
    suggestion: Match
    action: Action
    webhook_delivery: Delivery
    rq: RqWorld
    objects: dict[str, Any] = field(default_factory=dict)

    def pick(self, path: str | Callable[[World], Any]) -> Any:
        if callable(path):
            return path(self)
        value: Any = self
        for part in path.split("."):
            value = value[part] if isinstance(value, dict) else getattr(value, part)
        return value

    def admin_object(self, label: str) -> Any:
        return self.objects[label]


def rate(reviewer, post) -> Any:
    rating = record_rating(
        reviewer=reviewer, post_id=post.pk, verdict=Verdict.FALSE, rationale="The quote was invented.",
        sources=["https://source.example/a"], claim_if_unclaimed=True,
    )
    apply_rating(rating_id=rating.pk)
    return rating


def build_rq_world() -> RqWorld:
    import django_rq
    from rq import SimpleWorker

    queue = django_rq.get_queue("default")
    # A job that ran (so it has a result), and a worker that registered itself: their pages exist.
    job = queue.enqueue("operator.add", 1, 2)
    SimpleWorker([queue], connection=queue.connection).work(burst=True, with_scheduler=False)
    result = job.latest_result()
    worker = SimpleWorker([queue], connection=queue.connection)
    worker.register_birth()
    return RqWorld(queue_index=0, job_id=job.id, result_id=result.id, worker_key=worker.key)


@pytest.fixture
def world(db) -> World:
    from axes.models import AccessAttempt
    from django.contrib.auth.models import Group

    if settings.FACTDESK_JOBS_IN_PROCESS:
        pytest.skip("the job pages under /admin/rq/ need REDIS_URL (make test sets it)")

    organisation, other_organisation = OrganisationFactory(), OrganisationFactory()
    rater = FactCheckerFactory(organisation=organisation)
    colleague = FactCheckerFactory(organisation=organisation)
    other_checker = FactCheckerFactory(organisation=other_organisation)
    owner, other_owner = UserFactory(), UserFactory()
    staff = create_user(username="matrix-staff", role="trust_safety", password=None)
    remover = create_user(username="matrix-remover", role="trust_safety", password=None)
    superuser = User.objects.create_superuser("matrix-root", "root@example.org", None)
    platform = PlatformUserFactory()
    users = {
        "anonymous": None, "rater": rater, "colleague": colleague, "other_checker": other_checker, "owner": owner,
        "other_owner": other_owner, "staff": staff, "superuser": superuser, "platform": platform,
    }

    page, other_page = PageFactory(), PageFactory()
    page.owners.add(owner)
    other_page.owners.add(other_owner)
    # Rated False by the rater, decided, and disputed by the owner (the dispute is open).
    rated_post = PostFactory(page=page)
    FlagFactory(post=rated_post)
    rate(rater, rated_post)
    appeal = file_appeal(owner=owner, post_id=rated_post.pk, kind=AppealKind.DISPUTE, statement="The quote is real.")
    # Rated and decided, nothing appealed yet.
    appealable_post = PostFactory(page=page)
    rate(rater, appealable_post)
    # Removed by another staff member, and the removal appealed.
    removed_post = PostFactory(page=page)
    remove_post(staff=remover, post_id=removed_post.pk, ground=RemovalGround.HATE, reason="A slur against a group.")
    removal_appeal = file_appeal(owner=owner, post_id=removed_post.pk, kind=AppealKind.REMOVAL, statement="No slur.")
    # Waiting in the queue, on another owner's page; suggested as a copy of the rated claim.
    queued_post = PostFactory(page=other_page)
    FlagFactory(post=queued_post)
    suggestion = Match.objects.create(
        post=queued_post, source=rated_post, method=MatchMethod.MINHASH, score=0.55, state=MatchState.SUGGESTED,
        created_at=timezone.now(),
    )
    action = Action.objects.get(post=rated_post, kind=ActionKind.FACT_CHECK, ended_at__isnull=True)

    tokens = {}
    for actor, user in users.items():
        if user is not None:
            token, raw = ApiToken.issue(user=user)
            token.raw = raw
            tokens[actor] = token

    AccessAttempt.objects.create(username="someone", ip_address="127.0.0.1", user_agent="t", failures_since_start=1)
    # One settled statement, as submit_statements records it.
    attempt = StatementSubmissionAttempt.objects.create(
        endpoint="https://tdb.example/api/v1/statements", run=uuid.uuid4(), sent_at=timezone.now(),
        puids=[action.puid], http_status=201, outcome=AttemptOutcome.ACCEPTED,
    )
    StatementSubmission.objects.create(
        puid=action.puid, endpoint=attempt.endpoint, outcome=SubmissionOutcome.ACCEPTED, recorded_at=attempt.sent_at,
        attempt=attempt,
    )

    # The platform's endpoint, disabled after a delivery that failed for 24 hours.
    endpoint = Endpoint.objects.create(
        owner=platform, url="https://hooks.platform.example/in", events=["distribution.changed"], secret="whsec_x",
        created_at=timezone.now(), disabled_at=timezone.now(), disabled_reason="every delivery failed for 24 hours",
    )
    event = Event.objects.create(type=EventType.DISTRIBUTION_CHANGED, post=removed_post, created_at=timezone.now(),
                                 data={"post": removed_post.external_id})
    webhook_delivery = Delivery.objects.create(
        event=event, endpoint=endpoint, post=removed_post, created_at=timezone.now(), status=DeliveryStatus.FAILED,
        attempts=1, next_attempt_at=timezone.now(), deadline=timezone.now(), failed_at=timezone.now(),
    )
    DeliveryAttempt.objects.create(delivery=webhook_delivery, number=1, started_at=timezone.now(), latency_ms=5000,
                                   outcome=DeliveryOutcome.TIMEOUT)

    objects = {}
    for model in admin.site._registry:
        label = model._meta.label_lower
        if model._meta.managed:
            objects[label] = model._default_manager.order_by("pk").values_list("pk", flat=True).first()
    objects["auth.group"] = Group.objects.get(name="trust_safety").pk
    objects["factcheck.post"] = rated_post.pk
    objects["moderation.appeal"] = appeal.pk
    objects["moderation.action"] = action.pk
    missing = [label for label, pk in objects.items() if pk is None]
    assert not missing, f"the world has no row for {missing}: add one so its change page is in the matrix"

    return World(
        users=users, tokens=tokens, page=page, rated_post=rated_post, appeal=appeal, appealable_post=appealable_post,
        removed_post=removed_post, removal_appeal=removal_appeal, queued_post=queued_post, suggestion=suggestion,
        action=action, webhook_delivery=webhook_delivery,
        rq=build_rq_world(), objects=objects,
    )


# --- Asking --------------------------------------------------------------------------------------


def build_url(pattern: Pattern, route: Route, world: World) -> str:
    if route.url:
        return route.url
    url = "/"
    for part in pattern.parts:
        if isinstance(part, RegexPattern):
            raise AssertionError(f"{pattern.route}: a regex pattern needs an explicit `url` in TABLE")
        assert isinstance(part, RoutePattern)

        def value(match: re.Match, part: RoutePattern = part) -> str:
            name = match.group(1)
            assert name in route.args, f"{pattern.route}: TABLE gives no value for <{name}>"
            return str(part.converters[name].to_url(world.pick(route.args[name])))

        url += re.sub(r"<(?:\w+:)?(\w+)>", value, str(part))
    return url


def session_keys(world: World) -> dict[str, str]:
    """Each signed-in caller's session, made once; every cell gets a fresh client carrying it."""
    keys = {}
    for actor, user in world.users.items():
        if user is not None:
            client = Client()
            client.force_login(user)
            keys[actor] = client.cookies[settings.SESSION_COOKIE_NAME].value
    return keys


def ask(world: World, actor: str, sessions: dict[str, str], *, api: bool, method: str, url: str, data: Any):
    if api:
        token = world.tokens.get(actor)
        headers = {"Authorization": f"Bearer {token.raw}"} if token else {}
        client = Client(headers=headers, raise_request_exception=False)
    else:
        client = Client(raise_request_exception=False)
        if actor in sessions:
            client.cookies[settings.SESSION_COOKIE_NAME] = sessions[actor]
    kwargs: dict[str, Any] = {}
    if data is not None:
        kwargs = {"data": json.dumps(data), "content_type": "application/json"} if api else {"data": data}
    # Each cell in its own savepoint, rolled back: no cell sees what another wrote.
    with transaction.atomic():
        response = getattr(client, method.lower())(url, **kwargs)
        transaction.set_rollback(True)
    return response


def cells() -> Iterator[tuple[Pattern, Route]]:
    for pattern in all_patterns():
        if pattern.key is not None:
            yield pattern, TABLE[pattern.key]


# --- The tests -----------------------------------------------------------------------------------


def test_the_walk_reaches_the_pages_the_api_the_admin_and_the_job_dashboard():
    routes = {p.route for p in all_patterns()}
    for expected in ("queue/", "appeals/", "api/v1/flags", "api/v1/posts/<external_id>", "admin/",
                     "admin/factcheck/post/<path:object_id>/change/", "admin/rq/queues/<int:queue_index>/"):
        assert expected in routes, expected
    # One changelist and one change page per registered model are among them.
    for model in admin.site._registry:
        opts = model._meta
        names = {p.name for p in all_patterns()}
        assert f"admin:{opts.app_label}_{opts.model_name}_changelist" in names
        assert f"admin:{opts.app_label}_{opts.model_name}_change" in names


def test_every_url_pattern_is_classified():
    unclassified = [p for p in all_patterns() if p.key is None]
    listing = "\n".join(f"  {p.route!r}  (name {p.name!r})" for p in unclassified)
    print(f"unclassified URL patterns:\n{listing}" if unclassified else "every URL pattern is classified")
    assert not unclassified, (
        f"{len(unclassified)} URL pattern(s) are not in the authorisation matrix; add each to TABLE in "
        f"{__name__} with what every caller must get:\n{listing}"
    )


def test_every_registered_admin_model_is_in_the_matrix():
    labels = {model._meta.label_lower for model in admin.site._registry if model._meta.managed}
    assert labels == set(ADMIN_MODELS), (
        f"new: {sorted(labels - set(ADMIN_MODELS))}; gone: {sorted(set(ADMIN_MODELS) - labels)}"
    )


def test_the_table_has_no_row_for_a_url_that_is_gone():
    keys = {p.key for p in all_patterns()}
    assert set(TABLE) <= keys, f"rows that classify no pattern: {sorted(set(TABLE) - keys)}"


@pytest.mark.parametrize("actor", ACTORS)
def test_authorisation_matrix(world, actor):
    """Each URL pattern, each method of its row, asked by one caller: every mismatch is listed."""
    sessions = session_keys(world)
    problems, asked = [], 0
    for pattern, route in cells():
        api = pattern.route.startswith("api/")
        url = build_url(pattern, route, world)
        match = resolve(url.split("?")[0])
        if route.shadowed:
            assert match.func is not pattern.callback, f"{pattern.name or pattern.route} is reachable: not shadowed"
            assert match.view_name in TABLE, f"{url} is answered by an unclassified pattern: {match}"
            continue
        assert match.func is pattern.callback, f"{url} resolves to {match}, not to {pattern}"
        for method, expectations in route.methods.items():
            response = ask(world, actor, sessions, api=api, method=method, url=url,
                           data=route.data.get(method))
            asked += 1
            problem = expectations[actor].problem(response, world)
            if problem and getattr(response, "exc_info", None):
                problem += f" raised {response.exc_info[1]!r}"
            if problem:
                problems.append(f"{method} {url}  [{pattern.key}]: {problem}")
    assert asked > 100
    assert not problems, f"{actor}: {len(problems)} of {asked} cells differ:\n" + "\n".join(problems)


def test_a_browser_session_does_not_authenticate_the_api(world):
    """Only the bearer token counts under /api/: a staff session alone is 401, so no CSRF can reach it."""
    client = Client()
    client.force_login(world.users["staff"])
    response = client.get(f"/api/v1/posts/{world.rated_post.external_id}")
    assert response.status_code == 401
    assert json.loads(response.content)["error"]["code"] == "unauthorized"
