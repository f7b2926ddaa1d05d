"""Job entry points of the review side: thin, idempotent, safe to run twice."""

from factcheck.claims import expire_claims as _expire_claims
from factcheck.queue import refresh_priorities as _refresh_priorities


def expire_claims() -> int:
    return _expire_claims()


def refresh_priorities() -> int:
    return _refresh_priorities()
