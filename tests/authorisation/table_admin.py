"""The authorisation matrix's rows for the admin and django-rq: what trust-and-safety staff and a
superuser may do with each registered model (`ADMIN_MODELS`), and the pages each model, each staff
decision and django-rq's job dashboard serve. TABLE (tests/authorisation/table.py) takes them in.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

from tests.authorisation.cells import Redirect, staff_only
from tests.authorisation.routes import Route, route

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


def staff_decision(label: str, slug: str, *, object_attr: Any, staff: Any = 200) -> dict[str, Route]:
    """A decision's confirmation page: open to trust-and-safety staff (`staff`) and superusers."""
    app, model = label.split(".")
    return {
        f"admin:{app}_{model}_{slug}": route(GET=staff_only(staff, 200), args={"object_id": object_attr}),
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
