"""The audit log in the admin: each event a sentence with linked objects (audit.sentences); nobody edits it.
Its list reads and filters them, and its CSV export streams them, a chunk of events at a time."""

from __future__ import annotations

import html
from collections.abc import Iterator

from django.apps import apps
from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ERROR_FLAG, ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponseRedirect, StreamingHttpResponse
from django.urls import path, reverse
from django.utils.html import strip_tags
from django.utils.safestring import SafeString

from audit.models import AuditEvent
from audit.sentences import EventNames, link, sentence, what_happened
from core.admin_base import ReadOnlyAdmin, when
from core.csv_download import csv_download
from core.replicas import reads_from_replica

AUDITED_APPS = ("accounts", "audit", "factcheck", "moderation")
# The CSV export names the rows of this many events at a time (EventNames: one query per kind of row).
EXPORT_CHUNK = 2000
EXPORT_HEADER = ("when (UTC)", "actor", "event", "what happened", "target type", "target id", "post", "reason")


def export_rows(events: QuerySet[AuditEvent]) -> Iterator[tuple[object, ...]]:
    """The events as CSV rows, read in chunks from the database while the download is written: each sentence as
    plain text (no links), its reason whole."""
    chunk: list[AuditEvent] = []
    for event in events.iterator(chunk_size=EXPORT_CHUNK):
        chunk.append(event)
        if len(chunk) == EXPORT_CHUNK:
            yield from _export_chunk(chunk)
            chunk = []
    yield from _export_chunk(chunk)


def _export_chunk(events: list[AuditEvent]) -> Iterator[tuple[object, ...]]:
    names = EventNames.load(events)
    for event in events:
        what = html.unescape(strip_tags(str(what_happened(event, names))))
        yield (event.created_at, event.actor_label,
               event.get_verb_display(), what, event.target_type, event.target_id,
               names.posts.get(event.post_id, "") if event.post_id is not None else "", event.reason)


class TargetTypeFilter(admin.SimpleListFilter):
    """Choices from the models themselves: a DISTINCT over millions of events would read them all."""

    title = "target type"
    parameter_name = "target_type"

    def lookups(self, request, model_admin):
        return sorted(
            (model._meta.label_lower, model._meta.verbose_name)
            for app in AUDITED_APPS for model in apps.get_app_config(app).get_models()
        )

    def queryset(self, request, queryset):
        return queryset.filter(target_type=self.value()) if self.value() else queryset


class ActorKindFilter(admin.SimpleListFilter):
    title = "actor"
    parameter_name = "actor_kind"

    def lookups(self, request, model_admin):
        return [("person", "A person"), ("system", "The system (jobs)")]

    def queryset(self, request, queryset):
        if self.value() in ("person", "system"):
            return queryset.filter(actor__isnull=self.value() == "system")
        return queryset


class SentenceChangeList(ChangeList):
    """Loads the names the page's sentences need once, after the page's rows are read."""

    def get_results(self, request):
        super().get_results(request)
        names = EventNames.load(self.result_list)
        for event in self.result_list:
            event.sentence = sentence(event, names)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """Read-only for everyone (ReadOnlyAdmin answers False to add, change and delete, superusers included)."""

    list_display = ("when", "what")
    list_display_links = ("when",)
    list_filter = ("verb", TargetTypeFilter, ActorKindFilter, "created_at")
    search_by_index = True
    search_fields = ("actor__username__exact",)
    search_help_text = ("Exact post external id, exact username, or a target as app.model#id "
                        "(e.g. moderation.action#12).")
    fields = ("when", "what", "actor_label", "verb", "target", "reason", "data")
    readonly_fields = fields

    def get_changelist(self, request, **kwargs):
        return SentenceChangeList

    def get_urls(self) -> list:
        export = path("export.csv", self.admin_site.admin_view(self.export_csv), name="audit_auditevent_export")
        return [export, *super().get_urls()]  # before "<path:object_id>/", which would take it for an id

    @reads_from_replica  # the rows too: they are read while the file streams
    def export_csv(self, request: HttpRequest) -> StreamingHttpResponse | HttpResponseRedirect:
        """The list as filtered and searched (the same query string), every matching event, streamed as CSV
        (core.csv_download: cells a spreadsheet would run as formulas are written as text)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            events = self.get_changelist_instance(request).queryset
        except IncorrectLookupParameters:
            # A filter value the list cannot read (a date typed by hand): to the list, as the list itself
            # answers one (Django's changelist_view redirects to ?e=1).
            changelist = reverse(f"{self.admin_site.name}:audit_auditevent_changelist")
            return HttpResponseRedirect(f"{changelist}?{ERROR_FLAG}=1")
        return csv_download(name="factdesk-audit-log", header=EXPORT_HEADER, rows=export_rows(events))

    def get_actions(self, request):
        # No bulk delete either: the log is append-only.
        return {}

    def search_lookups(self, request, term: str) -> list[Q]:
        target_type, _, target_id = term.partition("#")
        if target_id:
            # Served by the (target_type, target_id) index.
            return [Q(target_type=target_type.strip().lower(), target_id=target_id.strip())]
        # The audit app sits beneath both sides, so it names the post model rather than importing it.
        post_ids = apps.get_model("factcheck", "Post").objects.filter(external_id=term).values("pk")
        return [Q(post_id__in=post_ids), *super().search_lookups(request, term)]

    @admin.display(description="when", ordering="id")
    def when(self, event: AuditEvent) -> str:
        return when(event.created_at)

    @admin.display(description="what happened")
    def what(self, event: AuditEvent) -> SafeString:
        found = getattr(event, "sentence", None)  # set in bulk on list pages
        return found if found is not None else sentence(event, EventNames.load([event]))

    @admin.display(description="record")
    def target(self, event: AuditEvent) -> SafeString | str:
        model = event.target_type.partition(".")[2].replace("_", " ") or "record"
        return link(event.target_type, event.target_id, f"{model} {event.target_id}")

