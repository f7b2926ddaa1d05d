"""The authorisation matrix's table: for each URL pattern (by route string or name), what every caller
must get, per method, and how to fill the pattern in. tests/test_authorisation_matrix.py asks them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.util import find_spec
from typing import Any

from tests.authorisation.cells import (
    DESK_403,
    FC_403,
    FORBIDDEN,
    LOGIN,
    NOT_ALLOWED,
    NOT_FOUND,
    PAGE_403,
    PORTAL_403,
    UNAUTHORIZED,
    ApiError,
    Redirect,
    every,
    row,
    staff_only,
)
from tests.authorisation.world import World


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


# Fact-checkers and trust-and-safety staff (their notifications); page owners read theirs in the portal.
def workers(ok: Any) -> dict[str, Any]:
    return row(LOGIN, ok, ok, ok, DESK_403, DESK_403, ok, DESK_403, DESK_403)


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
    # Reports of harm, read-only (decided on /staff/reports/); viewing follows factcheck.view_flag.
    "moderation.reportedpost": ("v", "v"),
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
    # Password reset by e-mail: anyone may ask (no address given: the form asks again, nothing is counted); a
    # link that names no account is the "does not work" page, read or posted.
    "accounts:password_reset": route(GET=every(200), POST=every(200), data={"POST": {"email": ""}}),
    "accounts:password_reset_done": route(GET=every(200)),
    "accounts:password_reset_confirm": route(
        GET=every(200), POST=every(200), args={"uidb64": lambda w: "MA", "token": lambda w: "no-such-token"},
    ),
    "accounts:password_reset_complete": route(GET=every(200)),
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
        # organisation's re-rating: the post page again (409) with what was typed kept, nothing written.
        POST=factcheckers(409),
        args={"post_id": "rated_post.pk"}, data={"POST": RERATING_FORM},
    ),
    # A reviewer's own draft of a rating: any fact-checker may keep one (it is theirs alone; no claim or
    # coverage needed), so the refused re-rating above loses nothing.
    "factcheck:draft": route(
        GET=factcheckers(405), POST=factcheckers(200),
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
    # Conflicting verdicts: each fact-checker sees their own organisation's (tests/semantic/test_conflicts.py has a
    # conflict's two organisations and a third); the world's suggestion is no conflict, so marking it says so to the
    # rating's organisation, and to another organisation it is none of theirs (404, whatever the pair).
    "factcheck:conflicts": route(GET=factcheckers(200)),
    "factcheck:not_same_claim": route(
        GET=factcheckers(405),
        POST=row(LOGIN, Redirect("/queue/conflicts/"), Redirect("/queue/conflicts/"), 404, FC_403, FC_403, FC_403,
                 FC_403, FC_403),
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
    # ---- notifications and what waits: fact-checkers and trust-and-safety staff, each their own ---
    "moderation:notifications": route(GET=workers(200)),
    "moderation:notifications_read": route(
        GET=workers(405), POST=workers(Redirect("/notifications/")), data={"POST": {"all": "1", "shown": ["1"]}},
    ),
    # ---- deciding reports of harm: trust-and-safety staff only ------------------------------------
    "moderation:staff_reports": route(GET=staff_desk(200)),
    # Deciding without holding the post's reports is refused with a message, back to the post's page.
    "moderation:staff_report": route(
        GET=staff_desk(200), POST=staff_desk(Redirect("/staff/reports/{w.reported_post.pk}/")),
        args={"post_id": "reported_post.pk"},
        data={"POST": {"decision": "no_violation", "no_violation-reason": "Criticism of a public figure."}},
    ),
    "moderation:staff_report_claim": route(
        GET=staff_desk(405), POST=staff_desk(Redirect("/staff/reports/{w.reported_post.pk}/")),
        args={"post_id": "reported_post.pk"},
    ),
    # Releasing what one does not hold: a message, back to the post's page.
    "moderation:staff_report_release": route(
        GET=staff_desk(405), POST=staff_desk(Redirect("/staff/reports/{w.reported_post.pk}/")),
        args={"post_id": "reported_post.pk"},
    ),
    # ---- the API: 401 without a token, 403 for the wrong role, 404 for another owner's post -----
    "api:openapi-json": route(GET=every(200)),
    "api:openapi-view": route(GET=every(200)),
    "api:api-root": route(GET=every(NOT_FOUND)),
    "api/.*$": route(GET=every(NOT_FOUND), url="/api/v1/no-such-endpoint"),
    "api:push_flags": route(
        GET=every(NOT_ALLOWED), POST=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 201), data={"POST": FLAG},
    ),
    # A flag's outcome: only the platform account that sent it (another account's key is a 404: tests/api).
    "api:get_flag": route(
        GET=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 200),
        args={"idempotency_key": lambda w: w.reported_post.flags.get().idempotency_key},
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
    # Hashing an image: the platform's. The matrix sends an empty form, which is not an image.
    "api:hash_media": route(
        GET=every(NOT_ALLOWED), POST=row(UNAUTHORIZED, *[FORBIDDEN] * 7, ApiError(422, "unsupported_media")),
    ),
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
    # The audit log as CSV (the list's filters and search): whoever may read the log.
    "admin:audit_auditevent_export": route(GET=staff_only(200, 200)),
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
    # ---- the job pages, at /admin/rq/ only (settings.RQ_SHOW_ADMIN_LINK is off: no copy in the admin) -----
    **rq_pages("django_rq:", "/admin/rq/"),
    **({} if RQ_SCHEDULER else {
        "no_rq_scheduler": route(GET=staff_only(404, 404), args={"scheduler_index": "rq.queue_index"}),
    }),
}
