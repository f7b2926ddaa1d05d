"""The embedded default: no DATABASE_URL, no REDIS_URL. A SQLite file and in-process jobs.

The only tests on SQLite, with tests/test_bin_run.py (which starts bin/run on it). They run `manage.py` in a
subprocess with the two variables removed, so the settings module itself chooses SQLite and in-process jobs, as on a
newcomer's laptop.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LOOP_ONCE = """
import json
from datetime import timedelta
from django.utils import timezone
from factcheck.members import create_user
from factcheck.claims import claim_next
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post
from factcheck.ratings import record_rating
from moderation.distribution import current_distribution

now = timezone.now()
page = PageInput(external_id="page-1", name="Daily Miracle")
post = PostInput(external_id="post-1", page=page, posted_at=now - timedelta(hours=2), text="Lemon water cures flu.",
                 language="en", country="GB", views=5000, shares=300)
ingest_flags(flags=[FlagInput(idempotency_key="k1", source="user_report", post=post, flagged_at=now)])
reviewer = create_user(username="rita", role="factchecker", password=None, organisation_name="Verifact")
claim = claim_next(reviewer=reviewer)
record_rating(claim_if_unclaimed=True, reviewer=reviewer, post_id=claim.post_id, verdict="false",
              rationale="No such study exists.", sources=["https://example.org/evidence"])
# record_rating committed (autocommit); the decision job ran in-process right after.
d = current_distribution(Post.objects.get(external_id="post-1"))
print(json.dumps({"multiplier": str(d.multiplier), "labels": d.labels, "removed": d.removed}))
"""


@pytest.fixture
def embedded_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["FACTDESK_VAR_DIR"] = str(tmp_path)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def manage(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def test_embedded_default_runs_the_loop_from_flag_to_distribution_on_sqlite_with_in_process_jobs(
    embedded_env, tmp_path
):
    manage(embedded_env, "migrate", "--noinput", "-v", "0")
    assert (tmp_path / "factdesk.sqlite3").is_file()

    result = manage(embedded_env, "shell", "-c", LOOP_ONCE)

    distribution = json.loads(result.stdout.strip().splitlines()[-1])
    assert distribution == {
        "multiplier": "0.2000",
        "labels": ["False information. Checked by independent fact-checkers."],
        "removed": False,
    }


QUEUE_PAGE = """
import json, re
from datetime import timedelta
from django.test import Client
from django.utils import timezone
from factcheck.members import create_user
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post

now = timezone.now()
page = PageInput(external_id="page-1", name="Daily Miracle")
for i, hours in enumerate((50, 3)):
    post = PostInput(external_id=f"post-{i}", page=page, posted_at=now - timedelta(hours=hours + 1),
                     text=f"Lemon water cures flu, part {i}.", language="en", country="GB", views=100, shares=0)
    ingest_flags(flags=[FlagInput(idempotency_key=f"k{i}", source="user_report", post=post,
                                  flagged_at=now - timedelta(hours=hours))])
# Written by the ORM, as SQLite keeps them: naive text, which the page must read back as aware times.
for i, hours in enumerate((50, 3)):
    Post.objects.filter(external_id=f"post-{i}").update(first_flagged_at=now - timedelta(hours=hours))
root = Post.objects.get(external_id="post-0")
Post.objects.create(external_id="copy-0", page=root.page, posted_at=root.posted_at, text=root.text,
                    duplicate_of=root, queue_state="grouped", views=40, shares=2)
reviewer = create_user(username="rita", role="factchecker", password=None, organisation_name="Verifact")
client = Client()
client.force_login(reviewer)
html = client.get("/queue/", {"sort": "waiting"}).content.decode()
print(json.dumps({
    "total": re.search(r'id="queue-total"><strong>([^<]*)', html).group(1),
    "waiting": re.findall(r'class="waiting">waiting ([^<]*)', html),
    "groups": re.findall(r'class="group">([^<]*)', html),
}))
"""


def test_the_queue_page_renders_its_rows_on_sqlite(embedded_env):
    # The page's statement is compiled once and run through the ORM's converters: SQLite's text
    # timestamps come back as aware datetimes (the time waiting), its counts as numbers.
    manage(embedded_env, "migrate", "--noinput", "-v", "0")
    result = manage(embedded_env, "shell", "-c", QUEUE_PAGE)
    page = json.loads(result.stdout.strip().splitlines()[-1])
    assert page == {"total": "1–2 of 2", "waiting": ["2 d 2 h", "3 h"],
                    "groups": ["1 copy · combined reach 142"]}


COPIES_MATCHED = """
import json
from datetime import timedelta
from django.utils import timezone
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Match

now = timezone.now()
text = "Drinking lemon water every morning cures the flu within two days, doctors confirm."
for i in range(2):
    post = PostInput(external_id=f"post-{i}", page=PageInput(external_id=f"page-{i}", name=f"Page {i}"),
                     posted_at=now - timedelta(hours=2), text=text, language="fr", country="FR", views=10, shares=0)
    ingest_flags(flags=[FlagInput(idempotency_key=f"k{i}", source="user_report", post=post, flagged_at=now)])
print(json.dumps(list(Match.objects.values_list("post__external_id", "source__external_id", "method"))))
"""


def test_copies_are_matched_on_sqlite(embedded_env):
    # A pair is written with only its own columns (core.bulk); the copy's language and country that PostgreSQL's
    # triggers fill (migration 0034) take their default here, where no trigger runs and nothing reads them.
    manage(embedded_env, "migrate", "--noinput", "-v", "0")
    result = manage(embedded_env, "shell", "-c", COPIES_MATCHED)
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [["post-1", "post-0", "text"]]


def test_embedded_run_periodic_loop_stops_cleanly_on_sigterm(embedded_env):
    manage(embedded_env, "migrate", "--noinput", "-v", "0")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_periodic"], cwd=ROOT, env=embedded_env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        lines = []
        deadline = time.monotonic() + 60
        # Wait until the decisions' reconciler has run (all jobs are due at start), then ask it to stop.
        decisions = "moderation.jobs.reconcile_decisions ->"
        while not any(decisions in line for line in lines) and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    output = "".join(lines) + rest

    assert process.returncode == 0, output
    assert "moderation.jobs.reconcile_decisions -> 0" in output
    assert "periodic jobs stopped" in output


REPORTS_PAGE = """
import json, re
from datetime import timedelta
from django.test import Client
from django.utils import timezone
from factcheck.members import create_user
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import Post

now = timezone.now()
page = PageInput(external_id="page-1", name="Daily Miracle")
for i, (category, hours) in enumerate((("hate", 30), ("violence", 2))):
    post = PostInput(external_id=f"post-{i}", page=page, posted_at=now - timedelta(hours=40), text=f"Post {i}.")
    ingest_flags(flags=[FlagInput(idempotency_key=f"k{i}", source="user_report", category=category, post=post,
                                  flagged_at=now - timedelta(hours=hours))], now=now - timedelta(hours=hours))
# A brigaded post: its row and its page count every report and list a few (a window function, ROW_NUMBER).
brigade = PostInput(external_id="post-2", page=page, posted_at=now - timedelta(hours=40), text="Post 2.")
ingest_flags(flags=[FlagInput(idempotency_key=f"b{i}", source="trusted_flagger" if i < 2 else "user_report",
                              category="harassment", post=brigade, flagged_at=now) for i in range(62)], now=now)
staff = create_user(username="sam", role="trust_safety", password=None)
client = Client()
client.force_login(staff)
html = client.get("/staff/reports/").content.decode()
brigaded = Post.objects.get(external_id="post-2")
detail = client.get(f"/staff/reports/{brigaded.pk}/").content.decode()
row = re.search(r'data-post="post-2">(.*?)</tr>', html, re.S).group(1)
def listed(html):
    return [re.findall(r"<li>", ul) for ul in re.findall(r'<ul class="report-list">(.*?)</ul>', html, re.S)]
post = Post.objects.get(external_id="post-1")
client.post(f"/staff/reports/{post.pk}/claim/")
removed = client.post(f"/staff/reports/{post.pk}/", {"decision": "removed", "removed-ground": "violence",
                                                     "removed-reason": "A threat."}, follow=True)
# Whom the removal's notice reached (moderation.owner_notices), then the admin's banner on the removed post.
admin_page = client.get(f"/admin/factcheck/post/{post.pk}/change/")
print(json.dumps({
    "rows": re.findall(r'data-post="([^"]+)"', html),
    "overdue": re.findall(r'class="badge overdue">([^<]*)', html),
    "after": re.findall(r'data-post="([^"]+)"', client.get("/staff/reports/").content.decode()),
    "queue_state": Post.objects.get(pk=post.pk).queue_state,
    "told": [removed.status_code, "No owner to tell" in removed.content.decode(), admin_page.status_code,
             "No owner to tell" in admin_page.content.decode()],
    "brigaded_row": [len(ul) for ul in listed(row)] + re.findall(r"<strong>([^<]*open[^<]*)</strong>", row)
                    + re.findall(r">(and [^<]*)<", row),
    "brigaded_page": [len(ul) for ul in listed(detail)] + re.findall(r'class="report-group">([^<]*)', detail)
                     + re.findall(r">(All [^<]*)</a>", detail),
}))
"""


def test_the_reports_queue_orders_counts_and_decides_on_sqlite(embedded_env):
    manage(embedded_env, "migrate", "--noinput", "-v", "0")
    result = manage(embedded_env, "shell", "-c", REPORTS_PAGE)
    page = json.loads(result.stdout.strip().splitlines()[-1])
    assert page == {"rows": ["post-2", "post-1", "post-0"], "overdue": ["1 overdue", "Overdue"],
                    "after": ["post-2", "post-0"], "queue_state": "removed", "told": [200, True, 200, True],
                    "brigaded_row": [7, "62 open reports", "and 55 more"],
                    "brigaded_page": [2, 50, "Trusted flaggers' reports", "Other reports: the newest 50 of 60",
                                      "All 62 open reports in the admin's list of flags"]}
