"""Fixtures for the API tests."""

from __future__ import annotations

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fresh_throttle_counts():
    # Throttle history lives in the cache; a test must not inherit another test's requests.
    cache.clear()
    yield
    cache.clear()
