"""Counts that stop at a cap: "1,000+" on a page instead of a COUNT(*) of a whole table.

Each count reads at most `cap + 1` rows of its queryset (a LIMITed subquery), so it costs the same whatever
the table holds; several are read in one statement, as scalar subqueries. The reports desk
(moderation.report_queue) and the navigation's counts (moderation.workday) read theirs this way.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet


def capped_count_sql(queryset: QuerySet, *, cap: int, name: str) -> tuple[str, list]:
    """`SELECT COUNT(*)` over at most `cap + 1` of the queryset's rows, as SQL and its parameters."""
    sql, params = queryset.order_by().values("pk")[: cap + 1].query.sql_with_params()
    return f"SELECT COUNT(*) FROM ({sql}) AS {name}", list(params)


def capped_counts(*, cap: int, **querysets: QuerySet) -> dict[str, int]:
    """Each queryset's count, up to `cap + 1`, all in one statement. An empty queryset (`none()`) is left
    out of the answer (no statement at all when every one is)."""
    counted = {name: capped_count_sql(queryset, cap=cap, name=name)
               for name, queryset in querysets.items() if not queryset.query.is_empty()}
    if not counted:
        return {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"({sql})" for sql, _ in counted.values()),
                       [param for _, params in counted.values() for param in params])
        return dict(zip(counted, cursor.fetchone(), strict=True))
