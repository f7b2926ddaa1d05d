"""Issue 29: "Rated posts" and the appeal desks as CSV: the page's rows with its filters, streamed, cells
escaped against spreadsheet formulas, only for those who may see the page (another organisation's rows never)."""

from __future__ import annotations

import csv
import io

import pytest

from core.csv_download import safe_cell
from factcheck.members import organisation_of
from moderation.appeals import decide_appeal, file_appeal
from moderation.staff_actions import remove_post
from tests import scenarios
from tests.factories import FactCheckerFactory, PageFactory, PostFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

RATED_HEADER = ["rating id", "post", "page", "verdict", "rated at (UTC)", "rated by", "under appeal", "changed",
                "article", "public page", "post text"]
APPEALS_HEADER = ["appeal id", "kind", "status", "overdue", "filed at (UTC)", "filed by", "post", "page", "against",
                  "organisation", "decided at (UTC)", "decided by", "new verdict", "statement",
                  "reason given to the owner"]


def table(response) -> list[dict[str, str]]:
    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert response.streaming and response["Content-Disposition"].startswith("attachment; filename=")
    text = b"".join(response.streaming_content).decode("utf-8").removeprefix("\ufeff")
    header, *rows = list(csv.reader(io.StringIO(text)))
    return [dict(zip(header, row, strict=True)) for row in [header, *rows]]


@pytest.fixture
def world(factchecker):
    owner = UserFactory(username="olga")
    colleague = FactCheckerFactory(organisation=organisation_of(factchecker))
    disputed = scenarios.rated_post(rater=factchecker, owner=owner, external_id="disputed",
                                    text="=HYPERLINK(\"https://evil.example\",\"click\")")
    decided = scenarios.rated_post(rater=factchecker, owner=owner, external_id="decided", text="+1 for the cure")
    file_appeal(owner=owner, post_id=disputed.pk, kind="dispute", statement="@SUM(A1:A9) is my evidence")
    upheld = file_appeal(owner=owner, post_id=decided.pk, kind="dispute", statement="-2 is the right figure")
    decide_appeal(appeal_id=upheld.pk, reviewer=colleague, outcome="upheld", reason="=It stands.")
    stranger = FactCheckerFactory()
    other = scenarios.rated_post(rater=stranger, owner=owner, external_id="theirs")
    file_appeal(owner=owner, post_id=other.pk, kind="dispute", statement="Another organisation's appeal.")
    return {"owner": owner, "colleague": colleague, "stranger": stranger}


@pytest.mark.parametrize(("value", "cell"), [
    ("=1+2", "'=1+2"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("a=b", "a=b"), ("", ""), (None, ""), (True, "yes"), (12, "12"),
])
def test_cells_that_a_spreadsheet_would_evaluate_are_escaped(value, cell):
    assert safe_cell(value) == cell


def test_rated_posts_as_csv_have_the_pages_rows_and_filters_with_cells_escaped(login, factchecker, world):
    client = login(factchecker)
    header, *rows = table(client.get("/queue/rated/", {"who": "organisation", "format": "csv"}))
    assert list(header) == RATED_HEADER
    by_post = {row["post"]: row for row in rows}
    assert set(by_post) == {"disputed", "decided"}
    assert by_post["disputed"]["under appeal"] == "yes" and by_post["decided"]["under appeal"] == "no"
    assert by_post["disputed"]["post text"] == "'=HYPERLINK(\"https://evil.example\",\"click\")"
    assert by_post["decided"]["post text"] == "'+1 for the cure"
    disputed = by_post["disputed"]
    assert disputed["verdict"] == "False" and disputed["public page"].endswith(f"/claims/{disputed['rating id']}/")
    _, *under_appeal = table(client.get("/queue/rated/", {"who": "organisation", "appeal": "open", "format": "csv"}))
    assert [row["post"] for row in under_appeal] == ["disputed"]
    _, *searched = table(client.get("/queue/rated/", {"who": "organisation", "q": "cure", "format": "csv"}))
    assert [row["post"] for row in searched] == ["decided"]


def test_the_rated_page_links_its_csv_with_its_filters(login, factchecker, world):
    page = login(factchecker).get("/queue/rated/", {"who": "organisation", "appeal": "open"}).content.decode()
    assert 'href="?who=organisation&amp;appeal=open&amp;format=csv"' in page and "Download CSV" in page


def test_the_fact_checkers_appeal_desk_as_csv_holds_its_organisations_appeals_only(login, world):
    client = login(world["colleague"])
    header, *rows = table(client.get("/queue/appeals/", {"view": "all", "format": "csv"}))
    assert list(header) == APPEALS_HEADER
    by_post = {row["post"]: row for row in rows}
    assert set(by_post) == {"disputed", "decided"}  # never "theirs", another organisation's
    assert by_post["disputed"]["statement"] == "'@SUM(A1:A9) is my evidence"
    assert by_post["decided"]["statement"] == "'-2 is the right figure"
    assert by_post["decided"]["reason given to the owner"] == "'=It stands."
    assert (by_post["decided"]["status"], by_post["decided"]["decided by"]) == ("Upheld", world["colleague"].username)
    _, *open_only = table(client.get("/queue/appeals/", {"view": "open", "format": "csv"}))
    assert [row["post"] for row in open_only] == ["disputed"]
    _, *searched = table(client.get("/queue/appeals/", {"view": "all", "q": "decided", "format": "csv"}))
    assert [row["post"] for row in searched] == ["decided"]
    page = client.get("/queue/appeals/", {"view": "decided"}).content.decode()
    assert 'href="?view=decided&amp;format=csv"' in page and "Download CSV" in page


def test_the_staff_desk_as_csv_holds_the_removal_appeals(login, world):
    post = PostFactory(page=PageFactory(), external_id="removed")
    post.page.owners.add(world["owner"])
    remove_post(staff=StaffFactory(), post_id=post.pk, ground="hate", reason="Slurs.")
    file_appeal(owner=world["owner"], post_id=post.pk, kind="removal", statement="A quotation.")
    _, *rows = table(login(StaffFactory()).get("/staff/appeals/", {"format": "csv"}))
    assert [(row["post"], row["kind"], row["against"]) for row in rows] == [
        ("removed", "Removal appeal", "Removed (Hate)")]


def test_only_people_who_may_see_a_page_download_it(client, login, world):
    assert client.get("/queue/rated/", {"format": "csv"}).status_code == 302  # to the login page
    assert client.get("/queue/appeals/", {"format": "csv"}).status_code == 302
    owner = login(world["owner"])
    assert owner.get("/queue/rated/", {"format": "csv"}).status_code == 403
    assert owner.get("/queue/appeals/", {"format": "csv"}).status_code == 403
    assert owner.get("/staff/appeals/", {"format": "csv"}).status_code == 403
    assert login(world["colleague"]).get("/staff/appeals/", {"format": "csv"}).status_code == 403
    # Another organisation's fact-checker downloads their own rows, never these.
    _, *theirs = table(login(world["stranger"]).get("/queue/appeals/", {"view": "all", "format": "csv"}))
    assert [row["post"] for row in theirs] == ["theirs"]
    _, *rated = table(login(world["stranger"]).get("/queue/rated/", {"who": "organisation", "format": "csv"}))
    assert [row["post"] for row in rated] == ["theirs"]
