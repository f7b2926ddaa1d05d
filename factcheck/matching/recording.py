"""Writing matches (factcheck.matching.matcher decides which): new pairs as plain rows, pending semantic suggestions
rewritten as another judgement of the same pair, and the `match.recorded` audit event of each."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.utils import timezone

from audit.models import AuditVerb
from audit.services import event_row, insert_events
from core.bulk import insert_rows_returning_ids, update_rows
from factcheck.matching.similarity import Judgement
from factcheck.models import Match, MatchMethod


def replace_suggestions(replacing: dict[int, tuple], *, system: str) -> None:
    """Rewrite pending semantic suggestions as the lexical or media judgement of the same pair (rows in
    MATCH_COLUMNS order), each audited as recorded anew, with the suggestion it replaces."""
    update_rows(Match, MATCH_COLUMNS, [(pk, *row) for pk, row in replacing.items()])
    _audit_recorded(replacing.keys(), replacing.values(), system=system, replaces="semantic")


def record_matches(matches: list[tuple], *, system: str) -> None:
    """Write new matches (rows in MATCH_COLUMNS order) and their audit events."""
    if not matches:
        return
    # Plain rows through core.bulk (binary COPY, ids reserved up front), as ingest writes its own: the ORM's
    # bulk_create of a copy-heavy batch's ~400 matches and their audit events took 13% of a web worker's CPU.
    _audit_recorded(insert_rows_returning_ids(Match, MATCH_COLUMNS, matches), matches, system=system)


def _audit_recorded(ids: Iterable[int], matches: Iterable[tuple], *, system: str, replaces: str = "") -> None:
    """The `match.recorded` events of these matches (ids, and rows in MATCH_COLUMNS order), in one statement."""
    recorded_at, label = timezone.now(), Match._meta.label_lower
    insert_events([
        event_row(at=recorded_at, actor=None, verb=AuditVerb.MATCH_RECORDED, target_type=label, target_id=pk,
                  post_id=post_id, system=system, reason=f"{MatchMethod(method).label}, score {score:.2f}",
                  data={"source": source_id, "method": method, "score": score, "state": state, "guard": guard,
                        **({"replaces": replaces} if replaces else {})})
        for pk, (post_id, source_id, method, score, state, guard, *_) in zip(ids, matches, strict=True)
    ])


# A new Match as a plain row (core.bulk), in this order; decided_by and decided_at stay NULL.
MATCH_COLUMNS = ("post", "source", "method", "score", "state", "guard", "created_at", "reason")


def new_match(post_id: int, source_id: int, judgement: Judgement, state: str, now: datetime) -> tuple:
    return (post_id, source_id, str(judgement.method), judgement.score, str(state), judgement.guard, now, "")
