"""What an appeal and an appeal's decision may say: the rules of their fields, checked all at once.

The forms (moderation.forms), the API (moderation.api) and the appeal functions (moderation.appeals)
all check through these, so each rule exists once and the person sees every problem in one round.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from core.reasons import OWNER_READS, PUBLISHED, contact_problem, control_problem, written
from factcheck.models import Verdict
from factcheck.rating_limits import MAX_RATIONALE
from factcheck.ratings import clean_http_urls, http_url
from moderation.models import AppealKind, AppealStatus

MAX_STATEMENT = 2000
MAX_EVIDENCE_URLS = 10
# Verdicts a reversed dispute or accepted correction may give (not_eligible is not an outcome).
REVERSAL_VERDICTS = [v for v in Verdict.values if v != Verdict.NOT_ELIGIBLE]


def clean_appeal_input(*, kind: str, statement: str, evidence_urls: list[str], correction_details: str) -> dict:
    # Every rule is checked, so the owner sees all that is missing at once, not one per round.
    errors: dict[str, list[str]] = {}
    if not kind:
        errors["kind"] = ["Choose what you appeal."]
    elif kind not in AppealKind.values:
        errors["kind"] = [f"Choose one of: {', '.join(AppealKind.values)}."]
    statement = written(statement)
    if not statement:
        errors["statement"] = ["Say why you appeal."]
    elif len(statement) > MAX_STATEMENT:
        errors["statement"] = [f"Keep the statement to {MAX_STATEMENT:,} characters (it has {len(statement):,})."]
    elif problem := control_problem(statement):
        errors["statement"] = [problem]
    urls, problems = clean_http_urls(evidence_urls, most=MAX_EVIDENCE_URLS, what="evidence URLs")
    if problems:
        errors["evidence_urls"] = problems
    # What a correction changed may be said apart (the browser's form asks) or in the statement: PRODUCT.md's API
    # takes a correction as {"kind", "statement", "evidence_urls"}, as any appeal.
    correction_details = written(correction_details)
    if len(correction_details) > MAX_STATEMENT:
        errors["correction_details"] = [
            f"Keep the correction details to {MAX_STATEMENT:,} characters (they have {len(correction_details):,})."
        ]
    elif problem := control_problem(correction_details):
        errors["correction_details"] = [problem]
    if errors:
        raise ValidationError(errors)
    return {"kind": kind, "statement": statement, "evidence_urls": urls, "correction_details": correction_details}


def clean_decision_input(
    *, kind: str, matched: bool, outcome: str, reason: str, new_verdict: str, public_rationale: str = "",
    article_url: str = "",
) -> dict:
    """An appeal decision's fields by the rules; raises ValidationError with every problem at once.

    `matched`: the appeal is a matched copy's "not the same claim" (a reversal unlinks it, with no verdict).
    `reason` is the note to the page owner (their notice and timeline); a reversed rating also needs
    `public_rationale` and may give `article_url`: what the new rating publishes (its claim page and
    ClaimReview), the fact-checker's words for everyone, never the note to the owner.
    """
    errors: dict[str, list[str]] = {}
    if outcome not in (AppealStatus.UPHELD, AppealStatus.REVERSED):
        errors["outcome"] = ["Choose whether the appeal is accepted or not."]
    reason = written(reason)
    if not reason:
        errors["reason"] = ["Give the reason the owner will read."]
    elif len(reason) > MAX_STATEMENT:
        errors["reason"] = [f"Keep the reason to {MAX_STATEMENT:,} characters (it has {len(reason):,})."]
    elif problem := control_problem(reason) or contact_problem(reason, read_by=OWNER_READS):
        errors["reason"] = [problem]
    # A reversal never guesses the new verdict (it once defaulted to True): the decider chooses it. A matched
    # copy's reversal unlinks the copy and a removal's lifts it: neither gives a verdict.
    rerates = outcome == AppealStatus.REVERSED and kind != AppealKind.REMOVAL and not matched
    if rerates and not new_verdict:
        errors["new_verdict"] = ["Choose the verdict that replaces the current rating."
                                 if kind == AppealKind.DISPUTE else "An accepted correction needs the new verdict."]
    if new_verdict and new_verdict not in REVERSAL_VERDICTS:
        errors["new_verdict"] = [f"Choose one of: {', '.join(REVERSAL_VERDICTS)}."]
    # What the new rating publishes; an uphold, an unlinked copy and a lifted removal publish nothing new.
    public_rationale = written(public_rationale) if rerates else ""
    article_url = (article_url or "").strip() if rerates else ""
    if rerates and not public_rationale:
        errors["public_rationale"] = ["Give the public rationale of the new rating: the claim page and ClaimReview "
                                      "publish it (the reason to the owner is not published)."]
    elif len(public_rationale) > MAX_RATIONALE:
        errors["public_rationale"] = [f"Keep the public rationale under {MAX_RATIONALE:,} characters "
                                      f"(it has {len(public_rationale):,})."]
    elif problem := control_problem(public_rationale) or contact_problem(public_rationale, read_by=PUBLISHED):
        errors["public_rationale"] = [problem]
    if article_url:
        try:
            http_url(article_url)
        except ValidationError as exc:
            errors["article_url"] = list(exc.messages)
    if errors:
        raise ValidationError(errors)
    return {"outcome": outcome, "reason": reason, "new_verdict": new_verdict, "public_rationale": public_rationale,
            "article_url": article_url}
