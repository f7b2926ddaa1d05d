"""The demo's fact-checks: each rated post written together with its rating's rationale and sources.

A rating's rationale is about its post: a pension-law post gets a rationale about pensions, not one
about hospitals (issue 29). So each rated post of the demo is a pair, written here as one spec: the
post as the platform sends it, the flags it got, and the fact-checker's verdict, rationale and sources.
`topic` names words that the post and its rationale share (tests/factcheck/test_seed_demo.py checks
them), and a disputed rating carries its owner's statement, about the same post.

The mix: five False (three on Health Truth Daily, which makes it a repeat offender), two Partly false,
two Altered (a video, and the picture of a shark on a flooded motorway whose copies factcheck.demo_media
posts later), one each of Missing context, Satire and True. Two of them disagree on one claim in two
languages: alice's Missing context of the paper bags, claire's False of the same claim in French (the
conflicts page shows them side by side once semantic matching pairs the posts). Some posts are worded like the generated
posts of factcheck.demo, so that their copies there inherit the rating once matching runs. `media` names
the post's picture, or a video's still (factcheck.demo_media draws them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from factcheck.demo_media import ALTERED, checked_media
from factcheck.ingest import FlagInput, PageInput, PostInput
from factcheck.models import FlagSource, MediaType, Verdict

POST_URL = "https://social.example/{page}/posts/c{number}"


@dataclass(frozen=True)
class CheckedPostSpec:
    reviewer: str
    page: str  # a page of factcheck.demo.PAGES, by external id
    verdict: str
    media_type: str
    text: str
    flags: tuple[tuple[str, str], ...]  # (source, reason)
    rationale: str
    sources: tuple[str, ...]
    topic: tuple[str, ...]  # words in both the post and the rationale (lower case)
    posted_hours_ago: float
    rated_hours_ago: float
    views: int
    dispute: str = ""  # the page owner's statement disputing the rating (moderation.demo files it)
    evidence: tuple[str, ...] = ()
    media: str = ""  # a picture of factcheck.demo_media (a "-still.jpg" one: the still of the post's video)


HTD = "health-truth-daily"
CHECKED = (
    CheckedPostSpec(
        "alice", HTD, Verdict.FALSE, MediaType.LINK,
        "New law: from June pensioners lose their pension if they own a car.",
        ((FlagSource.USER_REPORT, "False information"), (FlagSource.CLASSIFIER, "viral-claim model score 0.95")),
        "No such law exists. The State Pension depends on a person's National Insurance record, not on what "
        "they own: owning a car does not change a pension, and no bill before Parliament would make it.",
        ("https://www.gov.uk/new-state-pension", "https://bills.parliament.uk/"),
        topic=("pension",), posted_hours_ago=130, rated_hours_ago=118, views=240_000,
    ),
    CheckedPostSpec(
        "alice", HTD, Verdict.FALSE, MediaType.VIDEO,
        "Video: the director of a Glasgow fertility clinic admits the vaccine causes infertility in women.",
        ((FlagSource.USER_REPORT, "Misleading health claim"), (FlagSource.PARTNER,
                                                               "Partner newsroom: claim already debunked elsewhere")),
        "The clip is cut from a 40-minute interview in which the clinic's director says the opposite: studies of "
        "hundreds of thousands of pregnancies found no effect of the vaccine on fertility. The question she "
        "answers \"yes\" to in the clip was about another treatment.",
        ("https://www.nhs.uk/conditions/covid-19/covid-19-vaccination/", "https://www.hfea.gov.uk/"),
        topic=("clinic", "vaccine", "fertility"), posted_hours_ago=100, rated_hours_ago=90, views=88_000,
        media="clinic-interview-still.jpg",
        dispute="The video is the clinic director's own words. The full interview is linked: at minute 31 she "
                "says the vaccine's effect on fertility was never studied, and the rating leaves that out.",
        evidence=("https://video.example/interviews/clinic-director-full",),
    ),
    CheckedPostSpec(
        "bob", HTD, Verdict.FALSE, MediaType.TEXT,
        "A London hospital says drinking hot water every 15 minutes kills the virus.",
        ((FlagSource.USER_REPORT, "Misleading health claim"), (FlagSource.TRUSTED_FLAGGER,
                                                               "Trusted flagger notice: health misinformation")),
        "No London hospital has said this, and no hospital or health service advises it: hot water does not kill "
        "a virus in the body. The same text has gone round since 2020 with other hospitals' names.",
        ("https://www.nhs.uk/conditions/flu/", "https://www.who.int/news-room/fact-sheets"),
        topic=("hospital", "hot water", "virus"), posted_hours_ago=70, rated_hours_ago=64, views=150_000,
    ),
    CheckedPostSpec(
        "alice", "the-london-ledger", Verdict.TRUE, MediaType.TEXT,
        "The Bank of England raised interest rates 14 times in a row, from December 2021 to August 2023.",
        ((FlagSource.USER_REPORT, "False information"),),
        "True: the Bank of England raised interest rates (Bank Rate) at 14 meetings in a row, from 0.1% in "
        "December 2021 to 5.25% in August 2023, as its published decisions show.",
        ("https://www.bankofengland.co.uk/monetary-policy/the-interest-rate-bank-rate",),
        topic=("bank of england", "interest rates", "14"), posted_hours_ago=50, rated_hours_ago=44, views=12_000,
    ),
    CheckedPostSpec(
        "bob", "patriot-eagle-wire", Verdict.ALTERED, MediaType.VIDEO,
        "Video: the senator's aide arrested at Phoenix airport carrying 30 kg of gold.",
        ((FlagSource.PARTNER, "Partner newsroom: manipulated image"), (FlagSource.USER_REPORT, "Fake news")),
        "Altered: the footage shows a 2019 seizure of smuggled gold at Istanbul airport. It was cropped, its audio "
        "replaced by an English voice-over, and a caption added that names the aide; Phoenix airport reported "
        "no such arrest.",
        ("https://www.cbp.gov/newsroom", "https://tineye.com/"),
        topic=("airport", "gold"), posted_hours_ago=40, rated_hours_ago=33, views=510_000,
        media="airport-gold-still.jpg",
    ),
    CheckedPostSpec(
        "bob", "dublin-community-news", Verdict.PARTLY_FALSE, MediaType.TEXT,
        "Dublin City Council is closing 12 public libraries from March to save money.",
        ((FlagSource.USER_REPORT, "False information"),),
        "Partly false: the council did vote to save money on libraries, but no library is closing. From March, 12 "
        "branches open fewer hours, as the council's budget papers say.",
        ("https://www.dublincity.ie/residential/libraries",),
        topic=("council", "librar", "march"), posted_hours_ago=30, rated_hours_ago=26, views=6_500,
    ),
    CheckedPostSpec(
        "alice", "green-living-tips", Verdict.MISSING_CONTEXT, MediaType.IMAGE,
        "Paper bags are better for the planet than plastic bags. Switch today!",
        ((FlagSource.CLASSIFIER, "misinformation model score 0.87"),),
        "Missing context: a paper bag does less harm as litter and in the sea, but making one takes more energy "
        "and water than a plastic bag. It has to be used three times or more to come out ahead, which the post "
        "leaves out.",
        ("https://www.epa.gov/recycle",),
        topic=("paper bag", "plastic"), posted_hours_ago=22, rated_hours_ago=18, views=31_000,
    ),
    CheckedPostSpec(
        "claire", "wahrheit-jetzt", Verdict.FALSE, MediaType.IMAGE,
        "Geleaktes Dokument: RheinWasser mischt heimlich Beruhigungsmittel ins Trinkwasser von Köln.",
        ((FlagSource.USER_REPORT, "Falschinformation"), (FlagSource.CLASSIFIER, "misinformation model score 0.91")),
        "Falsch: Das „Dokument“ ist eine Fälschung, die seit 2020 mit wechselnden Städtenamen kursiert. Das "
        "Trinkwasser in Köln wird laufend vom Gesundheitsamt überwacht; Beruhigungsmittel wurden nie gefunden, und "
        "die Trinkwasserverordnung erlaubt keine solchen Zusätze.",
        ("https://www.umweltbundesamt.de/themen/wasser/trinkwasser", "https://www.gesetze-im-internet.de/trinkwv_2023/"),
        topic=("trinkwasser", "beruhigungsmittel", "köln"), posted_hours_ago=60, rated_hours_ago=52, views=74_000,
        media="trinkwasser-dokument.jpg",
    ),
    CheckedPostSpec(
        "claire", "le-vrai-journal", Verdict.PARTLY_FALSE, MediaType.TEXT,
        "L'argent liquide sera interdit dès juin : les paiements en espèces de plus de 1 000 euros sont déjà "
        "illégaux.",
        ((FlagSource.USER_REPORT, "Fausse information"),),
        "En partie faux : le paiement en espèces d'un particulier à un professionnel est bien plafonné à 1 000 "
        "euros depuis 2015, mais aucune loi n'interdit l'argent liquide, et rien n'est prévu pour juin.",
        ("https://www.service-public.fr/", "https://www.banque-france.fr/"),
        topic=("espèces", "argent liquide", "1 000 euros"), posted_hours_ago=45, rated_hours_ago=38, views=27_000,
    ),
    CheckedPostSpec(
        "claire", "info-citoyenne-lyon", Verdict.SATIRE, MediaType.TEXT,
        "EXCLUSIF (Le Gone Déchaîné) : la mairie de Lyon remplace les feux rouges par des bouchons lyonnais pour "
        "ralentir la circulation. #humour",
        ((FlagSource.USER_REPORT, "Fausse information"),),
        "Satire : le post vient de la rubrique humoristique « Le Gone Déchaîné » de la page, marqué #humour, et joue "
        "sur les « bouchons » lyonnais ; la mairie de Lyon n'a rien annoncé de tel.",
        ("https://www.lyon.fr/",),
        topic=("bouchons", "lyon", "mairie"), posted_hours_ago=16, rated_hours_ago=12, views=9_000,
    ),
    CheckedPostSpec(
        "bob", "patriot-eagle-wire", Verdict.ALTERED, MediaType.IMAGE,
        "PHOTO: sharks are swimming on the flooded I-45 in Houston tonight. Stay out of the water!",
        ((FlagSource.PARTNER, "Partner newsroom: manipulated image"), (FlagSource.USER_REPORT, "Fake news")),
        "Altered: the shark was pasted into a photo of the flooded I-45. The same fin and tail have been added "
        "to pictures of flooded roads after storms since 2011; no shark was seen on the I-45, and the photo "
        "it was added to shows no animal at all. Every copy of this picture, whatever its caption, is altered "
        "media.",
        ("https://www.snopes.com/fact-check/shark-highway-hurricane/", "https://tineye.com/"),
        topic=("shark", "flooded", "i-45"), posted_hours_ago=36, rated_hours_ago=30, views=320_000,
        media=ALTERED,
    ),
    CheckedPostSpec(
        "claire", "le-vrai-journal", Verdict.FALSE, MediaType.TEXT,
        "Les sacs en papier sont meilleurs pour la planète que les sacs plastiques. Changez dès aujourd'hui !",
        ((FlagSource.USER_REPORT, "Fausse information"),),
        "Faux : fabriquer un sac en papier demande plus d'énergie et d'eau qu'un sac plastique, et il faut le "
        "réutiliser trois fois ou plus pour faire mieux pour la planète. Dire qu'il est meilleur, sans condition, "
        "est faux.",
        ("https://www.ademe.fr/",),
        topic=("papier", "plastique", "planète"), posted_hours_ago=14, rated_hours_ago=10, views=12_000,
    ),
)


def external_id_of(number: int) -> str:
    return f"demo-c{number:03d}"


def checked_flags(*, page_names: dict[str, str], languages: dict[str, tuple[str, str]],
                  now: datetime) -> list[FlagInput]:
    """The flags of the checked posts, as the platform sends them. `page_names` and `languages` (language,
    country) come from factcheck.demo.PAGES, which imports this module."""
    flags = []
    for number, spec in enumerate(CHECKED, start=1):
        language, country = languages[spec.page]
        posted = now - timedelta(hours=spec.posted_hours_ago)
        post = PostInput(
            external_id=external_id_of(number), page=PageInput(external_id=spec.page, name=page_names[spec.page]),
            posted_at=posted, url=POST_URL.format(page=spec.page, number=number), text=spec.text,
            language=language, country=country, media_type=spec.media_type, views=spec.views,
            shares=spec.views // 25, media=checked_media(external_id_of(number), spec.media) or None,
        )
        flags += [
            FlagInput(idempotency_key=f"demo-check-{number:03d}-{index}", source=source, reason=reason, post=post,
                      flagged_at=posted + timedelta(minutes=40 * (index + 1)))
            for index, (source, reason) in enumerate(spec.flags)
        ]
    return flags
