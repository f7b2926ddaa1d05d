"""`/staff/reports/`: trust-and-safety staff's desk for reports of harm (violence, hate, harassment, imminent harm).

The app's own desk pages, not the admin's look, as the removal appeals' desk (`/staff/appeals/`) is: the
same staff work both in one layout and navigation, the list turns into cards at phone width (a report of
imminent harm is decided from wherever staff are), and a post's decision is a page with its reports, the
post, its page and its history beside three labelled forms, which an admin change list cannot give a flow
that changes no model's fields directly. The guard is the desks' (moderation.views_appeals.desk_member_required:
anonymous visitors to the login page, anyone but trust-and-safety staff to a 403 page).

Thin callers: the queue's order and reads are moderation.report_queue, the claims, decisions and reopenings
moderation.harm_reports. A post whose reports are decided shows its last decision and the way to correct it, where
the mistake was made: "Reopen this decision" (with a reason), or for a removal that stands, the admin's lift.
The list renders in a fixed number of queries whatever the number of reports; its rows are
templates/moderation/report_queue.html's loop over plain values worked out here (`_queue_rows`).
"""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.views.decorators.http import require_http_methods, require_POST

from core.admin_decisions import decision_url
from core.error_summary import typed_text
from core.formatting import duration
from core.paging import page_number
from factcheck.models import HARM_CATEGORIES, FlagCategory, FlagSource, Post, ReportOutcome
from factcheck.views import clock, url_for_ids
from moderation.admin_actions import LIFT_ACTION
from moderation.deadlines import due_label, is_past_target
from moderation.forms import error_summary
from moderation.harm_reports import (
    ReportRefused,
    claim_report,
    decide_report,
    holds_lease,
    is_lease_live,
    last_decision,
    live_holder,
    release_report,
    reopen_report,
    withdrawn_since_decision,
)
from moderation.models import ReportedPost
from moderation.owner_notices import told_of_removal
from moderation.report_forms import FORMS, GROUND_FOR, DecisionForm, ReopenForm, decision_forms
from moderation.report_queue import LISTED_ON_POST, OpenReports, open_reports, queue_page
from moderation.selectors import active_removal
from moderation.timeline import post_timeline
from moderation.views_appeals import Desk, desk_member_required

# As the fact-checkers' queue: staff decide one post at a time, from the top.
PAGE_SIZE = 25
REPORTS_DESK = Desk(
    key="staff", title="Reports of harm", role_label="trust-and-safety staff",
    queue_url="moderation:staff_reports", detail_url="moderation:staff_report",
    review_url="moderation:staff_report_claim", what="reports of harm",
)
CATEGORY_LABELS = dict(FlagCategory.choices)
SOURCE_LABELS = dict(FlagSource.choices)
# A row shows the post's text and each report's reason shortened to this many characters.
TEXT_CHARS = 240
REASON_CHARS = 120
DECIDED = {
    ReportOutcome.REMOVED: "removed",
    ReportOutcome.NO_VIOLATION: "decided: no violation",
    ReportOutcome.SENT_TO_FACT_CHECKERS: "sent to the fact-checkers' queue",
}


@desk_member_required
@require_http_methods(["GET", "HEAD"])
def report_queue(request: HttpRequest, *, desk: Desk) -> HttpResponse:
    now = timezone.now()
    page = page_number(request.GET.get("page"))
    start = (page - 1) * PAGE_SIZE
    # One row more than shown tells whether there is a next page.
    found, counts = queue_page(start=start, stop=start + PAGE_SIZE + 1, now=now)
    return render(request, "moderation/report_queue.html", {
        "desk": desk, "rows": _queue_rows(found[:PAGE_SIZE], desk=desk, user_id=request.user.pk, now=now),
        "page": page,
        "has_next": len(found) > PAGE_SIZE, "counts": counts,
    })


def _queue_rows(found: list[dict[str, object]], *, desk: Desk, user_id: int, now: datetime) -> list[dict[str, object]]:
    """The queue's rows as templates/moderation/report_queue.html shows them, each value as it reads, from
    moderation.report_queue.queue_page's dicts: labels, durations and URLs (one reverse() a page), no markup."""
    detail_url, claim_url = url_for_ids(desk.detail_url), url_for_ids(desk.review_url)
    history_url = url_for_ids("admin:factcheck_post_change")
    rows = []
    for row in found:
        opened, post_id = row["opened_at"], row["post_id"]
        held = is_lease_live(holder_id=row["holder_id"], lease_expires_at=row["lease_expires_at"], now=now)
        rows.append({
            "external_id": row["post__external_id"],
            "url": detail_url(post_id),
            "claim_url": claim_url(post_id),
            "history_url": history_url(post_id),
            "opened_at": opened,
            "age": duration((now - opened).total_seconds()),
            "due": due_label(opened, now=now),
            "overdue": is_past_target(opened, now=now),
            "trusted": row["trusted"],
            "page_name": row["post__page__name"],
            "page_id": row["post__page__external_id"],
            "text": Truncator(row["post__text"] or "(no text)").chars(TEXT_CHARS, truncate=" …"),
            "velocity": f"{round(row['velocity']):,}",  # the UI is English only: comma grouping
            "mine": held and row["holder_id"] == user_id,
            "holder": row["holder__username"] if held else "",
            "reports": _reports_shown(row["reports"], reason_chars=REASON_CHARS),
        })
    return rows


def _reports_shown(reports: OpenReports, *, reason_chars: int | None = None) -> dict[str, object]:
    """A post's open reports as the desk's pages show them: the totals by category and by source, the listed
    reports (trusted flaggers' first) with their labels, and how many are not listed."""
    def reason(text: str) -> str:
        return Truncator(text).chars(reason_chars, truncate=" …") if reason_chars else text

    return {
        "total": reports.total,
        "by_category": [{"category": category, "label": CATEGORY_LABELS[category], "n": n}
                        for category, n in reports.by_category.items()],
        "by_source": [{"label": SOURCE_LABELS[source], "n": n} for source, n in reports.by_source.items()],
        "trusted": reports.trusted, "listed_trusted": reports.listed_trusted,
        "unlisted_trusted": reports.unlisted_trusted,
        "others": reports.others, "listed_others": reports.listed_others, "unlisted_others": reports.unlisted_others,
        "unlisted": reports.unlisted,
        "listed": [
            {
                "category": report["category"],
                "label": CATEGORY_LABELS[report["category"]],
                "source": SOURCE_LABELS[report["source"]],
                "trusted": report["source"] == FlagSource.TRUSTED_FLAGGER,
                "received_at": report["received_at"],
                "reason": reason(report["reason"]),
            }
            for report in reports.listed
        ],
    }


def _all_open_reports_url(post: Post) -> str:
    """The admin's list of flags, filtered to this post's open reports of harm (newest first, 50 a page, as the
    admin's post page links to its audit events)."""
    return (f"{reverse('admin:factcheck_flag_changelist')}?post__id__exact={post.pk}&status__exact=open"
            f"&category__in={','.join(HARM_CATEGORIES)}")


def _post(post_id: int) -> Post:
    post = Post.objects.select_related("page", "distribution").filter(pk=post_id).first()
    if post is None:
        raise Http404("No such post.")
    return post


def _render_post(request: HttpRequest, *, desk: Desk, post: Post, bound: DecisionForm | None = None,
                 status: int = 200, unsaved: list[tuple[str, str]] | None = None,
                 reopening: ReopenForm | None = None) -> HttpResponse:
    now = timezone.now()
    row = ReportedPost.objects.select_related("holder").filter(post=post).first()
    found = open_reports([post.pk], listed=LISTED_ON_POST)[post.pk]
    removal = active_removal(post)
    decided = last_decision(post) if not found.total else None
    # Nothing open because the platform withdrew the reports, not because anyone decided them: the page says so.
    withdrawn_at = withdrawn_since_decision(post) if not found.total else None
    # The removal's ground offered first: the most severe report's (the first of them, on a tie).
    ground = GROUND_FOR[found.severest] if found.severest else ""
    # The decision answers every open report up to the newest, listed or not (moderation.harm_reports).
    forms = decision_forms(bound=bound, up_to_flag=found.newest_id, ground=ground)
    holder = live_holder(row, now=now) if row is not None else None
    return render(request, "moderation/report_detail.html", {
        "desk": desk, "post": post, "page": post.page, "row": row, "reports": _reports_shown(found),
        "all_reports_url": _all_open_reports_url(post) if found.unlisted else "",
        "distribution": getattr(post, "distribution", None), "removal": removal,
        "decided": decided, "decided_label": DECIDED[decided.outcome] if decided else "",
        "withdrawn_at": withdrawn_at,
        # A removal that stands is corrected by lifting it (the owner is told, the strike ends), which reopens its
        # reports; any other decision is reopened here.
        "lift_url": decision_url(removal, LIFT_ACTION)
        if removal is not None and request.user.has_perm(LIFT_ACTION.permission) else "",
        "reopen_form": reopening or (ReopenForm(initial={"decided_at": decided.decided_at.isoformat()})
                                     if decided else None),
        "holder": holder, "mine": row is not None and holds_lease(row, request.user, now=now),
        "overdue": bool(found.total) and row is not None and row.opened_at is not None
        and is_past_target(row.opened_at, now=now),
        "due": due_label(row.opened_at, now=now) if found.total and row is not None and row.opened_at else "",
        "forms": forms,
        "errors": [error for form in (bound, reopening) if form is not None for error in error_summary(form)],
        "timeline": post_timeline(post, for_owner=False),
        "history_url": url_for_ids("admin:factcheck_post_change")(post.pk),
        "unsaved": unsaved or [],
    }, status=status)


@desk_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def report_detail(request: HttpRequest, post_id: int, *, desk: Desk) -> HttpResponse:
    post = _post(post_id)
    if request.method != "POST":
        return _render_post(request, desk=desk, post=post)
    form_class = FORMS.get(request.POST.get("decision", ""))
    if form_class is None:
        messages.error(request, "Choose a decision: remove, no violation, or send to fact-checkers.")
        return redirect(desk.detail_url, post_id=post.pk)
    form = form_class(request.POST)
    if not form.is_valid():
        return _render_post(request, desk=desk, post=post, bound=form, status=400)
    data = form.cleaned_data
    try:
        decide_report(staff=request.user, post_id=post.pk, outcome=form.outcome, ground=data.get("ground"),
                      reason=data["reason"], up_to_flag=data.get("up_to_flag"))
    except ReportRefused as refusal:
        # The post as it is now (another's lease, a decision made), with what was typed shown back, not lost.
        messages.error(request, refusal.message)
        return _render_post(request, desk=desk, post=post, status=409, unsaved=typed_text(form))
    # A removal tells the page's owners too: what its notice reached, from the record (a page may have no owner).
    told = f" {told_of_removal(post=post)}" if form.outcome == ReportOutcome.REMOVED else ""
    messages.success(request, f"Reports on post “{post.external_id}” {DECIDED[form.outcome]}. "
                              f"The reporters are told the outcome.{told}")
    return redirect(desk.queue_url)


@desk_member_required
@require_POST
def claim(request: HttpRequest, post_id: int, *, desk: Desk) -> HttpResponse:
    post = _post(post_id)
    try:
        row = claim_report(staff=request.user, post_id=post.pk)
    except ReportRefused as refusal:
        messages.error(request, refusal.message)
        return redirect(desk.queue_url)
    messages.success(request, f"You hold this post's reports until {clock(row.lease_expires_at)}. Decide them below.")
    return redirect(desk.detail_url, post_id=post.pk)


@desk_member_required
@require_POST
def release(request: HttpRequest, post_id: int, *, desk: Desk) -> HttpResponse:
    post = _post(post_id)
    try:
        release_report(staff=request.user, post_id=post.pk)
    except ReportRefused as refusal:
        messages.error(request, refusal.message)
        return redirect(desk.detail_url, post_id=post.pk)
    messages.success(request, "Released: the reports wait in the queue for anyone.")
    return redirect(desk.queue_url)


@desk_member_required
@require_POST
def reopen(request: HttpRequest, post_id: int, *, desk: Desk) -> HttpResponse:
    post = _post(post_id)
    form = ReopenForm(request.POST)
    if not form.is_valid():
        return _render_post(request, desk=desk, post=post, reopening=form, status=400)
    try:
        count = reopen_report(staff=request.user, post_id=post.pk, decided_at=form.cleaned_data["decided_at"],
                              reason=form.cleaned_data["reason"])
    except ReportRefused as refusal:
        messages.error(request, refusal.message)
        return _render_post(request, desk=desk, post=post, status=409, unsaved=typed_text(form))
    messages.success(request, f"Decision reopened: {count} report{'' if count == 1 else 's'} on post "
                              f"“{post.external_id}” are open on the desk again. The reporters are told.")
    return redirect(desk.detail_url, post_id=post.pk)
