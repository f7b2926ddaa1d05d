"""The page owners' portal, `/appeals/`: a summary of each of their pages, their decided posts (filtered by
page and state), reasons, appeals and notifications.

Thin callers of moderation.appeals, moderation.selectors, moderation.standing, moderation.timeline
and moderation.notices; the rules are there. A post page answers 404 to anyone who does not
own the post's page, so that the existence of other pages' posts does not leak. Every page
renders in a fixed number of queries, whatever the number of pages, posts and appeals.

With read replicas (core.replicas), the portal's list (`portal`) reads from one: summaries and decided posts
that other people's decisions change, at most FACTDESK_REPLICA_MAX_LAG seconds late; not which pages are the
owner's (page_summaries reads that on the primary), and not for that long after the owner's own last write (an
appeal filed, notices marked read: core.replicas.RecentWriteMiddleware), so the list shows what they just did.
A post's page (`post_detail`) reads the primary: it is where the owner files an appeal and lands after
filing or withdrawing one, so it shows what they just did; the POST-only views write. "Download my data"
(`export_my_data`) reads the primary too, as it is sent (moderation.owner_export).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import wraps
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, F, Prefetch, Value, prefetch_related_objects
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.error_summary import error_summary, typed_text
from core.paging import page_number, plain_number
from core.replicas import reads_from_replica
from factcheck.media_display import media_by_post, media_of
from factcheck.models import Match, Post
from moderation.appeal_states import decided_by, outcomes_now
from moderation.appeals import (
    DECISION_CHANGED,
    AppealConflict,
    AppealRefused,
    NotAllowed,
    file_appeal,
    is_overdue,
    nothing_to_dispute_message,
    window_closed_message,
    withdraw_appeal,
)
from moderation.as_read import decisions_read, read_alike
from moderation.forms import AppealForm
from moderation.models import (
    ActionKind,
    Appeal,
    AppealKind,
    Notification,
    RepeatOffenderPolicy,
)
from moderation.notices import fold_repeats
from moderation.owner_export import TooManyExports, export_document, start_export
from moderation.policy import restricts
from moderation.selectors import (
    FactCheckDecision,
    PostState,
    active_actions,
    active_removal,
    appealable_kinds,
    closed_windows,
    current_ratings,
    fact_check_decision,
    owner_distribution,
    owner_posts,
    page_summaries,
    portal_posts,
    same_decision,
    statements,
)
from moderation.statements.scope import place_of
from moderation.timeline import post_timeline
from moderation.views_notifications import mark_posted_read

PAGE_SIZE = 20
NOTIFICATIONS_SHOWN = 20


def page_owner_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous visitors go to the login page; signed-in users of other roles get a 403 page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_page_owner:
            return render(request, "moderation/portal_forbidden.html", status=403)
        return view(request, *args, **kwargs)

    return wrapped


def _url_for_ids(name: str) -> Callable[[int], str]:
    """Row URLs from one reverse() per page rather than one per row: split around a marker id."""
    marker = "987654321"
    head, tail = reverse(name, args=[marker]).split(marker)
    return lambda pk: f"{head}{pk}{tail}"


def _filters(request: HttpRequest, page_ids: list[int]) -> tuple[int | None, str]:
    """The list's filters from the query string: one of the owner's pages (anything else: all of them) and
    a state (anything else: all)."""
    page_id = plain_number(request.GET.get("page_id"))
    page_id = page_id if page_id in page_ids else None
    state = request.GET.get("state", "")
    return page_id, state if state in PostState.values else PostState.ALL


@page_owner_required
@require_http_methods(["GET", "HEAD"])
@reads_from_replica
def portal(request: HttpRequest) -> HttpResponse:
    """A summary per page first (restricted posts, strikes, standing, appeals open), then the decided posts,
    filtered by page and state, in a compact list; the notifications folded between them."""
    now = timezone.now()
    policy = RepeatOffenderPolicy.current()
    summaries = page_summaries(owner=request.user, policy=policy, now=now)
    page_ids = [summary.page.pk for summary in summaries]
    page_id, state = _filters(request, page_ids)

    number = page_number(request.GET.get("page"))
    decided = owner_posts(page_ids=[page_id] if page_id else page_ids, state=state).select_related(
        "page", "distribution")
    # One row more than shown tells whether there is a next page without counting.
    posts = list(decided[(number - 1) * PAGE_SIZE : number * PAGE_SIZE + 1])
    has_next = len(posts) > PAGE_SIZE
    posts = posts[:PAGE_SIZE]
    prefetch_related_objects(
        posts,
        Prefetch("ratings", queryset=current_ratings(), to_attr="current_ratings"),
        # With each action's rating and its organisation: a matched copy shows the claim's rating it carries.
        Prefetch("actions", queryset=active_actions().select_related("rating__organisation"), to_attr="active_actions"),
        Prefetch("appeals", queryset=Appeal.objects.order_by("-created_at"), to_attr="all_appeals"),
    )
    post_url = _url_for_ids("moderation:portal_post")
    # The posts' own pictures, in one query for the page (never another page's: these are the owner's posts).
    media = media_by_post(post.pk for post in posts)
    post_rows = [
        {
            "post": post,
            "url": post_url(post.pk),
            "media": media.get(post.pk, []),
            "distribution": owner_distribution(post),
            "rating": post.current_ratings[0] if post.current_ratings else None,
            # A copy of a rated claim has no rating of its own: the claim's, through its matched action.
            "matched": None if post.current_ratings else next(
                (action for action in post.active_actions if action.kind == ActionKind.MATCHED_RATING), None
            ),
            # Where its restrictions apply, from the post's country (as its statement of reasons says).
            "where": place_of(post.country) if any(restricts(a) for a in post.active_actions) else "",
            "open_appeals": [appeal for appeal in post.all_appeals if appeal.is_open],
            "appeal_count": len(post.all_appeals),
        }
        for post in posts
    ]
    filters = {key: value for key, value in (("page_id", page_id or ""), ("state", state)) if value}

    # With each notice's page: a notice of a page the owner has left (an appeal they filed for it, decided since)
    # links to no post, which would answer them 404. This is moderation.notice_links' rule for an owner's notice
    # (their portal's post page, or nothing), read against their pages as read above on the primary: the
    # notifications come from the replica, which may not know yet that they left a page.
    unread = (Notification.objects.filter(user=request.user, read_at__isnull=True)
              .annotate(post_page_id=F("post__page_id")).order_by("-created_at", "-id"))
    notifications = list(unread[: NOTIFICATIONS_SHOWN + 1])
    shown = notifications[:NOTIFICATIONS_SHOWN]
    return render(
        request,
        "moderation/portal.html",
        {
            "summaries": summaries,
            "policy": policy,
            "posts": post_rows,
            "page": number,
            "has_next": has_next,
            "page_id": page_id,
            "state": state,
            "states": PostState.choices,
            "chosen_page": next((s.page for s in summaries if s.page.pk == page_id), None),
            "newer_url": f"?{urlencode({**filters, 'page': number - 1})}",
            "older_url": f"?{urlencode({**filters, 'page': number + 1})}",
            # Explanations repeated from a notice above (the same rationale, how to appeal) come folded.
            "notifications": [
                {"notification": n, "url": post_url(n.post_id) if n.post_page_id in page_ids else "", "blocks": blocks}
                for n, blocks in zip(shown, fold_repeats(n.shown_body for n in shown), strict=True)
            ],
            "more_notifications": len(notifications) > NOTIFICATIONS_SHOWN,
            # Opened again after marking one read, so that the owner reads on where they were.
            "notifications_open": request.GET.get("notifications") == "open",
        },
    )


@page_owner_required
@require_GET  # not HEAD: each download is counted and audited, and a HEAD would be one without a file
def export_my_data(request: HttpRequest) -> HttpResponse:
    """The owner's data as one JSON file, streamed (moderation.owner_export); a page that says when to try again
    after too many downloads within the hour."""
    try:
        with transaction.atomic(durable=True):
            export = start_export(owner=request.user, now=timezone.now())
    except TooManyExports as exc:
        response = render(request, "moderation/portal_export_wait.html", {"message": exc.message}, status=429)
        response["Retry-After"] = str(exc.details["retry_after"])
        return response
    response = StreamingHttpResponse(export_document(export), content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    response["Cache-Control"] = "private, no-store"
    return response


@page_owner_required
@require_POST
def mark_notifications_read(request: HttpRequest) -> HttpResponse:
    mark_posted_read(request)
    return redirect(f"{reverse('moderation:portal')}?notifications=open#notifications")


@page_owner_required
@require_http_methods(["GET", "HEAD", "POST"])
def post_detail(request: HttpRequest, post_id: int) -> HttpResponse:
    post = get_object_or_404(
        portal_posts(request.user).select_related("page__standing", "distribution"), pk=post_id
    )
    decision = fact_check_decision(post)
    rating = decision.rating if decision is not None else None
    actions = list(active_actions().filter(post=post))
    # Each appeal read with whether it is against the fact-check decision the page shows (filing's rule).
    against = (ExpressionWrapper(same_decision(post=post, rating=rating, action=decision.matched),
                                 output_field=BooleanField()) if decision is not None else Value(False))
    appeals = list(
        Appeal.objects.filter(post=post).select_related("rating__organisation", "action")
        .annotate(against_decision=against)
        .order_by("-created_at", "-id")
    )
    # One open appeal per decision: while one is open, the form for that decision is not offered at all.
    rating_appeal = next((a for a in appeals if a.is_open and a.against_decision), None)
    removal_appeal = next((a for a in appeals if a.is_open and a.kind == AppealKind.REMOVAL), None)
    now = timezone.now()
    possible = appealable_kinds(decision, actions, now=now)
    windows = closed_windows(decision, actions, now=now)
    kinds = [kind for kind in possible
             if not (rating_appeal if kind != AppealKind.REMOVAL else removal_appeal)]
    read = decisions_read(decision, actions)
    form = AppealForm(request.POST or None, kinds=kinds, initial={"seen": read})
    unsaved, status = request.session.pop(_unsaved_key(post), []), 200
    if request.method == "POST":
        if request.POST.get("seen") and not read_alike(request.POST["seen"], read, kind=request.POST.get("kind", "")):
            # The decision appealed changed since the page was opened (re-rated, removed, restored; a change to the
            # post's other decision leaves this appeal as it was): read it first. What
            # was typed comes back unchecked, in a form carrying the decisions the page shows now (or shown apart,
            # when nothing is left to appeal).
            messages.error(request, DECISION_CHANGED)
            typed = {name: request.POST.get(name, "") for name in ("statement", "evidence_urls", "correction_details")}
            chosen = {"kind": request.POST["kind"]} if request.POST.get("kind") in kinds else {}
            unsaved = [] if kinds else typed_text(form)
            form = AppealForm(kinds=kinds, initial={**typed, **chosen, "seen": read})
            status = 409
        elif not kinds or (request.POST.get("kind") in possible and request.POST["kind"] not in kinds):
            # Another tab or a co-owner filed first, say: sent back to the page, which says why and shows what was
            # typed (kept in the session for that one page). So too when another kind is still offered (a removal
            # beside the dispute just filed): read as a wrong choice, the text would stay in a form that offers only
            # that kind, one click from being filed as what the owner never meant.
            messages.error(request, _not_offered(request.POST.get("kind", ""), possible=possible, windows=windows,
                                                 decision=decision))
            request.session[_unsaved_key(post)] = typed_text(form)
            return redirect("moderation:portal_post", post_id=post.pk)
        elif form.is_valid():
            try:
                appeal = file_appeal(owner=request.user, post_id=post.pk, **form.cleaned_data)
            except (NotAllowed, AppealRefused, AppealConflict) as exc:
                # DecisionChanged too (changed as it was sent): the page, read again, tells what it is now.
                form.add_error(None, str(exc))
            except ValidationError as exc:  # the same rules as the form's; kept for a race-free answer
                for field, errors in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            else:
                decider = appeal.rating.organisation.name if appeal.rating_id else "Trust-and-safety staff"
                messages.success(
                    request, f"Your {appeal.kind_name} was filed. {decider} will review it, normally within 24 hours."
                )
                return redirect("moderation:portal_post", post_id=post.pk)
    if form.is_bound:  # shown again with its errors, on a page that shows the decisions as they are now
        form.data = form.data.copy()
        form.data["seen"] = read

    withdraw_url = _url_for_ids("moderation:portal_withdraw")
    return render(
        request,
        "moderation/portal_post.html",
        {
            "post": post,
            "page": post.page,
            # The post's own pictures, as they are: the owner posted them (the blur is for reviewers, who see
            # strangers' pictures all day). Never the matched claim's: that is another page's post.
            "media": media_of(post.pk),
            "standing": getattr(post.page, "standing", None),
            "distribution": owner_distribution(post),
            "rating": rating,
            "reasons": statements(actions),
            "form": form if kinds else None,
            "errors": error_summary(form) if form.is_bound and kinds else [],
            # Why a dispute is not offered: the rating restricts nothing (True, Not eligible), or staff's override of
            # a copy's match left it unrestricted.
            "nothing_to_dispute": (nothing_to_dispute_message(decision)
                                   if decision is not None and not decision.restricts else ""),
            "windows_closed": [window_closed_message(told, what=what) for what, told in windows],
            # One open appeal per decision: say so before the owner writes a second one.
            # A matched copy's appeal is against its matched action, a post's own against its rating.
            "matched": decision.matched if decision is not None else None,
            # Trust and safety removed the rated claim: it is not quoted to another page's owner any more, and its
            # fact-check page is gone (404), as the claim pages leave removed posts out.
            "matched_source_removed": (decision is not None and decision.matched is not None
                                       and active_removal(decision.source) is not None),
            # How the copy was linked (found automatically, or confirmed by a fact-checker), told to the owner.
            "match": (
                Match.objects.filter(post=post, source=decision.source).only("method", "state").first()
                if decision is not None and decision.matched is not None else None
            ),
            "rating_appeal_open": rating_appeal,
            "removal_appeal_open": removal_appeal,
            "appeals": [
                {
                    "appeal": appeal,
                    "decided_by": decided_by(appeal),
                    "overdue": is_overdue(appeal, now=now),
                    "withdraw_url": withdraw_url(appeal.pk),
                    # What became of the decision appealed, as it is now: a rating replaced since does not stand.
                    "outcome": outcome,
                }
                for appeal, outcome in zip(appeals, outcomes_now(appeals, post=post, decision=decision),
                                          strict=True)
            ],
            "timeline": post_timeline(post, for_owner=True),
            "unsaved": unsaved,
        },
        status=status,
    )


def _unsaved_key(post: Post) -> str:
    return f"portal-unsaved-{post.pk}"


def _not_offered(sent: str, *, possible: list[str], windows: list[tuple[str, datetime]],
                 decision: FactCheckDecision | None) -> str:
    """Why the page offers no appeal of the kind the owner sent (the form was opened before it changed)."""
    what = "removal" if sent == AppealKind.REMOVAL else "match" if decision and decision.matched else "rating"
    if sent in possible:
        return "An appeal against this decision is already open."
    for closed, told in windows:
        if closed == what:
            return window_closed_message(told, what=what)
    if sent != AppealKind.REMOVAL and decision is not None and not decision.restricts:
        return nothing_to_dispute_message(decision)
    return "This post has no rating or removal to appeal."


@page_owner_required
@require_POST
def withdraw(request: HttpRequest, appeal_id: int) -> HttpResponse:
    mine = Appeal.objects.filter(post__page__owners=request.user).only("id", "post_id")
    appeal = get_object_or_404(mine, pk=appeal_id)
    try:
        withdraw_appeal(appeal_id=appeal.pk, owner=request.user)
    except (NotAllowed, AppealConflict) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Your appeal was withdrawn. You can file a new one while the window is open.")
    return redirect("moderation:portal_post", post_id=appeal.post_id)
