"""Every statement of reasons Factdesk exports is valid under the EU DSA Transparency Database's rules.

The rules are written down here a second time, independently of moderation.statements.transparency, from the
database's own source (github.com/digital-services-act/transparency-database at 69e80a0b:
app/Models/Statement.php for the enumerations, app/Services/GroupedSubmissionsService.php
multi_rules for what POST /api/v1/statements checks, EuropeanCountriesService and
EuropeanLanguagesService for countries and languages). A statement is built for every kind of
action and ground, exported with `manage.py export_statements`, and checked field by field.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from factcheck.models import FlagSource, MediaType, Verdict
from moderation.enforcement import action_for
from moderation.models import Action, ActionKind, PageStanding, RemovalGround, StatementOfReasons
from moderation.pipeline import Change, carry_out, lock_post
from moderation.staff_actions import override_action, remove_post
from moderation.statements import reasons
from moderation.statements import transparency as tdb
from tests.factories import (
    DecisionFactory,
    FactCheckerFactory,
    FlagFactory,
    PageFactory,
    PostFactory,
    StaffFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

# --- The published rules (the schema mandatory since 1 July 2025) -------------------------------

PUBLISHED = {
    "decision_visibility": {
        "DECISION_VISIBILITY_CONTENT_REMOVED", "DECISION_VISIBILITY_CONTENT_DISABLED",
        "DECISION_VISIBILITY_CONTENT_DEMOTED", "DECISION_VISIBILITY_CONTENT_AGE_RESTRICTED",
        "DECISION_VISIBILITY_CONTENT_INTERACTION_RESTRICTED", "DECISION_VISIBILITY_CONTENT_LABELLED",
        "DECISION_VISIBILITY_OTHER",
    },
    "decision_monetary": {"DECISION_MONETARY_SUSPENSION", "DECISION_MONETARY_TERMINATION", "DECISION_MONETARY_OTHER"},
    "decision_provision": {
        "DECISION_PROVISION_PARTIAL_SUSPENSION", "DECISION_PROVISION_TOTAL_SUSPENSION",
        "DECISION_PROVISION_PARTIAL_TERMINATION", "DECISION_PROVISION_TOTAL_TERMINATION",
    },
    "decision_account": {"DECISION_ACCOUNT_SUSPENDED", "DECISION_ACCOUNT_TERMINATED"},
    "account_type": {"ACCOUNT_TYPE_BUSINESS", "ACCOUNT_TYPE_PRIVATE"},
    "decision_ground": {"DECISION_GROUND_ILLEGAL_CONTENT", "DECISION_GROUND_INCOMPATIBLE_CONTENT"},
    "incompatible_content_illegal": {"Yes", "No"},
    "content_type": {f"CONTENT_TYPE_{t}" for t in "APP AUDIO IMAGE PRODUCT SYNTHETIC_MEDIA TEXT VIDEO OTHER".split()},
    "category": {f"STATEMENT_CATEGORY_{c}" for c in (
        "ANIMAL_WELFARE CONSUMER_INFORMATION CYBER_VIOLENCE CYBER_VIOLENCE_AGAINST_WOMEN "
        "DATA_PROTECTION_AND_PRIVACY_VIOLATIONS ILLEGAL_OR_HARMFUL_SPEECH INTELLECTUAL_PROPERTY_INFRINGEMENTS "
        "NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS NOT_SPECIFIED_NOTICE OTHER_VIOLATION_TC PROTECTION_OF_MINORS "
        "RISK_FOR_PUBLIC_SECURITY SCAMS_AND_FRAUD SELF_HARM UNSAFE_AND_PROHIBITED_PRODUCTS VIOLENCE"
    ).split()},
    "category_specification": {f"KEYWORD_{k}" for k in (
        "ANIMAL_HARM ADULT_SEXUAL_MATERIAL AGE_SPECIFIC_RESTRICTIONS AGE_SPECIFIC_RESTRICTIONS_MINORS "
        "BIOMETRIC_DATA_BREACH BULLYING_AGAINST_GIRLS CHILD_SEXUAL_ABUSE_MATERIAL CHILD_SEXUAL_ABUSE_MATERIAL_DEEPFAKE "
        "CONTENT_PROMOTING_EATING_DISORDERS COORDINATED_HARM COPYRIGHT_INFRINGEMENT CYBER_BULLYING_INTIMIDATION "
        "CYBER_HARASSMENT CYBER_HARASSMENT_AGAINST_WOMEN CYBER_INCITEMENT CYBER_STALKING CYBER_STALKING_AGAINST_WOMEN "
        "DATA_FALSIFICATION DEFAMATION DESIGN_INFRINGEMENT DISCRIMINATION MISINFORMATION_DISINFORMATION "
        "FEMALE_GENDERED_DISINFORMATION GEOGRAPHIC_INDICATIONS_INFRINGEMENT GEOGRAPHICAL_REQUIREMENTS "
        "GOODS_SERVICES_NOT_PERMITTED GROOMING_SEXUAL_ENTICEMENT_MINORS HATE_SPEECH HIDDEN_ADVERTISEMENT "
        "HUMAN_EXPLOITATION HUMAN_TRAFFICKING ILLEGAL_ORGANIZATIONS IMPERSONATION_ACCOUNT_HIJACKING "
        "INAUTHENTIC_ACCOUNTS INAUTHENTIC_LISTINGS INAUTHENTIC_USER_REVIEWS INCITEMENT_AGAINST_WOMEN "
        "INCITEMENT_VIOLENCE_HATRED INSUFFICIENT_INFORMATION_ON_TRADERS LANGUAGE_REQUIREMENTS "
        "MISLEADING_INFO_CONSUMER_RIGHTS MISLEADING_INFO_GOODS_SERVICES MISSING_PROCESSING_GROUND "
        "NON_CONSENSUAL_IMAGE_SHARING NON_CONSENSUAL_IMAGE_SHARING_AGAINST_WOMEN NON_CONSENSUAL_MATERIAL_DEEPFAKE "
        "NON_CONSENSUAL_MATERIAL_DEEPFAKE_AGAINST_WOMEN NONCOMPLIANCE_PRICING NUDITY PATENT_INFRINGEMENT PHISHING "
        "PROHIBITED_PRODUCTS PYRAMID_SCHEMES RIGHT_TO_BE_FORGOTTEN OTHER RISK_ENVIRONMENTAL_DAMAGE RISK_PUBLIC_HEALTH "
        "SELF_MUTILATION STALKING SUICIDE TERRORIST_CONTENT TRADE_SECRET_INFRINGEMENT TRADEMARK_INFRINGEMENT "
        "TRAFFICKING_WOMEN_GIRLS UNLAWFUL_SALE_ANIMALS UNSAFE_CHALLENGES UNSAFE_PRODUCTS VIOLATION_EU_LAW "
        "VIOLATION_NATIONAL_LAW"
    ).split()},
    "source_type": {
        "SOURCE_ARTICLE_16", "SOURCE_TRUSTED_FLAGGER", "SOURCE_TYPE_OTHER_NOTIFICATION", "SOURCE_VOLUNTARY",
    },
    "automated_detection": {"Yes", "No"},
    "automated_decision": {
        "AUTOMATED_DECISION_FULLY", "AUTOMATED_DECISION_PARTIALLY", "AUTOMATED_DECISION_NOT_AUTOMATED",
    },
    # The EU and the EEA; Greece is GR.
    "territorial_scope": set(
        "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IS IT LI LT LU LV MT NL NO PL PT RO SE SI SK".split()
    ),
    # ISO 639-1, upper-case.
    "content_language": set(
        "AA AB AE AF AK AM AN AR AS AV AY AZ BA BE BG BH BI BM BN BO BR BS CA CE CH CO CR CS CU CV CY DA DE DV DZ "
        "EE EL EN EO ES ET EU FA FF FI FJ FO FR FY GA GD GL GN GU GV HA HE HI HO HR HT HU HY HZ IA ID IE IG II IK "
        "IO IS IT IU JA JV KA KG KI KJ KK KL KM KN KO KR KS KU KV KW KY LA LB LG LI LN LO LT LU LV MG MH MI MK ML "
        "MN MR MS MT MY NA NB ND NE NG NL NN NO NR NV NY OC OJ OM OR OS PA PI PL PS PT QU RM RN RO RU RW SA SC SD "
        "SE SG SI SK SL SM SN SO SQ SR SS ST SU SV SW TA TE TG TH TI TK TL TN TO TR TS TT TW TY UG UK UR UZ VE VI "
        "VO WA WO XH YI YO ZA ZH ZU".split()
    ),
}
PUBLISHED["category_addition"] = PUBLISHED["category"]
ARRAYS = {"decision_visibility", "content_type", "category_addition", "category_specification", "territorial_scope"}
LIMITS = {
    "decision_visibility_other": 500, "decision_monetary_other": 500, "category_specification_other": 500,
    "decision_ground_reference_url": 500, "illegal_content_legal_ground": 500, "illegal_content_explanation": 2000,
    "incompatible_content_ground": 500, "incompatible_content_explanation": 2000, "content_type_other": 500,
    "decision_facts": 5000, "source_identity": 500, "puid": 500,
}
REQUIRED = {"decision_ground", "content_type", "category", "content_date", "application_date", "decision_facts",
            "source_type", "automated_detection", "automated_decision", "puid"}
DATE_RANGES = {"content_date": (date(2000, 1, 1), date(2038, 1, 1)),
               "application_date": (date(2020, 1, 1), date(2038, 1, 1))}
KNOWN = set(PUBLISHED) | set(LIMITS) | set(DATE_RANGES) | {
    "end_date_account_restriction", "end_date_monetary_restriction", "end_date_service_restriction",
    "end_date_visibility_restriction", "content_id",
}
PUID = re.compile(r"^[a-zA-Z0-9_-]+$")
YMD = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def published_problems(statement: dict) -> list[str]:
    """The published rules, field by field (independent of moderation.statements.transparency)."""
    problems = [f"unknown field {name}" for name in set(statement) - KNOWN]
    problems += [f"{name} missing" for name in REQUIRED if statement.get(name) in (None, "", [])]
    if not any(statement.get(name) for name in ("decision_visibility", "decision_monetary", "decision_provision",
                                                   "decision_account")):
        problems.append("no restriction")
    for name, allowed in PUBLISHED.items():
        if name not in statement:
            continue
        values = statement[name]
        if name in ARRAYS:
            if not isinstance(values, list) or not values or len(set(values)) != len(values):
                problems.append(f"{name} is not a non-empty array of distinct values: {values!r}")
                continue
        else:
            values = [values]
        problems += [f"{name}: {v!r} is not published" for v in values if v not in allowed]
    for name, most in LIMITS.items():
        if name in statement and not (isinstance(statement[name], str) and 0 < len(statement[name]) <= most):
            problems.append(f"{name} longer than {most} or not text")
    for name, (earliest, latest) in DATE_RANGES.items():
        value = statement.get(name, "")
        if not YMD.match(value) or not earliest <= date.fromisoformat(value) <= latest:
            problems.append(f"{name} {value!r} is not a YYYY-MM-DD date in [{earliest}, {latest}]")
    ground = statement.get("decision_ground")
    if ground == "DECISION_GROUND_INCOMPATIBLE_CONTENT":
        for name in ("incompatible_content_ground", "incompatible_content_explanation"):
            if not statement.get(name):
                problems.append(f"{name} is required with the incompatible-content ground")
    else:
        problems += [f"{n} without its ground" for n in statement if n.startswith("incompatible_content_")]
    if ground != "DECISION_GROUND_ILLEGAL_CONTENT":
        problems += [f"{n} without its ground" for n in statement if n.startswith("illegal_content_")]
    if not PUID.match(statement.get("puid", "")):
        problems.append("puid does not match ^[a-zA-Z0-9_-]+$")
    return problems


# --- Every kind of action -----------------------------------------------------------------------

SECRET_PEOPLE = [("zelda-owner", "Zelda", "Quixotic"), ("yorick-rater", "Yorick", "Wunderlich"),
                 ("xavier-staff", "Xavier", "Vanderpool")]


@pytest.fixture
def world():
    """A statement for every kind of action, ground, source, media type and a repeat offender."""
    owner = UserFactory(username="zelda-owner", email="zelda.quixotic@mail.example", first_name="Zelda",
                        last_name="Quixotic")
    rater = FactCheckerFactory(username="yorick-rater", email="yorick@checkers.example", first_name="Yorick",
                               last_name="Wunderlich")
    staff = StaffFactory(username="xavier-staff", email="xavier@platform.example", first_name="Xavier",
                         last_name="Vanderpool")
    page = PageFactory(name="Zelda Quixotic's Wellness Corner")
    page.owners.add(owner)
    expected: dict[str, dict] = {}

    def post(media=MediaType.TEXT, source=FlagSource.USER_REPORT, language="en"):
        p = PostFactory(page=PageFactory(name=f"Private page of {owner.first_name}"), media_type=media,
                        language=language)
        FlagFactory(post=p, source=source)
        return p

    sources = [FlagSource.USER_REPORT, FlagSource.CLASSIFIER, FlagSource.TRUSTED_FLAGGER, FlagSource.PARTNER,
               FlagSource.USER_REPORT]
    for verdict, source in zip([Verdict.FALSE, Verdict.ALTERED, Verdict.PARTLY_FALSE, Verdict.MISSING_CONTEXT,
                                Verdict.SATIRE], sources, strict=True):
        p = post(source=source)
        DecisionFactory(reviewer=rater, post=p, verdict=verdict)
        expected[Action.objects.get(post=p).puid] = {"kind": "rating", "verdict": verdict, "source": source}
    for media in MediaType.values:
        p = post(media=media, language="de" if media == MediaType.VIDEO else "")
        # Recorded before rationales refused contact details (core.reasons): the export still leaves them out.
        with pytest.MonkeyPatch.context() as before:
            before.setattr("core.reasons.find_contact_details", lambda text: [])
            DecisionFactory(reviewer=rater, post=p, verdict=Verdict.FALSE,
                            rationale="Ask the tipster at tipster@mail.example for the original.")
        expected[Action.objects.get(post=p).puid] = {"kind": "rating", "media": media}
    # A copy of a rated post inherits its rating (near-duplicate matching).
    source_post = post()
    rating = DecisionFactory(reviewer=rater, post=source_post, verdict=Verdict.FALSE).rating
    copy = post(source=FlagSource.USER_REPORT)
    with transaction.atomic():
        locked = lock_post(copy.pk)
        spec = action_for(rating, kind=ActionKind.MATCHED_RATING)
        carry_out(Change(post=locked, cause="matched copy", create=[spec]), now=timezone.now())
    expected[Action.objects.get(post=copy).puid] = {"kind": "matched"}
    # Staff override of a fact-check action.
    overridden = post()
    DecisionFactory(reviewer=rater, post=overridden, verdict=Verdict.FALSE)
    override = override_action(staff=staff, action_id=Action.objects.get(post=overridden).pk,
                               feed_multiplier=Decimal("0.5"), label="Disputed.", reason="Context added by staff.")
    expected[override.puid] = {"kind": "override"}
    for ground in RemovalGround.values:
        removal = remove_post(staff=staff, post_id=post().pk, ground=ground, reason=f"Breaks the {ground} standard.")
        expected[removal.puid] = {"kind": "removal", "ground": ground}
    # A repeat offender: the third strike's statement suspends monetisation.
    for _ in range(3):
        offending = PostFactory(page=page)
        FlagFactory(post=offending)
        DecisionFactory(reviewer=rater, post=offending, verdict=Verdict.FALSE)
    assert PageStanding.objects.get(page=page).is_repeat_offender
    expected[Action.objects.get(post=offending).puid] = {"kind": "rating", "repeat_offender": True}
    return {"expected": expected, "people": [owner, rater, staff], "pages": [page]}


def exported(tmp_path) -> list[dict]:
    today = timezone.now().date()
    call_command("export_statements", since=str(today - timedelta(days=1)), out=str(tmp_path / "out"))
    files = sorted((tmp_path / "out").glob("statements-*.json"))
    bodies = [json.loads(f.read_text()) for f in files]
    assert all(set(body) == {"statements"} and 1 <= len(body["statements"]) <= 100 for body in bodies)
    return [s for body in bodies for s in body["statements"]]


def test_every_exported_statement_is_valid_under_the_published_rules(world, tmp_path):
    statements = exported(tmp_path)
    assert len(statements) == StatementOfReasons.objects.count() >= len(world["expected"])
    failures = {s["puid"]: published_problems(s) for s in statements if published_problems(s)}
    assert not failures
    puids = [s["puid"] for s in statements]
    assert len(set(puids)) == len(puids)
    assert all(tdb.statement_problems(s) == [] for s in statements)  # our own check agrees


def test_each_kind_of_action_gets_its_own_category_visibility_and_automation(world, tmp_path):
    by_puid = {s["puid"]: s for s in exported(tmp_path)}
    categories = {
        RemovalGround.VIOLENCE: "STATEMENT_CATEGORY_VIOLENCE",
        RemovalGround.HATE: "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
        RemovalGround.HARASSMENT: "STATEMENT_CATEGORY_CYBER_VIOLENCE",
        RemovalGround.IMMINENT_HARM_MISINFORMATION: "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY",
    }
    sources = {FlagSource.USER_REPORT: "SOURCE_ARTICLE_16", FlagSource.TRUSTED_FLAGGER: "SOURCE_TRUSTED_FLAGGER",
               FlagSource.CLASSIFIER: "SOURCE_VOLUNTARY", FlagSource.PARTNER: "SOURCE_VOLUNTARY"}
    media = {MediaType.TEXT: ["CONTENT_TYPE_TEXT"], MediaType.LINK: ["CONTENT_TYPE_TEXT"],
             MediaType.IMAGE: ["CONTENT_TYPE_IMAGE"], MediaType.VIDEO: ["CONTENT_TYPE_VIDEO"]}
    for puid, want in world["expected"].items():
        s = by_puid[puid]
        assert s["decision_ground"] == "DECISION_GROUND_INCOMPATIBLE_CONTENT"
        if want["kind"] == "removal":
            assert s["category"] == categories[want["ground"]]
            assert s["decision_visibility"] == ["DECISION_VISIBILITY_CONTENT_REMOVED"]
        else:
            assert s["category"] == "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS"
            assert s["category_specification"] == ["KEYWORD_MISINFORMATION_DISINFORMATION"]
            assert "DECISION_VISIBILITY_CONTENT_REMOVED" not in s["decision_visibility"]
        matched = want["kind"] == "matched"
        assert s["automated_decision"] == ("AUTOMATED_DECISION_PARTIALLY" if matched
                                           else "AUTOMATED_DECISION_NOT_AUTOMATED")
        # PRODUCT.md: "Yes" exactly when a classifier flag started it (a match is a partly automated decision).
        if want.get("source") == FlagSource.CLASSIFIER:
            assert s["automated_detection"] == "Yes"
        elif "source" in want:
            assert s["automated_detection"] == "No"
            assert s["source_type"] == sources[want["source"]]
        if "media" in want:
            assert s["content_type"] == media[want["media"]]
            assert s.get("content_language") == ("DE" if want["media"] == MediaType.VIDEO else None)
        assert ("decision_monetary" in s) == bool(want.get("repeat_offender"))
        if want.get("repeat_offender"):
            assert s["decision_monetary"] == "DECISION_MONETARY_SUSPENSION"
    verdicts = {w["verdict"]: by_puid[p] for p, w in world["expected"].items() if "verdict" in w}
    assert verdicts[Verdict.FALSE]["decision_visibility"] == ["DECISION_VISIBILITY_CONTENT_DEMOTED",
                                                              "DECISION_VISIBILITY_CONTENT_LABELLED"]
    assert verdicts[Verdict.SATIRE]["decision_visibility"] == ["DECISION_VISIBILITY_CONTENT_LABELLED"]


def test_no_personal_data_is_exported(world, tmp_path):
    text = json.dumps(exported(tmp_path), ensure_ascii=False).lower()
    secrets = [value for person in world["people"]
               for value in (person.username, person.email, person.first_name, person.last_name)]
    secrets += [page.name for page in world["pages"]] + ["private page of"]
    assert not [secret for secret in secrets if secret.lower() in text]
    assert "@" not in text  # the e-mail address pasted into a rationale was taken out


def test_every_value_our_code_can_produce_is_published():
    produced: dict[str, set] = {name: set() for name in PUBLISHED}
    for taxonomy in [reasons.FACT_CHECK_TAXONOMY, *reasons.TAXONOMY_BY_GROUND.values()]:
        produced["category"].add(taxonomy["category"])
        produced["category_addition"].update(taxonomy.get("category_addition", []))
        produced["category_specification"].update(taxonomy.get("category_specification", []))
    produced["content_type"].update(t for types in reasons.CONTENT_TYPES.values() for t in types)
    produced["source_type"].update([*reasons.SOURCE_TYPES.values(), tdb.SOURCE_VOLUNTARY])
    produced["decision_visibility"].update([tdb.VISIBILITY_DEMOTED, tdb.VISIBILITY_LABELLED, tdb.VISIBILITY_REMOVED])
    produced["decision_monetary"].add(tdb.MONETARY_SUSPENSION)
    produced["decision_ground"].add(tdb.GROUND_INCOMPATIBLE)
    produced["automated_decision"].update([tdb.AUTOMATED_NOT, tdb.AUTOMATED_PARTIALLY])
    for name, values in produced.items():
        assert values <= PUBLISHED[name], name
    assert set(RemovalGround.values) == set(reasons.TAXONOMY_BY_GROUND)
    assert set(MediaType.values) == set(reasons.CONTENT_TYPES)
    # And the module that owns the rules holds exactly the published enumerations.
    owned = {**tdb.ONE_OF, **tdb.ARRAY_OF}
    for name, allowed in PUBLISHED.items():
        assert set(owned[name]) == allowed, name


def test_the_rules_check_refuses_what_the_database_would(world):
    good = StatementOfReasons.objects.first().transparency
    assert tdb.statement_problems(good) == []
    cases = {
        "category": {**good, "category": "STATEMENT_CATEGORY_PORNOGRAPHY_OR_SEXUALIZED_CONTENT"},  # the old schema's
        "category_specification": {**good, "category_specification": ["KEYWORD_DISINFORMATION"]},  # the old schema's
        "incompatible_content_ground": {k: v for k, v in good.items() if k != "incompatible_content_ground"},
        "content_date": {**good, "content_date": "02/12/2026"},
        "application_date": {**good, "application_date": "2019-12-31"},
        "decision_facts": {**good, "decision_facts": "x" * 5001},
        "puid": {**good, "puid": "has space"},
        "territorial_scope": {**good, "territorial_scope": ["GB"]},
        "one of": {k: v for k, v in good.items() if k != "decision_visibility"},
        "e-mail": {**good, "decision_facts": "ask me@mail.example"},
    }
    for field, statement in cases.items():
        problems = tdb.statement_problems(statement)
        assert problems and published_problems(statement) or field == "e-mail", field
        assert any(field in problem for problem in problems), (field, problems)


def test_outgoing_normalises_what_older_code_stored():
    stored = {"content_language": "de", "territorial_scope": ["FR", "EL", "FR"], "decision_monetary": None}
    assert tdb.outgoing_statement(stored) == {"content_language": "DE", "territorial_scope": ["FR", "GR"]}
    assert "content_language" not in tdb.outgoing_statement({"content_language": "xx"})


def test_a_territorial_scope_outside_the_eu_and_eea_fails_the_system_check(settings):
    from django.core.checks import run_checks

    settings.FACTDESK_TERRITORIAL_SCOPE = ["DE", "GB"]
    assert [e.id for e in run_checks() if e.id.startswith("moderation.")] == ["moderation.E001"]
    settings.FACTDESK_TERRITORIAL_SCOPE = ["DE", "GR", "NO"]
    assert not [e for e in run_checks() if e.id.startswith("moderation.")]
