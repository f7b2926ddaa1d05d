"""`import_posts --format csv`: the documented header, rows validated as the API validates a flag."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from audit.models import AuditEvent
from factcheck.models import Flag, Post, QueueState
from tests.factcheck.importers.helpers import FILES, copied, import_fails, import_posts, row_counts

pytestmark = pytest.mark.django_db


def test_good_rows_are_imported_and_bad_ones_rejected_with_line_and_reason(tmp_path):
    out = import_posts(copied("posts.csv", tmp_path), "csv")
    assert out[0] == "imported 4, already present 1, rejected 6"
    assert out[1:] == [
        "line 6: posted_at: Input should be a valid datetime or date, month value is outside expected range of 1-12",
        "line 7: posted_at: is before 2000-01-01",
        "line 9: Text may not contain NUL (\\u0000) characters.",
        "line 10: page_name: String should have at most 300 characters",
        "line 11: has 5 field(s); the header has 16",
        "line 12: source: Input should be 'user_report', 'classifier', 'partner' or 'trusted_flagger'; "
        "views: Input should be a valid integer",
    ]
    post = Post.objects.get(external_id="csv-post-1")
    assert (post.page.name, post.language, post.views, post.queue_state) == (
        "Health Truth Daily", "en", 1200, QueueState.QUEUED
    )
    # A quoted cell keeps its newline; the record is numbered by its first line.
    assert Post.objects.get(external_id="csv-post-2").text == "A quoted text,\nover two lines."
    # HTML is text, stored as the API stores it (pages escape it).
    assert Post.objects.get(external_id="csv-post-5").text == "<script>alert(1)</script><b>Bold</b> claim"
    assert Flag.objects.get(post__external_id="csv-post-10").idempotency_key.startswith("csv:")
    assert AuditEvent.objects.filter(verb="flag.received").values_list("actor_label", flat=True).distinct().get() == (
        "system:import"
    )


def test_a_second_import_finds_everything_already_present_and_writes_nothing(tmp_path):
    path = copied("posts.csv", tmp_path)
    import_posts(path, "csv")
    before = row_counts()
    assert import_posts(path, "csv")[0] == "imported 0, already present 5, rejected 6"
    assert row_counts() == before


def test_the_shipped_example_imports():
    assert import_posts(FILES.parent.parent.parent.parent / "docs" / "examples" / "posts.csv", "csv") == [
        "imported 3, already present 0, rejected 0"
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing_columns.csv", "missing required column(s): posted_at, page_external_id, page_name; "
                                "unknown column(s): postd_at"),
        ("truncated.csv", "line 3: the CSV is broken (unexpected end of data); is the file cut short?"),
        ("latin1.csv", "line 2 is not UTF-8 text"),
    ],
)
def test_a_file_that_cannot_be_read_is_refused_whole_and_nothing_is_written(name, message):
    before = row_counts()
    assert message in import_fails(FILES / name, "csv")
    assert row_counts() == before


def test_a_missing_file_is_a_clear_message(tmp_path):
    assert import_fails(tmp_path / "nope.csv", "csv").endswith("no such file")
    assert import_fails(tmp_path, "csv").endswith("is a directory; give the file to import")


def test_many_rejections_go_to_a_file_beside_the_input(tmp_path):
    header = (FILES / "posts.csv").read_text().splitlines()[0]
    bad = [f"k{n},user_report,,,p{n},,text,en,GB,text,not-a-date,1,1,pg,Page,false" for n in range(30)]
    path = tmp_path / "many.csv"
    path.write_text("\n".join([header, *bad]) + "\n")
    out = import_posts(path, "csv")
    assert out[0] == "imported 0, already present 0, rejected 30"
    assert len([line for line in out if line.startswith("line ")]) == 20
    rejections = tmp_path / "many.csv.rejections.csv"
    assert out[-1] == f"all 30 rejections (line, reason): {rejections}"
    lines = rejections.read_text().splitlines()
    assert lines[0] == "line,reason" and len(lines) == 31
    assert lines[1].startswith('2,"posted_at: Input should be a valid datetime')


def test_a_number_too_long_for_python_is_a_rejection_not_a_traceback(tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text(
        "source,external_id,posted_at,page_external_id,page_name,views\n"
        f"user_report,csv-huge,2026-01-01T00:00:00Z,pg-1,Page,{'9' * 5000}\n"
        "user_report,csv-fine,2026-01-01T00:00:00Z,pg-1,Page,12\n"
    )
    assert import_posts(path, "csv") == [
        "imported 1, already present 0, rejected 1",
        "line 2: views: Input should be a valid integer",
    ]


def test_rejections_that_cannot_be_written_beside_the_input_go_to_the_temporary_directory(tmp_path):
    """A directory the importer could not write in (a read-only mount, /dev/stdin) stopped the import at its 21st
    rejection, with a traceback and none of the valid rows after it imported. Here the file's name is taken by a
    directory, which no user, root included, can open as a file."""
    header = (FILES / "posts.csv").read_text().splitlines()[0]
    bad = [f"k{n},user_report,,,p{n},,text,en,GB,text,not-a-date,1,1,pg,Page,false" for n in range(25)]
    good = "good-1,user_report,,,post-good-1,,text,en,GB,text,2026-01-01T00:00:00Z,1,1,pg,Page,false"
    path = tmp_path / "many.csv"
    path.write_text("\n".join([header, *bad, good]) + "\n")
    (tmp_path / "many.csv.rejections.csv").mkdir()
    out = import_posts(path, "csv")
    assert out[0] == "imported 1, already present 0, rejected 25"
    written = Path(out[-1].rsplit(": ", 1)[1])
    assert written.parent == Path(tempfile.gettempdir()) and written.name.startswith("factdesk-rejections-")
    assert len(written.read_text().splitlines()) == 26
    written.unlink()


@pytest.mark.parametrize(("content", "message"), [
    (b"source,external_id\r" + b"user_report,a\r", "a line ends with a carriage return alone"),
    (b"source,external_id,posted_at,page_external_id,page_name,text\n"
     + b"user_report,a,2026-01-01T00:00:00Z,pg,Page," + b"x" * 140_000 + b"\n", "a cell is longer than 131,072"),
])
def test_a_csv_the_reader_cannot_split_says_why_not_that_it_is_cut_short(tmp_path, content, message):
    path = tmp_path / "odd.csv"
    path.write_bytes(content)
    problem = import_fails(path, "csv")
    assert message in problem and "cut short" not in problem
