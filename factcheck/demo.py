"""The demo data set behind `manage.py seed_demo`: organisations, pages, flagged posts, accounts, ratings.

The rated posts and their ratings are written as pairs in factcheck.demo_checks, the reports of harm in
factcheck.demo_reports; the rest of the posts are generated here.

Everything goes through the real paths (accounts.services.create_user, factcheck.ingest.ingest_flags,
factcheck.claims.claim_post, factcheck.ratings.record_rating), so the demo shows what production
data looks like, audit events and decisions included. The text is generated from a seeded RNG
and seeded Faker instances: the same posts, pages and figures every time (only the timestamps move
with the clock, so the queue always looks fresh). The whole seed is one transaction: either the
demo organisations exist and everything else with them, or nothing does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone
from faker import Faker

from accounts.models import Role, User
from accounts.services import issue_token
from factcheck.claims import claim_post
from factcheck.demo_checks import CHECKED, checked_flags, external_id_of
from factcheck.demo_media import ALTERED_COPIES, altered_copy_flags, generated_media
from factcheck.demo_reports import HARM_REPORTS, REPORTED, seed_demo_reports
from factcheck.demo_semantic import RETOLD, retold_flags
from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.members import create_user, organisation_of
from factcheck.models import FlagSource, MediaType, Organisation, Post
from factcheck.ratings import record_rating

DEMO_PASSWORD = "factdesk-demo"
SEED = 20240601
POST_URL = "https://social.example/{page}/posts/{number}"


@dataclass(frozen=True)
class OrganisationSpec:
    name: str
    url: str
    languages: tuple[str, ...]
    countries: tuple[str, ...]


@dataclass(frozen=True)
class PageSpec:
    external_id: str
    name: str
    language: str
    country: str
    posts: int
    is_politician: bool = False


@dataclass(frozen=True)
class AccountSpec:
    username: str
    role: str
    what: str
    organisation: str | None = None
    pages: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeedSummary:
    organisations: int
    pages: int
    posts: int
    flags: int
    ratings: int
    platform_token: str
    reports: int = 0  # of the flags, reports of harm (factcheck.demo_reports)


ORGANISATIONS = (
    OrganisationSpec("Verifact", "https://verifact.example", ("en",), ("GB", "IE", "US")),
    OrganisationSpec("Faktenwerk", "https://faktenwerk.example", ("de", "fr"), ("DE", "AT", "FR", "BE")),
)

REPEAT_OFFENDER_PAGE = "health-truth-daily"
POLITICIAN_PAGE = "senator-jane-whitfield"
PAGES = (
    PageSpec(REPEAT_OFFENDER_PAGE, "Health Truth Daily", "en", "GB", 40),
    PageSpec("the-london-ledger", "The London Ledger", "en", "GB", 25),
    PageSpec("dublin-community-news", "Dublin Community News", "en", "IE", 20),
    PageSpec("patriot-eagle-wire", "Patriot Eagle Wire", "en", "US", 35),
    PageSpec("green-living-tips", "Green Living Tips", "en", "US", 20),
    PageSpec(POLITICIAN_PAGE, "Senator Jane Whitfield", "en", "US", 10, is_politician=True),
    PageSpec("wahrheit-jetzt", "Wahrheit Jetzt", "de", "DE", 35),
    PageSpec("gesundheit-natuerlich", "Gesundheit Natürlich", "de", "AT", 25),
    PageSpec("berliner-buergerforum", "Berliner Bürgerforum", "de", "DE", 20),
    PageSpec("le-vrai-journal", "Le Vrai Journal", "fr", "FR", 30),
    PageSpec("sante-libre", "Santé Libre", "fr", "BE", 20),
    PageSpec("info-citoyenne-lyon", "Info Citoyenne Lyon", "fr", "FR", 20),
)

ACCOUNTS = (
    AccountSpec("alice", Role.FACTCHECKER, "fact-checker at Verifact (English; GB, IE, US)", organisation="Verifact"),
    AccountSpec("bob", Role.FACTCHECKER, "fact-checker at Verifact (English; GB, IE, US)", organisation="Verifact"),
    AccountSpec(
        "claire", Role.FACTCHECKER, "fact-checker at Faktenwerk (German, French; DE, AT, FR, BE)",
        organisation="Faktenwerk",
    ),
    AccountSpec("sam", Role.TRUST_SAFETY, "trust-and-safety staff (Django admin at /admin/, reports of harm at "
                "/staff/reports/)"),
    AccountSpec("tariq", Role.TRUST_SAFETY, "trust-and-safety staff: decides the removal appeals of sam's removals "
                "and reports of harm at /staff/reports/"),
    AccountSpec(
        "olivia", Role.PAGE_OWNER, "page owner of Health Truth Daily (a repeat offender) and The London Ledger",
        pages=(REPEAT_OFFENDER_PAGE, "the-london-ledger"),
    ),
    AccountSpec("platform", Role.PLATFORM, "the platform's API client (use the token printed by seed_demo)"),
)

FAKER_LOCALES = {
    "GB": "en_GB", "IE": "en_IE", "US": "en_US", "DE": "de_DE", "AT": "de_AT", "FR": "fr_FR", "BE": "fr_FR",
}
CITIES = {
    "GB": ("London", "Manchester", "Leeds", "Bristol", "Glasgow", "Birmingham"),
    "IE": ("Dublin", "Cork", "Galway", "Limerick", "Waterford"),
    "US": ("Houston", "Phoenix", "Denver", "Atlanta", "Cleveland", "Tampa"),
    "DE": ("Berlin", "Hamburg", "München", "Köln", "Leipzig", "Dresden"),
    "AT": ("Wien", "Graz", "Linz", "Salzburg", "Innsbruck"),
    "FR": ("Paris", "Lyon", "Marseille", "Toulouse", "Lille", "Nantes"),
    "BE": ("Bruxelles", "Liège", "Namur", "Charleroi", "Mons"),
}
WORDS = {
    "en": {
        "remedy": ("lemon water", "garlic tea", "baking soda", "colloidal silver", "turmeric paste"),
        "ailment": ("diabetes", "cancer", "asthma", "the flu", "high blood pressure"),
        "additive": ("lithium", "fluoride nanobots", "sedatives", "microchips"),
        "food": ("cucumber", "dark chocolate", "raw onion", "pineapple"),
        "month": ("January", "March", "June", "September"),
    },
    "de": {
        "remedy": ("Zitronenwasser", "Knoblauchtee", "Natron", "kolloidales Silber", "Kurkumapaste"),
        "ailment": ("Diabetes", "Krebs", "Asthma", "die Grippe", "Bluthochdruck"),
        "additive": ("Lithium", "Nanoroboter", "Beruhigungsmittel", "Mikrochips"),
        "food": ("Gurke", "Zartbitterschokolade", "rohe Zwiebeln", "Ananas"),
        "month": ("Januar", "März", "Juni", "September"),
    },
    "fr": {
        "remedy": ("l'eau citronnée", "la tisane d'ail", "le bicarbonate", "l'argent colloïdal", "le curcuma"),
        "ailment": ("le diabète", "le cancer", "l'asthme", "la grippe", "l'hypertension"),
        "additive": ("du lithium", "des nanorobots", "des sédatifs", "des micropuces"),
        "food": ("du concombre", "du chocolat noir", "de l'oignon cru", "de l'ananas"),
        "month": ("janvier", "mars", "juin", "septembre"),
    },
}
# (media type, template): claims of the kinds fact-checkers see every day.
TEMPLATES = {
    "en": (
        (MediaType.TEXT,
         "BREAKING: {name} confirms that {remedy} cures {ailment} in {n} days. Doctors don't want you to know!"),
        (MediaType.LINK, "Scientists in {city} prove 5G masts cause {ailment}. Share before they delete this."),
        (MediaType.IMAGE, "Leaked memo: {company} is secretly adding {additive} to the tap water in {city}."),
        (MediaType.IMAGE, "This photo shows the flood in {city} yesterday. The media is silent."),
        (MediaType.TEXT,
         "Cash will be banned from {month}. Withdraw your savings now, banks in {city} are already closing."),
        (MediaType.VIDEO, "{name} at the {city} rally: \"vaccines are the biggest scam in history\"."),
        (MediaType.TEXT, "A {city} hospital says drinking hot water every {n} minutes kills the virus."),
        (MediaType.VIDEO, "Video: {name} arrested at {city} airport carrying {n} kg of gold."),
        (MediaType.LINK, "New law: from {month} pensioners lose their pension if they own a car."),
        (MediaType.TEXT, "Eating {food} before bed burns {n}00 calories overnight, a {city} study proves."),
    ),
    "de": (
        (MediaType.TEXT,
         "EILMELDUNG: {name} bestätigt, dass {remedy} {ailment} in {n} Tagen heilt. Ärzte verschweigen es!"),
        (MediaType.LINK,
         "Forscher aus {city} beweisen: 5G-Masten verursachen {ailment}. Teilen, bevor es gelöscht wird!"),
        (MediaType.IMAGE, "Geleaktes Dokument: {company} mischt heimlich {additive} ins Trinkwasser von {city}."),
        (MediaType.IMAGE, "Dieses Foto zeigt das Hochwasser in {city} von gestern. Die Medien schweigen."),
        (MediaType.TEXT,
         "Ab {month} wird Bargeld verboten. Hebt jetzt euer Erspartes ab, die Banken in {city} schließen schon."),
        (MediaType.VIDEO, "{name} auf der Kundgebung in {city}: „Impfungen sind der größte Betrug der Geschichte.“"),
        (MediaType.TEXT, "Ein Krankenhaus in {city} sagt: Alle {n} Minuten heißes Wasser trinken tötet das Virus."),
        (MediaType.VIDEO, "Video: {name} am Flughafen {city} mit {n} kg Gold festgenommen."),
        (MediaType.LINK, "Neues Gesetz: Ab {month} verlieren Rentner ihre Rente, wenn sie ein Auto besitzen."),
        (MediaType.TEXT,
         "Wer vor dem Schlafen {food} isst, verbrennt über Nacht {n}00 Kalorien, beweist eine Studie aus {city}."),
    ),
    "fr": (
        (MediaType.TEXT,
         "URGENT : {name} confirme que {remedy} guérit {ailment} en {n} jours. Les médecins vous le cachent !"),
        (MediaType.LINK,
         "Des chercheurs de {city} prouvent que les antennes 5G provoquent {ailment}. Partagez avant la censure !"),
        (MediaType.IMAGE, "Note interne : {company} ajoute en secret {additive} à l'eau du robinet de {city}."),
        (MediaType.IMAGE, "Cette photo montre l'inondation d'hier à {city}. Les médias se taisent."),
        (MediaType.TEXT,
         "L'argent liquide sera interdit dès {month}. Retirez vos économies, les banques de {city} ferment déjà."),
        (MediaType.VIDEO, "{name} au meeting de {city} : « les vaccins sont la plus grande arnaque de l'histoire »."),
        (MediaType.TEXT, "Un hôpital de {city} affirme que boire de l'eau chaude toutes les {n} minutes tue le virus."),
        (MediaType.VIDEO, "Vidéo : {name} arrêté à l'aéroport de {city} avec {n} kg d'or."),
        (MediaType.LINK, "Nouvelle loi : dès {month}, les retraités perdent leur pension s'ils possèdent une voiture."),
        (MediaType.TEXT,
         "Manger {food} avant de dormir brûle {n}00 calories pendant la nuit, selon une étude de {city}."),
    ),
}
POLITICIAN_TEMPLATES = (
    "Under my plan, {city} will get {n},000 new jobs by {month}. Promises made, promises kept.",
    "My opponent voted {n} times to raise your taxes. I never will.",
    "Crime in {city} is at its highest in {n}0 years. Only we can fix it.",
)
FLAG_SOURCES = tuple(FlagSource.values)
# Most flags come from user reports, the fewest from trusted flaggers, as on a real platform.
FLAG_SOURCE_WEIGHTS = (55, 25, 12, 8)
FLAG_REASONS = {
    FlagSource.USER_REPORT: ("False information", "Misleading health claim", "Scam or fraud", "Fake news"),
    FlagSource.CLASSIFIER: (
        "misinformation model score 0.91", "misinformation model score 0.87", "viral-claim model score 0.95",
    ),
    FlagSource.PARTNER: ("Partner newsroom: claim already debunked elsewhere", "Partner newsroom: manipulated image"),
    FlagSource.TRUSTED_FLAGGER: (
        "Trusted flagger notice: health misinformation", "Trusted flagger notice: election misinformation",
    ),
}
# Said of a post that is a picture or a video only; any other gets its source's first reason instead.
PICTURE_REASONS = {"Partner newsroom: manipulated image"}


def flag_reason(source: str, *, rng: random.Random, pictured: bool) -> str:
    """A demo flag's reason. Drawn from every reason of the source whatever the post, so the demo's draws (and
    with them its posts and figures) are the same with or without a picture."""
    reason = rng.choice(FLAG_REASONS[source])
    return reason if pictured or reason not in PICTURE_REASONS else FLAG_REASONS[source][0]


def demo_seeded() -> bool:
    """The seed runs in one transaction, so the demo organisations existing means it is complete."""
    return Organisation.objects.filter(name__in=[o.name for o in ORGANISATIONS]).exists()


def _flags_for_page(
    spec: PageSpec, *, first_number: int, rng: random.Random, fake: Faker, now: datetime
) -> list[FlagInput]:
    page = PageInput(external_id=spec.external_id, name=spec.name, is_politician=spec.is_politician)
    words = WORDS[spec.language]
    flags: list[FlagInput] = []
    for number in range(first_number, first_number + spec.posts):
        fill = {
            "name": fake.name(), "company": fake.company(), "city": rng.choice(CITIES[spec.country]),
            "n": rng.randint(2, 9), **{key: rng.choice(values) for key, values in words.items()},
        }
        media = None
        if spec.is_politician:
            media_type, template = MediaType.TEXT, rng.choice(POLITICIAN_TEMPLATES)
        else:
            media_type, template = rng.choice(TEMPLATES[spec.language])
            # Its picture, drawn for it (factcheck.demo_media), for the claims about a photo or a document.
            media = generated_media(number=number, language=spec.language,
                                    template_index=TEMPLATES[spec.language].index((media_type, template))) or None
        # Reach spreads over orders of magnitude: most posts are small, a few go viral.
        views = int(10 ** rng.uniform(1.7, 6.4))
        posted_at = now - timedelta(hours=rng.uniform(1, 6 * 24))
        post = PostInput(
            external_id=f"demo-{number:04d}",
            page=page,
            posted_at=posted_at,
            url=POST_URL.format(page=spec.external_id, number=number),
            text=template.format(**fill),
            language=spec.language,
            country=spec.country,
            media_type=media_type,
            views=views,
            shares=int(views * rng.uniform(0.001, 0.06)),
            media=media,
        )
        for index in range(rng.choices((1, 2, 3, 4, 6, 9), weights=(40, 25, 15, 10, 6, 4))[0]):
            # The first posts take one source each, so every source is in the demo whatever the draw.
            if number < len(FLAG_SOURCES) and index == 0:
                source = FLAG_SOURCES[number]
            else:
                source = rng.choices(FLAG_SOURCES, weights=FLAG_SOURCE_WEIGHTS)[0]
            flags.append(
                FlagInput(
                    idempotency_key=f"demo-flag-{number:04d}-{index}",
                    source=source,
                    post=post,
                    flagged_at=posted_at + (now - posted_at) * rng.uniform(0.05, 0.95),
                    reason=flag_reason(source, rng=rng, pictured=media_type in (MediaType.IMAGE, MediaType.VIDEO)),
                )
            )
    return flags


def _demo_flags(now: datetime) -> list[FlagInput]:
    rng = random.Random(SEED)
    fakers: dict[str, Faker] = {}
    flags: list[FlagInput] = []
    number = 0
    for spec in PAGES:
        locale = FAKER_LOCALES[spec.country]
        if locale not in fakers:
            fakers[locale] = Faker(locale)
            fakers[locale].seed_instance(SEED)
        flags.extend(_flags_for_page(spec, first_number=number, rng=rng, fake=fakers[locale], now=now))
        number += spec.posts
    return flags


def _create_accounts(accounts: tuple[AccountSpec, ...]) -> dict[str, User]:
    users = {}
    for account in accounts:
        users[account.username] = create_user(
            username=account.username,
            role=account.role,
            password=DEMO_PASSWORD,
            organisation_name=account.organisation,
            page_external_ids=list(account.pages),
            email=f"{account.username}@factdesk.example",
        )
    return users


def _record_demo_ratings(users: dict[str, User], now: datetime) -> int:
    """Each checked post claimed, then rated with its own rationale and sources (factcheck.demo_checks), at the
    spec's time: after its flags, over the days the demo spans."""
    for number, spec in enumerate(CHECKED, start=1):
        reviewer = users[spec.reviewer]
        post = Post.objects.get(external_id=external_id_of(number))
        at = now - timedelta(hours=spec.rated_hours_ago)
        # Claimed first, as a reviewer in the UI does, so the audit trail reads like real work.
        claim_post(reviewer=reviewer, post_id=post.pk, now=at - timedelta(minutes=20))
        record_rating(
            claim_if_unclaimed=True, reviewer=reviewer, post_id=post.pk, verdict=spec.verdict,
            rationale=spec.rationale, sources=list(spec.sources),
            article_url=f"{organisation_of(reviewer).url}/checks/{post.external_id}", now=at,
        )
    return len(CHECKED)


@transaction.atomic
def seed_demo_data(*, now: datetime | None = None) -> SeedSummary:
    """Create the demo data set. Call only when `demo_seeded()` is false, inside `seed_demo`'s durable
    transaction (its entry points, ingest_flags, claim_post and record_rating, are not durable for this)."""
    now = now or timezone.now()
    for spec in ORGANISATIONS:
        Organisation.objects.create(
            name=spec.name, url=spec.url, languages=list(spec.languages), countries=list(spec.countries)
        )
    page_names = {spec.external_id: spec.name for spec in PAGES}
    languages = {spec.external_id: (spec.language, spec.country) for spec in PAGES}
    checked = checked_flags(page_names=page_names, languages=languages, now=now)
    # The platform account submits the flags; the other accounts come after the ingest has
    # created the pages, so the page owner's pages carry their real names.
    users = _create_accounts(tuple(a for a in ACCOUNTS if a.role == Role.PLATFORM))
    platform = users["platform"]
    ingest_flags(flags=checked, submitted_by=platform, now=now)
    users |= _create_accounts(tuple(a for a in ACCOUNTS if a.role != Role.PLATFORM))
    ratings = _record_demo_ratings(users, now)
    # The other posts arrive once those are rated: a copy of a rated claim among them is matched to it on
    # arrival and takes its rating, instead of waiting in the queue as the root of a group of its own; the
    # copies of the altered picture are matched by their picture (factcheck.demo_media).
    generated = (_demo_flags(now) + altered_copy_flags(page_names=page_names, languages=languages, now=now)
                 + retold_flags(page_names=page_names, languages=languages, now=now))
    ingest_flags(flags=generated, submitted_by=platform, now=now)
    sent = seed_demo_reports(platform=platform, now=now)
    return SeedSummary(
        organisations=len(ORGANISATIONS),
        pages=len(PAGES),
        posts=(sum(spec.posts for spec in PAGES) + len(CHECKED) + len(REPORTED) + len(ALTERED_COPIES)
               + len(RETOLD)),
        flags=len(checked) + len(generated) + sent,
        ratings=ratings,
        reports=HARM_REPORTS,
        platform_token=issue_token(user=platform),
    )
