"""/dashboard/: figures for staff (the whole program) and fact-checkers (their organisation)."""

from django.urls import path

from reports import views

app_name = "reports"
urlpatterns = [
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/transparency-report.csv", views.transparency_report, name="transparency_report"),
    path("dashboard/<slug:slug>.csv", views.chart_csv, name="chart_csv"),
]
