"""Forms of the reports desk: the three decisions staff make on a post's reports of harm, and reopening one.

Each decision is its own small form (remove, no violation, send to fact-checkers), so that each has its
own labelled fields and its own button, and a phone shows them one under the other. The rules live in
moderation.harm_reports (`clean_decision`): a form only carries what was typed there and puts what it
refuses next to the field it concerns.
"""

from __future__ import annotations

from django import forms

from core.reasons import MAX_REASON, OWNER_READS_IN_NOTICE_AND_STATEMENT, WrittenText, refuse_too_long
from factcheck.models import FlagCategory, ReportOutcome
from moderation.harm_reports import ReportRefused, clean_decision, clean_reopening
from moderation.models import RemovalGround

# The ground a removal most likely takes, from the reports' most severe category (the form's first choice).
GROUND_FOR = {
    FlagCategory.IMMINENT_HARM: RemovalGround.IMMINENT_HARM_MISINFORMATION,
    FlagCategory.VIOLENCE: RemovalGround.VIOLENCE,
    FlagCategory.HATE: RemovalGround.HATE,
    FlagCategory.HARASSMENT: RemovalGround.HARASSMENT,
}


class DecisionForm(forms.Form):
    """One decision; its prefix (the outcome) keeps the three forms' field ids apart on one page."""

    use_required_attribute = False  # clean_decision decides what is required, so the rule exists once

    up_to_flag = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)
    reason = WrittenText(required=False, widget=forms.Textarea(attrs={"rows": 3}), validators=[refuse_too_long])

    outcome: str = ""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, prefix=self.outcome, **kwargs)
        # As the appeal forms: the hint is read with the field, and static/js/appeals.js counts what is left.
        attrs = self.fields["reason"].widget.attrs
        # The field's id as Django writes it (auto_id "id_%s"), without a BoundField yet: the subclasses set labels.
        attrs["aria-describedby"] = f"id_{self.add_prefix('reason')}_hint"
        attrs["data-limit"] = MAX_REASON

    def clean(self) -> dict:
        data = super().clean()
        try:
            data["ground"], data["reason"] = clean_decision(
                outcome=self.outcome, ground=data.get("ground"), reason=data.get("reason", ""))
        except ReportRefused as refusal:
            self.add_error((refusal.details or {}).get("field", "reason"), refusal.message)
        return data


class RemoveForm(DecisionForm):
    outcome = ReportOutcome.REMOVED

    ground = forms.ChoiceField(label="Ground", choices=[("", "Choose the community standard"), *RemovalGround.choices],
                               required=False)
    field_order = ["ground", "reason", "up_to_flag"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].label = "Reason for the removal"
        self.fields["reason"].help_text = OWNER_READS_IN_NOTICE_AND_STATEMENT


class NoViolationForm(DecisionForm):
    outcome = ReportOutcome.NO_VIOLATION

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].label = "Why there is no violation"
        self.fields["reason"].help_text = "Kept with the decision; the reporters are told the outcome."


class SendForm(DecisionForm):
    outcome = ReportOutcome.SENT_TO_FACT_CHECKERS

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reason"].label = "Note for the fact-checkers (optional)"
        self.fields["reason"].help_text = ("The post joins the fact-checkers' queue as misinformation; they read the "
                                           "note in its history. The page's owner does not.")


FORMS = {form.outcome: form for form in (RemoveForm, NoViolationForm, SendForm)}


def decision_forms(
    *, bound: DecisionForm | None = None, up_to_flag: int | None, ground: str = "",
) -> list[DecisionForm]:
    """The three forms of a post's page, `bound` (a failed submit) in its place with what was typed; the other two
    keep what was typed in them too, without errors (the page sends all three in one form, each field prefixed):
    a removal reason typed before choosing "no violation" is not lost."""
    forms_ = []
    for outcome, form_class in FORMS.items():
        if bound is not None and bound.outcome == outcome:
            forms_.append(bound)
            continue
        initial = {"up_to_flag": up_to_flag, **({"ground": ground} if outcome == ReportOutcome.REMOVED else {})}
        if bound is not None:
            unsent = form_class()
            initial.update({name: value for name in unsent.fields
                            if name != "up_to_flag" and (value := bound.data.get(unsent.add_prefix(name)))})
        forms_.append(form_class(initial=initial))
    return forms_


class ReopenForm(forms.Form):
    """Reopen the post's last decision (moderation.harm_reports.reopen_report): why, and which decision the page
    showed (`decided_at`), so that a second click, or a colleague's, meets a decision that changed and says so."""

    use_required_attribute = False  # clean_reopening decides what is required

    decided_at = forms.DateTimeField(widget=forms.HiddenInput)
    reason = WrittenText(
        label="Why reopen it", required=False, help_text="Kept for good in the post's record; the reporters are told "
        "their reports are open again, not this reason.", widget=forms.Textarea(attrs={"rows": 3}),
        validators=[refuse_too_long])

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, prefix="reopen", **kwargs)
        self.fields["reason"].widget.attrs.update({"aria-describedby": "id_reopen-reason_hint",
                                                   "data-limit": MAX_REASON})

    def clean_reason(self) -> str:
        try:
            return clean_reopening(self.cleaned_data.get("reason", ""))
        except ReportRefused as refusal:
            raise forms.ValidationError(refusal.message) from refusal
