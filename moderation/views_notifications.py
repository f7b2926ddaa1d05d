"""`/notifications/`: what fact-checkers and trust-and-safety staff are told, and what waits for them.

The notifications are the same rows the page owners read in their portal (moderation.notices writes them:
an appeal filed notifies its deciders, in the transaction that files it); the counts of what waits are
moderation.workday's. Marking read is moderation.notice_delivery.mark_read, as in the portal. Page owners
read theirs in the portal (`/appeals/`); the page renders in a fixed number of queries. A notice links where it
leads its reader now (moderation.notice_links, as the e-mails), or nowhere.

Every list here is capped, and none is a dead end: the newest suggested copies link to all of them
(factcheck.views_suggestions, `/queue/suggestions/`), the notifications read are paged (`?read=N`), and the unread
ones past the first 50 show as those are read.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.paging import page_number, plain_number
from factcheck.members import organisation_of
from factcheck.selectors import newest_waiting_suggestions
from factcheck.views_suggestions import waiting_rows
from moderation.models import Notification
from moderation.notice_delivery import mark_read
from moderation.notice_links import destination, with_destinations

UNREAD_SHOWN = 50
READ_SHOWN = 20
SUGGESTIONS_SHOWN = 10


def worker_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Fact-checkers and trust-and-safety staff; anonymous visitors to the login page, others a 403 page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        user = request.user
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (user.is_factchecker or user.is_trust_safety):
            where = " Page owners read theirs under “Your posts and appeals”." if user.is_page_owner else ""
            reason = f"These notifications are for fact-checkers and trust-and-safety staff.{where}"
            return render(request, "moderation/appeal_forbidden.html", {"reason": reason}, status=403)
        return view(request, *args, **kwargs)

    return wrapped


def _rows(notifications: list[Notification], *, user) -> list[dict[str, object]]:
    """Each notification with where it leads its reader now (moderation.notice_links), or no link."""
    rows = []
    for notification in notifications:
        leads = destination(notification, user=user)
        rows.append({"notification": notification, "url": leads.path if leads is not None else "",
                     "opens_appeal": leads is not None and leads.is_appeal})
    return rows


@worker_required
@require_http_methods(["GET", "HEAD"])
def notifications(request: HttpRequest) -> HttpResponse:
    user = request.user
    mine = with_destinations(Notification.objects.filter(user=user), user=user).order_by("-created_at", "-id")
    unread = list(mine.filter(read_at__isnull=True)[: UNREAD_SHOWN + 1])
    read_page = page_number(request.GET.get("read"))
    first_read = (read_page - 1) * READ_SHOWN
    read = list(mine.filter(read_at__isnull=False)[first_read : first_read + READ_SHOWN + 1])
    organisation = organisation_of(user) if user.is_factchecker else None
    suggestions = []
    if organisation is not None:
        # One more than is shown, to know whether to link to the rest.
        suggestions = newest_waiting_suggestions(organisation=organisation, limit=SUGGESTIONS_SHOWN + 1)
    return render(request, "moderation/notifications.html", {
        "unread": _rows(unread[:UNREAD_SHOWN], user=user),
        "more_unread": len(unread) > UNREAD_SHOWN,
        "read": _rows(read[:READ_SHOWN], user=user),
        "read_page": read_page,
        "more_read": len(read) > READ_SHOWN,
        "suggestions": waiting_rows(suggestions[:SUGGESTIONS_SHOWN]),
        "more_suggestions": len(suggestions) > SUGGESTIONS_SHOWN,
    })


def mark_posted_read(request: HttpRequest) -> None:
    """Mark the notifications a "Mark as read" form posted (the owners' portal posts the same form). "Mark
    all shown as read" sends the ids that were shown, so one arriving meanwhile stays unread."""
    raw = request.POST.getlist("shown") if request.POST.get("all") else request.POST.getlist("notification")
    ids = [number for number in map(plain_number, raw) if number is not None]
    count = mark_read(user=request.user, notification_ids=ids)
    messages.success(request, f"{count} notification{'s' if count != 1 else ''} marked as read.")


@worker_required
@require_POST
def mark_notifications_read(request: HttpRequest) -> HttpResponse:
    mark_posted_read(request)
    return redirect("moderation:notifications")
