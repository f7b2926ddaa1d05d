"""/dashboard/ and its CSV downloads: who sees what, the range, the tables, the files, the query count."""

from __future__ import annotations

import csv
import html
import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from factcheck.members import add_membership
from factcheck.models import Organisation, Verdict
from reports.rollup import roll_up_days
from tests import scenarios
from tests.factories import FactCheckerFactory, OrganisationFactory, PostFactory, UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "correct horse battery staple"


def today():
    return datetime.now(UTC).date()


def at(days_ago: int, hour: int) -> datetime:
    day = today() - timedelta(days=days_ago)
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


@pytest.fixture
def world(ts_user):
    verifact = OrganisationFactory(name="Verifact", languages=["en"], countries=[])
    faktenwerk = OrganisationFactory(name="Faktenwerk", languages=["de"], countries=[])
    alice = FactCheckerFactory(username="alice", organisation=verifact, first_name="Alice", last_name="Archer")
    bob = FactCheckerFactory(username="bob", organisation=verifact)
    claire = FactCheckerFactory(username="claire", organisation=faktenwerk, first_name="Claire", last_name="Dupont")
    scenarios.rated_after_waiting(rater=alice, rated_at=at(1, 12), verdict="false")
    scenarios.rated_after_waiting(rater=alice, rated_at=at(1, 12), verdict="partly_false", waited=timedelta(hours=6))
    scenarios.rated_after_waiting(rater=bob, rated_at=at(3, 12), verdict="true")
    scenarios.rated_after_waiting(rater=claire, rated_at=at(2, 12), verdict="false", language="de")
    PostFactory(language="en", first_flagged_at=at(2, 8))  # still waiting
    roll_up_days(start=today() - timedelta(days=6), end=today())
    return {"verifact": verifact, "faktenwerk": faktenwerk, "alice": alice, "bob": bob, "claire": claire,
            "staff": ts_user}


def signed_in(user) -> Client:
    user.set_password(PASSWORD)
    user.save(update_fields=["password"])
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def csv_rows(response) -> list[dict[str, str]]:
    text = response.content.decode()
    assert text.startswith("\ufeff")  # the byte-order mark Excel reads UTF-8 by, as every CSV download has
    return list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))


def test_staff_see_the_whole_program_with_each_organisation_and_reviewer(world):
    page = signed_in(world["staff"]).get("/dashboard/")
    assert page.status_code == 200
    html_text = page.content.decode()
    assert "the whole program" in html_text
    for name in ("Verifact", "Faktenwerk", "Alice Archer", "Claire Dupont", "bob"):
        assert name in html_text
    assert "Throughput by organisation" in html_text
    assert "DSA transparency report (CSV)" in html_text
    # Ratings: four in the last week, drawn as panels and listed in the table.
    assert page.context["figures"].total("ratings", "false") == 2
    assert 'role="img"' in html_text and "<table>" in html_text


def test_a_factchecker_sees_only_their_organisation(world):
    page = signed_in(world["alice"]).get("/dashboard/")
    assert page.status_code == 200
    html_text = page.content.decode()
    assert "Verifact" in html_text and "Alice Archer" in html_text and "bob" in html_text
    assert "Claire Dupont" not in html_text and "Faktenwerk" not in html_text
    assert "Throughput by organisation" not in html_text
    assert "transparency report" not in html_text.lower()
    figures = page.context["figures"]
    assert figures.total("ratings", "false") == 1  # claire's False is Faktenwerk's
    assert figures.total("ratings", "true") == 1


def test_a_factcheckers_figures_name_their_own_organisation_for_a_reviewer_who_has_since_moved(world):
    alice = world["alice"]
    add_membership(user=alice, organisation=world["faktenwerk"])  # after her two ratings for Verifact
    client = signed_in(world["bob"])
    page = client.get("/dashboard/")
    assert page.status_code == 200
    people = {p.name: p.organisation for p in page.context["figures"].reviewers}
    assert people == {"Alice Archer": "Verifact", "bob": "Verifact"}
    assert "Faktenwerk" not in page.content.decode()
    reviewers = client.get("/dashboard/reviewers.csv")
    assert [r["name"] for r in csv_rows(reviewers)] == ["Alice Archer", "bob"]
    assert "Faktenwerk" not in reviewers.content.decode()
    for chart in ("queue", "ratings", "decisions", "appeals", "time-to-rating"):
        assert "Faktenwerk" not in client.get(f"/dashboard/{chart}.csv").content.decode(), chart


def test_a_superuser_without_a_role_sees_the_whole_program_and_downloads_the_report(world):
    root = UserFactory(username="root", role="", is_superuser=True, is_staff=True)
    client = signed_in(root)
    page = client.get("/dashboard/")
    assert page.status_code == 200
    assert page.context["scope"].organisation is None
    text = page.content.decode()
    assert "the whole program" in text and "Throughput by organisation" in text
    assert "DSA transparency report (CSV)" in text
    assert page.context["figures"].total("ratings", "false") == 2  # Verifact's and Faktenwerk's
    report = client.get("/dashboard/transparency-report.csv")
    assert report.status_code == 200 and report.content.decode().startswith("\ufeffsection,item,label,count")
    assert client.get("/dashboard/organisations.csv").status_code == 200


def test_page_owners_are_refused_and_anonymous_visitors_sent_to_sign_in(world):
    owner = UserFactory(username="olivia", role="page_owner")
    assert signed_in(owner).get("/dashboard/").status_code == 403
    assert signed_in(owner).get("/dashboard/ratings.csv").status_code == 403
    assert signed_in(owner).get("/api/v1/stats").status_code == 401  # a session is not an API token
    anonymous = Client().get("/dashboard/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/?next=/dashboard/")


def test_the_default_range_is_the_last_seven_days_and_a_chosen_range_is_kept(world):
    client = signed_in(world["staff"])
    page = client.get("/dashboard/")
    assert (page.context["start"], page.context["end"]) == (today() - timedelta(days=6), today())
    assert [p["current"] for p in page.context["presets"]] == [True, False, False]
    start = today() - timedelta(days=2)
    chosen = client.get("/dashboard/", {"from": start.isoformat(), "to": today().isoformat()})
    assert len(chosen.context["figures"].days) == 3
    assert chosen.context["figures"].total("ratings", "true") == 0  # bob's True was 3 days ago
    assert f'value="{start.isoformat()}"' in chosen.content.decode()
    # Every CSV link carries the range.
    assert f"ratings.csv?from={start.isoformat()}" in chosen.content.decode()


@pytest.mark.parametrize("query, message", [
    ({"from": "2026-13-01"}, "'from' must be a date YYYY-MM-DD"),
    ({"from": "yesterday"}, "'from' must be a date YYYY-MM-DD"),
    ({"from": "2026-05-02", "to": "2026-05-01"}, "'from' must be on or before 'to'"),
    ({"from": "2020-01-01", "to": "2026-01-01"}, "A range is at most 366 days"),
])
def test_a_bad_range_is_explained_at_the_top_and_the_last_week_shown(world, query, message):
    page = signed_in(world["staff"]).get("/dashboard/", query)
    assert page.status_code == 400
    text = html.unescape(page.content.decode())
    assert 'class="error-summary"' in text and message in text
    assert page.context["end"] == today()


@pytest.mark.parametrize("query, field", [
    ({"to": "0001-01-03"}, "to"),
    ({"to": "9999-12-31"}, "to"),
    ({"from": "9999-12-31"}, "from"),
    ({"from": "1999-12-31", "to": "2000-01-05"}, "from"),
    ({"from": "0001-01-01", "to": "0001-01-01"}, "from"),
], ids=["to in year 1", "to in year 9999", "from in year 9999", "from before 2000", "both in year 1"])
def test_a_day_out_of_range_is_refused_naming_the_field_never_a_server_error(world, query, field):
    client = signed_in(world["staff"])
    tomorrow = (today() + timedelta(days=1)).isoformat()
    message = f"'{field}' must be a day from 2000-01-01 to {tomorrow}."
    page = client.get("/dashboard/", query)
    assert page.status_code == 400
    assert message in html.unescape(page.content.decode())
    assert (page.context["start"], page.context["end"]) == (today() - timedelta(days=6), today())
    for path in ("/dashboard/ratings.csv", "/dashboard/queue.csv", "/dashboard/transparency-report.csv"):
        answer = client.get(path, query)
        assert answer.status_code == 400, path
        assert answer.content.decode() == message + "\n", path


def test_the_transparency_report_refuses_a_range_in_year_9999(world):
    answer = signed_in(world["staff"]).get("/dashboard/transparency-report.csv",
                                           {"from": "9999-12-31", "to": "9999-12-31"})
    assert answer.status_code == 400 and answer["Content-Type"] == "text/plain; charset=utf-8"
    assert "'from' must be a day from 2000-01-01 to " in answer.content.decode()


def test_tomorrow_is_the_last_day_that_can_be_asked_for(world):
    client = signed_in(world["staff"])
    tomorrow = today() + timedelta(days=1)
    page = client.get("/dashboard/", {"to": tomorrow.isoformat()})
    assert page.status_code == 200 and page.context["end"] == tomorrow
    assert page.context["figures"].missing_days == [tomorrow]
    assert client.get("/dashboard/", {"to": (tomorrow + timedelta(days=1)).isoformat()}).status_code == 400


def test_a_bad_to_points_the_error_summary_at_the_to_field_and_marks_it_invalid(world):
    page = signed_in(world["staff"]).get("/dashboard/", {"from": "2026-01-01", "to": "0001-01-03"})
    assert page.status_code == 400
    text = page.content.decode()
    assert '<a href="#range-to">' in text and '<a href="#range-from">' not in text
    to_input = re.search(r'<input type="date" id="range-to"[^>]*>', text).group(0)
    from_input = re.search(r'<input type="date" id="range-from"[^>]*>', text).group(0)
    assert 'aria-invalid="true"' in to_input and 'aria-invalid="true"' not in from_input
    assert 'aria-describedby="error-summary-title"' in to_input
    # The form keeps what was typed, to be corrected; the figures below are the last week's.
    assert 'value="0001-01-03"' in to_input and 'value="2026-01-01"' in from_input


def test_a_bad_from_points_the_error_summary_at_the_from_field(world):
    page = signed_in(world["staff"]).get("/dashboard/", {"from": "9999-12-31"})
    text = page.content.decode()
    assert '<a href="#range-from">' in text and '<a href="#range-to">' not in text
    from_input = re.search(r'<input type="date" id="range-from"[^>]*>', text).group(0)
    to_input = re.search(r'<input type="date" id="range-to"[^>]*>', text).group(0)
    assert 'aria-invalid="true"' in from_input and 'aria-invalid="true"' not in to_input
    assert 'value="9999-12-31"' in from_input and 'value=""' in to_input  # nothing typed in "to"


def test_a_refused_range_keeps_both_typed_days_in_the_form(world):
    page = signed_in(world["staff"]).get("/dashboard/", {"from": "2026-11-01", "to": "2020-01-01"})
    assert page.status_code == 400
    text = page.content.decode()
    assert "'from' must be on or before 'to'" in html.unescape(text)
    assert (page.context["form_from"], page.context["form_to"]) == ("2026-11-01", "2020-01-01")
    assert re.search(r'id="range-from" name="from" value="2026-11-01"', text)
    assert re.search(r'id="range-to" name="to" value="2020-01-01"', text)
    # A good range shows the days it covers.
    good = signed_in(world["staff"]).get("/dashboard/", {"from": "2026-11-01", "to": "2026-11-03"})
    assert (good.context["form_from"], good.context["form_to"]) == ("2026-11-01", "2026-11-03")


def test_days_never_computed_are_shown_as_missing_not_as_zero(world):
    start = today() - timedelta(days=20)
    page = signed_in(world["staff"]).get("/dashboard/", {"from": start.isoformat(), "to": today().isoformat()})
    html_text = page.content.decode()
    assert "14 of these days have not been computed yet" in html_text
    rows = csv_rows(signed_in(world["staff"]).get("/dashboard/queue.csv", {"from": start.isoformat(),
                                                                           "to": today().isoformat()}))
    assert rows[0]["waiting_posts"] == ""  # unknown, not zero
    assert rows[-1]["waiting_posts"] == "1"


def test_each_chart_downloads_as_csv_with_the_figures_of_its_table(world):
    client = signed_in(world["staff"])
    query = {"from": (today() - timedelta(days=6)).isoformat(), "to": today().isoformat()}
    slugs = [chart.slug for chart in client.get("/dashboard/", query).context["charts"]]
    assert slugs == ["queue", "time-to-rating", "ratings", "decisions", "appeals", "notices", "organisations",
                     "reviewers"]
    for slug in slugs:
        response = client.get(f"/dashboard/{slug}.csv", query)
        assert response.status_code == 200, slug
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert (
            f'filename="factdesk-{slug}-program-{query["from"]}-to-{query["to"]}.csv"'
            in response["Content-Disposition"]
        )
    ratings = {row["date"]: row for row in csv_rows(client.get("/dashboard/ratings.csv", query))}
    yesterday = (today() - timedelta(days=1)).isoformat()
    assert (
        ratings[yesterday]["false"], ratings[yesterday]["partly_false"], ratings[yesterday]["total"]
    ) == ("1", "1", "2")
    waits = {row["date"]: row for row in csv_rows(client.get("/dashboard/time-to-rating.csv", query))}
    assert waits[yesterday]["posts_rated"] == "2"
    assert waits[yesterday]["median_seconds"] == str(4 * 3600)  # 2 h and 6 h
    organisations = csv_rows(client.get("/dashboard/organisations.csv", query))
    assert [(r["name"], r["ratings"]) for r in organisations] == [("Verifact", "3"), ("Faktenwerk", "1")]
    decisions = {row["date"]: row for row in csv_rows(client.get("/dashboard/decisions.csv", query))}
    assert (decisions[yesterday]["demotion"], decisions[yesterday]["label"]) == ("2", "2")


def test_the_ratings_csv_has_a_column_for_every_verdict_even_when_one_verdict_was_used(world):
    client = signed_in(world["staff"])
    day = (today() - timedelta(days=3)).isoformat()  # bob's True only
    response = client.get("/dashboard/ratings.csv", {"from": day, "to": day})
    header = next(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert header == ["date", *(value for value, _ in Verdict.choices), "total"]
    assert csv_rows(response) == [{"date": day, **{v: "0" for v, _ in Verdict.choices}, "true": "1", "total": "1"}]
    # The same columns for any range; only the verdicts used are drawn as panels.
    other = client.get("/dashboard/ratings.csv", {"from": (today() - timedelta(days=6)).isoformat()})
    assert next(csv.reader(io.StringIO(other.content.decode("utf-8-sig")))) == header
    page = client.get("/dashboard/", {"from": day, "to": day})
    ratings = next(chart for chart in page.context["charts"] if chart.slug == "ratings")
    assert [panel.title for panel in ratings.panels] == ["True", "All ratings"]
    assert ratings.header == ["Day", *(label for _, label in Verdict.choices), "All ratings"]


def test_a_factcheckers_csv_is_their_organisations_and_the_report_is_staff_only(world):
    client = signed_in(world["claire"])
    reviewers = csv_rows(client.get("/dashboard/reviewers.csv"))
    assert [r["name"] for r in reviewers] == ["Claire Dupont"]
    assert "organisation" not in reviewers[0]
    assert client.get("/dashboard/organisations.csv").status_code == 404  # not one of an organisation's charts
    assert client.get("/dashboard/transparency-report.csv").status_code == 403
    report = signed_in(world["staff"]).get("/dashboard/transparency-report.csv")
    assert report.status_code == 200 and report.content.decode().startswith("\ufeffsection,item,label,count")


def test_a_csv_with_a_bad_range_or_an_unknown_chart_is_refused_clearly(world):
    client = signed_in(world["staff"])
    bad = client.get("/dashboard/ratings.csv", {"from": "nope"})
    assert bad.status_code == 400 and "'from' must be a date" in bad.content.decode()
    assert client.get("/dashboard/nothing.csv").status_code == 404


def test_the_dashboard_runs_a_fixed_number_of_queries_whatever_the_range_and_volume(
        world, django_assert_max_num_queries):
    client = signed_in(world["staff"])
    client.get("/dashboard/")  # warm the session
    with django_assert_max_num_queries(12) as small:
        client.get("/dashboard/")
    # More reviewers, more ratings and a 90-day range: the same queries.
    for n in range(6):
        rater = FactCheckerFactory(organisation=Organisation.objects.get(name="Verifact"))
        scenarios.rated_after_waiting(rater=rater, rated_at=at(n % 5 + 1, 12))
    roll_up_days(start=today() - timedelta(days=89), end=today())
    start = (today() - timedelta(days=89)).isoformat()
    with django_assert_max_num_queries(len(small.captured_queries)):
        page = client.get("/dashboard/", {"from": start, "to": today().isoformat()})
    assert len(page.context["figures"].reviewers) == 9


def test_a_name_that_looks_like_a_formula_is_written_as_text_in_the_csv(world):
    world["bob"].first_name, world["bob"].last_name = "=HYPERLINK(\"http://evil.example\")", ""
    world["bob"].save(update_fields=["first_name", "last_name"])
    reviewers = csv_rows(signed_in(world["staff"]).get("/dashboard/reviewers.csv"))
    assert "'=HYPERLINK(\"http://evil.example\")" in [r["name"] for r in reviewers]


def test_todays_figures_say_which_utc_day_they_are_and_when_they_run_to_in_the_readers_zone(world):
    """A reader in UTC+14 read "Today's figures run to 07:40 +14" beside the figures of the UTC day before theirs."""
    alice = world["alice"]
    alice.time_zone = "Pacific/Kiritimati"
    alice.save(update_fields=["time_zone"])
    html_text = signed_in(alice).get("/dashboard/").content.decode()
    utc_day = today()
    assert f"Today's figures (the UTC day of {utc_day.day} {utc_day:%b}) run to " in html_text
    assert re.search(r"run to \d{1,2} \w{3}, \d{2}:\d{2} \+14;", html_text)
