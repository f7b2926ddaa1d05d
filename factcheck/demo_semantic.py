"""The demo's claims retold in other words and other languages (PRODUCT.md, "Same claim, other words, other
languages").

The story: bob rated "A London hospital says drinking hot water every 15 minutes kills the virus" False
(factcheck.demo_checks); afterwards it went round in German and in French, the French post sent without a
language (detected as French). Verifact covers English only, so semantic matching suggests both retellings to
Faktenwerk, which covers German and French: claire sees them on the rated post's page and on her notifications,
each with both languages, to confirm (the post then carries Verifact's rating) or reject. And a claim still
waiting in the queue, that two raw garlic cloves a day keep the flu away, was posted again in other words on
two other pages: the queue shows it as one row with its variants. The fourth retelling of it turns it round
("does not protect"): suggested with the warning that it negates the claim.

They arrive with the demo's generated posts, after the ratings, as any post does: the matching job embeds them
after their ingest commits and records the suggestions (factcheck.matching.semantic).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from factcheck.ingest import FlagInput, PageInput, PostInput
from factcheck.models import FlagSource, MediaType


@dataclass(frozen=True)
class RetoldSpec:
    external_id: str
    page: str  # a page of factcheck.demo.PAGES, by external id
    text: str
    posted_hours_ago: float
    views: int
    language_sent: bool = True  # False: the platform sent no language (it is detected)


RETOLD = (
    RetoldSpec("demo-s001", "wahrheit-jetzt",
               "Ein Londoner Krankenhaus sagt: Wer alle 15 Minuten heißes Wasser trinkt, tötet das Virus.", 8, 21_000),
    RetoldSpec("demo-s002", "sante-libre",
               "Un hôpital de Londres affirme que boire de l'eau chaude toutes les 15 minutes tue le virus.", 6,
               9_400, language_sent=False),
    RetoldSpec("demo-s003", "green-living-tips",
               "Eating two cloves of raw garlic a day protects you from the flu, doctors now admit.", 12, 15_000),
    RetoldSpec("demo-s004", "patriot-eagle-wire",
               "Two cloves of raw garlic daily will protect you from influenza, according to doctors.", 9, 7_200),
    RetoldSpec("demo-s005", "dublin-community-news",
               "Doctors finally admit it: two raw garlic cloves every day keep the flu away.", 7,
               3_100),
    RetoldSpec("demo-s006", "the-london-ledger",
               "Eating two cloves of raw garlic a day does not protect you from the flu, doctors say.", 5, 2_400),
)


def retold_flags(*, page_names: dict[str, str], languages: dict[str, tuple[str, str]],
                 now: datetime) -> list[FlagInput]:
    """The retellings' flags, as the platform sends them (one user report each)."""
    flags = []
    for spec in RETOLD:
        language, country = languages[spec.page]
        posted = now - timedelta(hours=spec.posted_hours_ago)
        post = PostInput(
            external_id=spec.external_id, page=PageInput(external_id=spec.page, name=page_names[spec.page]),
            posted_at=posted, url=f"https://social.example/{spec.page}/posts/{spec.external_id}", text=spec.text,
            language=language if spec.language_sent else "", country=country, media_type=MediaType.TEXT,
            views=spec.views, shares=spec.views // 30,
        )
        flags.append(FlagInput(idempotency_key=f"{spec.external_id}-flag", source=FlagSource.USER_REPORT,
                               reason="False information", post=post, flagged_at=posted + timedelta(minutes=30)))
    return flags
