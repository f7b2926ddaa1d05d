"""A negated translation is warned of, in the languages that negate twice ("no ... nunca", "non ... mai", "não ...
nada") as in English (factcheck.matching.semantic.semantic_guard)."""

from __future__ import annotations

import pytest

from factcheck import semantic
from factcheck.matching.semantic import semantic_guard
from factcheck.matching.similarity import features
from factcheck.normalise import normalise_text

CLAIM = "Drinking hot lemon water every morning cures type 2 diabetes within three weeks, doctors say"
NEGATED = {
    "es": "Beber agua caliente con limón cada mañana no cura nunca la diabetes tipo 2 en tres semanas, dicen los "
          "médicos",
    "it": "Bere acqua calda e limone ogni mattina non cura mai il diabete di tipo 2 in tre settimane, dicono i medici",
    "pt": "Beber água quente com limão todas as manhãs não cura nada o diabetes tipo 2 em três semanas, dizem os "
          "médicos",
    "en": "Drinking hot lemon water every morning does not cure type 2 diabetes within three weeks, doctors say",
}


def f(text):
    return features(text=text, normalised_text=normalise_text(text), url_key="", text_key="")


@pytest.mark.parametrize("lang", sorted(NEGATED))
def test_a_negated_translation_is_warned_of(lang):
    a, b = semantic.embed([CLAIM, NEGATED[lang]])
    assert semantic.cosine(a, b) >= 0.7  # close enough to be suggested: the guard is what warns
    guard = semantic_guard(f(CLAIM), f(NEGATED[lang]), languages=("en", lang))
    assert guard == "polarity"


def test_a_debunk_of_a_negated_claim_in_its_language_is_warned_of():
    """Both say "not", the debunk more times: a reviewer's audit found it offered as the claim's copy at 0.91 with no
    warning, where comparing only whether each said "not" saw two negated texts."""
    claim = "Pfizer's CEO Albert Bourla resigned and admitted that the mRNA vaccines are not safe for children"
    debunk = "Pfizer's CEO Albert Bourla did not resign and never said that the mRNA vaccines are not safe for children"
    assert semantic_guard(f(claim), f(debunk), languages=("en", "en")) == "polarity"
    retold = "Albert Bourla, Pfizer's chief executive, stepped down and said mRNA vaccines are not safe for children"
    assert semantic_guard(f(claim), f(retold), languages=("en", "en")) == ""
