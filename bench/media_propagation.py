"""One `altered` rating reaching the posts that carry its image (issue 30; `--only media`).

The app runs as bin/run starts it (bench/app_processes.py: gunicorn, rqcron) with ONE RQ worker (`manage.py
jobworker`, every queue; RQ_URGENT_WORKERS=0), and is driven over HTTP only: a platform token POSTs `--media-copies`
+ 1 flags to /api/v1/flags, each post carrying the same photograph (scikit-image's astronaut: its PDQ as the app
hashes it for a third of them, near copies 1 to 20 bits away for the rest) under texts that share nothing, on 400
pages; their arrival jobs are drained. Then a fact-checker token rates the first post `altered` (POST
/api/v1/posts/{id}/ratings) and the clock runs from the 201 until every copy has that rating's decision
(RatingDecision, read from the database every 20 ms): the sweep job finds the posts carrying the image
(factcheck.matching.sweep), links them (`media`), and the decision side gives each the rating. Floor: the same
rating of a post whose image no other post carries, timed alike to its own decision.
"""

from __future__ import annotations

import os
import random
import time
from datetime import UTC, datetime, timedelta

import requests

from bench.app_processes import describe_workers, start_app
from bench.media_images import encode, hasher, photographs
from bench.report import Figure
from factcheck.media import pdq_hex

TARGET_S = 5.0
PAGES = 400
BATCH = 500
MAX_NEAR_BITS = 20
WORDS = ("river", "council", "budget", "school", "train", "weather", "festival", "harvest", "museum", "bridge",
         "market", "library", "election", "stadium", "hospital", "airport", "forest", "village", "concert", "harbour")


def _account(username: str, role: str, organisation: str | None = None):
    from accounts.models import User
    from factcheck.members import create_user

    return User.objects.filter(username=username).first() or create_user(
        username=username, role=role, password=None, organisation_name=organisation)


def _token(user) -> str:
    from accounts.models import ApiToken

    return ApiToken.issue(user=user, name="bench media")[1]


def _flag(label: str, pdq: int, rng: random.Random, now: datetime) -> dict:
    text = f"Post {label}: " + " ".join(rng.choices(WORDS, k=12))  # texts that match nothing
    page = rng.randrange(PAGES)
    return {
        "idempotency_key": f"bench-media-flag-{label}", "source": "user_report",
        "flagged_at": now.isoformat(), "reason": "Reported as a doctored picture",
        "post": {"external_id": f"bench-media-{label}", "url": f"https://social.example/m/{label}", "text": text,
                 "language": "en", "country": "GB", "posted_at": (now - timedelta(minutes=5)).isoformat(),
                 "page": {"external_id": f"bench-media-page-{page}", "name": f"Bench media page {page}"},
                 "views": 1000, "shares": 50,
                 "media": [{"kind": "image", "url": f"https://media.example/{label}.jpg", "pdq": pdq_hex(pdq),
                            "quality": 100, "alt_text": "An astronaut"}]},
    }


def _near(value: int, rng: random.Random) -> int:
    for bit in rng.sample(range(256), rng.randint(1, MAX_NEAR_BITS)):
        value ^= 1 << bit
    return value


def _rate(session: requests.Session, url: str, external_id: str) -> float:
    body = {"verdict": "altered", "rationale": "The picture was doctored: the original shows no such thing.",
            "sources": ["https://example.org/original-photo"]}
    response = session.post(f"{url}/api/v1/posts/{external_id}/ratings", json=body, timeout=60)
    if response.status_code != 201:
        raise RuntimeError(f"rating {external_id}: {response.status_code} {response.text[:300]}")
    return time.perf_counter()


def _wait_decided(post_ids: list[int], *, external_id: str, app, timeout: float = 300) -> tuple[float, int]:
    """Until every post in `post_ids` has a decision of the current rating of `external_id`: the moment, and
    how many have one."""
    from factcheck.models import Rating
    from moderation.models import RatingDecision

    rating = Rating.objects.get(post__external_id=external_id, is_current=True)
    began = time.perf_counter()
    while True:
        done = RatingDecision.objects.filter(rating=rating, post_id__in=post_ids).count()
        if done >= len(post_ids):
            return time.perf_counter(), done
        if time.perf_counter() - began > timeout:
            return time.perf_counter(), done
        app.check_alive()
        time.sleep(0.02)


def _spans(external_id: str) -> str:
    """Where the time went, from the rows' own timestamps: the sweep's links, then the decisions."""
    from django.db.models import Max, Min

    from factcheck.models import Match, MatchMethod, Rating
    from moderation.models import RatingDecision

    rating = Rating.objects.get(post__external_id=external_id, is_current=True)
    links = Match.objects.filter(source=rating.post, method=MatchMethod.MEDIA).aggregate(
        first=Min("created_at"), last=Max("created_at"))
    decisions = RatingDecision.objects.filter(rating=rating).exclude(post=rating.post).aggregate(
        first=Min("decided_at"), last=Max("decided_at"))
    if None in (*links.values(), *decisions.values()):
        return "No media links or copy decisions were recorded."

    def after(moment) -> str:
        return f"{(moment - rating.created_at).total_seconds():.2f} s"

    return (f"From the rating's created_at: the sweep's media links from {after(links['first'])} to "
            f"{after(links['last'])}; the copies' decisions (decided_at, each transaction's start) from "
            f"{after(decisions['first'])} to {after(decisions['last'])}.")


def bench_media_propagation(*, copies: int) -> Figure:
    from accounts.models import Role
    from bench.copy_clients import wait_drained
    from factcheck.models import Post, QueueState

    platform = _account("bench-media-platform", Role.PLATFORM)
    rater = _account("bench-media-checker", Role.FACTCHECKER, "Bench Media Checks")
    hash_bytes, how = hasher()
    image, _quality = hash_bytes(encode(photographs()["astronaut"]))
    rng, now = random.Random(30), datetime.now(UTC)
    hashes = [image if n % 3 == 0 else _near(image, rng) for n in range(copies)]
    flags = [_flag("source", image, rng, now), *(_flag(f"copy-{n}", h, rng, now) for n, h in enumerate(hashes)),
             _flag("lonely", rng.getrandbits(256), rng, now)]

    before = {k: os.environ.get(k) for k in ("RQ_WORKERS", "RQ_URGENT_WORKERS")}
    os.environ.update(RQ_WORKERS="1", RQ_URGENT_WORKERS="0")  # one worker, taking every queue
    try:
        workers = describe_workers()
        app = start_app(matching=True)
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key)
            else:
                os.environ[key] = value
    try:
        platform_session, rater_session = requests.Session(), requests.Session()
        platform_session.headers["Authorization"] = f"Bearer {_token(platform)}"
        rater_session.headers["Authorization"] = f"Bearer {_token(rater)}"
        started = time.perf_counter()
        for start in range(0, len(flags), BATCH):
            response = platform_session.post(f"{app.url}/api/v1/flags", json={"flags": flags[start:start + BATCH]},
                                             timeout=300)
            if response.status_code not in (200, 201):
                raise RuntimeError(f"POST /api/v1/flags: {response.status_code} {response.text[:300]}")
        ingest_seconds = time.perf_counter() - started
        drained, left = wait_drained(timeout=300)
        copy_ids = list(Post.objects.filter(external_id__startswith="bench-media-copy-").values_list("id", flat=True))
        lonely_id = Post.objects.get(external_id="bench-media-lonely").pk

        sent = _rate(rater_session, app.url, "bench-media-lonely")
        floor_done, _ = _wait_decided([lonely_id], external_id="bench-media-lonely", app=app)
        floor = floor_done - sent
        sent = _rate(rater_session, app.url, "bench-media-source")
        done_at, decided = _wait_decided(copy_ids, external_id="bench-media-source", app=app)
        seconds = done_at - sent
        linked = Post.objects.filter(id__in=copy_ids, queue_state=QueueState.MATCHED).count()
        spans = _spans("bench-media-source")
        app.check_alive()
    finally:
        app.stop()
    return Figure(
        name=f"one altered rating reaching {copies:,} posts carrying its image, 1 RQ worker", value=seconds, unit="s",
        floor=floor, floor_name="the same rating of a post whose image no other post carries",
        ratio=seconds / floor if floor else None, target=f"<= {TARGET_S:.0f} s",
        passed=seconds <= TARGET_S and decided == copies,
        notes=[f"{copies:,} posts carrying scikit-image's astronaut ({copies // 3 + (copies % 3 > 0):,} with its own "
               f"PDQ, the rest 1-{MAX_NEAR_BITS} bits away; hashed by {how}), texts that match nothing, on {PAGES} "
               f"pages, POSTed to /api/v1/flags in batches of {BATCH} ({ingest_seconds:.1f} s), their arrival jobs "
               f"drained in {drained:.1f} s (RQ jobs left: "
               f"{', '.join(f'{k} {v}' for k, v in left.items() if v) or 'none'}).",
               f"The first post rated `altered` over the API; from its 201 until every copy had the rating's "
               f"decision: {seconds:.2f} s ({decided:,} of {copies:,} decided, {linked:,} linked as matched); the "
               f"floor, the same rating of a post with no copies, to its own decision: {floor:.2f} s.",
               spans,
               f"The app as bin/run starts it (gunicorn, rqcron) with {workers}."],
    )
