"""Every template in the project, read as text: what Django would print to the page by mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

TEMPLATE_FILES = sorted(
    path for root in [Path(settings.BASE_DIR)]
    for path in root.glob("**/templates/**/*")
    if path.is_file() and ".venv" not in path.parts and "node_modules" not in path.parts
)


def test_the_project_has_templates_to_read():
    assert len(TEMPLATE_FILES) > 50


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda path: str(path.relative_to(settings.BASE_DIR)))
def test_no_comment_spans_two_lines(path):
    """Django's {# #} comment ends on its own line: one that goes on to the next is shown on the page as
    text (a staff member read the reports desk's developer note). Longer comments use {% comment %}."""
    unclosed = [number for number, line in enumerate(path.read_text().splitlines(), 1)
                if "{#" in line and "#}" not in line.split("{#", 1)[1]]
    assert not unclosed, f"{path}: a {{# comment without its #}} on lines {unclosed}"
