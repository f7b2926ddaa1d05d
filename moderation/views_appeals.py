"""Deciding appeals in the browser: the fact-checkers' appeals queue and the staff's removal appeals.

Two desks share one set of views. Disputes and corrections go to the organisation that made
the rating (`/queue/appeals/`); removal appeals go to trust-and-safety staff (`/staff/appeals/`).
The views are thin callers of moderation.appeals: who may decide, the state machine and its
conflicts live there. Every page renders in a fixed number of queries, whatever the number of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.timesince import timesince
from django.views.decorators.http import require_http_methods, require_POST

from core.csv_download import csv_download
from core.error_summary import typed_text
from core.formatting import clock, preview
from core.paging import page_number, plain_number
from core.replicas import reads_from_replica
from core.search_input import search_text
from factcheck.media_display import media_of
from factcheck.members import organisation_id_of
from factcheck.models import Post, Verdict
from moderation.appeal_states import (
    confirmed_by,
    held_by_a_colleague,
    is_matched,
    outcomes_now,
    with_confirmer,
)
from moderation.appeals import (
    AppealConflict,
    NotAllowed,
    can_decide,
    check_version,
    decide_appeal,
    is_overdue,
    removal_lifted,
    start_review,
)
from moderation.deadlines import due_label
from moderation.forms import DecideForm, error_summary
from moderation.models import OPEN_STATUSES, ActionKind, Appeal, AppealKind, AppealStatus, NotificationKind
from moderation.owner_notices import owner_notice
from moderation.selectors import desk_appeals
from moderation.stuck_appeals import stuck_appeals
from moderation.timeline import Entry, post_timeline, timeline_for_factcheckers

PAGE_SIZE = 50
STATEMENT_PREVIEW_WORDS = 25
# Words of a search that count: a longer query is cut here rather than growing the SQL without end.
SEARCH_WORDS = 6


@dataclass(frozen=True)
class QueueView:
    """One of a desk's lists of appeals: which states it holds and in what order."""

    key: str
    label: str
    statuses: tuple[str, ...]
    order: tuple[str, ...]
    empty: str


QUEUE_VIEWS = (
    # Waiting the longest first: the 24-hour target runs from filing.
    QueueView("open", "Open", tuple(OPEN_STATUSES), ("created_at", "id"),
              "No open appeals. Nothing is waiting for a decision."),
    # The latest decisions first: what a reviewer comes back to.
    QueueView("decided", "Decided", (AppealStatus.UPHELD, AppealStatus.REVERSED, AppealStatus.WITHDRAWN),
              ("-decided_at", "-id"), "No decided appeals yet."),
    QueueView("all", "All", (), ("-created_at", "-id"), "No appeals yet."),
)


@dataclass(frozen=True)
class Desk:
    """Who works a queue of appeals and where its pages live (which appeals it holds: `appeals`)."""

    key: str
    title: str
    role_label: str
    queue_url: str
    detail_url: str
    review_url: str
    what: str = "appeals"  # what the desk decides, as its refusal names it

    def admits(self, user) -> bool:
        return user.is_factchecker if self.key == "factcheck" else user.is_trust_safety

    def appeals(self, user) -> QuerySet[Appeal]:
        # A fact-checker sees the appeals against their own organisation's ratings only;
        # trust-and-safety staff see every removal appeal (moderation.selectors: the navigation counts them too).
        return desk_appeals(user, removal=self.key != "factcheck")

    def timeline(self, user, post: Post) -> list[Entry]:
        """The post's timeline as this desk reads it: staff every step; a fact-checker only the steps of their own
        organisation's appeals, as on the post page (moderation.selectors.appeals_read_by_factcheckers_of)."""
        if self.key == "factcheck":
            return timeline_for_factcheckers(post, organisation_id=organisation_id_of(user))
        return post_timeline(post, for_owner=False)


FACTCHECK_DESK = Desk(
    key="factcheck", title="Appeals", role_label="fact-checkers",
    queue_url="moderation:factchecker_appeals", detail_url="moderation:factchecker_appeal",
    review_url="moderation:factchecker_appeal_review",
)
STAFF_DESK = Desk(
    key="staff", title="Removal appeals", role_label="trust-and-safety staff",
    queue_url="moderation:staff_appeals", detail_url="moderation:staff_appeal",
    review_url="moderation:staff_appeal_review",
)


def desk_member_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous visitors go to the login page; users outside the desk's role get a 403 page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, desk: Desk, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not desk.admits(request.user):
            role = request.user.get_role_display() or "no role"
            reason = f"These {desk.what} are decided by {desk.role_label}; your account ({role}) cannot open them."
            return _forbidden(request, desk=desk, reason=reason)
        return view(request, *args, desk=desk, **kwargs)

    return wrapped


def _forbidden(request: HttpRequest, *, desk: Desk, reason: str) -> HttpResponse:
    return render(request, "moderation/appeal_forbidden.html", {"desk": desk, "reason": reason}, status=403)


def _appeals(desk: Desk, user) -> QuerySet[Appeal]:
    return with_confirmer(desk.appeals(user).select_related(
        "post__page", "rating__organisation", "action", "reviewer", "filed_by"
    ))


def _due(appeal: Appeal, now) -> str:
    return due_label(appeal.created_at, now=now)


def _url_for_ids(name: str) -> Callable[[int], str]:
    """Row URLs from one reverse() per page rather than one per row: split around a marker id."""
    marker = "987654321"
    head, tail = reverse(name, args=[marker]).split(marker)
    return lambda pk: f"{head}{pk}{tail}"


def _search(appeals: QuerySet[Appeal], query: str) -> QuerySet[Appeal]:
    """Every word must match the post's external id or text, or the username of the owner who filed."""
    for word in query.split()[:SEARCH_WORDS]:
        appeals = appeals.filter(
            Q(post__external_id__iexact=word) | Q(post__text__icontains=word) | Q(filed_by__username__iexact=word)
        )
    return appeals


@desk_member_required
@require_http_methods(["GET", "HEAD"])
@reads_from_replica(when=lambda request: request.GET.get("format") == "csv")  # the export; the desk shows one's own
def appeal_queue(request: HttpRequest, *, desk: Desk) -> HttpResponse:
    now = timezone.now()
    view = next((v for v in QUEUE_VIEWS if v.key == request.GET.get("view")), QUEUE_VIEWS[0])
    query = search_text(request.GET.get("q"))
    page = page_number(request.GET.get("page"))
    start = (page - 1) * PAGE_SIZE
    appeals = _appeals(desk, request.user)
    if view.statuses:
        appeals = appeals.filter(status__in=view.statuses)
    if query:
        appeals = _search(appeals, query)
    if request.GET.get("format") == "csv":  # the same list, every row, unpaged
        return csv_download(name=f"{desk.key}-appeals-{view.key}", header=CSV_HEADER,
                            rows=_csv_rows(appeals.order_by(*view.order), now=now))
    # One row more than shown tells whether there is a next page without counting the queue.
    found = list(appeals.order_by(*view.order)[start : start + PAGE_SIZE + 1])
    detail_url = _url_for_ids(desk.detail_url)
    rows = [
        {
            "appeal": appeal,
            "url": detail_url(appeal.pk),
            "statement": preview(appeal.statement, STATEMENT_PREVIEW_WORDS),
            "overdue": is_overdue(appeal, now=now),
            "due": _due(appeal, now) if appeal.is_open else "",
            "age": timesince(appeal.created_at, now),
            "own_decision": _own_decision(appeal, request.user),
            "can_decide": appeal.is_open and can_decide(request.user, appeal),
        }
        for appeal in found[:PAGE_SIZE]
    ]
    return render(
        request, "moderation/appeal_queue.html",
        {"desk": desk, "rows": rows, "page": page, "has_next": len(found) > PAGE_SIZE,
         "overdue_count": sum(row["overdue"] for row in rows), "view": view, "query": query,
         "tabs": [{"view": v, "query": urlencode({"view": v.key, **({"q": query} if query else {})}),
                   "current": v is view} for v in QUEUE_VIEWS],
         # Above the open appeals' first page, for staff (moderation.stuck_appeals).
         "stuck": (stuck_appeals(request.user, now=now) if desk is STAFF_DESK and view.key == "open" and page == 1
                   and not query else None),
         "paging_query": urlencode({"view": view.key, **({"q": query} if query else {})}),
         "csv_query": urlencode({"view": view.key, **({"q": query} if query else {}), "format": "csv"})},
    )


CSV_HEADER = ("appeal id", "kind", "status", "overdue", "filed at (UTC)", "filed by", "post", "page", "against",
              "organisation", "decided at (UTC)", "decided by", "new verdict", "statement", "reason given to the owner")
CSV_CHUNK = 1000


def _csv_rows(appeals: QuerySet[Appeal], *, now) -> Iterator[tuple[object, ...]]:
    """A desk's list as CSV rows, read in chunks while the download is written."""
    for appeal in appeals.iterator(chunk_size=CSV_CHUNK):
        rating = appeal.rating
        against = (rating.get_verdict_display() if rating is not None
                   else f"Removed ({appeal.action.get_ground_display()})")
        yield (appeal.pk, appeal.get_kind_display(), appeal.get_status_display(), is_overdue(appeal, now=now),
               appeal.created_at, appeal.filed_by.get_username(), appeal.post.external_id, appeal.post.page.name,
               against, rating.organisation.name if rating is not None else "", appeal.decided_at,
               appeal.reviewer.get_username() if appeal.reviewer_id else "", appeal.get_new_verdict_display(),
               appeal.statement, appeal.outcome_reason)


# The confirmer of a copy may not decide its owner's appeal, but may take the confirmation back (moderation.unlinking),
# which grants the appeal: the page links them there.
CONFIRMED_IT = "You confirmed this copy"


def _own_decision(appeal: Appeal, user) -> str:
    """Why this person may not decide an appeal they can see: they made the decision appealed (can_decide's rule). Who
    confirmed a copy is read while its appeal is open only: a decided one's pair names who decided it since."""
    if appeal.rating_id and appeal.rating.reviewer_id == user.pk:
        return "You made this rating"
    if appeal.action_id and appeal.action.created_by_id == user.pk:
        return "You made this removal"
    if appeal.is_open and is_matched(appeal) and confirmed_by(appeal) == user.pk:
        return CONFIRMED_IT
    return ""


def _load(desk: Desk, user, appeal_id: int) -> Appeal:
    # Another organisation's appeal is a 404, not a 403: its existence is not theirs to know.
    appeal = (
        _appeals(desk, user)
        .select_related(
            "post__distribution", "rating__reviewer", "action__created_by", "reviewer__membership__organisation",
            "new_rating",
        )
        .filter(pk=appeal_id)
        .first()
    )
    if appeal is None:
        raise Http404("No such appeal in your queue.")
    return appeal


def _decide_form(appeal: Appeal, data=None) -> DecideForm:
    matched = appeal.action_id is not None and appeal.action.kind == ActionKind.MATCHED_RATING
    return DecideForm(data, kind=appeal.kind, matched=matched, lifted=removal_lifted(appeal),
                      current_verdict=appeal.rating.verdict if appeal.rating_id else "")


def _render_detail(
    request: HttpRequest, *, desk: Desk, appeal: Appeal, form: DecideForm | None = None, conflict: str = "",
    status: int = 200, unsaved: list[tuple[str, str]] | None = None,
) -> HttpResponse:
    now = timezone.now()
    user = request.user
    form = form or _decide_form(appeal)
    # The domain's rule of who holds it: a reviewer who can no longer decide it (moved, deactivated, another role)
    # or who let it pass its target holds nothing, and the page offers to take it over.
    deciding = appeal.is_open and can_decide(user, appeal) and not held_by_a_colleague(appeal, user, now=now)
    context = {
        "desk": desk,
        "appeal": appeal,
        "post": appeal.post,
        "page": appeal.post.page,
        "distribution": getattr(appeal.post, "distribution", None),
        "rating": appeal.rating,
        "removal": appeal.action if appeal.kind == AppealKind.REMOVAL else None,
        "timeline": desk.timeline(user, appeal.post),
        "overdue": is_overdue(appeal, now=now),
        "due": _due(appeal, now) if appeal.is_open else "",
        "own_decision": (own := _own_decision(appeal, user)),
        "unlink_url": f"{reverse('factcheck:post', args=[appeal.post_id])}#unlink" if own == CONFIRMED_IT else "",
        "deciding": deciding,
        "in_review_by_me": appeal.status == AppealStatus.IN_REVIEW and appeal.reviewer_id == user.pk,
        "taking_over": deciding and appeal.status == AppealStatus.IN_REVIEW and appeal.reviewer_id != user.pk,
        "form": form,
        "errors": error_summary(form) if form.is_bound else [],
        "conflict": conflict,
        "media": media_of(appeal.post_id),
        "media_shown": user.show_media,
        "unsaved": unsaved or [],
        "is_removal": appeal.kind == AppealKind.REMOVAL,
    }
    return render(request, "moderation/appeal_detail.html", context, status=status)


def _conflict(request: HttpRequest, *, desk: Desk, appeal_id: int, exc: AppealConflict,
              typed: DecideForm | None = None) -> HttpResponse:
    """Someone else got there first: say so, and show the appeal as they left it, not the stale form, with what
    the reviewer had typed (`typed`, their refused form) shown back to them."""
    appeal = _load(desk, request.user, appeal_id)
    return _render_detail(request, desk=desk, appeal=appeal, conflict=_conflict_message(appeal, exc), status=409,
                          unsaved=typed_text(typed) if typed is not None else [])


def _conflict_message(appeal: Appeal, exc: AppealConflict) -> str:
    if appeal.is_open:
        return str(exc)
    by = f" by {appeal.reviewer.get_username()}" if appeal.reviewer_id else ""
    when = f" at {clock(appeal.decided_at)}" if appeal.decided_at else ""
    outcome = appeal.get_status_display().lower()
    return f"This appeal was already decided{by}{when}: {outcome}. Your decision was not saved."


@desk_member_required
@require_http_methods(["GET", "HEAD", "POST"])
def appeal_detail(request: HttpRequest, appeal_id: int, *, desk: Desk) -> HttpResponse:
    appeal = _load(desk, request.user, appeal_id)
    if request.method != "POST":
        return _render_detail(request, desk=desk, appeal=appeal)
    form = _decide_form(appeal, request.POST)
    if not form.is_valid():
        # The form is built for the appeal as it is now (its outcomes, a verdict to change): from a page of an older
        # version (decided meanwhile, its removal lifted, re-rated) a choice it no longer offers is stale, not wrong.
        try:
            check_version(appeal, _posted_version(request))
        except AppealConflict as exc:
            return _conflict(request, desk=desk, appeal_id=appeal.pk, exc=exc, typed=form)
    else:
        data = form.cleaned_data
        try:
            decided = decide_appeal(
                appeal_id=appeal.pk, reviewer=request.user, outcome=data["outcome"], reason=data["reason"],
                new_verdict=data["new_verdict"], public_rationale=data["public_rationale"],
                article_url=data["article_url"], expected_version=data.get("version"),
            )
        except NotAllowed as exc:
            return _forbidden(request, desk=desk, reason=str(exc))
        except AppealConflict as exc:
            return _conflict(request, desk=desk, appeal_id=appeal.pk, exc=exc, typed=form)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, _decided_message(decided))
            return redirect(desk.queue_url)
    return _render_detail(request, desk=desk, appeal=appeal, form=form)


def _decided_message(appeal: Appeal) -> str:
    post = appeal.post.external_id
    # Whom the outcome's notice reached, as recorded (moderation.owner_notices): nobody, when the filer and the page's
    # owners are all deactivated, and the message must not say otherwise; nor that an e-mail went that did not.
    told = " " + owner_notice(post_id=appeal.post_id, decided_at=appeal.decided_at,
                              kind=NotificationKind.APPEAL_DECIDED).sentence
    if appeal.status == AppealStatus.UPHELD:
        outcome = outcomes_now([appeal], post=appeal.post)[0]
        if outcome.replaced:  # re-rated meanwhile (the claim a copy repeats, or on another appeal): it does not stand
            now = f"the post is now rated {outcome.carried}" if outcome.carried else "the post carries no rating now"
            return (f"Appeal on post “{post}” not accepted. The rating it was against, {outcome.appealed}, had been "
                    f"replaced meanwhile: {now}.{told}")
        return f"Appeal on post “{post}” not accepted: the decision stands.{told}"
    if appeal.kind == AppealKind.REMOVAL:
        return f"Appeal on post “{post}” accepted: the removal was lifted.{told}"
    if not appeal.new_verdict:  # a matched copy's "not the same claim", accepted
        return f"Appeal on post “{post}” accepted: the post is no longer linked to the claim.{told}"
    return f"Appeal on post “{post}” accepted: the rating is now {Verdict(appeal.new_verdict).label}.{told}"


def _posted_version(request: HttpRequest) -> int | None:
    return plain_number(request.POST.get("version", ""))


@desk_member_required
@require_POST
def take_into_review(request: HttpRequest, appeal_id: int, *, desk: Desk) -> HttpResponse:
    appeal = _load(desk, request.user, appeal_id)
    try:
        start_review(appeal_id=appeal.pk, reviewer=request.user, expected_version=_posted_version(request))
    except NotAllowed as exc:
        return _forbidden(request, desk=desk, reason=str(exc))
    except AppealConflict as exc:
        return _conflict(request, desk=desk, appeal_id=appeal.pk, exc=exc)
    messages.success(request, "You are reviewing this appeal; others see it is yours. Decide it below.")
    return redirect(desk.detail_url, appeal_id=appeal.pk)
