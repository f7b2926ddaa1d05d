"""The review side in the admin: staff find anything fast and read it; nothing here is hand-edited but
people's place: users with their organisation (factcheck.admin_people, which registers the user pages), an
organisation's name and coverage, and a page's owners, each saved through factcheck.member_changes with a reason
and audited with its old and new values.

Posts and flags come from the platform, claims and ratings from fact-checkers, so their pages are
read-only for everyone. Big tables (posts, flags, claims, ratings) search one index at a time
(core.admin_base.FastListAdmin) and drill down by date with list filters, never date_hierarchy:
its year links need a DISTINCT over the whole table, indexed or not. The decision side (actions,
strikes, appeals, the timeline) is added to the post page by moderation.admin, since this app
never imports moderation.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString

from audit.models import AuditEvent
from audit.sentences import sentences
from core.admin_base import (
    EMPTY,
    FastListAdmin,
    ReadOnlyAdmin,
    admin_link,
    excerpt,
    html_table,
    number,
    shown_as,
    when,
)
from core.admin_decisions import AsksReason
from core.admin_deletions import DeletionAsksReason
from core.paging import plain_number
from factcheck.admin_actions import PoliticianPageActions
from factcheck.admin_people import PeopleDeletionForm, people_reason  # and, importing it, the user pages
from factcheck.coverage import COUNTRY_HELP, LANGUAGE_HELP, clean_coverage, split_codes
from factcheck.member_changes import change_organisation, delete_organisation, set_page_owners
from factcheck.members import check_page_owners, organisation_of
from factcheck.models import Claim, Flag, FlagSource, Match, Organisation, Page, Post, Rating, Verdict
from factcheck.selectors import counted_flags_by_source, queued_nobody_covers, recent_flags
from factcheck.staff_search import find_posts

LATEST_FLAGS_SHOWN = 20
LATEST_EVENTS_SHOWN = 50
BEST_COPIES_SHOWN = 50
TEXT_CHARS_LISTED = 70


POST_SEARCH_HELP = ("Words of the post's text or of its page's name, a post's or page's external id (or its start), "
                    "or the post's URL.")


class PostSearch:
    """A list of posts, or of rows about one post, searched the one way staff search for posts
    (factcheck.staff_search.find_posts); `search_fields` are this list's own exact lookups, tried besides.

    Mixed in before FastListAdmin (or ReadOnlyAdmin). Used by every admin list where staff look for content:
    posts, flags, claims, ratings, matches here; actions, decisions, distributions, appeals and reports of harm
    in moderation.admin.
    """

    post_search_via = ""  # how a row reaches its post: "post__", "appeal__post__"; "" for posts themselves
    search_by_index = True
    search_fields: tuple[str, ...] = ()
    search_help_text = POST_SEARCH_HELP

    def get_search_fields(self, request) -> tuple[str, ...]:
        # Never empty, so every list that holds posts shows its search box; read only by search_lookups below.
        return (*self.search_fields, f"{self.post_search_via}search_vector")

    def search_lookups(self, request, term: str) -> list[Q | QuerySet]:
        rows = self.model._default_manager.all()
        own = [Q(**{lookup: term}) for lookup in self.search_fields]
        return [*find_posts(rows, term, via=self.post_search_via), *own]


class CurrentVerdictFilter(admin.SimpleListFilter):
    """Posts by the verdict of their current rating (at most one per post, so no duplicates)."""

    title = "current verdict"
    parameter_name = "verdict"

    def lookups(self, request, model_admin):
        return Verdict.choices

    def queryset(self, request, queryset):
        if self.value() in Verdict.values:
            return queryset.filter(ratings__is_current=True, ratings__verdict=self.value())
        return queryset


class RatedByFilter(admin.SimpleListFilter):
    """Posts by the organisation of their current rating."""

    title = "rated by"
    parameter_name = "rated_by"

    def lookups(self, request, model_admin):
        return [(str(pk), name) for pk, name in Organisation.objects.values_list("pk", "name")]

    def queryset(self, request, queryset):
        organisation_id = plain_number(self.value())
        if organisation_id is not None:
            return queryset.filter(ratings__is_current=True, ratings__organisation_id=organisation_id)
        return queryset


class CodesField(forms.CharField):
    """A list of codes typed as text, separated by commas ("es, fr"), shown the same way; checked by the form's
    clean, with both lists, through factcheck.coverage.clean_coverage."""

    def prepare_value(self, value):
        return ", ".join(str(code) for code in value) if isinstance(value, (list, tuple)) else value

    def to_python(self, value) -> list[str]:
        return split_codes(super().to_python(value))


class OrganisationForm(forms.ModelForm):
    url = forms.URLField(label="URL", required=False, max_length=200, assume_scheme="https")
    languages = CodesField(label="Languages", required=False, help_text=LANGUAGE_HELP)
    countries = CodesField(label="Countries", required=False, help_text=COUNTRY_HELP)
    reason = people_reason()

    class Meta:
        model = Organisation
        fields = ("name", "url", "languages", "countries")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].required = self.instance.pk is not None  # a new organisation changes nobody's work

    def clean(self):
        data = super().clean()
        if "languages" in data and "countries" in data:
            try:
                data["languages"], data["countries"] = clean_coverage(languages=data["languages"],
                                                                      countries=data["countries"])
            except ValidationError as refused:
                for field, messages in refused.message_dict.items():
                    for message in messages:
                        self.add_error(field, message)
        return data


@admin.register(Organisation)
class OrganisationAdmin(DeletionAsksReason, AsksReason, FastListAdmin):
    """Saved through factcheck.member_changes.change_organisation: its coverage decides what its members may claim
    and rate, so each change is audited with the old and new lists and the reason. Deleted (superusers: nobody else
    has the right) through delete_organisation, with a reason, while nobody belongs to it and it has made no rating."""

    form = OrganisationForm
    deletion_form = PeopleDeletionForm
    deletion_instead = ("Move its members to another organisation first (each user's page, with a reason). An "
                        "organisation that has made ratings stays: they are history, and name it.")
    list_display = ("name", "url", "languages", "countries")
    search_fields = ("name",)

    def save_model(self, request, obj: Organisation, form, change: bool) -> None:
        before = queued_nobody_covers().count()
        change_organisation(organisation=obj, by=request.user, reason=form.cleaned_data.get("reason", ""))
        if (left := queued_nobody_covers().count() - before) > 0:
            messages.warning(request, f"Queued posts this change left outside every organisation's coverage: {left}. "
                                      "No fact-checker may claim them until an organisation covers them (the admin's "
                                      "index counts them).")

    def delete_one(self, request, obj: Organisation, *, reason: str) -> None:
        delete_organisation(organisation_id=obj.pk, by=request.user, reason=reason)


class PageOwnersForm(forms.ModelForm):
    reason = people_reason()

    class Meta:
        model = Page
        fields = ("owners",)
        help_texts = {"owners": "Active page-owner accounts only: they see the page's posts and are told of every "
                                "decision on them."}

    def clean_owners(self):
        owners = self.cleaned_data["owners"]
        check_page_owners(owners, page=self.instance)  # set_page_owners's rule, said by the field before saving
        return owners


@admin.register(Page)
class PageAdmin(PoliticianPageActions, AsksReason, FastListAdmin):  # mark/unmark actions and buttons
    """Only a page's owners are edited here, through factcheck.member_changes.set_page_owners (audited, with a
    reason); whether it is a politician's is a staff decision (PoliticianPageActions)."""

    list_display = ("name", "external_id", "is_politician", "repeat_offender", "created_at")
    list_filter = ("is_politician", ("standing__is_repeat_offender", admin.BooleanFieldListFilter), "created_at")
    # standing is the reverse one-to-one the decision side keeps; reading it is not importing it.
    list_select_related = ("standing",)
    search_by_index = True
    search_fields = ("external_id__exact", "name__istartswith")
    search_help_text = "Exact external id, or the start of the page name."
    raw_id_fields = ("owners",)
    form = PageOwnersForm
    readonly_fields = ("external_id", "name", "is_politician", "created_at")

    def get_fields(self, request, obj=None):
        # The page as it is (and what the decision side adds to it) first, then what may change here, and why.
        fields = super().get_fields(request, obj)
        editable = [name for name in ("owners", "reason") if name in fields]
        return [*(name for name in fields if name not in editable), *editable]

    def save_model(self, request, obj: Page, form, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)
        # A page's own fields are read-only here; its owners are saved in save_related.

    def save_related(self, request, form, formsets, change: bool) -> None:
        set_page_owners(page_id=form.instance.pk, by=request.user, owners=form.cleaned_data["owners"],
                        reason=form.cleaned_data.get("reason", ""))

    @admin.display(description="repeat offender", boolean=True)
    def repeat_offender(self, page: Page) -> bool:
        standing = getattr(page, "standing", None)
        return bool(standing and standing.is_repeat_offender)


POST_FIELDS = ("external_id", "page_link", "url", "text", "language", "country", "media_type", "posted",
               "views_shown", "shares_shown")
QUEUE_FIELDS = ("queue_state", "duplicate_of", "matched", "flag_count", "flag_weight", "first_flagged",
                "priority", "velocity_score", "flag_score", "age_score")


def _verdict_link(rating: Rating) -> SafeString | str:
    return admin_link(rating, rating.get_verdict_display())


@admin.register(Post)
class PostAdmin(PostSearch, ReadOnlyAdmin):
    """A post's record and its review story; the decision side adds its part in moderation.admin.

    Related rows are read-only tables (one query each) rather than inlines, so that each names
    its rows the way staff say them ("False, by alice (Verifact)") and links them to their pages.
    """

    # Narrow enough for a 1366 px screen: the text says which post it is, the rest why it is here.
    list_display = ("external_id", "text_excerpt", "page_where", "state", "first_flagged")
    list_filter = ("queue_state", CurrentVerdictFilter, RatedByFilter, "media_type",
                   ("page__standing__is_repeat_offender", admin.BooleanFieldListFilter),
                   "page__is_politician", "first_flagged_at", "posted_at")
    list_select_related = ("page",)
    search_help_text = (f"{POST_SEARCH_HELP} To find a part of a word in the text, start with text: "
                        "(slower: it reads posts until it finds matches).")
    fieldsets = (
        (None, {"fields": POST_FIELDS}),
        ("Media", {"fields": ("media_items",)}),
        ("Ratings", {"fields": ("ratings",)}),
        ("Queue", {"fields": QUEUE_FIELDS}),
        ("Claims", {"fields": ("claims",)}),
        ("Near-duplicates", {"fields": ("copy_of", "copies")}),
        ("Flags", {"fields": ("flags_summary",)}),
        ("Audit log", {"fields": ("audit_log",)}),
    )
    readonly_fields = (*POST_FIELDS, *QUEUE_FIELDS, "media_items", "ratings", "claims", "copy_of", "copies",
                       "flags_summary", "audit_log")

    posted = shown_as(when, "posted_at", "posted")
    views_shown = shown_as(number, "views", "views")
    shares_shown = shown_as(number, "shares", "shares")
    matched = shown_as(when, "matched_at", "matched")
    first_flagged = shown_as(when, "first_flagged_at", "first flagged")

    def search_lookups(self, request, term: str) -> list[Q | QuerySet]:
        if term.lower().startswith("text:"):
            # A part of a word ("accin"): no index serves a substring of the text, so this stays opt-in and
            # capped (search_match_cap). Words need no prefix: find_posts matches them by the GIN index.
            return [Q(text__icontains=term[5:].strip())]
        return super().search_lookups(request, term)

    def get_queryset(self, request) -> QuerySet:
        return super().get_queryset(request).select_related("page")

    @admin.display(description="text")
    def text_excerpt(self, post: Post) -> str:
        return excerpt(post.text, TEXT_CHARS_LISTED) or "(no text)"

    @admin.display(description="queue state, flags", ordering="queue_state")
    def state(self, post: Post) -> str:
        return f"{post.get_queue_state_display()}, {number(post.flag_count)} flag{'s' if post.flag_count != 1 else ''}"

    @admin.display(description="page, language, country", ordering="page__name")
    def page_where(self, post: Post) -> str:
        # The page's name isolated (<bdi>): an unclosed U+202E in it turned "eg · ar" round ("ra · GE": Georgia).
        place = "".join(f" · {part}" for part in (post.language, post.country) if part)
        return format_html("<bdi>{}</bdi>{}", post.page.name, place)

    @admin.display(description="page")
    def page_link(self, post: Post):
        page = post.page
        return admin_link(page, format_html("<bdi>{}</bdi> (<bdi>{}</bdi>)", page.name, page.external_id))

    @admin.display(description="media, as the platform sent them")
    def media_items(self, post: Post):
        # The addresses as text, not links: staff open a post's image knowingly, not by a stray click.
        return html_table(
            ("#", "kind", "address", "alt text", "PDQ (quality)", "MD5"),
            ((m.position + 1, m.get_kind_display(), m.url, m.alt_text or EMPTY,
              f"{m.pdq} ({EMPTY if m.quality is None else m.quality})" if m.pdq else EMPTY, m.md5 or EMPTY)
             for m in post.media.order_by("position")),
            empty="No media: a text post.",
        )

    @admin.display(description="ratings, newest first")
    def ratings(self, post: Post):
        rows = Rating.objects.filter(post=post).select_related("organisation", "reviewer").order_by("-created_at")
        return html_table(
            ("rated", "verdict", "by", "state", "rationale", "article"),
            ((when(r.created_at), _verdict_link(r), f"{r.reviewer.get_username()} ({r.organisation.name})",
              "current" if r.is_current else "superseded", r.rationale,
              format_html('<a href="{}">{}</a>', r.article_url, "article") if r.article_url else EMPTY)
             for r in rows),
            empty="Not rated.",
        )

    @admin.display(description="claims, newest first")
    def claims(self, post: Post):
        rows = Claim.objects.filter(post=post).select_related("reviewer").order_by("-claimed_at")
        return html_table(
            ("reviewer", "state", "claimed", "lease until", "ended"),
            ((c.reviewer.get_username(), c.get_status_display(), c.claimed_at, c.expires_at, c.ended_at) for c in rows),
            empty="Nobody has claimed this post.",
        )

    @admin.display(description="copy of (earlier posts)")
    def copy_of(self, post: Post):
        rows = Match.objects.filter(post=post).select_related("source", "decided_by").order_by("-score")
        return _matches(rows, other=lambda m: m.source, empty="Not found to copy an earlier post.")

    @admin.display(description="copies of this post, best first")
    def copies(self, post: Post):
        # The best BEST_COPIES_SHOWN and the count, with a link to them all: a viral claim's page listing its 2,400
        # copies was 607 KB and took 2 s.
        found = Match.objects.filter(source=post)
        rows = found.select_related("post", "decided_by").order_by("-score", "id")[:BEST_COPIES_SHOWN]
        table = _matches(rows, other=lambda m: m.post, empty="No copies found.")
        total = found.count() if len(rows) == BEST_COPIES_SHOWN else len(rows)
        if total <= BEST_COPIES_SHOWN:
            return table
        every = f"{reverse('admin:factcheck_match_changelist')}?{urlencode({'source__id__exact': post.pk})}"
        return format_html('{}<p><a href="{}">All {} copies of this post</a> (best {} shown)</p>',
                           table, every, number(total), BEST_COPIES_SHOWN)

    @admin.display(description="flags")
    def flags_summary(self, post: Post):
        counted = counted_flags_by_source(post, keep=True)  # the timeline's too (moderation.admin.post_story)
        by_source = [(FlagSource(source).label, counted[source].n) for source in FlagSource.values if source in counted]
        counts = html_table(("source", "flags"), by_source, empty="No flags.")
        latest = recent_flags(post, limit=LATEST_FLAGS_SHOWN)
        rows = html_table(
            ("flagged", "source", "category", "outcome", "reason", "idempotency key"),
            ((f.flagged_at, f.get_source_display(), f.get_category_display(), f.get_outcome_display() or f.status,
              f.reason, f.idempotency_key) for f in latest),
            empty="",
        )
        return format_html("{}<p>Latest {}:</p>{}", counts, LATEST_FLAGS_SHOWN, rows)

    @admin.display(description="audit events")
    def audit_log(self, post: Post):
        events = AuditEvent.objects.filter(post_id=post.pk).order_by("-id")[:LATEST_EVENTS_SHOWN]
        table = html_table(
            ("when", "what happened"),
            ((when(event.created_at), text) for event, text in sentences(
                events, posts={post.pk: post.external_id}, pages={post.page_id: post.page.name})),
            empty="No audit events.",
        )
        full_log = f"{reverse('admin:audit_auditevent_changelist')}?post_id={post.pk}"
        return format_html('{}<p><a href="{}">All audit events of this post</a> (latest {} shown)</p>',
                           table, full_log, LATEST_EVENTS_SHOWN)


def _matches(rows: QuerySet[Match], *, other, empty: str):
    return html_table(
        ("post", "method", "score", "state", "guard", "found", "decided by", "reason"),
        ((admin_link(other(m), other(m).external_id), m.get_method_display(), f"{m.score:.2f}", m.get_state_display(),
          m.get_guard_display() if m.guard else EMPTY, m.created_at,
          f"{m.decided_by.get_username()}, {when(m.decided_at)}" if m.decided_by else EMPTY, m.reason)
         for m in rows),
        empty=empty,
    )


@admin.register(Flag)
class FlagAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("idempotency_key", "post", "source", "category", "status", "outcome", "flagged_at", "received_at")
    list_filter = ("category", "status", "outcome", "source", "flagged_at")
    list_select_related = ("post",)
    post_search_via = "post__"
    search_fields = ("idempotency_key__exact",)
    search_help_text = f"{POST_SEARCH_HELP} Or a flag's exact idempotency key."
    raw_id_fields = ("post", "submitted_by")


@admin.register(Claim)
class ClaimAdmin(PostSearch, ReadOnlyAdmin):
    list_display = ("post", "reviewer", "organisation", "status", "claimed_at", "expires_at", "ended_at")
    list_filter = ("status", "reviewer__membership__organisation", "claimed_at")
    list_select_related = ("post", "reviewer__membership__organisation")
    post_search_via = "post__"
    search_fields = ("reviewer__username__exact",)
    search_help_text = f"{POST_SEARCH_HELP} Or a reviewer's exact username."
    raw_id_fields = ("post", "reviewer")

    @admin.display(description="organisation")
    def organisation(self, claim: Claim) -> str:
        return str(organisation_of(claim.reviewer) or "")


@admin.register(Rating)
class RatingAdmin(PostSearch, ReadOnlyAdmin):
    """A rating is a fact-checker's decision: staff read it, never edit it."""

    list_display = ("post", "verdict", "organisation", "reviewer", "is_current", "created_at")
    list_filter = ("verdict", "is_current", "organisation", "created_at")
    list_select_related = ("post", "organisation", "reviewer")
    post_search_via = "post__"
    search_fields = ("reviewer__username__exact",)
    search_help_text = f"{POST_SEARCH_HELP} Or a reviewer's exact username."
    raw_id_fields = ("post", "claim", "superseded_by")


@admin.register(Match)
class MatchAdmin(PostSearch, ReadOnlyAdmin):
    """Near-duplicate pairs: fact-checkers confirm and reject suggestions, appeals unlink; staff read."""

    list_display = ("post", "source", "method", "score", "state", "guard", "created_at", "decided_by")
    list_filter = ("state", "method", "guard", "created_at")
    list_select_related = ("post", "source", "decided_by")
    post_search_via = "post__"  # the copy; the claim's first post by its exact external id
    search_fields = ("source__external_id__exact",)
    search_help_text = f"{POST_SEARCH_HELP} These find the copy; the claim's first post by its exact external id."
    raw_id_fields = ("post", "source", "decided_by")

