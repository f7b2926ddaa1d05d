"""tests/parallel.py: each pytest-xdist worker's Redis database, so that two workers never empty or drain each
other's queues."""

from __future__ import annotations

import pytest

from tests.parallel import worker_redis_url


def test_each_worker_takes_the_database_its_number_below_the_one_named():
    assert worker_redis_url("redis://127.0.0.1:6379/15", "gw0") == "redis://127.0.0.1:6379/15"
    assert worker_redis_url("redis://127.0.0.1:6379/15", "gw2") == "redis://127.0.0.1:6379/13"
    assert worker_redis_url("redis://:secret@redis.internal:6380/9", "gw1") == "redis://:secret@redis.internal:6380/8"


def test_a_worker_with_no_database_left_is_refused_with_what_to_do():
    with pytest.raises(RuntimeError, match="run fewer workers"):
        worker_redis_url("redis://127.0.0.1:6379/1", "gw2")

