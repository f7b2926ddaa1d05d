"""What one page owner's "Download my data" costs (moderation.owner_export): not a timed test, a measurement.

    DATABASE_URL=... REDIS_URL=... python -m bench.owner_export --posts 10000

Builds, in the database it is given (a scratch one: history is append-only, so nothing it writes can be taken
back), one owner with one page of `--posts` posts, each
with a flag, an image, a False rating, its fact-check action and statement of reasons and a notification, and one
post in ten with a dispute and its two steps (the rows are copies of one decision made by the domain functions,
written with bulk_create). Then writes the export twice: once timed, once under tracemalloc for the peak of
Python memory, and prints the document's size, the queries, the time and the peak, to be copied into
docs/privacy.md.
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

import django


def build(posts: int):
    from django.utils import timezone

    from factcheck.models import Flag, Post, Rating
    from factcheck.models_media import PostMedia
    from moderation.appeals import decide_appeal, file_appeal
    from moderation.models import Action, Appeal, AppealEvent, Notification, StatementOfReasons
    from tests import scenarios
    from tests.factories import FactCheckerFactory, FlagFactory, PageFactory, UserFactory

    run = int(time.time())
    owner, page = UserFactory(username=f"bench-owner-{run}"), PageFactory(name="Bench page", external_id=f"bench-{run}")
    rater = FactCheckerFactory(username=f"bench-rater-{run}")
    model = scenarios.rated_post(owner=owner, page=page, rater=rater, external_id=f"bench-{run}-model",
                                 text="A model post " * 20)
    FlagFactory(post=model, reason="A reporter's reason, never exported.", idempotency_key=f"bench-{run}-model")
    appeal = file_appeal(owner=owner, post_id=model.pk, kind="dispute", statement="The quote is real. " * 10)
    colleague = FactCheckerFactory(username=f"bench-colleague-{run}", organisation=rater.membership.organisation)
    decide_appeal(appeal_id=appeal.pk, reviewer=colleague, outcome="upheld", reason="The recording was edited. " * 5)
    rating, action = Rating.objects.get(post=model), Action.objects.get(post=model)
    statement, flag = StatementOfReasons.objects.get(action=action), Flag.objects.filter(post=model).first()
    notice, events = Notification.objects.filter(user=owner).first(), list(AppealEvent.objects.filter(appeal=appeal))
    now = timezone.now()

    def copy(row, **values):
        fields = {f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields if not f.primary_key}
        return type(row)(**{**fields, **values})

    made = Post.objects.bulk_create(copy(model, external_id=f"bench-{run}-{n}", url=f"https://social.example/{n}")
                                    for n in range(posts - 1))
    Flag.objects.bulk_create(copy(flag, post_id=p.pk, idempotency_key=f"bench-{p.pk}") for p in made)
    PostMedia.objects.bulk_create(PostMedia(post=p, position=0, kind="image", url=f"https://media.example/{p.pk}.jpg",
                                            pdq="a" * 64, md5="b" * 32, alt_text="A picture.") for p in made)
    ratings = Rating.objects.bulk_create(copy(rating, post_id=p.pk, claim_id=None, created_at=now) for p in made)
    actions = Action.objects.bulk_create(copy(action, puid=f"bench-action-{r.pk}", post_id=r.post_id, rating_id=r.pk,
                                              created_at=now) for r in ratings)
    StatementOfReasons.objects.bulk_create(copy(statement, action_id=a.pk, puid=a.puid, created_at=now)
                                           for a in actions)
    Notification.objects.bulk_create(copy(notice, post_id=p.pk, email_id=None, rating_id=None, created_at=now)
                                     for p in made)
    appeals = Appeal.objects.bulk_create(copy(appeal, post_id=r.post_id, rating_id=r.pk, created_at=now)
                                         for r in ratings[::10])
    AppealEvent.objects.bulk_create(copy(event, appeal_id=a.pk, created_at=now) for a in appeals for event in events)
    return owner


def measure(owner) -> dict[str, float]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from moderation.owner_export import export_document, start_export

    export = start_export(owner=owner, now=timezone.now())
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        size = sum(len(piece.encode()) for piece in export_document(export))
    seconds = time.perf_counter() - started
    tracemalloc.start()
    largest = max(len(piece.encode()) for piece in export_document(export))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"bytes": size, "queries": len(queries), "seconds": seconds, "peak_bytes": peak, "largest_piece": largest}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.owner_export", description=__doc__)
    parser.add_argument("--posts", type=int, default=10_000)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    django.setup()
    started = time.perf_counter()
    owner = build(args.posts)
    print(f"built {args.posts:,} posts in {time.perf_counter() - started:.1f} s")
    figures = measure(owner)
    print(f"document: {figures['bytes'] / 1e6:.1f} MB in {figures['queries']} queries, {figures['seconds']:.1f} s; "
          f"largest piece {figures['largest_piece'] / 1e6:.2f} MB; "
          f"peak Python memory {figures['peak_bytes'] / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
