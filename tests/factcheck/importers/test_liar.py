"""`import_posts --format liar`: the LIAR benchmark's TSV, rated by PolitiFact."""

from __future__ import annotations

import pytest

from factcheck.models import Page, Post, Rating
from tests.factcheck.importers.helpers import FILES, copied, import_posts, row_counts

pytestmark = pytest.mark.django_db


def test_rows_become_posts_rated_by_politifact_and_bad_rows_are_rejected(tmp_path):
    out = import_posts(copied("liar.tsv", tmp_path), "liar")
    assert out == [
        "imported 6, already present 1, rejected 4",
        "line 8: unknown LIAR label 'sort-of-true': the labels are pants-fire, false, barely-true, half-true, "
        "mostly-true, true",
        "line 9: has 3 column(s); a LIAR row has 14",
        "line 10: Text may not contain NUL (\\u0000) characters.",
        "line 11: no statement in the third column",
    ]
    verdicts = dict(Rating.objects.values_list("post__external_id", "verdict"))
    assert verdicts == {
        "liar:1.json": "true", "liar:2.json": "partly_false", "liar:3.json": "partly_false",
        "liar:4.json": "partly_false", "liar:5.json": "false", "liar:6.json": "false",
    }
    rating = Rating.objects.select_related("organisation", "post__page").get(post__external_id="liar:2.json")
    assert (rating.organisation.name, rating.organisation.url) == ("PolitiFact", "https://www.politifact.com")
    assert rating.sources == ["https://www.politifact.com/"] and rating.published_at is None
    assert rating.rationale == "Rated mostly-true by PolitiFact (LIAR benchmark, statement 2.json; said in: a speech)."
    assert (rating.post.page.external_id, rating.post.page.name) == ("liar-speaker:john-roe", "John Roe")
    assert not Page.objects.filter(is_politician=True).exists()
    assert Post.objects.get(external_id="liar:3.json").text == '"Taxes doubled" last year.'
    assert Post.objects.get(external_id="liar:5.json").text == "The moon is made of cheese & crackers."


def test_a_second_import_finds_everything_already_present(tmp_path):
    path = copied("liar.tsv", tmp_path)
    import_posts(path, "liar")
    before = row_counts()
    assert import_posts(path, "liar")[0] == "imported 0, already present 7, rejected 4"
    assert row_counts() == before


def test_a_truncated_last_row_is_a_rejection_and_the_rows_before_it_are_imported():
    assert import_posts(FILES / "liar_truncated.tsv", "liar") == [
        "imported 2, already present 0, rejected 1",
        "line 3: has 3 column(s); a LIAR row has 14",
    ]


def row(liar_id: str, statement: str) -> str:
    return "\t".join([liar_id, "false", statement, "health", "jane-doe", "", "", "", "0", "0", "0", "0", "0", "a post"])


def test_a_huge_field_or_a_stray_carriage_return_is_one_rows_problem_not_a_traceback(tmp_path):
    path = tmp_path / "hostile.tsv"
    path.write_text(
        row("1.json", "x" * 200_000) + "\n" + row("2.json", "Half a line\rand the rest.") + "\n"
        + row("3.json", "A plain statement.") + "\n"
    )
    out = import_posts(path, "liar")
    assert out == [
        "imported 2, already present 0, rejected 1",
        "line 1: post.text: String should have at most 63206 characters",
    ]
    assert Post.objects.get(external_id="liar:2.json").text == "Half a line and the rest."
    assert Post.objects.filter(external_id="liar:3.json").exists()
