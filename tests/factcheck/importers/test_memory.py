"""The command in a subprocess: memory stays flat (50,000 rows take no more than 5,000), and exit 1 on a bad file.

The command runs in a subprocess on the test database (rows committed: transaction=True) and
its peak RSS is its own VmHWM (bench.importers.peak_rss_of: wait4's ru_maxrss would also count the
memory of this pytest process that the child borrowed before exec).
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import pytest
from django.conf import settings

from bench.importers import peak_rss_of
from factcheck.importing.csv_reader import COLUMNS
from factcheck.models import Post
from tests.factcheck.importers.helpers import FILES
from tests.test_gunicorn_limits import test_database_url

FLAT_MB = 30


# The columns this file writes, in its own order (the header names them, so any order is read).
HEADER = ("idempotency_key", "source", "reason", "flagged_at", "external_id", "url", "text", "language", "country",
          "media_type", "posted_at", "views", "shares", "page_external_id", "page_name", "page_is_politician")


def write_csv(path: Path, *, rows: int, prefix: str) -> None:
    assert set(HEADER) <= set(COLUMNS)
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(HEADER)
        for n in range(rows):
            writer.writerow([
                f"{prefix}-{n}", "user_report", "reported", "", f"{prefix}-post-{n}", f"https://social.example/{n}",
                f"Claim {n}: a miracle cure for everything, doctors say.", "en", "GB", "text",
                "2026-03-01T08:00:00Z", n, n % 100, f"{prefix}-page-{n % 500}", f"Page {n % 500}", "false",
            ])


def peak_rss_mb(path: Path) -> float:
    env = os.environ | {"DATABASE_URL": test_database_url(), "REDIS_URL": settings.REDIS_URL, "LOG_LEVEL": "WARNING"}
    code, out, err, peak = peak_rss_of(
        [sys.executable, "manage.py", "import_posts", str(path), "--format", "csv", "--no-progress"],
        env=env, cwd=Path(settings.BASE_DIR),
    )
    assert code == 0, err[-2000:]
    assert out.startswith("imported "), out
    return peak / 1024 / 1024


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_peak_memory_of_an_import_does_not_grow_with_the_file(tmp_path):
    small, large = tmp_path / "small.csv", tmp_path / "large.csv"
    # 45,000 rows more: held in memory, even as bare tuples of their 16 columns, they would pass FLAT_MB.
    write_csv(small, rows=5_000, prefix="small")
    write_csv(large, rows=50_000, prefix="large")
    small_mb, large_mb = peak_rss_mb(small), peak_rss_mb(large)
    assert Post.objects.count() == 55_000
    assert large_mb - small_mb < FLAT_MB, f"5,000 rows: {small_mb:.0f} MB, 50,000 rows: {large_mb:.0f} MB"
    assert large_mb < 200


@pytest.mark.django_db
def test_an_unreadable_file_exits_1_with_one_line_on_stderr_and_no_traceback():
    env = os.environ | {"DATABASE_URL": test_database_url(), "REDIS_URL": settings.REDIS_URL, "LOG_LEVEL": "WARNING"}
    code, out, err, _ = peak_rss_of(
        [sys.executable, "manage.py", "import_posts", str(FILES / "truncated.json"), "--format", "claimreview"],
        env=env, cwd=Path(settings.BASE_DIR),
    )
    assert code == 1 and out == ""
    last = err.strip().splitlines()[-1]  # before it, only the progress bar's carriage returns
    assert last.endswith(
        "truncated.json: not valid JSON (parse error: premature EOF): is the file cut short or not UTF-8?"
    )
    assert last.startswith("CommandError: ") and "Traceback" not in err
    assert not Post.objects.exists()
