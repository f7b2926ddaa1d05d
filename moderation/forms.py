"""Forms of the appeal pages: filing an appeal (owners' portal) and deciding one (the desks).

The rules live in moderation.appeal_input (`clean_appeal_input`, `clean_decision_input`); a form only
turns what was typed into their arguments and puts every error they raise next to the field it
belongs to, all at once. `error_summary` (core.error_summary, the one rule for every form) lists them for
the box at the top of the page.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from core.error_summary import error_summary as error_summary  # the box at the top of the page, named here too
from factcheck.models import Verdict
from moderation.appeal_input import (
    MAX_EVIDENCE_URLS,
    MAX_STATEMENT,
    REVERSAL_VERDICTS,
    clean_appeal_input,
    clean_decision_input,
)
from moderation.models import AppealKind, AppealStatus


def _put_errors(form: forms.Form, exc: ValidationError) -> None:
    for field, messages in exc.message_dict.items():
        form.add_error(field if field in form.fields else None, messages)


class AppealForm(forms.Form):
    # Nothing is marked required here: clean_appeal_input decides, so the rules exist once.
    use_required_attribute = False

    kind = forms.ChoiceField(label="What do you appeal?", required=False, widget=forms.RadioSelect)
    statement = forms.CharField(
        label="Your statement",
        required=False,
        # No maxlength attribute: a browser would cut a pasted statement short without a word.
        # data-limit: static/js/appeals.js counts the characters left as the owner types.
        widget=forms.Textarea(attrs={"rows": 6, "data-limit": MAX_STATEMENT, "aria-describedby": "id_statement_hint"}),
        help_text=f"Why the decision is wrong, in up to {MAX_STATEMENT:,} characters.",
    )
    evidence_urls = forms.CharField(
        label="Evidence URLs",
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 3, "placeholder": "https://…", "aria-describedby": "id_evidence_urls_hint"}
        ),
        help_text=f"Optional: one http:// or https:// URL per line, at most {MAX_EVIDENCE_URLS}.",
    )
    correction_details = forms.CharField(
        label="What was corrected, and where",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "aria-describedby": "id_correction_details_hint"}),
        help_text="Only for a correction, if your statement does not already say it: for example “the second "
                  "paragraph now says 12%, not 40%”.",
    )

    # The decisions as the page showed them (moderation.as_read.decisions_read): filing refuses a changed one.
    seen = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, kinds: list[str], **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        # Offer only the kinds this post's decisions allow; the domain refuses the others anyway.
        self.fields["kind"].choices = [(kind, AppealKind(kind).label) for kind in kinds]
        if len(kinds) == 1:
            self.fields["kind"].initial = kinds[0]

    def clean(self) -> dict:
        data = super().clean()
        try:
            values = clean_appeal_input(
                kind=data.get("kind") or "",
                statement=data.get("statement") or "",
                evidence_urls=(data.get("evidence_urls") or "").splitlines(),
                correction_details=data.get("correction_details") or "",
            )
        except ValidationError as exc:
            self.errors.pop("kind", None)  # the rules' own message for a missing or unknown kind
            _put_errors(self, exc)
            return data
        if values["kind"] != AppealKind.CORRECTION:
            # Without script the field shows with every kind; what it says belongs only to a correction.
            values["correction_details"] = ""
        return {**values, "seen": data.get("seen") or ""}


class DecideForm(forms.Form):
    """What the reviewer decides: accept the appeal (reverse) or not (uphold), why (a note to the page
    owner), and for a reversed rating the rating that replaces it: its verdict, its public rationale and
    its article, which the claim page and ClaimReview publish. The rules are
    moderation.appeal_input.clean_decision_input."""

    use_required_attribute = False

    outcome = forms.ChoiceField(label="Outcome", widget=forms.RadioSelect, required=False)
    # In the page's order (a reversal's verdict belongs with the outcome): the error summary follows it.
    new_verdict = forms.ChoiceField(
        label="New verdict", required=False,
        widget=forms.Select(attrs={"aria-describedby": "id_new_verdict_hint"}),
    )
    public_rationale = forms.CharField(
        label="Public rationale of the new rating", required=False,
        widget=forms.Textarea(attrs={"rows": 5, "aria-describedby": "id_public_rationale_hint"}),
        help_text="Only when you accept the appeal: published on the claim's public page and in its ClaimReview, "
                  "as a rating's rationale is. Write it for everyone, not to the owner.",
    )
    article_url = forms.CharField(
        label="Fact-check article URL", required=False,
        widget=forms.URLInput(attrs={"aria-describedby": "id_article_url_hint", "placeholder": "https://…"}),
        help_text="Optional: the article that explains the new rating. Without one, the claim page is its link; "
                  "the old rating's article is not carried over.",
    )
    reason = forms.CharField(
        label="Reason to the page owner", required=False,
        widget=forms.Textarea(attrs={"rows": 5, "aria-describedby": "id_reason_hint"}),
        help_text="The page owner reads this, word for word, in their notice and timeline. It is not published.",
    )
    # The appeal's version when the page was loaded: a decision from a stale page is refused.
    version = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)

    def __init__(
        self, *args, kind: str, matched: bool = False, current_verdict: str = "", lifted: bool = False, **kwargs
    ) -> None:
        """`lifted`: a removal appeal whose removal staff already lifted (moderation.appeals.removal_lifted)."""
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.kind, self.matched = kind, matched
        if kind == AppealKind.REMOVAL and lifted:
            # The post is restored: "the removal stands" is no longer a true outcome to offer.
            choices = [(AppealStatus.REVERSED, "Close it as accepted: the removal was lifted, the post is restored")]
            self.fields["outcome"].initial = AppealStatus.REVERSED
        elif kind == AppealKind.REMOVAL:
            # Each choice leads with what it does: "upheld" means the opposite to many readers of British English.
            choices = [(AppealStatus.UPHELD, "Keep the removal: the appeal is not accepted"),
                       (AppealStatus.REVERSED, "Lift the removal: the appeal is accepted")]
        elif matched:
            choices = [(AppealStatus.UPHELD, "Keep the link: the post copies the claim, the appeal is not accepted"),
                       (AppealStatus.REVERSED, "Unlink the post: not the same claim, the appeal is accepted")]
        else:
            choices = [(AppealStatus.UPHELD, "Keep the rating: the appeal is not accepted"),
                       (AppealStatus.REVERSED, "Replace the rating: the appeal is accepted")]
        self.fields["outcome"].choices = choices
        if kind == AppealKind.REMOVAL or matched:
            # A lifted removal or an unlinked copy takes no verdict, and publishes no new rating.
            for name in ("new_verdict", "public_rationale", "article_url"):
                del self.fields[name]
            return
        # No verdict is chosen for the reviewer, and the one appealed is not offered as its own replacement.
        verdicts = [(v, Verdict(v).label) for v in REVERSAL_VERDICTS if v != current_verdict]
        self.fields["new_verdict"].choices = [("", "Choose a verdict"), *verdicts]
        self.fields["new_verdict"].help_text = (
            "Only when you accept the appeal: the rating that replaces the current one. Ignored when you uphold."
        )

    def clean(self) -> dict:
        data = super().clean()
        outcome = data.get("outcome") or ""
        # Upholding keeps the rating: a verdict picked before changing one's mind is dropped, not applied.
        new_verdict = (data.get("new_verdict") or "") if outcome == AppealStatus.REVERSED else ""
        errors: dict[str, list[str]] = {}
        try:
            values = clean_decision_input(kind=self.kind, matched=self.matched, outcome=outcome,
                                          reason=data.get("reason") or "", new_verdict=new_verdict,
                                          public_rationale=data.get("public_rationale") or "",
                                          article_url=data.get("article_url") or "")
        except ValidationError as exc:
            errors = exc.message_dict
            values = data
        if (outcome == AppealStatus.REVERSED and "new_verdict" in self.fields and not new_verdict
                and "new_verdict" not in errors):
            # In the browser a reversed dispute names its verdict too: no reversal silently becomes True.
            errors["new_verdict"] = ["Choose the verdict that replaces the current rating."]
        if errors:
            _put_errors(self, ValidationError(errors))
            return data
        return {**values, "version": data.get("version")}
