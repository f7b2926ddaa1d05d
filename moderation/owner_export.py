"""A page owner's copy of their data ("Download my data" in the portal, `/appeals/export/`): GDPR Art. 15 (access)
and Art. 20 (portability), and the DSA's statements of reasons, which an owner should be able to keep.

One JSON document, written as it is sent: the account, each page the owner owns now as the portal sums it up, then
every post of those pages the system holds with its media, flags counted by source (as the post's timeline shows
them: those that still count, none the platform withdrew), ratings, actions with their statements of reasons as
stored, and appeals with every step; then every notification sent to the owner. Posts are read BATCH at a time
by id, each batch in a fixed number of queries, so an owner with 10,000 posts costs the web process one batch of rows
at a time, never the whole document (docs/privacy.md has the figures).

What the owner reads is what the portal shows them, and no more (moderation.timeline's `for_owner`): an organisation
or "Trust and safety", never a fact-checker's or staff member's name; no reporter, no flag's reason, no staff note,
no rating's change reason; no queue state (whether a fact-check is waiting, claimed or grouped, which the portal
never shows: a post is `decided` or not, as the portal lists it, with its distribution); of a claim their post was
matched to, its rating, never the other page's post. Other people's e-mail addresses and telephone numbers stored in
reasons, rationales and notices are cleaned where the portal cleans them (core.contact_details); what the owner
wrote (posts, appeal statements) is theirs, as it is.

Which pages are the owner's is read once, on the primary, when the download starts (moderation.selectors.
page_summaries): a page they have left is not in it. The rows that follow are read as they are sent, without one
snapshot: a decision taken while the file streams may or may not be in it, as on a portal page opened then.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Count, Min, Prefetch
from django.utils import timezone

from audit.models import AuditVerb
from audit.services import record_event
from core.contact_details import without_contact_details
from core.formatting import times
from core.rate_windows import Windows
from core.refusals import Refusal
from factcheck.eligibility import COUNTED_FLAGS
from factcheck.models import Flag, FlagSource, Post, Rating
from factcheck.models_media import PostMedia
from moderation.appeal_states import decided_by
from moderation.models import (
    Action,
    ActionKind,
    Appeal,
    AppealEvent,
    Notification,
    RepeatOffenderPolicy,
    StatementOfReasons,
)
from moderation.selectors import PageSummary, owner_distribution, page_summaries
from moderation.statements.transparency import outgoing_statement
from moderation.timeline import appeal_step, who_acted

FORMAT = "factdesk-owner-export"
VERSION = 1
# Posts read and written at a time: each batch is 7 queries, and about 2 MB of Python objects for posts with a
# decision each (docs/privacy.md).
BATCH = 500
# Downloads an owner may start within the hour, counted as the API's requests are (core.rate_windows): enough to
# try again after a failed download, too few for a loop of them to keep a web worker busy.
EXPORTS_ALLOWED = 5
EXPORT_PERIOD = 3600
# Who acted, when nobody did (moderation.timeline's words).
POLICY, FACTDESK = "Factdesk (enforcement policy)", "Factdesk"


class TooManyExports(Refusal):
    """The owner started EXPORTS_ALLOWED downloads within the hour."""

    code = "throttled"


@dataclass(frozen=True)
class OwnerExport:
    """A download begun: whose, their pages as read when it began, and when."""

    owner: Any
    summaries: list[PageSummary]
    policy: RepeatOffenderPolicy
    now: datetime

    @property
    def filename(self) -> str:
        return f"factdesk-my-data-{timezone.localdate(self.now).isoformat()}.json"


def start_export(*, owner, now: datetime) -> OwnerExport:
    """Count the download (TooManyExports past the limit: nothing is read or recorded then), read which pages are the
    owner's now, and record that they downloaded their data (the audit log keeps that, never what it held). The
    caller holds a durable transaction; the document is written afterwards by `export_document`."""
    _count(owner)
    policy = RepeatOffenderPolicy.current()
    summaries = page_summaries(owner=owner, policy=policy, now=now)
    record_event(actor=owner, verb=AuditVerb.DATA_EXPORTED, target=owner,
                 data={"pages": [summary.page.external_id for summary in summaries]})
    return OwnerExport(owner=owner, summaries=summaries, policy=policy, now=now)


def _count(owner) -> None:
    windows = Windows.now(name="owner-export", who=owner.pk, period=EXPORT_PERIOD)
    current = windows.add()
    previous = windows.previous()
    if windows.sliding(previous, current) <= EXPORTS_ALLOWED:
        return
    wait = windows.wait_for(EXPORTS_ALLOWED, previous, current)
    minutes = max(1, round(wait / 60))
    raise TooManyExports(
        f"You have downloaded your data {EXPORTS_ALLOWED} times within the last hour. You can download it again in "
        f"{minutes} minute{'s' if minutes != 1 else ''}; the copies you have are complete.",
        details={"retry_after": wait},
    )


def export_document(export: OwnerExport) -> Iterator[str]:
    """The JSON document in pieces, for a streamed response: the account and pages first, then the posts a batch
    at a time, then the notifications."""
    head = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": export.now,
        "about": ("Your data in Factdesk: your account, the pages you own now, their posts with every decision, "
                  "statement of reasons and appeal, and the notifications sent to you. People are named as your "
                  "portal names them: an organisation or trust and safety, never a person. Reporters, flag reasons "
                  "and internal notes are not included; other people's e-mail addresses and telephone numbers in "
                  "reasons and notices are replaced."),
        "account": _account(export.owner, export.summaries),
        "pages": [_page(summary, export.policy) for summary in export.summaries],
    }
    opening = _dumps(head)
    yield opening[:-1] + ',\n"posts": ['
    page_ids = {summary.page.pk: summary.page.external_id for summary in export.summaries}
    yield from _items(_posts(page_ids, owner_id=export.owner.pk))
    yield '],\n"notifications": ['
    yield from _items(_notifications(export.owner, page_ids))
    yield "]}\n"


def _dumps(value: Any) -> str:
    return json.dumps(value, cls=DjangoJSONEncoder, ensure_ascii=False)


def _items(rows: Iterable[list[dict]]) -> Iterator[str]:
    """Each batch of rows as one piece of a JSON array, a row a line."""
    first = True
    for batch in rows:
        if batch:
            yield ("\n" if first else ",\n") + ",\n".join(_dumps(row) for row in batch)
            first = False


def _number(value: Decimal | None) -> str | None:
    return None if value is None else f"{value.normalize():f}"


def _account(owner, summaries: list[PageSummary]) -> dict[str, Any]:
    return {
        "username": owner.get_username(),
        "email": owner.email,
        "first_name": owner.first_name,
        "last_name": owner.last_name,
        "role": owner.get_role_display(),
        "time_zone": owner.time_zone,
        "date_joined": owner.date_joined,
        "last_login": owner.last_login,
        "pages": [{"external_id": s.page.external_id, "name": s.page.name} for s in summaries],
    }


def _page(summary: PageSummary, policy: RepeatOffenderPolicy) -> dict[str, Any]:
    """A page as the portal's summary shows it: its standing, the posts restricted now, its strikes."""
    standing = summary.standing
    repeat = bool(standing and standing.is_repeat_offender)
    return {
        "external_id": summary.page.external_id,
        "name": summary.page.name,
        "standing": {
            "repeat_offender": repeat,
            "since": standing.since if repeat else None,
            "until": summary.repeat_offender_until,
            "page_multiplier": _number(standing.page_multiplier) if standing else "1",
            "monetisation_suspended": repeat,
            "rule": (f"{policy.strike_threshold} or more fact-check strikes in the last {policy.window_days} days "
                     f"make a page a repeat offender: all its posts are shown {times(policy.page_multiplier)}."),
        },
        "restricted_now": {"posts": summary.restricted, "demoted": summary.demoted, "labelled": summary.labelled,
                           "removed": summary.removed},
        "open_appeals": summary.open_appeals,
        "strikes": {
            "fact_check": [{"given_at": item["strike"].created_at, "post": item["post"].external_id,
                            "verdict": item["verdict"], "ages_out": item["ages_out"]}
                           for item in summary.fact_check_strikes],
            "community_standards": [{"given_at": item["strike"].created_at, "post": item["post"].external_id,
                                     "ends": "when its removal is lifted"} for item in summary.community_strikes],
        },
    }


# --- Posts, a batch at a time ----------------------------------------------------------------------

POST_FIELDS = ("id", "external_id", "page_id", "url", "text", "language", "country", "topic", "media_type",
               "posted_at", "distribution__multiplier", "distribution__labels",
               "distribution__removed", "distribution__reasons")


def _posts(page_ids: dict[int, str], *, owner_id: int) -> Iterator[list[dict]]:
    """The posts of these pages by id, BATCH at a time (keyset: `id > last`, so no batch re-reads the ones before)."""
    last = 0
    while page_ids:
        posts = list(Post.objects.filter(page_id__in=list(page_ids), pk__gt=last).select_related("distribution")
                     .only(*POST_FIELDS).order_by("pk")[:BATCH])
        if not posts:
            return
        last = posts[-1].pk
        yield _described(posts, page_ids, owner_id=owner_id)


def _by_post(rows: Iterable[Any]) -> dict[int, list[Any]]:
    found: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        found[row.post_id].append(row)
    return found


def _described(posts: list[Post], page_ids: dict[int, str], *, owner_id: int) -> list[dict]:
    """A batch of posts with all that hangs on them, in six queries whatever the batch holds."""
    ids = [post.pk for post in posts]
    media = _by_post(PostMedia.objects.filter(post_id__in=ids).order_by("post_id", "position"))
    flags: dict[int, list[dict]] = defaultdict(list)
    for row in (Flag.objects.filter(COUNTED_FLAGS, post_id__in=ids).values("post_id", "source")
                .annotate(n=Count("id"), first=Min("flagged_at")).order_by("post_id", "first")):
        flags[row["post_id"]].append({"source": row["source"], "source_label": FlagSource(row["source"]).label,
                                      "flags": row["n"], "first_flagged_at": row["first"]})
    ratings = _by_post(Rating.objects.filter(post_id__in=ids).select_related("organisation")
                       .order_by("created_at", "id"))
    actions = _by_post(
        Action.objects.filter(post_id__in=ids)
        .select_related("statement", "rating__organisation", "created_by__membership__organisation",
                        "ended_by__membership__organisation")
        .order_by("created_at", "id")
    )
    events = AppealEvent.objects.select_related("actor__membership__organisation").order_by("created_at", "id")
    appeals = _by_post(Appeal.objects.filter(post_id__in=ids).select_related("rating__organisation")
                       .prefetch_related(Prefetch("events", queryset=events)).order_by("created_at", "id"))
    return [
        {
            "external_id": post.external_id,
            "page": page_ids[post.page_id],
            "url": post.url,
            "text": post.text,
            "language": post.language,
            "country": post.country,
            "topic": post.topic,
            "media_type": post.media_type,
            "posted_at": post.posted_at,
            # Decided as the portal lists it (moderation.selectors.owner_posts): a current rating or an action.
            "decided": bool(actions[post.pk]) or any(rating.is_current for rating in ratings[post.pk]),
            "media": [_media(item) for item in media[post.pk]],
            "distribution": _distribution(post),
            "flags_by_source": flags[post.pk],
            "ratings": [_rating(rating) for rating in ratings[post.pk]],
            "actions": [_action(action) for action in actions[post.pk]],
            "appeals": [_appeal(appeal, owner_id=owner_id) for appeal in appeals[post.pk]],
        }
        for post in posts
    ]


def _media(item: PostMedia) -> dict[str, Any]:
    return {"kind": item.kind, "url": item.url, "still_url": item.still_url, "alt_text": item.alt_text,
            "pdq": item.pdq, "md5": item.md5}


def _distribution(post: Post) -> dict[str, Any]:
    shown = owner_distribution(post)
    return {"multiplier": shown["multiplier"], "shown_less_percent": shown["percent_less"],
            "removed": shown["removed"], "labels": shown["labels"]}


def _rating(rating: Rating) -> dict[str, Any]:
    """A rating as the owner reads it: the organisation, never the reviewer; the rationale without others' details."""
    return {
        "id": rating.pk,
        "verdict": rating.verdict,
        "verdict_label": rating.get_verdict_display(),
        "organisation": rating.organisation.name,
        "rationale": without_contact_details(rating.rationale),
        "sources": rating.sources,
        "article_url": rating.article_url,
        "rated_at": rating.created_at,
        "published_at": rating.published_at,
        "current": rating.is_current,
        "superseded_at": rating.superseded_at,
    }


def _action(action: Action) -> dict[str, Any]:
    """A decision on the post as its timeline tells the owner; a matched copy's with the claim's rating (never the
    claim's post, which is another page's); its statement of reasons as stored."""
    removal_or_override = action.kind in (ActionKind.REMOVAL, ActionKind.OVERRIDE)
    described = {
        "id": action.pk,
        "kind": action.kind,
        "kind_label": action.get_kind_display(),
        "verdict": action.verdict or None,
        "verdict_label": action.get_verdict_display() or None,
        "feed_multiplier": _number(action.feed_multiplier),
        "label": action.label,
        "ground": action.ground or None,
        "ground_label": action.get_ground_display() or None,
        "reason": without_contact_details(action.reason) if removal_or_override else "",
        "decided_at": action.created_at,
        "decided_by": who_acted(action.created_by, for_owner=True, nobody=POLICY),
        "rated_by": action.rating.organisation.name if action.rating_id else None,
        "active": action.is_active,
        "ended_at": action.ended_at,
        "end_reason": action.end_reason or None,
        "end_reason_label": action.get_end_reason_display() or None,
        "ended_by": who_acted(action.ended_by, for_owner=True, nobody=FACTDESK) if action.ended_at else None,
    }
    if action.kind == ActionKind.MATCHED_RATING and action.rating_id:
        described["claim_rating"] = {key: value for key, value in _rating(action.rating).items()
                                     if key not in ("current", "superseded_at")}
    statement = getattr(action, "statement", None)
    described["statement_of_reasons"] = _statement(statement) if statement is not None else None
    return described


def _statement(statement: StatementOfReasons) -> dict[str, Any]:
    """As stored when the action was taken; the facts as the portal shows them, and the Transparency Database's
    version as the API gives it (moderation.statements.transparency.outgoing_statement)."""
    return {
        "puid": statement.puid,
        "created_at": statement.created_at,
        "what": statement.what,
        "where": statement.scope,
        "ground": statement.ground,
        "facts": without_contact_details(statement.facts),
        "automation": statement.automation,
        "automated_detection": statement.automated_detection,
        "automated_decision": statement.automated_decision,
        "appeal_kinds": statement.appeal_kinds,
        "appeal_by": statement.appeal_by,
        "how_to_appeal": statement.how_to_appeal,
        "transparency_database": outgoing_statement(statement.transparency),
    }


def _appeal(appeal: Appeal, *, owner_id: int) -> dict[str, Any]:
    """An appeal on the post (the owner's, or a co-owner's: the portal shows both) with every step."""
    return {
        "id": appeal.pk,
        "kind": appeal.kind,
        "kind_label": appeal.get_kind_display(),
        "status": appeal.status,
        "status_label": appeal.get_status_display(),
        "filed_at": appeal.created_at,
        "filed_by_you": appeal.filed_by_id == owner_id,
        "statement": appeal.statement,
        "correction_details": appeal.correction_details,
        "evidence_urls": appeal.evidence_urls,
        "decided_by": decided_by(appeal),
        "decided_at": appeal.decided_at,
        "outcome_reason": without_contact_details(appeal.outcome_reason),
        "new_verdict": appeal.new_verdict or None,
        "new_verdict_label": appeal.get_new_verdict_display() or None,
        "steps": [
            {
                "at": event.created_at,
                "what": appeal_step(event, for_owner=True),
                "from_status": event.from_status or None,
                "to_status": event.to_status,
                "reason": without_contact_details(event.reason),
                "by": who_acted(event.actor, for_owner=True, nobody=FACTDESK),
            }
            # Prefetched: each step already knows its appeal (appeal_step reads its kind), no query per step.
            for event in appeal.events.all()
        ],
    }


# --- Notifications --------------------------------------------------------------------------------

NOTIFICATION_FIELDS = ("id", "kind", "post_id", "subject", "body", "created_at", "read_at", "emailed_at")


def _notifications(owner, page_ids: dict[int, str]) -> Iterator[list[dict]]:
    """Every notification sent to the owner, oldest first, BATCH at a time: the notices are theirs, a page's they
    have left since included (the portal shows those too); only a post of a page they own now is named by id."""
    rows = (Notification.objects.filter(user=owner).select_related("post").only(*NOTIFICATION_FIELDS,
                                                                                "post__external_id", "post__page_id")
            .order_by("created_at", "id"))
    batch: list[dict] = []
    for notification in rows.iterator(chunk_size=BATCH):
        post = notification.post
        batch.append({
            "kind": notification.kind,
            "kind_label": notification.get_kind_display(),
            "subject": notification.subject,
            "body": notification.shown_body,
            "post": post.external_id if post is not None and post.page_id in page_ids else None,
            "created_at": notification.created_at,
            "read_at": notification.read_at,
            "emailed_at": notification.emailed_at,
        })
        if len(batch) == BATCH:
            yield batch
            batch = []
    yield batch
