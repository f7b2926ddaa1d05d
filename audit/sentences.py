"""The audit log's events as sentences, each with its linked objects: what the admin's log, its CSV export and a
post's page show.

"sam removed post fb-123 (Violence): “Calls for an attack.”", "alice rated post fb-9 False":
the log reads as Mastodon's does. Everything a sentence names comes from the event row itself
(verb, target_type, target_id, post_id, data) plus one query per kind of named row on the page
(`EventNames`), so a page of 50 events costs the same few queries whatever they are. The audit
app sits beneath both sides, so it names their models (apps.get_model) rather than importing them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from audit.models import AuditEvent, AuditVerb
from core.admin_base import EMPTY, admin_url, excerpt, share
from core.formatting import unstopped

REASON_CHARS = 140
MATCH_VERBS = tuple(verb for verb in AuditVerb if verb.startswith("match."))  # their `data.source` is a post


def choice_label(model_label: str, field_name: str, value: Any) -> str:
    """The human label of a choice ("false" -> "False") from the model that owns the choices."""
    if value in (None, ""):
        return ""
    choices = dict(apps.get_model(model_label)._meta.get_field(field_name).flatchoices)
    return str(choices.get(value, str(value).replace("_", " ")))


def link(model_label: str, pk: Any, text: str) -> SafeString | str:
    url = admin_url(model_label, pk) if pk not in (None, "") else None
    return format_html('<a href="{}">{}</a>', url, text) if url else text


@dataclass
class EventNames:
    """The readable names of the rows a page of events mentions, loaded in bulk (one query per kind)."""

    posts: dict[int, str] = field(default_factory=dict)  # post id -> external id
    pages: dict[int, str] = field(default_factory=dict)  # page id -> name
    policies: dict[int, str] = field(default_factory=dict)  # policy id -> "the False policy"

    @classmethod
    def load(cls, events: Iterable[AuditEvent], *, posts: dict[int, str] | None = None,
             pages: dict[int, str] | None = None) -> EventNames:
        """`posts` and `pages`: names the caller already has (a post's own page), not asked for again."""
        events = list(events)
        post_ids = {e.post_id for e in events if e.post_id is not None}
        page_ids: set[int] = set()
        policy_ids: set[int] = set()
        for e in events:
            if e.target_type == "factcheck.post" and e.target_id.isdigit():
                post_ids.add(int(e.target_id))
            if e.target_type == "factcheck.page" and e.target_id.isdigit():
                page_ids.add(int(e.target_id))
            if isinstance(e.data, dict) and isinstance(e.data.get("page"), int):
                page_ids.add(e.data["page"])
            if e.verb in MATCH_VERBS and isinstance(e.data, dict) and isinstance(e.data.get("source"), int):
                post_ids.add(e.data["source"])  # the claim a copy was matched to
            if e.target_type == "moderation.enforcementpolicy" and e.target_id.isdigit():
                policy_ids.add(int(e.target_id))
        names = cls(posts=dict(posts or {}), pages=dict(pages or {}))
        if post_ids := post_ids - names.posts.keys():
            names.posts.update(apps.get_model("factcheck", "Post").objects.filter(pk__in=post_ids)
                               .values_list("pk", "external_id"))
        if page_ids := page_ids - names.pages.keys():
            names.pages.update(apps.get_model("factcheck", "Page").objects.filter(pk__in=page_ids)
                               .values_list("pk", "name"))
        if policy_ids:
            policy = apps.get_model("moderation", "EnforcementPolicy")
            names.policies = {
                pk: f"the enforcement policy for {choice_label('factcheck.Rating', 'verdict', verdict)}"
                for pk, verdict in policy.objects.filter(pk__in=policy_ids).values_list("pk", "verdict")
            }
        return names

    def post(self, post_id: Any) -> SafeString | str:
        if post_id in (None, ""):
            return "a post"
        post_id = int(post_id)
        return link("factcheck.post", post_id, f"post {self.posts.get(post_id, post_id)}")

    def page(self, page_id: Any) -> SafeString | str:
        if page_id in (None, ""):
            return "a page"
        page_id = int(page_id)
        return link("factcheck.page", page_id, f"page {self.pages.get(page_id, page_id)}")


def actor(event: AuditEvent) -> SafeString | str:
    if event.actor_id is None:
        job = event.actor_label.removeprefix("system:")
        return f"Factdesk ({job.replace('_', ' ')})" if job and job != "factdesk" else "Factdesk"
    return link("accounts.user", event.actor_id, event.actor_label)


# What a change's field is called in a sentence, where its own name reads badly.
FIELD_NAMES = {"is_active": "active", "is_staff": "staff status", "is_superuser": "superuser status",
               "email": "e-mail address", "url": "address", "last_login": "last sign-in", "date_joined": "joined"}


def describe_changes(changes: dict[str, list[str]]) -> str:
    """An event's `changes` ({field: [old, new]}) in words: "role Page owner → Fact-checker; active yes → no"."""
    def shown(name: str, value: str) -> str:
        return (choice_label("accounts.User", "role", value) if name == "role" else value) or EMPTY

    return "; ".join(f"{FIELD_NAMES.get(name, name.replace('_', ' '))} {shown(name, old)} → {shown(name, new)}"
                     for name, (old, new) in changes.items())


def _changes(data: dict) -> str:
    return describe_changes(data.get("changes") or {})


def _action_created(e: AuditEvent, n: EventNames, d: dict) -> str:
    post = n.post(e.post_id)
    if d.get("kind") == "removal":
        ground = choice_label("moderation.Action", "ground", d.get("ground"))
        return format_html("{} removed {} ({})", actor(e), post, ground)
    # The sentence goes on (": “reason”"), so the label's own full stop is left out: no '.”:'.
    effect = share(d.get("multiplier")) + (f", label “{unstopped(d['label'])}”" if d.get("label") else "")
    if d.get("kind") == "override":
        return format_html("{} overrode the decision on {}: {}", actor(e), post, effect)
    kind = choice_label("moderation.Action", "kind", d.get("kind")).lower() or "an"
    return format_html("{} took a {} action on {}: {}", actor(e), kind, post, effect)


def _action_ended(e: AuditEvent, n: EventNames, d: dict) -> str:
    why = choice_label("moderation.Action", "end_reason", d.get("end_reason")).lower()
    action = link("moderation.action", e.target_id, "an action")
    return format_html("{} ended {} on {} ({})", actor(e), action, n.post(e.post_id), why or "ended")


def _appeal(e: AuditEvent, n: EventNames, d: dict) -> str:
    kind = choice_label("moderation.Appeal", "kind", d.get("kind")).split(" (")[0].lower().replace(" appeal", "")
    appeal = link("moderation.appeal", e.target_id, f"a {kind} appeal" if kind else "an appeal")
    if not d.get("from"):
        return format_html("{} filed {} on {}", actor(e), appeal, n.post(e.post_id))
    to = choice_label("moderation.Appeal", "status", d.get("to")).lower()
    return format_html("{} moved {} on {} to {}", actor(e), appeal, n.post(e.post_id), to)


def _policy(e: AuditEvent, n: EventNames, d: dict) -> str:
    if e.target_type == "moderation.enforcementpolicy":
        name = n.policies.get(int(e.target_id), "an enforcement policy") if e.target_id.isdigit() else "a policy"
    else:
        name = "the repeat-offender policy"
    return format_html("{} changed {}: {}", actor(e), link(e.target_type, e.target_id, name), _changes(d))


def _page(e: AuditEvent, n: EventNames, d: dict) -> str:
    marked = "marked" if d.get("is_politician") else "unmarked"
    return format_html("{} {} {} as a politician's page", actor(e), marked, n.page(e.target_id))


def _user_created(e: AuditEvent, n: EventNames, d: dict) -> str:
    user = _target(f"user {d['username']}" if d.get("username") else "a user")(e)
    role = choice_label("accounts.User", "role", d.get("role")).lower() or "no role"
    place = f", {d['organisation']}" if d.get("organisation") else ""
    staff = ", superuser" if d.get("is_superuser") == "yes" else ", staff" if d.get("is_staff") == "yes" else ""
    return format_html("{} created {} ({}{}{})", actor(e), user, role, place, staff)


def _organisation(e: AuditEvent, n: EventNames, d: dict) -> str:
    organisation = _target(f"organisation {d.get('name') or e.target_id}")(e)
    done = "created" if d.get("created") else "changed"
    return format_html("{} {} {}: {}", actor(e), done, organisation, _changes(d))


def _page_owners(e: AuditEvent, n: EventNames, d: dict) -> str:
    old, new = (d.get("changes") or {}).get("owners", ["", ""])
    return format_html("{} changed who owns {}: {} → {}", actor(e), n.page(e.target_id), old or "nobody",
                       new or "nobody")


def _standing(e: AuditEvent, n: EventNames, d: dict) -> str:
    state = "is now a repeat offender" if d.get("repeat_offender") else "is no longer a repeat offender"
    return format_html("{} {}", n.page(e.target_id), state)


def _target(text: str) -> Callable[[AuditEvent], SafeString | str]:
    return lambda e: link(e.target_type, e.target_id, text)


ENDPOINT = "a webhook endpoint"
Sentence = Callable[[AuditEvent, EventNames, dict], str]


def _flag_received(e: AuditEvent, n: EventNames, d: dict) -> str:
    source = choice_label("factcheck.Flag", "source", d.get("source"))
    if d.get("category", "misinformation") == "misinformation":
        return format_html("{} flagged {} ({})", actor(e), n.post(e.post_id), source)
    category = choice_label("factcheck.Flag", "category", d.get("category")).lower()
    return format_html("{} reported {} for {} ({})", actor(e), n.post(e.post_id), category, source)


def _reports_decided(e: AuditEvent, n: EventNames, d: dict) -> str:
    """Flags answered (`report.decided`) or opened again (`report.reopened`), with what they said before if any."""
    count = sum(len(ids) for ids in (d.get("flags") or {}).values())
    flags = f"{count} flag{'' if count == 1 else 's'}"
    outcome = choice_label("factcheck.Flag", "outcome", d.get("outcome"))
    were = ", ".join(choice_label("factcheck.Flag", "outcome", was).lower() for was in d.get("previous") or {})
    were = f" (they were: {were})" if were else ""
    if outcome:
        return format_html("{} answered {} on {}: {}{}", actor(e), flags, n.post(e.post_id), outcome.lower(), were)
    return format_html("{} opened {} on {} again{}", actor(e), flags, n.post(e.post_id), were)


def _routed(e: AuditEvent, n: EventNames, d: dict) -> str:
    to = choice_label("factcheck.Post", "queue_state", d.get("to")).lower()
    return format_html("{} in the fact-checkers' queue: now {}", n.post(e.post_id), to)

SENTENCES: dict[str, Sentence] = {
    AuditVerb.USER_CREATED: _user_created,
    AuditVerb.USER_CHANGED: lambda e, n, d: format_html("{} changed {}: {}", actor(e),
                                                        _target(f"user {d.get('username', '')}")(e), _changes(d)),
    AuditVerb.USER_INVITED: lambda e, n, d: format_html("{} sent {} a new invitation to set a password", actor(e),
                                                        _target(f"user {d.get('username', '')}")(e)),
    AuditVerb.USER_DELETED: lambda e, n, d: format_html("{} deleted user {}", actor(e), d.get("username", "")),
    AuditVerb.ORGANISATION_CHANGED: _organisation,
    AuditVerb.ORGANISATION_DELETED: lambda e, n, d: format_html("{} deleted organisation {}", actor(e),
                                                                d.get("name", "")),
    AuditVerb.PAGE_OWNERS_CHANGED: _page_owners,
    AuditVerb.DATA_EXPORTED: lambda e, n, d: format_html("{} downloaded a copy of their data", actor(e)),
    AuditVerb.TOKEN_ISSUED: lambda e, n, d: format_html("{} issued {}", actor(e), _target("an API token")(e)),
    AuditVerb.TOKEN_REVOKED: lambda e, n, d: format_html("{} revoked {}", actor(e), _target("an API token")(e)),
    AuditVerb.FLAG_RECEIVED: _flag_received,
    AuditVerb.REPORT_CLAIMED: lambda e, n, d: format_html("{} claimed the reports of harm on {}", actor(e),
                                                          n.post(e.post_id)),
    AuditVerb.REPORT_RELEASED: lambda e, n, d: format_html("{} released the reports of harm on {}", actor(e),
                                                           n.post(e.post_id)),
    AuditVerb.REPORTS_DECIDED: _reports_decided,
    AuditVerb.REPORTS_REOPENED: _reports_decided,
    AuditVerb.POST_ROUTED: _routed,
    AuditVerb.POST_QUEUED: lambda e, n, d: format_html("{} entered the review queue", n.post(e.post_id)),
    AuditVerb.POST_NOT_ELIGIBLE: lambda e, n, d: format_html("{} is not eligible for fact-checking", n.post(e.post_id)),
    AuditVerb.CLAIM_CREATED: lambda e, n, d: format_html("{} claimed {}", actor(e), n.post(e.post_id)),
    AuditVerb.CLAIM_RELEASED: lambda e, n, d: format_html("{} released the claim on {}", actor(e), n.post(e.post_id)),
    AuditVerb.CLAIM_EXPIRED: lambda e, n, d: format_html("the claim on {} expired", n.post(e.post_id)),
    # By its value: the verb is new on the review side.
    "claim.extended": lambda e, n, d: format_html("{} extended the claim on {}", actor(e), n.post(e.post_id)),
    AuditVerb.RATING_RECORDED: lambda e, n, d: format_html(
        "{} rated {} {}", actor(e), n.post(e.post_id),
        link("factcheck.rating", e.target_id, choice_label("factcheck.Rating", "verdict", d.get("verdict")))),
    AuditVerb.RATING_SUPERSEDED: lambda e, n, d: format_html(
        "{} replaced {} of {}", actor(e), _target("the rating")(e), n.post(e.post_id)),
    AuditVerb.DECISION_APPLIED: lambda e, n, d: format_html(
        "{} applied the {} rating to {}", actor(e), choice_label("factcheck.Rating", "verdict", d.get("verdict")),
        n.post(e.post_id)),
    AuditVerb.ACTION_CREATED: _action_created,
    AuditVerb.ACTION_ENDED: _action_ended,
    AuditVerb.STRIKE_CREATED: lambda e, n, d: format_html(
        "{} gave {} a {} strike", actor(e), n.page(d.get("page")),
        choice_label("moderation.Strike", "kind", d.get("kind")).lower() or "a"),
    AuditVerb.STRIKE_ENDED: lambda e, n, d: format_html("{} ended {} of {}", actor(e), _target("a strike")(e),
                                                        n.page(d.get("page"))),
    AuditVerb.STANDING_CHANGED: _standing,
    AuditVerb.POLICY_CHANGED: _policy,
    AuditVerb.APPEAL_CHANGED: _appeal,
    AuditVerb.PAGE_CHANGED: _page,
    AuditVerb.LOGIN_LOCKED: lambda e, n, d: format_html("sign-in was locked for {}", _target("an account")(e)),
    AuditVerb.LOGIN_UNLOCKED: lambda e, n, d: format_html("{} unlocked sign-in for {}", actor(e),
                                                          _target("an account")(e)),
    AuditVerb.POST_REPAIRED: lambda e, n, d: format_html("{} repaired an impossible timestamp of {}", actor(e),
                                                         n.post(e.post_id or e.target_id)),
    AuditVerb.FLAG_REPAIRED: lambda e, n, d: format_html("{} repaired an impossible timestamp of a flag on {}",
                                                         actor(e), n.post(e.post_id)),
    AuditVerb.MATCH_RECORDED: lambda e, n, d: format_html("{} found {} to be a copy of {}", actor(e),
                                                          n.post(e.post_id), n.post(d.get("source"))),
    AuditVerb.MATCH_CONFIRMED: lambda e, n, d: format_html("{} confirmed {} as a copy of {}", actor(e),
                                                           n.post(e.post_id), n.post(d.get("source"))),
    AuditVerb.MATCH_REJECTED: lambda e, n, d: format_html("{} rejected {} as a copy of {}", actor(e),
                                                          n.post(e.post_id), n.post(d.get("source"))),
    AuditVerb.MATCH_UNLINKED: lambda e, n, d: format_html("{} unlinked {} from {}", actor(e), n.post(e.post_id),
                                                          n.post(d.get("source"))),
    AuditVerb.MATCH_REJECTION_UNDONE: lambda e, n, d: format_html(
        "{} undid the rejection of {} as a copy of {}: suggested again", actor(e), n.post(e.post_id),
        n.post(d.get("source"))),
    AuditVerb.WEBHOOK_REGISTERED: lambda e, n, d: format_html("{} registered {}", actor(e), _target(ENDPOINT)(e)),
    AuditVerb.WEBHOOK_DELETED: lambda e, n, d: format_html("{} deleted {}", actor(e), _target(ENDPOINT)(e)),
    AuditVerb.WEBHOOK_DISABLED: lambda e, n, d: format_html("{} disabled {}", actor(e), _target(ENDPOINT)(e)),
    AuditVerb.WEBHOOK_ENABLED: lambda e, n, d: format_html("{} enabled {} again", actor(e), _target(ENDPOINT)(e)),
    AuditVerb.WEBHOOK_REDELIVERED: lambda e, n, d: format_html("{} sent {} again for {}", actor(e),
                                                               _target("a webhook delivery")(e), n.post(e.post_id)),
}


def what_happened(event: AuditEvent, names: EventNames) -> SafeString:
    """The event as one sentence, without its reason."""
    data = event.data if isinstance(event.data, dict) else {}
    make = SENTENCES.get(event.verb)
    what = make(event, names, data) if make else format_html(
        "{} {} {}", actor(event), event.get_verb_display().lower(), _target("a record")(event))
    if str(what)[:1].islower() and not str(what).startswith(event.actor_label):  # a username keeps its case
        what = mark_safe(str(what)[0].upper() + str(what)[1:])  # noqa: S308 (what is already escaped)
    return format_html("{}", what)


def sentence(event: AuditEvent, names: EventNames) -> SafeString:
    """The event as one sentence, its reason quoted after it."""
    what = what_happened(event, names)
    if event.reason:
        return format_html("{}: “{}”", what, excerpt(event.reason, REASON_CHARS))
    return format_html("{}", what)


def sentences(events: Iterable[AuditEvent], **known: dict[int, str]) -> list[tuple[AuditEvent, SafeString]]:
    """Each event with its sentence, names loaded in bulk: what the log and a post's page show."""
    events = list(events)
    names = EventNames.load(events, **known)
    return [(event, sentence(event, names)) for event in events]
