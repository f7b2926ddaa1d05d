"""Suggested and decided copies on the fact-checker's post page: the rows the page lists, confirming or rejecting a
suggested pair, and undoing a rejection made by mistake (the pair is suggested again). Thin callers of
factcheck.matching.matcher and factcheck.matching.undoing; the rules are there."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from django.contrib import messages
from django.forms import Form
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from core.formatting import preview, rating_dated
from core.refusals import Refusal
from factcheck.forms import MatchRejectForm, MatchUndoForm
from factcheck.matching.confirmable import Confirmation, PairPost, confirmation, facts_of
from factcheck.matching.matcher import confirm_match, reject_match
from factcheck.matching.reading import guard_warning, pair_languages
from factcheck.matching.undoing import undo_offers, undo_rejection
from factcheck.models import Match, MatchState, Post, QueueState, Verdict
from factcheck.selectors import PostMatch
from factcheck.views import factchecker_required, url_for_ids

MATCH_PREVIEW_WORDS = 20
# A viral claim can have thousands of copies: the post page lists this many pairs, suggestions first.
MATCHES_SHOWN = 50
# How a pair reads from the post whose page lists it (PostMatch.relation), and whether it is only suggested.
RELATION_LABELS = {
    ("copy", False): "Copy of this post", ("copy", True): "May copy this post",
    ("source", False): "This post copies it", ("source", True): "This post may copy it",
}
# "Confirmed by Maria Lopez, 3 May 2026" rather than the state's own label ("Confirmed by a fact-checker").
DECIDED_LABELS = {MatchState.CONFIRMED: "Confirmed", MatchState.REJECTED: "Rejected"}
# A decision's outcome is shown beside the list it was made in (the page returns to #copies-title, a screen below
# the messages at the top: a refused confirm looked like a success), where the page has that list: the templates
# take these messages by this tag (`messages|tagged:"copies"`, factdesk_format).
BESIDE_COPIES = "copies"

@factchecker_required
@require_POST
def confirm_match_view(request: HttpRequest, match_id: int) -> HttpResponse:
    match = get_object_or_404(Match.objects.select_related("post", "source"), pk=match_id)
    try:
        confirmed = confirm_match(match_id=match.pk, reviewer=request.user,
                                  despite_warning=request.POST.get("despite_warning") == "on")
    except Refusal as exc:
        messages.error(request, str(exc), extra_tags=BESIDE_COPIES)
    else:
        # The match as confirmed: a pair confirmed the other way round names its posts the other way round now.
        copy = confirmed.post
        follows = ("it now carries that claim's rating" if copy.queue_state == QueueState.MATCHED
                   else "it will be reviewed once, with that claim")
        # A confirmation made by mistake is taken back on the copy's page (moderation.unlinking): said where it is made.
        messages.success(
            request,
            format_html("Confirmed: “{}” is a copy of “{}”; {}. <a href=\"{}#unlink\">Not the same claim after all? "
                        "Unlink it</a>.", copy.external_id, confirmed.source.external_id, follows,
                        reverse("factcheck:post", args=[copy.pk])),
            extra_tags=BESIDE_COPIES,
        )
    return redirect(_back_to(request, match))


@factchecker_required
@require_POST
def reject_match_view(request: HttpRequest, match_id: int) -> HttpResponse:
    match = get_object_or_404(Match.objects.select_related("post", "source"), pk=match_id)
    # A rejection made by mistake is undone where the pair is listed (the copy's page): said where it is made.
    said = format_html("Rejected: “{}” is not a copy of “{}”; this pair will not be suggested again. "
                       "<a href=\"{}#match-{}\">The same claim after all? Undo the rejection</a>.",
                       match.post.external_id, match.source.external_id,
                       reverse("factcheck:post", args=[match.post_id]), match.pk)
    return _decide_with_reason(
        request, match, MatchRejectForm(request.POST), said=said,
        decide=lambda reason: reject_match(match_id=match.pk, reviewer=request.user, reason=reason),
    )


@factchecker_required
@require_POST
def undo_rejection_view(request: HttpRequest, match_id: int) -> HttpResponse:
    match = get_object_or_404(Match.objects.select_related("post", "source"), pk=match_id)
    said = (f"Suggested again: “{match.post.external_id}” may copy “{match.source.external_id}”. Confirm it below to "
            "give the copy the claim's rating.")
    return _decide_with_reason(
        request, match, MatchUndoForm(request.POST), said=said,
        decide=lambda reason: undo_rejection(match_id=match.pk, reviewer=request.user, reason=reason),
    )


def _decide_with_reason(request: HttpRequest, match: Match, form: Form, *, said: str,
                        decide: Callable[[str], object]) -> HttpResponse:
    """A decision of a pair that asks a reason (rejecting, undoing a rejection): the form's word on the reason, else
    the rule's refusal, else what was done (`said`), shown beside the pair's list; back where it was made."""
    if not form.is_valid():
        messages.error(request, " ".join(form.errors.get("reason", ["The reason could not be read."])),
                       extra_tags=BESIDE_COPIES)
        return redirect(_back_to(request, match))
    try:
        decide(form.cleaned_data["reason"])
    except Refusal as exc:
        messages.error(request, str(exc), extra_tags=BESIDE_COPIES)
    else:
        messages.success(request, said, extra_tags=BESIDE_COPIES)
    return redirect(_back_to(request, match))


def _back_to(request: HttpRequest, match: Match) -> str:
    """The page the reviewer decided from (`next`, a path on this site only), else the copy's post page."""
    target = request.POST.get("next", "")
    if target.startswith("/") and url_has_allowed_host_and_scheme(target, allowed_hosts=set()):
        return target
    return reverse("factcheck:post", args=[match.post_id])


def pair_facts(post: Post, pairs: list[PostMatch], *, linked: Match | None, now: datetime) -> dict[int, PairPost]:
    """The facts (factcheck.matching.confirmable.facts_of) the post page judges by, read once for all of them: the
    post's and the other post's of each suggested pair (may it be confirmed), of each rejected pair it lists (may the
    rejection be undone: factcheck.matching.undoing), and its claim's when `linked` links it to one (may it be
    unlinked: factcheck.matching.unlinkable.linked_pair). One query, none when nothing asks (each rule
    reading its own, the page read the post's facts up to three times)."""
    suggested = [pair for pair in pairs if pair.match.state == MatchState.SUGGESTED]
    ids = {pair.other.pk for pair in suggested} | {pair.other.pk for pair in _decided_shown(pairs, suggested)
                                                   if pair.match.state == MatchState.REJECTED}
    if linked is not None:
        ids.add(linked.source_id)
    return facts_of({post.pk, *ids}, now=now) if ids else {}


def _decided_shown(pairs: list[PostMatch], suggested: list[PostMatch]) -> list[PostMatch]:
    # The decided pairs the page lists, after every suggestion, in the selector's order: as many as the suggestions
    # leave room for. Known before the suggestions are judged, so pair_facts reads the rejected ones' posts with theirs.
    return [pair for pair in pairs if pair.match.state != MatchState.SUGGESTED][:max(0, MATCHES_SHOWN - len(suggested))]


def match_rows(post: Post, pairs: list[PostMatch], *, reviewer,
               facts: Mapping[int, PairPost]) -> list[dict[str, object]]:
    """The post's near-duplicate pairs as the page lists them: the suggestions this reviewer can confirm first
    (Confirm and Reject), then those they cannot (why, in words; Reject only where rejecting can work and
    the pair is not blocked for good), then the decided ones, each best first as the selector orders them.
    Which can be confirmed, and which way round, is factcheck.matching.confirmable's rule, judged on `facts`
    (pair_facts). One query more where the list has a rejected pair (undo_offers)."""
    post_url = url_for_ids("factcheck:post")
    confirm_url = url_for_ids("factcheck:confirm_match")
    reject_url = url_for_ids("factcheck:reject_match")
    suggested = [pair for pair in pairs if pair.match.state == MatchState.SUGGESTED]
    answers = {pair.match.pk: confirmation(state=pair.match.state, method=pair.match.method,
                                           post=facts[pair.match.post_id], source=facts[pair.match.source_id],
                                           reviewer=reviewer)
               for pair in suggested}
    ordered = (sorted(suggested, key=lambda pair: _rank(answers[pair.match.pk]))[:MATCHES_SHOWN]
               + _decided_shown(pairs, suggested))
    undo_url = url_for_ids("factcheck:undo_rejection")
    # A rejection the reviewer may take back (factcheck.matching.undoing): one query, whatever the number of pairs.
    undoable = {pk for pk, refusal in undo_offers([pair.match for pair in ordered], reviewer=reviewer,
                                                  facts=facts).items() if refusal is None}
    rows = []
    for pair in ordered:
        match, other, answer = pair.match, pair.other, answers.get(pair.match.pk)
        relation = pair.relation
        if answer is not None and answer.turned:
            relation = "copy" if relation == "source" else "source"  # the way round confirming would link them
        offered = answer is not None and answer.confirmable
        rejectable = answer is not None and answer.offers_reject
        # The claim's language, then the copy's, the way round confirming would link them (or did).
        language = {post.pk: post.language, other.pk: other.language}
        claim_id, copy_id = (answer.root.id, answer.copy.id) if answer is not None else (match.source_id, match.post_id)
        rows.append({
            "match": match,
            "other": other,
            "url": post_url(other.pk),
            "preview": preview(other.text or other.external_id, MATCH_PREVIEW_WORDS),
            "page_name": other.page.name,
            "languages": pair_languages(method=match.method, claim_language=language[claim_id],
                                        copy_language=language[copy_id]),
            "guard_warning": guard_warning(match.guard),
            "relation": relation,
            "relation_label": RELATION_LABELS[relation, answer is not None],
            "score": f"{match.score:.2f}",
            "suggested": answer is not None,
            "offered": offered,
            "effect": _effect(answer) if offered else "",
            "not_offered": str(answer.refusal) if answer is not None and not offered else "",
            "decided": DECIDED_LABELS.get(match.state, match.get_state_display()),
            "confirm_url": confirm_url(match.pk) if offered else "",
            "reject_url": reject_url(match.pk) if rejectable else "",
            "reject_form": MatchRejectForm(auto_id=f"id_reject_{match.pk}_%s") if rejectable else None,
            "undo_url": undo_url(match.pk) if match.pk in undoable else "",
            "undo_form": MatchUndoForm(auto_id=f"id_undo_{match.pk}_%s") if match.pk in undoable else None,
        })
    return rows


def offered_count(rows: list[dict[str, object]]) -> int:
    """How many of the listed suggestions the reviewer can confirm (the page's "to decide")."""
    return sum(1 for row in rows if row["offered"])


def _rank(answer: Confirmation) -> int:
    return 0 if answer.confirmable else 1  # a suggestion; the decided pairs follow them all (_decided_shown)


def _effect(answer: Confirmation) -> str:
    """What confirming does, in words, shown beside the Confirm button: which post becomes the copy, and the rating it
    takes (verdict, organisation, date), or, while the claim is unrated, that the copy is reviewed with it instead.
    "It takes that post's rating" did not say which: reviewers confirmed without seeing that the copy would take
    False from an organisation's rating of a given day."""
    copy, root = answer.copy, answer.root
    linked = f"Confirming makes post {copy.external_id} a copy of post {root.external_id}"
    if not root.rated:
        return (f"{linked}, which is not rated yet: post {copy.external_id} takes no rating now; it will be reviewed "
                "once, with that claim.")
    when = rating_dated(root.rating_recorded_at, published=root.rating_published_at)
    return (f"{linked}: post {copy.external_id} takes “{Verdict(root.rating_verdict).label}” from "
            f"{root.rating_organisation}'s rating {when if root.rating_published_at else f'of {when}'}.")
