"""Forms of the page owners' portal: filing an appeal.

The appeal rules live in moderation.appeals.clean_appeal_input; the form only turns what was
typed into its arguments and puts the errors it raises next to the fields they belong to.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from moderation.appeals import MAX_EVIDENCE_URLS, MAX_STATEMENT, clean_appeal_input
from moderation.models import AppealKind


class AppealForm(forms.Form):
    # Nothing is marked required here: clean_appeal_input decides, so the rules exist once.
    use_required_attribute = False

    kind = forms.ChoiceField(label="What do you appeal?", required=False, widget=forms.RadioSelect)
    statement = forms.CharField(
        label="Your statement",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        # No maxlength attribute: a browser would cut a pasted statement short without a word.
        help_text=f"Why the decision is wrong, in up to {MAX_STATEMENT:,} characters.",
    )
    evidence_urls = forms.CharField(
        label="Evidence URLs",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "https://…"}),
        help_text=f"Optional: one http:// or https:// URL per line, at most {MAX_EVIDENCE_URLS}.",
    )
    correction_details = forms.CharField(
        label="What was corrected, and where",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Only for a correction: for example “the second paragraph now says 12%, not 40%”.",
    )

    def __init__(self, *args, kinds: list[str], **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        # Offer only the kinds this post's decisions allow; the domain refuses the others anyway.
        self.fields["kind"].choices = [(kind, AppealKind(kind).label) for kind in kinds]
        if len(kinds) == 1:
            self.fields["kind"].initial = kinds[0]

    def clean(self) -> dict:
        data = super().clean()
        if "kind" in self.errors or not data.get("kind"):
            self.errors.pop("kind", None)
            self.add_error("kind", "Choose what you appeal.")
            return data
        try:
            values = clean_appeal_input(
                kind=data["kind"],
                statement=data.get("statement") or "",
                evidence_urls=(data.get("evidence_urls") or "").splitlines(),
                correction_details=data.get("correction_details") or "",
            )
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                self.add_error(field if field in self.fields else None, messages)
            return data
        if values["kind"] != AppealKind.CORRECTION:
            # The field is shown with every kind; what it says belongs only to a correction.
            values["correction_details"] = ""
        return values
