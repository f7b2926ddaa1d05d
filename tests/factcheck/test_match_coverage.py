"""A pair's copy's language and country on the pair's row (Match.post_language, post_country; migrations 0034 and
0035): kept equal to the post's by PostgreSQL's triggers when a pair or a post is written, and what an organisation's
waiting suggestions stored the way they are confirmed are read by (factcheck.matching.confirmable)."""

from __future__ import annotations

import importlib
import re

import pytest
from django.db import connection
from django.utils import timezone

from factcheck.matching.recording import new_match, record_matches
from factcheck.matching.similarity import Judgement
from factcheck.models import Match, MatchState, Post
from factcheck.selectors import newest_waiting_suggestions, waiting_suggestions_everywhere
from tests.factories import FactCheckerFactory, MatchFactory, OrganisationFactory, PostFactory, RatingFactory
from tests.pg import jit_for_every_statement, planned_rows

pytestmark = pytest.mark.django_db

PAIR_COLUMNS = "post_id, source_id, method, score, state, guard, created_at, reason"


def coverage_of(match: Match) -> tuple[str, str]:
    match.refresh_from_db(fields=["post_language", "post_country"])
    return match.post_language, match.post_country


def test_a_pair_written_by_the_orm_carries_its_copys_language_and_country():
    match = MatchFactory(post=PostFactory(language="fr", country="FR"), source=PostFactory(language="en"))
    assert coverage_of(match) == ("fr", "FR")


def test_a_pair_written_by_the_matchers_copy_carries_them_too():
    copy, source = PostFactory(language="de", country="AT"), PostFactory()
    judgement = Judgement(method="minhash", score=0.7, automatic=False, guard="")
    record_matches([new_match(copy.pk, source.pk, judgement, MatchState.SUGGESTED, timezone.now())], system="test")
    assert coverage_of(Match.objects.get(post=copy)) == ("de", "AT")


def test_a_posts_new_language_or_country_reaches_the_pairs_it_is_the_copy_of():
    post, claim = PostFactory(language="", country="FR"), PostFactory(language="en", country="GB")
    as_copy = MatchFactory(post=post, source=claim)
    as_claim = MatchFactory(post=PostFactory(language="es", country="ES"), source=post)
    # As language detection and a later flag write them: a queryset's UPDATE, then a model's save.
    Post.objects.filter(pk=post.pk).update(language="fr")
    assert coverage_of(as_copy) == ("fr", "FR")
    post.refresh_from_db()
    post.country = "BE"
    post.save(update_fields=["country"])
    assert coverage_of(as_copy) == ("fr", "BE")
    assert coverage_of(as_claim) == ("es", "ES")  # the other post of that pair is its copy
    Post.objects.filter(pk=claim.pk).update(language="de")
    assert coverage_of(as_copy) == ("fr", "BE")


def test_a_pair_turned_round_when_confirmed_carries_its_new_posts_coverage():
    # confirm_match turns a pair round by saving its post and source swapped: the trigger reads the new post.
    match = MatchFactory(post=PostFactory(language="fr", country="FR"), source=PostFactory(language="de", country="AT"))
    match.post_id, match.source_id = match.source_id, match.post_id
    match.save(update_fields=["post", "source"])
    assert coverage_of(match) == ("de", "AT")


def many_pairs_elsewhere(model: Post, count: int) -> None:
    """`count` posts like `model` (in English, in Britain) and as many suggested pairs between them, by SQL: enough
    rows for the planner to plan as it would on a real table."""
    columns = [f.column for f in Post._meta.concrete_fields if f.column not in ("id", "external_id")]
    listed = ", ".join(columns)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO factcheck_post (external_id, {listed}) SELECT 'many-' || n, {listed}"
                       f" FROM factcheck_post, generate_series(1, %s) AS n WHERE id = %s", [count, model.pk])
        cursor.execute(f"INSERT INTO factcheck_match ({PAIR_COLUMNS})"
                       " SELECT id, %s, 'minhash', 0.6, 'suggested', '', now(), '' FROM factcheck_post"
                       " WHERE external_id LIKE 'many-%%'", [model.pk])


def plan_of(half) -> str:
    sql, params = half.order_by("-id")[:10].query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def test_a_narrow_organisation_reads_its_own_suggested_pairs_from_their_indexes():
    # On the bench's 100,000 suggested pairs the newest ten of an organisation covering French in France walked
    # 49,910 pairs newest first, reading each pair's post to test its coverage (the notifications page 397 ms p95).
    organisation = OrganisationFactory(languages=["fr"], countries=["FR"])
    checker = FactCheckerFactory(organisation=organisation)
    stored_way = [MatchFactory(post=PostFactory(language="fr", country="FR")) for _ in range(3)]
    # A pair turned round: its stored post was rated since (by this organisation), its older source is the copy.
    claim = PostFactory(language="fr", country="FR")
    turned_round = MatchFactory(post=claim, source=PostFactory(language="fr", country="FR"))
    RatingFactory(post=claim, reviewer=checker)
    many_pairs_elsewhere(PostFactory(language="en", country="GB"), 3000)
    listed = [pair.match.pk for pair in newest_waiting_suggestions(organisation=organisation, limit=10)]
    assert listed == sorted([m.pk for m in stored_way] + [turned_round.pk], reverse=True)
    stored, _turned = waiting_suggestions_everywhere(organisation=organisation)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE factcheck_match")
        cursor.execute("ANALYZE factcheck_post")
    plan = plan_of(stored)
    assert re.search(r"Index Scan (Backward )?using suggested_post_(language|country)", plan), plan


def test_the_planner_knows_that_a_pairs_copy_language_and_country_go_together():
    # Migration 0035's statistics: as independent shares the planner expected 869 of the bench's 12,466 pairs in
    # French in France and joined them by nested loops (6.4 s).
    for _ in range(30):
        MatchFactory(post=PostFactory(language="fr", country="FR"))
        MatchFactory(post=PostFactory(language="en", country="GB"))
    estimate = planned_rows(Match.objects.filter(post_language="fr", post_country="FR").values("id"),
                            table="factcheck_match")
    assert estimate >= 27, estimate  # 30 as they are; 15 as independent shares would have it


def test_the_migration_fills_in_the_pairs_stored_before_it():
    fill = importlib.import_module("factcheck.migrations.0035_match_copy_coverage_indexes").fill_stored_pairs
    pairs = [MatchFactory(post=PostFactory(language="pt", country="BR")) for _ in range(3)]
    Match.objects.update(post_language="", post_country="")  # as they were before the columns existed
    fill(None, connection.schema_editor())
    assert [coverage_of(pair) for pair in pairs] == [("pt", "BR")] * 3


def test_the_newest_waiting_suggestions_are_read_without_jit_and_the_setting_is_left_as_it_was():
    # On the bench's 100,000 suggested pairs compiling the pairs turned round took 80 ms of a 147 ms statement
    # (factcheck.selectors.newest_waiting_suggestions, core.jit). Here every statement would be compiled but those.
    organisation = OrganisationFactory()
    pair = MatchFactory()
    with jit_for_every_statement(lambda sql: '"factcheck_match"."post_language"' in sql) as jit:
        listed = newest_waiting_suggestions(organisation=organisation, limit=10)
    assert [p.match.pk for p in listed] == [pair.pk]
    assert jit.during == ["off", "off"]
    assert jit.after == "on"
