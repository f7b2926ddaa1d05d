"""The EU DSA Transparency Database's submission rules, as data, and the check against them.

This module owns what the Transparency Database accepts (the schema mandatory since 1 July 2025):
its enumerations, required and conditional fields, lengths, date formats and the puid pattern,
transcribed from the database's own source (github.com/digital-services-act/transparency-database
at 69e80a0b, app/Models/Statement.php, app/Services/GroupedSubmissionsService.php::multi_rules,
app/Services/EuropeanCountriesService.php, app/Services/EuropeanLanguagesService.php; summary in
docs/transparency-database.md). `statement_problems` checks one statement against them, and
`outgoing_statement` is the one place a stored statement is converted on its way out (API,
export, submission); stored rows are append-only and never rewritten.

Nothing here knows Factdesk's models: moderation.statements.reasons decides which values an action gets.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from core.contact_details import EMAIL_KIND, PHONE_KIND, find_contact_details, without_contact_details

# --- Enumerations (keys of the PHP constants; the values are their labels in the webform) -------

DECISION_VISIBILITIES = (
    "DECISION_VISIBILITY_CONTENT_REMOVED",
    "DECISION_VISIBILITY_CONTENT_DISABLED",
    "DECISION_VISIBILITY_CONTENT_DEMOTED",
    "DECISION_VISIBILITY_CONTENT_AGE_RESTRICTED",
    "DECISION_VISIBILITY_CONTENT_INTERACTION_RESTRICTED",
    "DECISION_VISIBILITY_CONTENT_LABELLED",
    "DECISION_VISIBILITY_OTHER",
)
DECISION_MONETARIES = ("DECISION_MONETARY_SUSPENSION", "DECISION_MONETARY_TERMINATION", "DECISION_MONETARY_OTHER")
DECISION_PROVISIONS = (
    "DECISION_PROVISION_PARTIAL_SUSPENSION",
    "DECISION_PROVISION_TOTAL_SUSPENSION",
    "DECISION_PROVISION_PARTIAL_TERMINATION",
    "DECISION_PROVISION_TOTAL_TERMINATION",
)
DECISION_ACCOUNTS = ("DECISION_ACCOUNT_SUSPENDED", "DECISION_ACCOUNT_TERMINATED")
ACCOUNT_TYPES = ("ACCOUNT_TYPE_BUSINESS", "ACCOUNT_TYPE_PRIVATE")
DECISION_GROUNDS = ("DECISION_GROUND_ILLEGAL_CONTENT", "DECISION_GROUND_INCOMPATIBLE_CONTENT")
YES_NO = ("Yes", "No")  # automated_detection and incompatible_content_illegal
CONTENT_TYPES = (
    "CONTENT_TYPE_APP",
    "CONTENT_TYPE_AUDIO",
    "CONTENT_TYPE_IMAGE",
    "CONTENT_TYPE_PRODUCT",
    "CONTENT_TYPE_SYNTHETIC_MEDIA",
    "CONTENT_TYPE_TEXT",
    "CONTENT_TYPE_VIDEO",
    "CONTENT_TYPE_OTHER",
)
CATEGORIES = (
    "STATEMENT_CATEGORY_ANIMAL_WELFARE",
    "STATEMENT_CATEGORY_CONSUMER_INFORMATION",
    "STATEMENT_CATEGORY_CYBER_VIOLENCE",
    "STATEMENT_CATEGORY_CYBER_VIOLENCE_AGAINST_WOMEN",
    "STATEMENT_CATEGORY_DATA_PROTECTION_AND_PRIVACY_VIOLATIONS",
    "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
    "STATEMENT_CATEGORY_INTELLECTUAL_PROPERTY_INFRINGEMENTS",
    "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS",
    "STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE",
    "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
    "STATEMENT_CATEGORY_PROTECTION_OF_MINORS",
    "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY",
    "STATEMENT_CATEGORY_SCAMS_AND_FRAUD",
    "STATEMENT_CATEGORY_SELF_HARM",
    "STATEMENT_CATEGORY_UNSAFE_AND_PROHIBITED_PRODUCTS",
    "STATEMENT_CATEGORY_VIOLENCE",
)
KEYWORDS = tuple(f"KEYWORD_{name}" for name in (
    "ADULT_SEXUAL_MATERIAL AGE_SPECIFIC_RESTRICTIONS AGE_SPECIFIC_RESTRICTIONS_MINORS ANIMAL_HARM "
    "BIOMETRIC_DATA_BREACH BULLYING_AGAINST_GIRLS CHILD_SEXUAL_ABUSE_MATERIAL CHILD_SEXUAL_ABUSE_MATERIAL_DEEPFAKE "
    "CONTENT_PROMOTING_EATING_DISORDERS COORDINATED_HARM COPYRIGHT_INFRINGEMENT CYBER_BULLYING_INTIMIDATION "
    "CYBER_HARASSMENT CYBER_HARASSMENT_AGAINST_WOMEN CYBER_INCITEMENT CYBER_STALKING CYBER_STALKING_AGAINST_WOMEN "
    "DATA_FALSIFICATION DEFAMATION DESIGN_INFRINGEMENT DISCRIMINATION FEMALE_GENDERED_DISINFORMATION "
    "GEOGRAPHIC_INDICATIONS_INFRINGEMENT GEOGRAPHICAL_REQUIREMENTS GOODS_SERVICES_NOT_PERMITTED "
    "GROOMING_SEXUAL_ENTICEMENT_MINORS HATE_SPEECH HIDDEN_ADVERTISEMENT HUMAN_EXPLOITATION HUMAN_TRAFFICKING "
    "ILLEGAL_ORGANIZATIONS IMPERSONATION_ACCOUNT_HIJACKING INAUTHENTIC_ACCOUNTS INAUTHENTIC_LISTINGS "
    "INAUTHENTIC_USER_REVIEWS INCITEMENT_AGAINST_WOMEN INCITEMENT_VIOLENCE_HATRED INSUFFICIENT_INFORMATION_ON_TRADERS "
    "LANGUAGE_REQUIREMENTS MISINFORMATION_DISINFORMATION MISLEADING_INFO_CONSUMER_RIGHTS "
    "MISLEADING_INFO_GOODS_SERVICES MISSING_PROCESSING_GROUND NON_CONSENSUAL_IMAGE_SHARING "
    "NON_CONSENSUAL_IMAGE_SHARING_AGAINST_WOMEN NON_CONSENSUAL_MATERIAL_DEEPFAKE "
    "NON_CONSENSUAL_MATERIAL_DEEPFAKE_AGAINST_WOMEN NONCOMPLIANCE_PRICING NUDITY PATENT_INFRINGEMENT PHISHING "
    "PROHIBITED_PRODUCTS PYRAMID_SCHEMES RIGHT_TO_BE_FORGOTTEN RISK_ENVIRONMENTAL_DAMAGE RISK_PUBLIC_HEALTH "
    "SELF_MUTILATION STALKING SUICIDE TERRORIST_CONTENT TRADE_SECRET_INFRINGEMENT TRADEMARK_INFRINGEMENT "
    "TRAFFICKING_WOMEN_GIRLS UNLAWFUL_SALE_ANIMALS UNSAFE_CHALLENGES UNSAFE_PRODUCTS VIOLATION_EU_LAW "
    "VIOLATION_NATIONAL_LAW OTHER"
).split())
SOURCE_TYPES = ("SOURCE_ARTICLE_16", "SOURCE_TRUSTED_FLAGGER", "SOURCE_TYPE_OTHER_NOTIFICATION", "SOURCE_VOLUNTARY")
AUTOMATED_DECISIONS = ("AUTOMATED_DECISION_FULLY", "AUTOMATED_DECISION_PARTIALLY", "AUTOMATED_DECISION_NOT_AUTOMATED")
# EuropeanCountriesService::EUROPEAN_COUNTRY_CODES: the EU and the EEA (Greece is GR, not EL).
COUNTRY_CODES = tuple(
    "AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IS IT LI LT LU LV MT NL NO PL PT RO SE SI SK".split()
)
# EuropeanLanguagesService::ALL_LANGUAGES: every ISO 639-1 code, upper-case.
LANGUAGE_CODES = tuple(
    "AB AA AF AK SQ AM AR AN HY AS AV AE AY AZ BM BA EU BE BN BH BI BS BR BG MY CA KM CH CE NY ZH CU CV KW CO CR HR "
    "CS DA DV NL DZ EN EO ET EE FO FJ FI FR FF GD GL LG KA DE KI EL KL GN GU HT HA HE HZ HI HO HU IS IO IG ID IA IE "
    "IU IK GA IT JA JV KN KR KS KK RW KV KG KO KJ KU KY LO LA LV LB LI LN LT LU MK MG MS ML MT GV MI MR MH RO MN NA "
    "NV ND NG NE SE NO NB NN II OC OJ OR OM OS PI PA PS FA PL PT QU RM RN RU SM SG SA SC SR SN SD SI SK SL SO ST NR "
    "ES SU SW SS SV TL TY TG TA TT TE TH BO TI TO TS TN TR TK TW UG UK UR UZ VE VI VO WA CY FY WO XH YI YO ZA "
    "ZU".split()
)

# The values Factdesk sends, named (each is checked to be one of the published values below).
VISIBILITY_REMOVED = "DECISION_VISIBILITY_CONTENT_REMOVED"
VISIBILITY_DEMOTED = "DECISION_VISIBILITY_CONTENT_DEMOTED"
VISIBILITY_LABELLED = "DECISION_VISIBILITY_CONTENT_LABELLED"
MONETARY_SUSPENSION = "DECISION_MONETARY_SUSPENSION"
GROUND_INCOMPATIBLE = "DECISION_GROUND_INCOMPATIBLE_CONTENT"
GROUND_ILLEGAL = "DECISION_GROUND_ILLEGAL_CONTENT"
CATEGORY_CIVIC_DISCOURSE = "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS"
CATEGORY_VIOLENCE = "STATEMENT_CATEGORY_VIOLENCE"
CATEGORY_SPEECH = "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH"
CATEGORY_CYBER_VIOLENCE = "STATEMENT_CATEGORY_CYBER_VIOLENCE"
CATEGORY_PUBLIC_SECURITY = "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY"
KEYWORD_MISINFORMATION = "KEYWORD_MISINFORMATION_DISINFORMATION"
KEYWORD_INCITEMENT = "KEYWORD_INCITEMENT_VIOLENCE_HATRED"
KEYWORD_CYBER_HARASSMENT = "KEYWORD_CYBER_HARASSMENT"
KEYWORD_PUBLIC_HEALTH = "KEYWORD_RISK_PUBLIC_HEALTH"
CONTENT_TEXT, CONTENT_IMAGE, CONTENT_VIDEO = "CONTENT_TYPE_TEXT", "CONTENT_TYPE_IMAGE", "CONTENT_TYPE_VIDEO"
SOURCE_ARTICLE_16, SOURCE_TRUSTED_FLAGGER, SOURCE_VOLUNTARY = SOURCE_TYPES[0], SOURCE_TYPES[1], SOURCE_TYPES[3]
AUTOMATED_NOT = "AUTOMATED_DECISION_NOT_AUTOMATED"
AUTOMATED_PARTIALLY = "AUTOMATED_DECISION_PARTIALLY"

# --- Fields: which enumeration each takes, lengths, dates -----------------------------------------

ONE_OF: dict[str, tuple[str, ...]] = {
    "decision_monetary": DECISION_MONETARIES,
    "decision_provision": DECISION_PROVISIONS,
    "decision_account": DECISION_ACCOUNTS,
    "account_type": ACCOUNT_TYPES,
    "decision_ground": DECISION_GROUNDS,
    "incompatible_content_illegal": YES_NO,
    "category": CATEGORIES,
    "content_language": LANGUAGE_CODES,
    "source_type": SOURCE_TYPES,
    "automated_detection": YES_NO,
    "automated_decision": AUTOMATED_DECISIONS,
}
ARRAY_OF: dict[str, tuple[str, ...]] = {
    "decision_visibility": DECISION_VISIBILITIES,
    "content_type": CONTENT_TYPES,
    "category_addition": CATEGORIES,
    "category_specification": KEYWORDS,
    "territorial_scope": COUNTRY_CODES,
}
MAX_LENGTH: dict[str, int] = {
    "decision_visibility_other": 500,
    "decision_monetary_other": 500,
    "category_specification_other": 500,
    "decision_ground_reference_url": 500,
    "illegal_content_legal_ground": 500,
    "illegal_content_explanation": 2000,
    "incompatible_content_ground": 500,
    "incompatible_content_explanation": 2000,
    "content_type_other": 500,
    "decision_facts": 5000,
    "source_identity": 500,
    "puid": 500,
}
# Each date field: (earliest, latest) accepted, both inclusive, format YYYY-MM-DD.
DATES: dict[str, tuple[date | None, date]] = {
    "content_date": (date(2000, 1, 1), date(2038, 1, 1)),
    "application_date": (date(2020, 1, 1), date(2038, 1, 1)),
    "end_date_account_restriction": (None, date(2038, 1, 1)),
    "end_date_monetary_restriction": (None, date(2038, 1, 1)),
    "end_date_service_restriction": (None, date(2038, 1, 1)),
    "end_date_visibility_restriction": (None, date(2038, 1, 1)),
}
REQUIRED = ("decision_ground", "content_type", "category", "content_date", "application_date", "decision_facts",
            "source_type", "automated_detection", "automated_decision", "puid")
# At least one of these restrictions (required_without_all).
RESTRICTIONS = ("decision_visibility", "decision_monetary", "decision_provision", "decision_account")
# Required when the decision ground is this one, and dropped by the database otherwise.
GROUND_FIELDS = {
    GROUND_ILLEGAL: ("illegal_content_legal_ground", "illegal_content_explanation"),
    GROUND_INCOMPATIBLE: ("incompatible_content_ground", "incompatible_content_explanation"),
}
# "<field>_other" is required when this value is chosen.
OTHER_VALUES = {
    "decision_visibility": "DECISION_VISIBILITY_OTHER",
    "decision_monetary": "DECISION_MONETARY_OTHER",
    "content_type": "CONTENT_TYPE_OTHER",
}
FIELDS = frozenset({*ONE_OF, *ARRAY_OF, *MAX_LENGTH, *DATES, "content_id"})
PUID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
DATE_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_BATCH = 100  # POST /api/v1/statements takes 1 to 100 statements
# No personal data may be submitted (Art. 24(5) DSA): the contact details a machine finds for sure
# (core.contact_details).
PERSONAL_DATA = {EMAIL_KIND: "an e-mail address", PHONE_KIND: "a telephone number"}


def statement_problems(data: Mapping[str, Any]) -> list[str]:
    """Everything in one statement that the Transparency Database would refuse; empty when valid."""
    problems = [f"{name}: not a field of the schema" for name in sorted(set(data) - FIELDS)]
    present = {name for name, value in data.items() if value not in (None, "", [])}
    problems += [f"{name}: required" for name in REQUIRED if name not in present]
    if not present & set(RESTRICTIONS):
        problems.append(f"one of {', '.join(RESTRICTIONS)} is required")
    for name, allowed in ONE_OF.items():
        if name in present and data[name] not in allowed:
            problems.append(f"{name}: {data[name]!r} is not one of the published values")
    for name, allowed in ARRAY_OF.items():
        if name not in data or data[name] is None:
            continue
        value = data[name]
        if not isinstance(value, list):
            problems.append(f"{name}: must be an array")
            continue
        problems += [f"{name}: {item!r} is not one of the published values" for item in value if item not in allowed]
        if len(set(map(repr, value))) != len(value):
            problems.append(f"{name}: repeats a value")
    for name, most in MAX_LENGTH.items():
        if data.get(name) is None:
            continue
        if not isinstance(data[name], str):
            problems.append(f"{name}: must be a string")
        elif len(data[name]) > most:
            problems.append(f"{name}: {len(data[name])} characters, at most {most}")
    for name, (earliest, latest) in DATES.items():
        if name in present:
            problems += _date_problems(name, data[name], earliest, latest)
    ground = data.get("decision_ground")
    for needed_by, names in GROUND_FIELDS.items():
        for name in names:
            if ground == needed_by and name not in present:
                problems.append(f"{name}: required when decision_ground is {needed_by}")
            elif ground != needed_by and name in present:
                problems.append(f"{name}: only with decision_ground {needed_by}")
    if "incompatible_content_illegal" in present and ground != GROUND_INCOMPATIBLE:
        problems.append(f"incompatible_content_illegal: only with decision_ground {GROUND_INCOMPATIBLE}")
    for name, other in OTHER_VALUES.items():
        chosen = data.get(name)
        chosen = chosen if isinstance(chosen, list) else [chosen]
        if other in chosen and f"{name}_other" not in present:
            problems.append(f"{name}_other: required when {name} is {other}")
    puid = data.get("puid")
    if isinstance(puid, str) and puid and not PUID_PATTERN.match(puid):
        problems.append("puid: only a-z, A-Z, 0-9, '-' and '_' are allowed")
    for name, value in sorted(data.items()):
        if isinstance(value, str):
            kinds = dict.fromkeys(detail.kind for detail in find_contact_details(value))
            problems += [f"{name}: holds {PERSONAL_DATA[kind]} (personal data)" for kind in kinds]
    return problems


def _date_problems(name: str, value: Any, earliest: date | None, latest: date) -> list[str]:
    if not isinstance(value, str) or not DATE_PATTERN.match(value):
        return [f"{name}: {value!r} is not a date YYYY-MM-DD"]
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return [f"{name}: {value!r} is not a date"]
    if earliest is not None and day < earliest:
        return [f"{name}: {value} is before {earliest}"]
    if day > latest:
        return [f"{name}: {value} is after {latest}"]
    return []


def outgoing_statement(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A stored statement as it leaves Factdesk (the API, export files, submission): the one conversion.

    Stored rows are never rewritten, so what older code stored is normalised here, and only where
    the meaning cannot change: empty optional values are left out, `content_language` is
    upper-cased and dropped when it is not an ISO 639-1 code (the field is optional), and
    `territorial_scope` is de-duplicated and sorted (Greece's EU code EL written as ISO's GR), as the
    database itself stores it. The text fields lose the e-mail addresses and telephone numbers older
    code let through (it knew few telephone numbers' shapes), within their lengths. Anything else
    invalid is left for `statement_problems` to report.
    """
    out = {name: value for name, value in stored.items() if value not in (None, "", [])}
    for name, most in MAX_LENGTH.items():
        if isinstance(out.get(name), str) and name != "puid":
            text = without_contact_details(out[name])
            out[name] = text if len(text) <= most or text == out[name] else text[: most - 1] + "…"
    language = out.get("content_language")
    if isinstance(language, str):
        language = language.strip().upper()
        if language in LANGUAGE_CODES:
            out["content_language"] = language
        else:
            del out["content_language"]
    scope = out.get("territorial_scope")
    if isinstance(scope, list) and all(isinstance(code, str) for code in scope):
        out["territorial_scope"] = sorted({"GR" if code.upper() == "EL" else code.upper() for code in scope})
    return out


def scope_problems(codes: list[str]) -> list[str]:
    """What is wrong with a territorial scope setting (FACTDESK_TERRITORIAL_SCOPE)."""
    if not codes:
        return ["the territorial scope is empty"]
    return [f"{code!r} is not an EU or EEA country code ({', '.join(COUNTRY_CODES)})"
            for code in codes if code not in COUNTRY_CODES]
