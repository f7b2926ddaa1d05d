"""Whether two posts say the same claim: the normalised forms copies share, the MinHash band keys
that make a near-copy a candidate, and the judge's method, score and guards for each kind of pair."""

from __future__ import annotations

import pytest

from factcheck.matching.signature import keys_of, signatures_of
from factcheck.matching.similarity import features, judge, names_of
from factcheck.normalise import digest, normalise_text, normalise_url
from tests.factcheck.matching_helpers import (
    CHANGED_NUMBER_COPY,
    CLAIM,
    COMMENTED_COPY,
    EXACT_COPY,
    NEAR_COPY,
    NEGATED_COPY,
    SHORT_CLAIM,
    UNRELATED,
)

AUTO, SUGGEST = 0.7, 0.4


def of(text: str, url: str = ""):
    """A post's features, as the matcher reads them off its stored fields."""
    normalised, link = normalise_text(text), normalise_url(url)
    return features(text=text, normalised_text=normalised, url_key=digest(link), text_key=digest(normalised))


def judged(copy: str, source: str, *, copy_url: str = "", source_url: str = ""):
    return judge(of(copy, copy_url), of(source, source_url), auto=AUTO, suggest=SUGGEST)


# Normalisation: what test_normalise.py does not cover yet, one rule per case.

@pytest.mark.parametrize(("given", "expected"), [
    ("Stay safe 🙏🏽 share ❤️‍🔥 now 👉👉", "stay safe share now"),
    ("Vaccines🤯contain chips", "vaccines contain chips"),  # an emoji between words separates them
    ("Read https://news.example/a?b=1 before it is deleted", "read before it is deleted"),
    ("Source: http://x.example/p, and www.y.example/q!", "source and"),
    ("Já não há vacinação em São Paulo", "ja nao ha vacinacao em sao paulo"),
    ("Naïve coöperation Zürich", "naive cooperation zurich"),
])
def test_texts_drop_emoji_links_and_accents(given, expected):
    assert normalise_text(given) == expected


@pytest.mark.parametrize(("given", "expected"), [
    ("https://news.example/story?utm_source=fb&utm_medium=social&utm_campaign=x&utm_term=y&utm_content=z",
     "https://news.example/story"),
    ("https://news.example/story?UTM_Source=fb&id=3", "https://news.example/story?id=3"),
    ("https://news.example/story?fbclid=IwAR2abc", "https://news.example/story"),
    ("https://news.example/story?gclid=Cj0KCQ&id=3", "https://news.example/story?id=3"),
    ("https://www.news.example/story", "https://news.example/story"),
    ("https://WWW.NEWS.EXAMPLE/story", "https://news.example/story"),
    ("https://news.example/story#comments", "https://news.example/story"),
    ("https://news.example/story/?id=3#top", "https://news.example/story?id=3"),
    ("https://www2.news.example/story", "https://www2.news.example/story"),  # only "www." itself goes
])
def test_urls_drop_tracking_parameters_www_and_the_fragment(given, expected):
    assert normalise_url(given) == expected


def test_shares_of_one_link_with_different_tracking_have_one_key():
    shared = [
        "https://www.news.example/story?utm_source=facebook&fbclid=IwAR0#comments",
        "https://news.example/story/?gclid=abc",
        "HTTPS://NEWS.EXAMPLE/story",
    ]
    assert len({digest(normalise_url(url)) for url in shared}) == 1


# Band keys: a near-copy shares some with its claim (so it is found), an unrelated post none.

def test_a_near_copy_shares_band_keys_with_its_claim_and_an_unrelated_post_does_not():
    claim, near, unrelated = (set(keys_of(s)) for s in signatures_of(
        [normalise_text(CLAIM), normalise_text(NEAR_COPY), normalise_text(UNRELATED)]))
    assert len(claim) == 12
    assert claim & near
    assert not claim & unrelated


def test_signatures_are_the_same_in_a_batch_and_alone():
    texts = [normalise_text(t) for t in (CLAIM, NEAR_COPY, "")]
    assert signatures_of(texts) == [signatures_of([t])[0] for t in texts]
    assert signatures_of([""]) == [""]


# The judge: every pair records its method and score; guards hold a pair at suggestion.

def test_an_exact_copy_is_matched_by_text_automatically():
    judgement = judged(EXACT_COPY, CLAIM)
    assert (judgement.method, judgement.score, judgement.automatic, judgement.guard) == ("text", 1.0, True, "")


def test_a_near_copy_with_a_typo_a_breaking_prefix_and_hashtags_is_matched_automatically():
    judgement = judged(NEAR_COPY, CLAIM)
    assert judgement.method == "minhash"
    assert AUTO <= judgement.score < 1.0
    assert judgement.automatic and judgement.guard == ""


def test_a_shared_link_is_matched_by_url_whatever_the_tracking_parameters():
    judgement = judged(NEAR_COPY, CLAIM, copy_url="https://www.news.example/lemon?utm_source=fb#top",
                       source_url="https://news.example/lemon")
    assert (judgement.method, judgement.score, judgement.automatic) == ("url", 1.0, True)


def test_a_shared_link_whose_text_negates_the_claim_is_not_automatic():
    judgement = judged(NEGATED_COPY, CLAIM, copy_url="https://news.example/lemon", source_url="https://news.example/lemon")
    assert (judgement.method, judgement.automatic, judgement.guard) == ("url", False, "polarity")


@pytest.mark.parametrize(("copy", "source"), [
    (NEGATED_COPY, CLAIM),
    ("Drinking hot lemon water every morning does not cure diabetes according to a new study from doctors",
     "Drinking hot lemon water every morning cures diabetes according to a new study from doctors"),
    ("The new vaccine isn't safe for children under five years old according to the health ministry",
     "The new vaccine is safe for children under five years old according to the health ministry"),
    ("There is no evidence that drinking hot lemon water for 5 minutes every morning cures type 2 diabetes within "
     "three weeks", CLAIM),
], ids=["does-not-cure", "cures-vs-does-not-cure", "is-vs-isnt", "no-evidence-that"])
def test_a_negated_copy_is_never_automatic(copy, source):
    judgement = judged(copy, source)
    assert judgement is not None, "a negated copy is close enough to be offered to a person"
    assert judgement.method == "minhash" and judgement.score >= SUGGEST
    assert not judgement.automatic
    assert judgement.guard == "polarity"


def test_the_negation_guard_holds_whichever_post_is_the_source():
    judgement = judged(CLAIM, NEGATED_COPY)
    assert (judgement.automatic, judgement.guard) == (False, "polarity")


@pytest.mark.parametrize(("copy", "source"), [
    (CHANGED_NUMBER_COPY, CLAIM),
    ("Holding your breath for 50 minutes every day protects you from the virus say doctors in Italy",
     "Holding your breath for 5 minutes every day protects you from the virus say doctors in Italy"),
    ("Scientists confirm that drinking hot lemon water for five minutes every morning cures type 2 diabetes "
     "within thirteen weeks", "Scientists confirm that drinking hot lemon water for five minutes every morning "
     "cures type 2 diabetes within three weeks"),
], ids=["5-vs-50-minutes", "breath-5-vs-50", "number-words"])
def test_a_copy_with_a_changed_number_is_a_suggestion_at_most(copy, source):
    judgement = judged(copy, source)
    assert judgement.score >= AUTO  # close enough to be automatic, were it not for the number
    assert not judgement.automatic
    assert judgement.guard == "numbers"


def test_the_same_number_written_with_a_thousands_separator_is_the_same_number():
    judgement = judged("Over 5,000 people were vaccinated in one afternoon at the stadium in the city centre",
                       "Over 5000 people were vaccinated in one afternoon at the stadium in the city centre")
    assert judgement.automatic and judgement.guard == ""


def test_an_identical_short_text_is_never_automatic():
    judgement = judged(SHORT_CLAIM + "!", SHORT_CLAIM)
    assert (judgement.method, judgement.score) == ("text", 1.0)
    assert not judgement.automatic
    assert judgement.guard == "short_text"


def test_seven_words_are_short_and_eight_are_not():
    seven = "Lemon water in the morning cures diabetes"
    eight = "Hot lemon water in the morning cures diabetes"
    assert judged(seven, seven).guard == "short_text"
    assert judged(eight, eight).automatic


def test_a_commented_copy_between_the_thresholds_is_a_suggestion():
    judgement = judged(COMMENTED_COPY, CLAIM)
    assert judgement.method == "minhash"
    assert SUGGEST <= judgement.score < AUTO
    assert not judgement.automatic and judgement.guard == ""


def test_an_unrelated_post_is_no_match():
    assert judged(UNRELATED, CLAIM) is None


def test_empty_texts_without_links_are_no_match():
    assert judged("", "") is None
    assert judged("😱😱", "🙏") is None


def test_the_thresholds_decide_what_is_automatic():
    near = of(NEAR_COPY), of(CLAIM)
    assert judge(*near, auto=0.99, suggest=0.4).automatic is False
    assert judge(*near, auto=0.99, suggest=0.95) is None


@pytest.mark.parametrize("framing", ["Refuted: ", "Misleading claim: ", "Rumour: ", "Fact check: ",
                                     "Stop sharing this: ", "Satire: ", "Debunked: "])
def test_a_post_debunking_the_claim_is_never_matched_to_it_automatically(framing):
    from factcheck.matching.similarity import features, judge
    from factcheck.normalise import normalised_fields

    def judged(text):
        _, url_key, normalised, text_key, _ = normalised_fields(url="", text=text)
        return features(text=text, normalised_text=normalised, url_key=url_key, text_key=text_key)

    judgement = judge(judged(CLAIM), judged(framing + CLAIM), auto=0.65, suggest=0.4)
    assert judgement is not None and not judgement.automatic and judgement.guard == "polarity"


def test_names_are_found_in_a_long_run_of_capitals_and_hyphens_in_one_pass():
    """A hostile post ("A-A-A-..." 40,000 characters) is read in one pass: the one-pattern form tried each
    capital of the run against the rest of it (18 s here for this text, 5 s of a matching worker at 20,000)."""
    assert names_of("A-" * 20_000 + " said Bob in Texas.") == {"bob", "texas"}
    assert names_of("The mayor of New-York met O'Neill and NASA-Bob.") == {"new", "york", "o", "neill", "nasa", "bob"}


# Another claim one letter or one exchange away (a reviewer's audit on real PolitiFact claims: nine posts took another
# claim's False rating automatically, their pages a strike).

@pytest.mark.parametrize(("claim", "other"), [
    ("In Ireland, the rate of childhood vaccine injuries is the highest in the whole of Europe this year",
     "In Iceland, the rate of childhood vaccine injuries is the highest in the whole of Europe this year"),
    ("Says the war in Iraq cost more than two trillion dollars of taxpayer money by the end of 2008",
     "Says the war in Iran cost more than two trillion dollars of taxpayer money by the end of 2008"),
    ("Fantasy football expert Matthew Berry died of a drug overdose in his home last night",
     "Fantasy football expert Matthew Perry died of a drug overdose in his home last night"),
])
def test_a_name_one_letter_apart_is_another_name_not_a_typo(claim, other):
    assert (judged(other, claim).automatic, judged(other, claim).guard) == (False, "names")


@pytest.mark.parametrize(("claim", "other"), [
    ("A new study shows that a car emits more pollution than a cow over its whole lifetime",
     "A new study shows that a cow emits more pollution than a car over its whole lifetime"),
    ("More Republicans than Democrats voted early in Georgia in the last general election",
     "More Democrats than Republicans voted early in Georgia in the last general election"),
    ("Marco Rubio beat Mitt Romney in the primary vote in Utah by a wide margin last year",
     "Mitt Romney beat Marco Rubio in the primary vote in Utah by a wide margin last year"),
])
def test_two_words_or_names_that_change_places_are_another_claim(claim, other):
    assert (judged(other, claim).automatic, judged(other, claim).guard) == (False, "wording")


@pytest.mark.parametrize(("claim", "copy"), [
    ("Lower insulin prices were the work of the Trump administration, not Crooked Joe Biden",
     "Lower isulin prices were the work of the Trump administration, not Crooked Joe Bdien"),  # dropped, swapped
    ("The vaccine was tested on children in Texas before anyone approved it for use in schools",
     "The vaccine was tested on chilfren in Texas before anyone approved it for use in schools"),  # key beside
    ("The mayor closed the park and the police arrested the protesters on Sunday night in town",
     "The police arrested the protesters on Sunday night in town and the mayor closed the park"),  # clauses moved
    # What a review of the first version of these guards found held back:
    ("It is definitely true that the vaccine changes your DNA forever, the doctors have admitted",
     "It is definately true that the vaccine changes your DNA forever, the doctors have admitted"),  # misspelt
    ("The Senate has not passed a budget in more than three years, not a good budget, not a bad budget, no budget.",
     "The Senate has not passed a budget in more than three years, not a good budget, not a bad buget, no budget."),
    ("Donald Trump said that he will end all federal funding for public schools that require masks",
     "#Trump Donald Trump said that he will end all federal funding for public schools that require masks"),
    ("Yesterday the mayor closed every park in the city and the police arrested the protesters",
     "The mayor yesterday closed every park in the city and the police arrested the protesters"),
    ("The White House is won in the swing states, and I am winning the swing states.",
     "And I am winning the swing states, the White House is won in the swing states."),
])
def test_typos_and_moved_clauses_still_match_automatically(claim, copy):
    assert (judged(copy, claim).automatic, judged(copy, claim).guard) == (True, "")


# A name's number is part of the name, a hashtag of a name is the name: light edits once held back as other numbers,
# other words or other names.

@pytest.mark.parametrize(("claim", "copy"), [
    ("The COVID-19 vaccine has killed more children than the virus itself, a new report from Ohio shows",
     "The Covid vaccine has killed more children than the virus itself, a new report from Ohio shows"),
    ("Leaders at the G7 summit agreed to ban cash payments over one thousand euros by the end of the year",
     "Leaders at the G-7 summit agreed to ban cash payments over one thousand euros by the end of the year"),
    ("Flight MH17 was shot down by a fighter jet and not by a missile, the new report from Kyiv says",
     "Flight MH 17 was shot down by a fighter jet and not by a missile, the new report from Kyiv says"),
    ("Matthew Perry died of a drug overdose in his home in Los Angeles last night, the police say",
     "#MatthewPerry died of a drug overdose in his home in Los Angeles last night, the police say"),
    ("The COVID-19 vaccine has killed more children than the virus itself, a new report from Ohio shows",
     "The COVID-19 vaccine has killed more children than the virus itself, a new report from Ohio shows #covid19"),
    ("The COVID-19 vaccine has killed more children than the virus itself, a new report from Ohio shows",
     "The Covid 19 vaccine has killed more children than the virus itself, a new report from Ohio shows"),
], ids=["covid-19-as-covid", "g7-as-g-7", "mh17-as-mh-17", "hashtag-of-the-name", "hashtag-of-the-name-and-number",
        "covid-19-as-covid-19-spaced"])
def test_a_name_with_or_without_its_number_or_as_a_hashtag_still_matches_automatically(claim, copy):
    judgement = judged(copy, claim)
    assert (judgement.automatic, judgement.guard) == (True, "")


@pytest.mark.parametrize(("claim", "copy"), [
    ("The COVID-19 vaccine has killed 5 million people around the world since it was first given in Ohio",
     "The Covid vaccine has killed 50 million people around the world since it was first given in Ohio"),
    ("The same flu pandemic that killed millions of people in 1919 is back and spreading in the city",
     "The same flu pandemic that killed millions of people in 2019 is back and spreading in the city"),
    ("Leaders at the G7 summit agreed to ban cash payments over one thousand euros by the end of the year",
     "Leaders at the G-20 summit agreed to ban cash payments over one thousand euros by the end of the year"),
    ("Flight MH17 was shot down by a fighter jet and not by a missile, the new report from Kyiv says",
     "Flight MH370 was shot down by a fighter jet and not by a missile, the new report from Kyiv says"),
    ("Covid-19 killed 19 people in the small town of Sheffield last week, the council has admitted",
     "Covid killed people in the small town of Sheffield last week, the council has admitted"),
    # The name's number written as a word of its own is still the name's: the 19 dropped is the death count.
    ("Covid-19 killed 19 people in the small town of Sheffield last week, the council has admitted",
     "Covid 19 killed people in the small town of Sheffield last week, the council has admitted"),
], ids=["5-vs-50-million", "1919-vs-2019", "g7-vs-g-20", "mh17-vs-mh370", "a-number-beside-the-names-dropped",
        "a-number-beside-the-name-spaced-dropped"])
def test_a_changed_number_is_held_back_beside_a_name_with_its_number(claim, copy):
    judgement = judged(copy, claim)
    assert (judgement.automatic, judgement.guard) == (False, "numbers")


# One letter between two real words or two names: another claim, not a typo (factcheck.matching.spelling).

@pytest.mark.parametrize(("claim", "other", "guard"), [
    ("Doctors found the boy was dead after the vaccine, his mother told reporters outside the hospital",
     "Doctors found the boy was deaf after the vaccine, his mother told reporters outside the hospital", "wording"),
    ("The video shows the senator taped a young woman in a hotel room in the capital last summer",
     "The video shows the senator raped a young woman in a hotel room in the capital last summer", "wording"),
    ("Governor Tim Walz signed a law that lets teachers hide gender changes from parents in the state",
     "Governor Tim Waltz signed a law that lets teachers hide gender changes from parents in the state", "names"),
    ("Former surgeon Ben Carson said on television that the vaccines were never tested on animals",
     "Former surgeon Ben Carlson said on television that the vaccines were never tested on animals", "names"),
], ids=["dead-deaf", "taped-raped", "walz-waltz", "carson-carlson"])
def test_a_word_or_a_name_one_letter_from_another_is_not_forgiven_as_a_typo(claim, other, guard):
    assert (judged(other, claim).automatic, judged(other, claim).guard) == (False, guard)


@pytest.mark.parametrize(("claim", "copy"), [
    ("Former surgeon Ben Carson said on television that the vaccines were never tested on animals",
     "Former surgeon Ben Carrson said on television that the vaccines were never tested on animals"),  # doubled
    ("Former surgeon Ben Carson said on television that the vaccines were never tested on animals",
     "Former surgeon Ben Carsin said on television that the vaccines were never tested on animals"),  # key beside
    ("The federal government is hiding the real death toll of the vaccine from the families of the victims",
     "The federal goverment is hiding the real death toll of the vaccine from the families of the victims"),
    ("The federal government is hiding the real death toll of the vaccine from the families of the victims",
     "The federal government is hiding the real death toll of the vaccine from the famlies of the victims"),
], ids=["name-letter-doubled", "name-key-beside", "letter-dropped", "letter-dropped-again"])
def test_a_finger_s_slip_in_a_name_or_a_word_still_matches_automatically(claim, copy):
    assert (judged(copy, claim).automatic, judged(copy, claim).guard) == (True, "")
