"""A claim retold in other words is one row of the queue: the rule of which queued posts fold under a claim the same
queue lists (`folded_under_waiting_claim`), and how many fold under each row (`variant_count`).

The rule's one home, written as one SQL text rather than nested querysets. As querysets (a pair's conditions, the
same again for the variant-of-variant test, each an Exists resolved into the page's query and into its capped
total) Django built and compiled a queue page's statement in 19 ms of the page's 50 (the bench's 100,000 posts, a
2-core machine), against 3 ms without the fold; the statement ran in 8.6 ms. As SQL text the rule costs nothing to
build, and PostgreSQL runs the same plan: one probe of Match's (post, source) index a row, and one of its
(source, state) index a row for the count.

A pending semantic suggestion folds its post under its source when (`_pair`):
- it has no guard (a copy that negates the claim, changes its numbers, names someone else or is too short to judge
  may be another claim, so it is listed on its own);
- its source is still waiting in the organisation's queue: queued or claimed, and in its coverage (a rated claim's
  suggestion is one like any, and a claim outside the coverage is not in this queue);
- its source is older than its post, so that two posts never fold under each other and vanish together;
- no copy is linked to its post (a group's first post is reviewed with its copies, from its own row);
- and its source is not itself folded so (`_under_waiting_claim`): a variant of a variant is listed on its own,
  where a reviewer sees it, rather than under a row nobody lists.
"""

from __future__ import annotations

from django.db.models import BooleanField, Expression, F, IntegerField

from factcheck.coverage import coverage_sql
from factcheck.models import Match, MatchMethod, MatchState, Organisation, Post, QueueState

MATCH, POST = Match._meta.db_table, Post._meta.db_table
# A claim still waiting for its review: the variants suggested as its copies wait with it.
WAITING_CLAIM_STATES = (QueueState.QUEUED, QueueState.CLAIMED)


def _pair(m: str, s: str, organisation: Organisation | None) -> tuple[str, list[str]]:
    """The conditions on the match `m`, whose source is the post `s`, of a pending variant pair (the docstring's
    first four)."""
    coverage, params = coverage_sql(s, organisation)
    return (f"{m}.method = %s AND {m}.state = %s AND {m}.guard = '' AND {m}.source_id < {m}.post_id"
            f" AND {s}.queue_state IN (%s, %s){coverage}"
            f" AND NOT EXISTS (SELECT 1 FROM {POST} {m}_copy WHERE {m}_copy.duplicate_of_id = {m}.post_id)",
            [MatchMethod.SEMANTIC, MatchState.SUGGESTED, *WAITING_CLAIM_STATES, *params])


def _under_waiting_claim(organisation: Organisation | None) -> tuple[str, list[str]]:
    """The conditions on the match `fold`, whose source is the post `fold_source`, of a pair whose post folds."""
    pair, pair_params = _pair("fold", "fold_source", organisation)
    claim, claim_params = _pair("claim", "claim_source", organisation)
    return (f"{pair} AND NOT EXISTS (SELECT 1 FROM {MATCH} claim JOIN {POST} claim_source"
            f" ON claim_source.id = claim.source_id WHERE claim.post_id = fold.source_id AND {claim})",
            [*pair_params, *claim_params])


class _RowSQL(Expression):
    """SQL text about each row of a query of posts: `{row}` in `sql` is the row's id, compiled by Django (so its
    table's alias is right wherever the query goes: the page, its capped total, claim_next)."""

    def __init__(self, sql: str, params: list[str], *, output_field) -> None:
        super().__init__(output_field=output_field)
        self.sql, self.params, self.row = sql, params, F("pk")

    def get_source_expressions(self) -> list:
        return [self.row]

    def set_source_expressions(self, expressions: list) -> None:
        (self.row,) = expressions

    def as_sql(self, compiler, connection, **extra_context) -> tuple[str, list]:
        row, row_params = compiler.compile(self.row)
        assert not row_params, "the row's id is a column: no parameters of its own"
        return self.sql.replace("{row}", row), self.params


def folded_under_waiting_claim(organisation: Organisation | None) -> Expression:
    """Whether the row is a queued post of `organisation`'s queue (factcheck.queue.queued_posts) that is a variant
    of a claim it lists: reviewed from that claim's page (confirming joins the claim's group, rejecting lists the
    post again), neither listed nor claimed next. The listing and claim_next read it through `queued_posts`.

    LIMIT 1 OFFSET 0 keeps PostgreSQL from turning it into a join: as a NOT EXISTS it planned the fold as an
    anti-join that read every pending semantic suggestion and compared each with each row of the page, 11 ms a
    queue page on the bench's 50,000 posts with 2,000 of them, against 0.13 ms as a probe."""
    under, params = _under_waiting_claim(organisation)
    return _RowSQL(f"EXISTS (SELECT 1 FROM {MATCH} fold JOIN {POST} fold_source ON fold_source.id = fold.source_id"
                   f" WHERE fold.post_id = {{row}} AND {under} LIMIT 1 OFFSET 0)", params,
                   output_field=BooleanField())


def variant_count(organisation: Organisation | None) -> Expression:
    """How many queued posts of `organisation`'s queue fold under the row's post: its "N variants"."""
    under, params = _under_waiting_claim(organisation)
    coverage, coverage_params = coverage_sql("folded", organisation)
    return _RowSQL(f"(SELECT COUNT(*) FROM {MATCH} fold JOIN {POST} fold_source ON fold_source.id = fold.source_id"
                   f" JOIN {POST} folded ON folded.id = fold.post_id WHERE fold.source_id = {{row}}"
                   f" AND folded.queue_state = %s{coverage} AND {under})",
                   [QueueState.QUEUED, *coverage_params, *params], output_field=IntegerField())
