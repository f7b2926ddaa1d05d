"""Admin building blocks shared by the apps: lists that stay fast on millions of rows, read-only records.

Staff open list pages all day on tables with millions of rows. Django's changelist counts its
queryset twice (the filtered count and the full count); on PostgreSQL a COUNT(*) reads the whole
table. `FastListAdmin` turns off the full count and pages with `EstimatedCountPaginator`, which
reads the planner's row estimate (pg_class.reltuples) for an unfiltered list and counts exactly
only when a filter or search narrows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import SEARCH_VAR
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.core.paginator import Paginator
from django.db import connections, models
from django.db.models import Model, Q, QuerySet
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from core.formatting import day
from core.search_input import has_nul, without_control_characters

EMPTY = "—"


def estimated_row_count(queryset: QuerySet) -> int | None:
    """The planner's estimate of the table's rows, or None when the queryset is filtered or unknown."""
    connection = connections[queryset.db]
    query = queryset.query
    if connection.vendor != "postgresql" or query.where or query.distinct or query.combinator:
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)",
            [connection.ops.quote_name(queryset.model._meta.db_table)],
        )
        row = cursor.fetchone()
    # reltuples is -1 until the table is first analysed.
    if row is None or row[0] < 0:
        return None
    return int(row[0])


class EstimatedCountPaginator(Paginator):
    """Counts an unfiltered table from the planner's estimate; counts exactly once it is filtered."""

    # Below this many rows an exact COUNT(*) is cheap, and staff expect small tables to add up.
    exact_count_below = 10_000

    @cached_property
    def count(self) -> int:
        if isinstance(self.object_list, QuerySet):
            estimate = estimated_row_count(self.object_list)
            if estimate is not None and estimate >= self.exact_count_below:
                return estimate
        return super().count


class ControlCharacterSafeAdmin(admin.ModelAdmin):
    """A list's query string with NUL in it (PostgreSQL refuses NUL in a text parameter) is not a 500: the
    search box drops control characters (core.search_input), and a filter value with NUL is Django's
    "invalid lookup", which sends the list back to itself unfiltered (?e=1). A bulk action whose selection
    holds something that is no id of this list's rows (Django filters by it and fails) changes nothing and
    says so on the list."""

    def response_action(self, request, queryset):
        for value in request.POST.getlist(ACTION_CHECKBOX_NAME):
            if not self._is_an_id(value):
                self.message_user(request, f"“{without_control_characters(value)[:40]}” is not the id of a "
                                  f"{self.model._meta.verbose_name}: nothing was changed.", messages.ERROR)
                return None  # the list again, with the message, as Django answers an empty selection
        return super().response_action(request, queryset)

    def _is_an_id(self, value: str) -> bool:
        try:
            self.model._meta.pk.to_python(value)
        except ValidationError:
            return False
        return not has_nul(value)

    def get_changelist_instance(self, request):
        filters = (value for name, values in request.GET.lists() if name != SEARCH_VAR for value in values)
        if any(has_nul(value) for value in filters):
            raise IncorrectLookupParameters("NUL in the query string")
        return super().get_changelist_instance(request)

    def get_search_results(self, request, queryset, search_term):
        return super().get_search_results(request, queryset, without_control_characters(search_term))


class FastListAdmin(ControlCharacterSafeAdmin):
    """A changelist that never counts a whole big table, and searches one index at a time.

    Django's own search ORs every search field (across joins) for each word, which PostgreSQL
    can answer only by scanning the table, and its `=field` is a case-insensitive UPPER()
    comparison no plain index serves. With `search_by_index = True`, each entry of
    `search_fields` must name its lookup (`external_id__exact`, `page__name__istartswith`);
    the whole search text is tried against each one separately (each an index scan, at most
    `search_match_cap` rows) and the list shows the union.
    """

    paginator = EstimatedCountPaginator
    show_full_result_count = False
    list_per_page = 50
    search_by_index = False
    search_match_cap = 1000

    def get_list_display(self, request):
        # Every date column reads as the rest of the admin writes dates ("30 Nov 2026, 01:09 UTC"),
        # not in Django's locale format; sorting still sorts by the field.
        return tuple(date_column(self.model, name) or name for name in super().get_list_display(request))

    def search_lookups(self, request, term: str) -> list[Q | QuerySet]:
        """What to try, one query each, for this search text: a condition on this list's rows, or a queryset of
        them (factcheck.staff_search.find_posts); an admin may route by the text's shape."""
        return [Q(**{lookup: term}) for lookup in self.get_search_fields(request)]

    def get_search_results(self, request, queryset, search_term):
        search_term = without_control_characters(search_term)  # core.search_input, as every search box
        term = search_term
        if not self.search_by_index or not term:
            return super().get_search_results(request, queryset, search_term)
        manager = self.model._default_manager
        pks: set[Any] = set()
        for condition in self.search_lookups(request, term):
            rows = condition if isinstance(condition, QuerySet) else manager.filter(condition)
            pks.update(rows.values_list("pk", flat=True)[: self.search_match_cap])
        return queryset.filter(pk__in=pks), False


def date_column(model: type[Model], name: Any) -> Callable[[Any], str] | None:
    """A list column showing the date field `name` with `when`, or None when `name` is not a date field."""
    if not isinstance(name, str):
        return None
    try:
        field = model._meta.get_field(name)
    except FieldDoesNotExist:
        return None
    if not isinstance(field, (models.DateTimeField, models.DateField)):
        return None

    def show(obj: Any) -> str:
        return when(getattr(obj, name))

    show.__name__ = name  # the column's CSS class stays column-<name>
    return admin.display(description=field.verbose_name, ordering=name)(show)


class NoEditing:
    """Nobody, superusers included, adds, changes or deletes these rows in the admin."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(NoEditing, FastListAdmin):
    """Records that change only through domain functions: visible, never hand-edited, by anyone."""


class ReadOnlyInline(NoEditing, admin.TabularInline):
    """A related record shown on its parent's page, linked to its own page, never edited there."""

    extra = 0
    can_delete = False
    show_change_link = True

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)


def when(value: datetime | date | None, *, empty: str = EMPTY) -> str:
    """Every date staff read in the admin, one way and in their own time zone, as its change pages and date filters
    have them (config/formats): "30 Nov 2026, 01:09 UTC", "30 Nov 2026, 10:09 JST" (a date alone: "30 Nov 2026").
    In UTC, the lists said one time and the change page another."""
    if value is None:
        return empty
    if not isinstance(value, datetime):
        return day(value)
    local = timezone.localtime(value)
    return f"{local.day} {local:%b %Y, %H:%M} {local.tzname()}"


def number(value: int | None) -> str:
    """A count with thousands separators: 1,234,567."""
    return EMPTY if value is None else f"{value:,}"


def share(multiplier: Decimal | float | None) -> str:
    """A feed multiplier as staff say it: 0.2 is "shown at 20%" (80% less), 1 is full distribution."""
    if multiplier is None:
        return EMPTY
    percent = Decimal(str(multiplier)) * 100
    if percent >= 100:
        return "full distribution"
    if percent <= 0:
        return "not shown (0%)"
    return f"shown at {percent.normalize():f}%"


def excerpt(text: str, chars: int = 80) -> str:
    return Truncator(" ".join((text or "").split())).chars(chars)


def admin_url(model_label: str, pk: Any) -> str | None:
    """The admin change page of `app_label.model_name` row `pk`, or None when it has none."""
    app_label, _, model_name = model_label.lower().partition(".")
    try:
        return reverse(f"admin:{app_label}_{model_name}_change", args=[pk])
    except NoReverseMatch:
        return None


def admin_link(obj: Model | None, text: Any = None, *, empty: str = EMPTY) -> SafeString | str:
    """A link to a row's admin page under a readable name (`text`, else the row's own name)."""
    if obj is None:
        return empty
    url = admin_url(obj._meta.label_lower, obj.pk)
    label = str(obj) if text is None else text
    return format_html('<a href="{}">{}</a>', url, label) if url else label


def cell(value: Any) -> Any:
    """How a value reads in a table: formatted dates and numbers, Yes/No, a dash for nothing."""
    if value is None or value == "":
        return EMPTY
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, (datetime, date)):
        return when(value)
    if isinstance(value, int):
        return number(value)
    if isinstance(value, Decimal):
        return f"{value.normalize():f}"
    return value


def html_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, empty: str = "None") -> SafeString:
    """A small escaped table for a read-only field of a change page; dates and numbers formatted by `cell`."""
    rows = list(rows)
    if not rows:
        return format_html("<p>{}</p>", empty)
    head = format_html_join("", "<th scope=\"col\">{}</th>", ((h,) for h in headers))
    body = format_html_join(
        "", "<tr>{}</tr>", ((format_html_join("", "<td>{}</td>", ((cell(c),) for c in row)),) for row in rows)
    )
    return format_html("<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>", head, body)


def shown_as(display: Callable[[Any], Any], field: str, description: str) -> Callable[[Any, Any], Any]:
    """A read-only admin column or field that shows `field` through `display` (when, number, share)."""

    def show(modeladmin: Any, obj: Any) -> Any:
        return display(getattr(obj, field))

    show.__name__ = f"{field}_shown"
    return admin.display(description=description, ordering=field)(show)
