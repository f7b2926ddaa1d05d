"""The authorisation matrix's table: for each URL pattern (by route string or name), what every caller
must get, per method, and how to fill the pattern in. tests/test_authorisation_matrix.py asks them all.

Every row is here, in `TABLE`; the admin's and django-rq's are written with the helpers of
tests/authorisation/table_admin.py (`ADMIN_MODELS`: what staff and a superuser may do per registered
model), and the row type, `Route`, is in tests/authorisation/routes.py (both re-exported here).
"""

from __future__ import annotations

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
from tests.authorisation.routes import Route, route
from tests.authorisation.table_admin import ADMIN_MODELS, RQ_SCHEDULER, admin_model_pages, rq_pages, staff_decision

__all__ = ["ADMIN_MODELS", "TABLE", "Route", "route"]


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
    # Undoing a rejected suggestion: fact-checkers only; the world's pair is suggested, not rejected, so every
    # fact-checker is told there is no rejection to undo, back on the copy's page, and nothing changes.
    "factcheck:undo_rejection": route(
        GET=factcheckers(405), POST=factcheckers(Redirect("/queue/posts/{w.queued_post.pk}/")),
        args={"match_id": "suggestion.pk"}, data={"POST": {"reason": "The same claim about the same town."}},
    ),
    # Unlinking a copy a fact-checker confirmed (moderation.views_unlink): fact-checkers only; the world's queued
    # post is no copy, so every fact-checker is told so on its page, and nothing changes.
    "moderation:unlink_copy": route(
        GET=factcheckers(405), POST=factcheckers(Redirect("/queue/posts/{w.queued_post.pk}/")),
        args={"post_id": "queued_post.pk"}, data={"POST": {"reason": "Another claim about another town."}},
    ),
    # Withdrawing a rating (moderation.views_withdraw): fact-checkers only; the rated post's dispute is open, so its
    # organisation is told it cannot (409, nothing written), and so is another organisation; reading the confirmation
    # page says why.
    "moderation:withdraw_rating": route(
        GET=factcheckers(200), POST=factcheckers(409),
        args={"post_id": "rated_post.pk", "rating_id": lambda w: w.rated_post.ratings.get(is_current=True).pk},
        data={"POST": {"reason": "Rated the wrong post."}},
    ),
    # Every suggested copy waiting for one's organisation, a page at a time: each fact-checker sees their own.
    "factcheck:suggestions": route(GET=factcheckers(200)),
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
    # "Download my data": each owner their own (another page's owner gets theirs, never this page's).
    "moderation:portal_export": route(GET=owners(200, 200), POST=owners(405, 405)),
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
    # Deciding without holding the post's reports is refused (409): the post's page as it is, with the refusal and
    # what was typed shown back.
    "moderation:staff_report": route(
        GET=staff_desk(200), POST=staff_desk(409),
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
    # Reopening a decision without saying which (the page's hidden `decided_at`): the post's page, with the error.
    "moderation:staff_report_reopen": route(
        GET=staff_desk(405), POST=staff_desk(400),
        args={"post_id": "reported_post.pk"}, data={"POST": {"reopen-reason": "Decided on the wrong post."}},
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
        # Withdrawing it likewise (DELETE, the same path).
        DELETE=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 200),
        args={"idempotency_key": lambda w: w.reported_post.flags.get().idempotency_key},
    ),
    # Withdrawing a flag: ninja answers DELETE from get_flag's pattern (the same path), asked there.
    "api:delete_flag": route(
        DELETE=row(UNAUTHORIZED, *[FORBIDDEN] * 7, 200), shadowed=True,
        args={"idempotency_key": lambda w: w.reported_post.flags.get().idempotency_key},
    ),
    "api:rate_post": route(
        GET=every(NOT_ALLOWED),
        # Re-rating is the rating organisation's, and not while the dispute is open.
        POST=row(UNAUTHORIZED, ApiError(409, "appeal_open"), ApiError(409, "appeal_open"),
                 ApiError(403, "not_your_rating"), *[FORBIDDEN] * 5),
        args={"external_id": "rated_post.external_id"}, data={"POST": RERATING},
    ),
    # Unlinking a copy: fact-checkers only; the world's rated post is no copy, so theirs is a 409 (tests/api).
    "api:unlink_copy": route(
        GET=every(NOT_ALLOWED),
        POST=row(UNAUTHORIZED, *[ApiError(409, "not_a_copy")] * 3, *[FORBIDDEN] * 5),
        args={"external_id": "rated_post.external_id"},
        data={"POST": {"reason": "Another city, another year: not the same claim."}},
    ),
    "api:withdraw_post_rating": route(
        GET=every(NOT_ALLOWED),
        # Withdrawing is the rating organisation's, and not while the dispute is open.
        POST=row(UNAUTHORIZED, ApiError(409, "appeal_open"), ApiError(409, "appeal_open"),
                 ApiError(403, "not_your_rating"), *[FORBIDDEN] * 5),
        args={"external_id": "rated_post.external_id",
              "rating_id": lambda w: w.rated_post.ratings.get(is_current=True).pk},
        data={"POST": {"reason": "Rated the wrong post."}},
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
    **staff_decision("webhooks.endpoint", "disable", object_attr="webhook_delivery.endpoint_id"),
    **staff_decision("webhooks.endpoint", "remove", object_attr="webhook_delivery.endpoint_id"),
    **staff_decision("webhooks.delivery", "redeliver", object_attr="webhook_delivery.pk"),
    **staff_decision("moderation.action", "override", object_attr="action.pk"),
    **staff_decision("moderation.action", "restore_rating", object_attr="action.pk"),
    **staff_decision("factcheck.post", "restore_rating", object_attr="queued_post.pk"),
    **staff_decision("factcheck.post", "remove", object_attr="queued_post.pk"),
    # People are the superusers' (accounts.change_user): trust-and-safety staff may not invite anyone.
    **staff_decision("accounts.user", "invite_again", object_attr=lambda w: w.admin_object("accounts.user"),
                     staff=403),
    # ---- the job pages, at /admin/rq/ only (settings.RQ_SHOW_ADMIN_LINK is off: no copy in the admin) -----
    **rq_pages("django_rq:", "/admin/rq/"),
    **({} if RQ_SCHEDULER else {
        "no_rq_scheduler": route(GET=staff_only(404, 404), args={"scheduler_index": "rq.queue_index"}),
    }),
}
