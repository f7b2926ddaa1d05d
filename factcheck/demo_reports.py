"""The demo's reports of harm: posts reported for violence, hate, harassment and imminent harm, so that the
trust-and-safety accounts (sam, tariq) have a reports queue to work on `make run`.

Sent as the platform sends them (factcheck.ingest.ingest_flags, the platform account as sender), some a day
and a half ago so that they are overdue, one from a trusted flagger, one on a post that also waits for
fact-checkers (it is in both queues), the rest on posts reported for harm only (which never enter the
fact-checkers' queue). The texts are fixed: the same queue every seed. The last but one is the post in both
queues (a misinformation flag and a report of imminent harm); REMOVED was decided already: sam removed it
(moderation.demo, which has its reason and its owner's appeal).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.models import FlagCategory, FlagSource, MediaType, Post

POST_URL = "https://social.example/{page}/posts/r{number}"


@dataclass(frozen=True)
class ReportedPostSpec:
    page: str
    page_name: str
    language: str
    country: str
    text: str
    reports: tuple[tuple[str, str, str], ...]  # (category, source, reason)
    hours_ago: float  # when the reports arrived
    views: int = 4_000


REPORTED = (
    ReportedPostSpec(
        "patriot-eagle-wire", "Patriot Eagle Wire", "en", "US",
        "Everyone who lives near the clinic: be there Friday night and make them pay. Bring what you need. "
        "They will not walk out of there.",
        ((FlagCategory.VIOLENCE, FlagSource.TRUSTED_FLAGGER, "Trusted flagger notice: incitement to violence at a "
          "named clinic"),
         (FlagCategory.VIOLENCE, FlagSource.USER_REPORT, "Threatens people at the clinic")),
        hours_ago=30, views=52_000,
    ),
    ReportedPostSpec(
        "the-london-ledger", "The London Ledger", "en", "GB",
        "Jane Porter is lying about the attack. She staged the whole thing for the money. Go and tell her what you "
        "think of her, she works at the library on Mill Road.",
        ((FlagCategory.HARASSMENT, FlagSource.USER_REPORT, "Harassment: calls a named victim a liar"),
         (FlagCategory.HARASSMENT, FlagSource.USER_REPORT, "Sends people to the victim's workplace"),
         (FlagCategory.HARASSMENT, FlagSource.PARTNER, "Victim-support partner: targeted harassment")),
        hours_ago=5, views=18_000,
    ),
    ReportedPostSpec(
        "wahrheit-jetzt", "Wahrheit Jetzt", "de", "DE",
        "Diese Leute sind Ungeziefer. Sie gehören nicht in unsere Stadt und nicht in unsere Schulen.",
        ((FlagCategory.HATE, FlagSource.USER_REPORT, "Hassrede gegen eine Gruppe"),
         (FlagCategory.HATE, FlagSource.CLASSIFIER, "hate-speech model score 0.94")),
        hours_ago=2, views=9_000,
    ),
    ReportedPostSpec(
        "sante-libre", "Santé Libre", "fr", "BE",
        "Le MMS guérit l'autisme : donnez 10 gouttes par jour à vos enfants, dans du jus pour masquer le goût.",
        ((FlagCategory.IMMINENT_HARM, FlagSource.USER_REPORT, "Conseille de faire boire du dioxyde de chlore à des "
          "enfants"),),
        hours_ago=1, views=3_000,
    ),
    ReportedPostSpec(
        "green-living-tips", "Green Living Tips", "en", "US",
        "Borax cleanse: a quarter teaspoon of borax in water every morning flushes fluoride out of your body. Give "
        "it to the kids too, they need it most.",
        ((FlagCategory.MISINFORMATION, FlagSource.USER_REPORT, "Misleading health claim"),
         (FlagCategory.IMMINENT_HARM, FlagSource.TRUSTED_FLAGGER,
          "Trusted flagger notice: tells parents to give children borax, a poison")),
        hours_ago=4, views=2_500,
    ),
    ReportedPostSpec(
        "the-london-ledger", "The London Ledger", "en", "GB",
        "Councillor Tom Hale voted for the Mill Lane bypass. He sits at 12 Guild Street every Tuesday at six: go "
        "round and tell him what you think of him, and don't be polite about it.",
        ((FlagCategory.HARASSMENT, FlagSource.USER_REPORT, "Sends people after a named councillor"),
         (FlagCategory.HARASSMENT, FlagSource.USER_REPORT, "Gives the councillor's address")),
        hours_ago=80, views=7_000,
    ),
)
# The last two: the borax post, waiting for fact-checkers and for staff, and the London Ledger's post that sam
# removed for harassment (olivia appeals it: moderation.demo).
REMOVED = f"demo-r{len(REPORTED):03d}"
# Of their flags, the reports of harm (the others are misinformation flags, for the fact-checkers).
HARM_REPORTS = sum(category != FlagCategory.MISINFORMATION for spec in REPORTED for category, _, _ in spec.reports)


def post_input_of(post: Post) -> PostInput:
    """A stored post as the platform would send it again with a new flag (its figures unchanged)."""
    page = post.page
    return PostInput(
        external_id=post.external_id, page=PageInput(external_id=page.external_id, name=page.name),
        posted_at=post.posted_at, url=post.url, text=post.text, language=post.language, country=post.country,
        media_type=post.media_type, topic=post.topic, views=post.views, shares=post.shares,
    )


def seed_demo_reports(*, platform, now: datetime) -> int:
    """Send the demo's reports of harm; returns how many flags were sent."""
    sent = 0
    for number, spec in enumerate(REPORTED, start=1):
        arrived = now - timedelta(hours=spec.hours_ago)
        post = PostInput(
            external_id=f"demo-r{number:03d}", page=PageInput(external_id=spec.page, name=spec.page_name),
            posted_at=arrived - timedelta(hours=3), url=POST_URL.format(page=spec.page, number=number),
            text=spec.text, language=spec.language, country=spec.country, media_type=MediaType.TEXT,
            views=spec.views, shares=spec.views // 20,
        )
        flags = [
            FlagInput(idempotency_key=f"demo-report-{number:03d}-{index}", source=source, category=category,
                      reason=reason, post=post, flagged_at=arrived - timedelta(minutes=10 * (index + 1)))
            for index, (category, source, reason) in enumerate(spec.reports)
        ]
        ingest_flags(flags=flags, submitted_by=platform, now=arrived)
        sent += len(flags)
    return sent
