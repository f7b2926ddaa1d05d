"""Forms of the review UI: the queue filters, the rating form and the reasons for rejecting a suggested copy and for
undoing that rejection.

The rating rules live in factcheck.ratings.clean_rating_input; the form only turns what was
typed into its arguments and puts the errors it raises next to the fields they belong to.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from django import forms
from django.core.exceptions import ValidationError
from django.template.loader import render_to_string
from django.utils.safestring import SafeString

from core.paging import plain_number
from core.place_names import country_choices, country_name, language_choices, language_name, named_choices
from core.reasons import KEPT_FOR_GOOD, MAX_REASON, reason_field
from core.search_input import SearchField
from factcheck.coverage import listed_codes
from factcheck.matching.undoing import MISSING_REASON
from factcheck.models import FlagSource, Organisation, Verdict
from factcheck.queue import QueueFilters, QueueSort
from factcheck.rating_limits import MAX_CHANGE_REASON, MAX_RATIONALE
from factcheck.ratings import clean_rating_input

ANY = [("", "Any")]


class CodeChoiceField(forms.ChoiceField):
    """A choice of codes offered by name ("German", value "de"): a code typed or linked in either case
    ("DE", "de") is the same choice."""

    def __init__(self, *, upper: bool, **kwargs) -> None:
        self.upper = upper
        super().__init__(**kwargs)

    def to_python(self, value) -> str:
        value = super().to_python(value).strip()
        return value.upper() if self.upper else value.lower()


class QueueFilterForm(forms.Form):
    q = SearchField(
        label="Search",
        widget=forms.TextInput(attrs={
            "type": "search", "placeholder": "Words or post id",
            # static/js/shortcuts.js: "/" puts the cursor here.
            "data-shortcut": "/", "data-shortcut-label": "Search the queue",
        }),
    )
    # Codes as values, names as labels: every language and country there is, unless the organisation
    # lists the ones it covers (then exactly those: __init__). Callables, so that each form's copy of its
    # fields does not deep-copy some 450 choices.
    language = CodeChoiceField(label="Language", required=False, upper=False,
                               choices=lambda: [*ANY, *language_choices()])
    country = CodeChoiceField(label="Country", required=False, upper=True, choices=lambda: [*ANY, *country_choices()])
    source = forms.ChoiceField(label="Flag source", required=False, choices=ANY + FlagSource.choices)
    topic = forms.CharField(label="Topic", required=False, max_length=100)
    sort = forms.ChoiceField(label="Sort by", required=False, choices=QueueSort.choices)

    def __init__(self, *args, organisation: Organisation | None = None, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        # An organisation sees only what it covers, so offer exactly those as choices.
        languages = listed_codes(organisation, "languages") if organisation is not None else None
        countries = listed_codes(organisation, "countries") if organisation is not None else None
        if languages:
            self.fields["language"].choices = ANY + named_choices(languages, language_name)
        if countries:
            self.fields["country"].choices = ANY + named_choices(countries, country_name)

    def _valid(self) -> dict:
        """The fields that validated (Django's cleaned_data keeps only those): one that does not (a stale bookmark's
        sort, a topic too long) counts as not chosen, and the others hold, as the filter fields show them."""
        if not self.is_bound:
            return {}
        self.is_valid()
        return self.cleaned_data

    def filters(self) -> QueueFilters:
        """The filters to apply; an invalid field counts as no filter rather than an error page."""
        data = self._valid()
        return QueueFilters(
            language=(data.get("language") or "").strip().lower(),
            country=(data.get("country") or "").strip().upper(),
            source=data.get("source") or "",
            topic=" ".join((data.get("topic") or "").split()).lower(),
            q=" ".join((data.get("q") or "").split()),
        )

    def chosen_sort(self) -> str:
        """The order asked for; anything unreadable is the priority order."""
        return self._valid().get("sort") or QueueSort.PRIORITY

    def chosen_filters(self) -> list[str]:
        """The filters in force as a reviewer reads them: ["German", "Germany", "Partner", "topic: health"]."""
        filters = self.filters()
        return [label for label in (
            language_name(filters.language), country_name(filters.country),
            FlagSource(filters.source).label if filters.source else "",
            f"topic: {filters.topic}" if filters.topic else "",
        ) if label]


def render_filter_fields(*, organisation: Organisation, data: Mapping[str, str]) -> SafeString:
    """The queue filter form's fields as HTML, as templates/factcheck/filter_fields.html lays them out.

    Django's widget templates cost about a tenth of the queue page, and the result depends only on
    what the organisation covers and what was submitted, so each combination is rendered once per
    process (the cache is bounded; odd query strings only push out other entries).
    """
    names = tuple(QueueFilterForm.base_fields)
    return _render_filter_fields(
        tuple(listed_codes(organisation, "languages") or ()), tuple(listed_codes(organisation, "countries") or ()),
        tuple(data.get(name) for name in names),
    )


@lru_cache(maxsize=512)
def _render_filter_fields(
    languages: tuple[str, ...], countries: tuple[str, ...], values: tuple[str | None, ...]
) -> SafeString:
    # render_filter_fields reads one value per base field, in order: the two are the same length.
    data = {name: value for name, value in zip(QueueFilterForm.base_fields, values, strict=True) if value is not None}
    form = QueueFilterForm(data, organisation=Organisation(languages=list(languages), countries=list(countries)))
    return render_to_string("factcheck/filter_fields.html", {
        "search": form["q"], "fields": [field for field in form if field.name != "q"], "chosen": form.chosen_filters(),
    })


class RatedFilterForm(forms.Form):
    """The rated-posts list: whose ratings, and words to look for."""

    MINE, ORGANISATION = "me", "organisation"
    who = forms.ChoiceField(
        label="Rated by", required=False, choices=[(MINE, "Me"), (ORGANISATION, "My organisation")],
    )
    q = SearchField(
        label="Search", widget=forms.TextInput(attrs={"type": "search", "placeholder": "Words or post id"}),
    )

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)

    def values(self) -> tuple[str, str]:
        """(who, query); anything unreadable is "me" and no search."""
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}
        return data.get("who") or self.MINE, " ".join((data.get("q") or "").split())


# What each verdict means, shown beside it in the rating form (PRODUCT.md's table, as Meta's rating
# guide words it for fact-checkers).
VERDICT_GUIDE: dict[str, str] = {
    Verdict.FALSE: "The main claim has no basis in fact: fake quotes, impossible claims, fabricated “news”, "
                   "authentic media offered as proof of an unrelated event.",
    Verdict.ALTERED: "Image, audio or video edited or synthesised in a way that misleads.",
    Verdict.PARTLY_FALSE: "A mix of accurate and inaccurate claims, or wrong figures, dates or places.",
    Verdict.MISSING_CONTEXT: "Could mislead without added context, though it is not false.",
    Verdict.SATIRE: "Clearly humorous or satirical, not presented as fact.",
    Verdict.TRUE: "The main claim is accurate.",
    Verdict.NOT_ELIGIBLE: "No verifiable claim: opinion, a politician's speech, or true when it was written.",
}


class RatingForm(forms.Form):
    # Nothing is marked required here: clean_rating_input decides, so the rules exist once.
    use_required_attribute = False

    verdict = forms.ChoiceField(label="Verdict", required=False, choices=Verdict.choices, widget=forms.RadioSelect)
    rationale = forms.CharField(
        label="Rationale",
        required=False,
        # data-limit: the appeal forms' character count (static/js/appeals.js); data-shortcut: static/js/shortcuts.js.
        widget=forms.Textarea(attrs={"rows": 6, "data-limit": MAX_RATIONALE, "data-shortcut": "r",
                                     "data-shortcut-label": "Write the rationale"}),
        help_text=("What is wrong or right about the claim, and how you know. It goes into the public statement "
                   "of reasons: no names of private people, addresses or contact details."),
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

    change_reason = forms.CharField(
        label="Why the rating changes",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "data-limit": MAX_CHANGE_REASON}),
        help_text="Required to change a current rating: the new evidence or the error.",
    )
    # The id of the rating the page showed as current, empty if none: a rating that became current since
    # makes the save stale (factcheck.ratings.StaleRating), so two people never overwrite each other.
    replaces = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, rerating: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not rerating:
            del self.fields["change_reason"]

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
        if "change_reason" in self.fields:
            values["change_reason"] = data.get("change_reason") or ""
        # The page always sends it; a hand-made POST without it is not checked, as an API call without it.
        if "replaces" in self.data:
            replaces = (data.get("replaces") or "").strip()
            if replaces and plain_number(replaces) is None:
                self.add_error(None, "The form was damaged: reload the page and rate again.")
                return data
            values["replaces"] = plain_number(replaces)
        return values


class MatchRejectForm(forms.Form):
    """Why a suggested copy is another claim: optional, kept with the rejected pair and its audit event."""

    reason = forms.CharField(
        label="Why it is not the same claim",
        required=False,
        max_length=2000,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )


class MatchUndoForm(forms.Form):
    """Why a rejected pair is the same claim after all: required, kept for good with the pair's history (the audit
    log), refused as factcheck.matching.undoing refuses it, in the same words."""

    reason = reason_field(
        label="Why it is the same claim after all", help_text="", read_by=KEPT_FOR_GOOD,
        required_message=MISSING_REASON,
        # One line beside the pair's buttons; the browser keeps it to the limit (no line breaks to count twice here).
        widget=forms.TextInput(attrs={"autocomplete": "off", "maxlength": str(MAX_REASON)}),
    )
