"""Running `manage.py import_posts` in the tests, and counting what it wrote."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from audit.models import AuditEvent
from factcheck.models import Flag, Organisation, Page, Post, Rating

FILES = Path(__file__).resolve().parent / "files"


def import_posts(path: Path, fmt: str, *args: str) -> list[str]:
    """Run the command; its stdout, line by line."""
    out = io.StringIO()
    call_command("import_posts", str(path), "--format", fmt, "--no-progress", *args, stdout=out)
    return out.getvalue().splitlines()


def import_fails(path: Path, fmt: str) -> str:
    """Run the command on a file it must refuse; the message."""
    with pytest.raises(CommandError) as refused:
        import_posts(path, fmt)
    return str(refused.value)


def copied(name: str, tmp_path: Path) -> Path:
    """A shipped file copied to tmp_path, so a rejections file lands there and not in the repository."""
    return Path(shutil.copy(FILES / name, tmp_path / name))


def row_counts() -> dict[str, int]:
    return {
        "pages": Page.objects.count(), "posts": Post.objects.count(), "flags": Flag.objects.count(),
        "ratings": Rating.objects.count(), "organisations": Organisation.objects.count(),
        "audit": AuditEvent.objects.count(),
    }
