"""Each pytest-xdist worker gets a Redis database of its own, as pytest-django gives it a test database of its own.

Loaded with `-p tests.parallel` (pyproject.toml's addopts), so that it runs before pytest-django reads the
settings: REDIS_URL is read once, when config.settings is imported. Every test empties its Redis database
(tests/conftest.py's `_clean_redis`) and a real worker drains every queue in it, so two workers sharing one would
take each other's jobs. Worker N (`gw0`, `gw1`, ...) takes the database N below the one REDIS_URL names (make
test: 15, 14, ...); a run without xdist uses REDIS_URL as it is. Subprocesses a test starts (gunicorn, RQ
workers, manage.py) inherit the environment, so they use the same database.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit


def worker_redis_url(url: str, worker: str) -> str:
    """`url` with its database number lowered by the xdist worker's number ("gw3": 3)."""
    number = int(worker.removeprefix("gw"))
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    if number > base:
        raise RuntimeError(f"xdist worker {worker} would need Redis database {base - number}: REDIS_URL names db "
                           f"{base}; run fewer workers (make test TEST_WORKERS=...) or name a higher database")
    return urlunsplit(parts._replace(path=f"/{base - number}"))


_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = worker_redis_url(os.environ["REDIS_URL"], _worker)
