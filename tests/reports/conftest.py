"""A week of history for the figures' tests, made through the real domain functions at explicit times.

`history` builds five UTC days (D0 to D4, from Monday 3 March 2025) of flags, ratings, decisions,
removals and appeals by two organisations of different coverage, with D2 left empty. Each step is
the function the app itself calls (ingest_flags, record_rating and apply_rating through
DecisionFactory, apply_matches, propagate_rating, remove_post, override_action, file_appeal,
decide_appeal, withdraw_appeal), each given its `now=`; the after-commit jobs never run in these
tests, so their work is done here, by hand, at a stated time (a rating's decision a minute after
it). What each day holds:

D0  flags at 05:00-08:00 for fr1, fr2 (fr/FR), en1 (en/GB), en2 (en/US), de1 (de/DE, no
    organisation covers it), a politician's post and claim1 (en/GB); fr1, en1 and claim1 are
    rated; copy1, an exact copy of claim1, arrives at 15:00 and inherits its rating (matched
    rating at 15:05); the owner disputes fr1's rating (16:00); staff remove de1 (18:00); the
    owner appeals the removal (20:00).
D1  fr3 (fr/FR), claim2 and its copy copy2 (grouped with it) are flagged; the fr1 dispute is
    reversed with a new verdict (a rating superseded on appeal); en1 is re-rated; the owner asks
    a correction of en1 (16:00); the owner disputes claim1 (17:00) and withdraws (19:00); staff
    override claim1's action (21:00).
D2  nothing.
D3  claim2 is rated and copy2 inherits it; the removal appeal is upheld; the en1 correction is
    reversed to True; fr3 and fr2 are rated; the owner disputes fr3 (20:00).
D4  staff remove en2 (still unrated); a second flag for de1 arrives; en4 is flagged and rated True.

The removal appeal is open past 24 hours at the ends of D1 and D2, the correction at the end of
D2, the fr3 dispute at the end of D4: those are the overdue appeals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import pytest

from factcheck.ingest import FlagInput, PageInput, PostInput, ingest_flags
from factcheck.matching.matcher import match_new_posts
from factcheck.models import Organisation, Post, QueueState
from moderation.appeals import decide_appeal, file_appeal, withdraw_appeal
from moderation.models import Action, ActionKind, Appeal
from moderation.propagation import apply_matches, propagate_rating
from moderation.staff_actions import override_action, remove_post
from reports.rollup import roll_up_days
from tests.factcheck.matching_helpers import CLAIM, EXACT_COPY
from tests.factories import DecisionFactory, FactCheckerFactory, OrganisationFactory, StaffFactory

D0 = date(2025, 3, 3)
DAYS = [D0 + timedelta(days=n) for n in range(5)]
FIRST, LAST = DAYS[0], DAYS[-1]

TEXTS = {
    "fr1": "Le gouvernement va interdire les voitures diesel dans toutes les villes dès le mois prochain",
    "fr2": "Une étude montre que boire du café froid le matin double la durée de vie des personnes âgées en France",
    "fr3": "Les éoliennes installées en Bretagne provoquent des tremblements de terre selon les sismologues",
    "en1": "A photo shows the prime minister shaking hands with a famous bank robber outside parliament last Thursday",
    "en2": "Tap water in the capital now contains a tracking chemical added by the utility company since January",
    "de1": "Die Regierung plant angeblich eine neue Steuer auf Haustiere die ab Sommer für alle Hunde und Katzen gilt",
    "pol": "Vote for me and every household will receive free solar panels paid for by the national lottery fund",
    "claim1": CLAIM,
    "copy1": EXACT_COPY,
    "claim2": "Eating two raw onions before bed removes all viruses from the lungs according to a nurse in Ohio",
    "copy2": "EATING two raw onions before bed removes ALL viruses from the lungs according to a nurse in Ohio!!!",
    "en4": "The national museum will sell its dinosaur skeletons to a private collector to pay for new offices",
}
WHERE = {
    "fr1": ("fr", "FR"), "fr2": ("fr", "FR"), "fr3": ("fr", "FR"), "en1": ("en", "GB"), "en2": ("en", "US"),
    "de1": ("de", "DE"), "pol": ("en", "GB"), "claim1": ("en", "GB"), "copy1": ("en", "GB"),
    "claim2": ("en", "GB"), "copy2": ("en", "IE"), "en4": ("en", "GB"),
}


def at(day: int, hour: int, minute: int = 0, *, first: date = D0) -> datetime:
    """A moment of day `day` of the history (D0 is day 0), UTC."""
    return datetime(first.year, first.month, first.day, hour, minute, tzinfo=UTC) + timedelta(days=day)


def flag(name: str, *, flagged_at: datetime, source: str = "user_report", key: str = "", text: str = "",
         where: tuple[str, str] = ("", "")) -> FlagInput:
    """A flag of post `name` (its text and place from TEXTS and WHERE unless given), on a page of its own."""
    language, country = where if text else WHERE[name]
    politician = name == "pol"
    return FlagInput(
        idempotency_key=key or f"flag-{name}", source=source, flagged_at=flagged_at, reason="looks false",
        post=PostInput(
            external_id=name, page=PageInput(f"page-{name}", f"Page of {name}", politician),
            posted_at=flagged_at - timedelta(hours=6), url=f"https://social.example/{name}", text=text or TEXTS[name],
            language=language, country=country, views=1000, shares=20,
        ),
    )


@dataclass
class History:
    org_fr: Organisation
    org_en: Organisation
    reviewer: object  # org_fr
    colleague: object  # org_fr
    en_a: object
    en_b: object
    staff: object
    staff_2: object
    owner: object
    now: datetime  # after the last day: every day of the history is over
    posts: dict[str, Post] = field(default_factory=dict)
    appeals: dict[str, Appeal] = field(default_factory=dict)

    @property
    def organisations(self) -> list[Organisation]:
        return [self.org_fr, self.org_en]


def _arrive(history: History, *flags: FlagInput, now: datetime) -> None:
    ingest_flags(flags=list(flags), now=now)
    for found in Post.objects.filter(external_id__in=[f.post.external_id for f in flags]).select_related("page"):
        history.posts[found.external_id] = found
        found.page.owners.add(history.owner)


def build_history(*, org_fr, reviewer, colleague, staff, owner) -> History:
    org_en = OrganisationFactory(name="Full Facts", languages=["en"], countries=[])
    h = History(
        org_fr=org_fr, org_en=org_en, reviewer=reviewer, colleague=colleague,
        en_a=FactCheckerFactory(organisation=org_en, first_name="Ann"), en_b=FactCheckerFactory(organisation=org_en),
        staff=staff, staff_2=StaffFactory(), owner=owner, now=at(5, 6),
    )
    p = h.posts

    # D0
    _arrive(h, flag("fr1", flagged_at=at(0, 6), source="trusted_flagger"), flag("fr2", flagged_at=at(0, 7)),
            flag("en1", flagged_at=at(0, 7, 30), source="classifier"), flag("en2", flagged_at=at(0, 8)),
            flag("de1", flagged_at=at(0, 5), source="partner"), flag("pol", flagged_at=at(0, 5, 30)),
            flag("claim1", flagged_at=at(0, 7, 45)), now=at(0, 8))
    DecisionFactory(reviewer=reviewer, post=p["fr1"], verdict="false", created_at=at(0, 10), decided_at=at(0, 10, 1))
    DecisionFactory(reviewer=h.en_a, post=p["en1"], verdict="partly_false",
                    created_at=at(0, 12), decided_at=at(0, 12, 1))
    DecisionFactory(reviewer=h.en_a, post=p["claim1"], verdict="false", created_at=at(0, 13), decided_at=at(0, 13, 1))
    _arrive(h, flag("copy1", flagged_at=at(0, 14, 50)), now=at(0, 15))
    assert Post.objects.get(pk=p["copy1"].pk).queue_state == QueueState.MATCHED  # matched on arrival
    apply_matches(post_ids=[p["copy1"].pk], now=at(0, 15, 5))
    h.appeals["fr1"] = file_appeal(owner=owner, post_id=p["fr1"].pk, kind="dispute", statement="It is real.",
                                   now=at(0, 16))
    remove_post(staff=staff, post_id=p["de1"].pk, ground="hate", reason="Hate speech.", now=at(0, 18))
    h.appeals["de1"] = file_appeal(owner=owner, post_id=p["de1"].pk, kind="removal", statement="Satire.",
                                   now=at(0, 20))

    # D1
    _arrive(h, flag("fr3", flagged_at=at(1, 8, 30)), flag("claim2", flagged_at=at(1, 9)),
            flag("copy2", flagged_at=at(1, 9, 5)), now=at(1, 9, 10))
    match_new_posts(post_ids=[p["claim2"].pk, p["copy2"].pk], now=at(1, 9, 15))  # the matching job
    copy2 = Post.objects.get(pk=p["copy2"].pk)
    assert (copy2.duplicate_of_id, copy2.queue_state) == (p["claim2"].pk, QueueState.GROUPED)
    decide_appeal(appeal_id=h.appeals["fr1"].pk, reviewer=colleague, outcome="reversed",
                  public_rationale="New evidence.", new_verdict="missing_context",
                  reason="The decree is real but misread.", now=at(1, 11))
    DecisionFactory(reviewer=h.en_b, post=p["en1"], verdict="false", change_reason="The robber was identified.",
                    created_at=at(1, 14), decided_at=at(1, 14, 1))
    h.appeals["en1"] = file_appeal(owner=owner, post_id=p["en1"].pk, kind="correction", statement="Fixed it.",
                                   correction_details="Caption corrected.", now=at(1, 16))
    h.appeals["claim1"] = file_appeal(owner=owner, post_id=p["claim1"].pk, kind="dispute", statement="No.",
                                      now=at(1, 17))
    withdraw_appeal(appeal_id=h.appeals["claim1"].pk, owner=owner, now=at(1, 19))
    action = Action.objects.get(post=p["claim1"], kind=ActionKind.FACT_CHECK, ended_at__isnull=True)
    override_action(staff=staff, action_id=action.pk, feed_multiplier="0.9", label="", reason="Too harsh.",
                    now=at(1, 21))

    # D2: no activity at all.

    # D3
    claim2_decision = DecisionFactory(reviewer=h.en_a, post=p["claim2"], verdict="false",
                                    created_at=at(3, 8), decided_at=at(3, 8, 1))
    assert Post.objects.get(pk=p["copy2"].pk).queue_state == QueueState.MATCHED
    propagate_rating(rating_id=claim2_decision.rating_id, now=at(3, 8, 10))  # the rating's job reaches the copy
    decide_appeal(appeal_id=h.appeals["de1"].pk, reviewer=h.staff_2, outcome="upheld", reason="Hate.",
                  now=at(3, 9))
    decide_appeal(appeal_id=h.appeals["en1"].pk, reviewer=h.en_a, outcome="reversed",
        public_rationale="New evidence.", new_verdict="true",
                  reason="The correction fixes it.", now=at(3, 10))
    DecisionFactory(reviewer=reviewer, post=p["fr3"], verdict="altered", created_at=at(3, 11), decided_at=at(3, 11, 1))
    DecisionFactory(reviewer=reviewer, post=p["fr2"], verdict="satire",
                    created_at=at(3, 11, 30), decided_at=at(3, 11, 31))
    h.appeals["fr3"] = file_appeal(owner=owner, post_id=p["fr3"].pk, kind="dispute", statement="Not altered.",
                                   now=at(3, 20))

    # D4
    remove_post(staff=staff, post_id=p["en2"].pk, ground="violence", reason="Threats.", now=at(4, 6))
    _arrive(h, flag("de1", flagged_at=at(4, 11), key="flag-de1-again"), flag("en4", flagged_at=at(4, 12)),
            now=at(4, 12))
    DecisionFactory(reviewer=h.en_b, post=p["en4"], verdict="true", created_at=at(4, 13), decided_at=at(4, 13, 1))
    for name in p:
        p[name].refresh_from_db()
    return h


@pytest.fixture
def history(organisation, reviewer, colleague, ts_user, page_owner) -> History:
    """Five days of history (see the module docstring); `organisation` covers fr/FR, Full Facts all English."""
    return build_history(org_fr=organisation, reviewer=reviewer, colleague=colleague, staff=ts_user,
                         owner=page_owner)


@pytest.fixture
def rolled_up(history) -> History:
    """The history, rolled up at its end (every day of it computed)."""
    roll_up_days(start=FIRST, end=LAST, now=history.now)
    return history
