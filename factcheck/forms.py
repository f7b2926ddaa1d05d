"""Forms of the review UI: the queue filters and the rating form.

The rating rules live in factcheck.ratings.clean_rating_input; the form only turns what was
typed into its arguments and puts the errors it raises next to the fields they belong to.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from factcheck.models import FlagSource, Organisation, Verdict
from factcheck.queue import QueueFilters
from factcheck.ratings import clean_rating_input

ANY = [("", "Any")]


class QueueFilterForm(forms.Form):
    language = forms.CharField(label="Language", required=False, max_length=8)
    country = forms.CharField(label="Country", required=False, max_length=2)
    source = forms.ChoiceField(label="Flag source", required=False, choices=ANY + FlagSource.choices)

    def __init__(self, *args, organisation: Organisation | None = None, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        # An organisation sees only what it covers, so offer exactly those codes as choices.
        if organisation is not None and organisation.languages:
            self.fields["language"] = forms.ChoiceField(
                label="Language", required=False, choices=ANY + [(code, code) for code in organisation.languages]
            )
        if organisation is not None and organisation.countries:
            self.fields["country"] = forms.ChoiceField(
                label="Country", required=False, choices=ANY + [(code, code) for code in organisation.countries]
            )

    def filters(self) -> QueueFilters:
        """The filters to apply; invalid input counts as no filter rather than an error page."""
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        return QueueFilters(
            language=(data.get("language") or "").strip().lower(),
            country=(data.get("country") or "").strip().upper(),
            source=data.get("source") or "",
        )


class RatingForm(forms.Form):
    # Nothing is marked required here: clean_rating_input decides, so the rules exist once.
    use_required_attribute = False

    verdict = forms.ChoiceField(label="Verdict", required=False, choices=Verdict.choices, widget=forms.RadioSelect)
    rationale = forms.CharField(
        label="Rationale",
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="What is wrong or right about the claim, and how you know.",
    )
    sources = forms.CharField(
        label="Sources",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "https://…"}),
        help_text="One http:// or https:// URL per line; at least one.",
    )
    article_url = forms.CharField(
        label="Fact-check article URL",
        required=False,
        widget=forms.URLInput(attrs={"placeholder": "https://…"}),
        help_text="Optional: your published article about this claim.",
    )

    def clean(self) -> dict:
        data = super().clean()
        try:
            values = clean_rating_input(
                verdict=data.get("verdict") or "",
                rationale=data.get("rationale") or "",
                sources=(data.get("sources") or "").splitlines(),
                article_url=data.get("article_url") or "",
            )
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                if field == "verdict":
                    # The domain lists API values; a person picks from the labels shown.
                    messages = ["Choose a verdict."]
                if field not in self.errors:
                    self.add_error(field if field in self.fields else None, messages)
            return data
        return values
