"""Files the commands write: a file appears whole or not at all."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def whole_file(path: Path) -> Iterator[TextIO]:
    """Write `path` beside it (`<name>.partial`) and rename it into place at the end, so that readers never
    see half a file; on any failure the partial file is removed and the error goes on to the caller."""
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as handle:
            yield handle
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
