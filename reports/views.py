"""/dashboard/: the program's figures as charts, tables and CSV files, for staff and fact-checkers.

Thin: the scope rule and the figures are reports.figures, the charts reports.charts. Every page here reads
from a replica when there is one (core.replicas): figures, never what their reader has just done.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import wraps
from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.csv_download import csv_file
from core.replicas import reads_from_replica
from reports.charts import all_charts
from reports.dsa import report_csv
from reports.figures import PRESETS, BadRange, NoFigures, Scope, date_range, figures_for, scope_of


def figures_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous visitors go to the login page; roles without figures get a 403 page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        try:
            scope = scope_of(request.user)
        except NoFigures as refusal:
            return render(request, "403.html", {"exception": refusal.message}, status=403)
        return view(request, scope, *args, **kwargs)

    return wrapped


def _range(request: HttpRequest):
    return date_range(start=request.GET.get("from") or None, end=request.GET.get("to") or None)


@require_GET
@figures_required
@reads_from_replica
def dashboard(request: HttpRequest, scope: Scope) -> HttpResponse:
    today = datetime.now(UTC).date()
    typed = {"from": request.GET.get("from", "")[:40], "to": request.GET.get("to", "")[:40]}
    try:
        start, end = _range(request)
        error, bad_field = "", ""
    except BadRange as refusal:
        # The last week is shown below the error; the form keeps what was typed, to correct it.
        start, end = date_range(start=None, end=None, today=today)
        error, bad_field = refusal.message, (refusal.details or {}).get("field", "from")
    figures = figures_for(scope, start=start, end=end)
    query = urlencode({"from": start.isoformat(), "to": end.isoformat()})
    presets = [{"days": days, "current": not error and end == today and (end - start).days + 1 == days,
                "query": urlencode({"from": (today - timedelta(days=days - 1)).isoformat(), "to": today.isoformat()})}
               for days in PRESETS]
    return render(request, "reports/dashboard.html", {
        "scope": scope, "figures": figures, "charts": all_charts(figures), "query": query,
        "start": start, "end": end, "today": today, "presets": presets, "error": error,
        "error_list": [{"message": error, "target": f"range-{bad_field}"}] if error else [],
        "bad_field": bad_field,
        "form_from": typed["from"] if error else start.isoformat(),
        "form_to": typed["to"] if error else end.isoformat(),
    }, status=400 if error else 200)


@require_GET
@figures_required
@reads_from_replica
def chart_csv(request: HttpRequest, scope: Scope, slug: str) -> HttpResponse:
    try:
        start, end = _range(request)
    except BadRange as refusal:
        return HttpResponse(refusal.message + "\n", status=400, content_type="text/plain; charset=utf-8")
    charts = {chart.slug: chart for chart in all_charts(figures_for(scope, start=start, end=end))}
    if slug not in charts:
        raise Http404("No such chart.")
    who = f"org{scope.organisation.pk}" if scope.organisation else "program"
    return csv_file(charts[slug].csv_text(), filename=f"factdesk-{slug}-{who}-{start}-to-{end}.csv")


@require_GET
@figures_required
@reads_from_replica
def transparency_report(request: HttpRequest, scope: Scope) -> HttpResponse:
    """The DSA transparency report for the range (staff: it covers the whole program)."""
    if scope.organisation is not None:
        return render(request, "403.html", {"exception": "The transparency report is for trust-and-safety staff."},
                      status=403)
    try:
        start, end = _range(request)
    except BadRange as refusal:
        return HttpResponse(refusal.message + "\n", status=400, content_type="text/plain; charset=utf-8")
    return csv_file(report_csv(start=start, end=end), filename=f"factdesk-transparency-report-{start}-to-{end}.csv")
