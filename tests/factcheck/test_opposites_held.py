"""Copies that say the opposite of a rated claim, or another thing, never take its rating automatically: each pair a
hostile probe got linked automatically through the API (a copy's page demoted, labelled and given a strike) is
held at suggestion now, by the guard named, and the light edits that are still the claim stay automatic."""

from __future__ import annotations

import pytest

from factcheck.matching.spelling import typo
from tests.factcheck.test_similarity import judged

CLAIM_EN = "Most of the patients now in intensive care with covid in our city hospitals are {}, doctors say"


@pytest.mark.parametrize(("copy", "source"), [
    # A prefix that makes the word its opposite was forgiven as a typo of two letters in a long word.
    (CLAIM_EN.format("vaccinated"), CLAIM_EN.format("unvaccinated")),
    ("The election of the new regional council last spring was legitimate according to the court",
     "The election of the new regional council last spring was illegitimate according to the court"),
    ("Scientists say that it is possible to reverse ageing with a daily glass of beetroot juice",
     "Scientists say that it is impossible to reverse ageing with a daily glass of beetroot juice"),
    ("The police report says the man arrested at the station was a documented migrant from abroad",
     "The police report says the man arrested at the station was an undocumented migrant from abroad"),
    # The "ne-" of Czech, Slovak, Latvian and Lithuanian verbs.
    ("Očkování proti spalničkám způsobuje autismus u malých dětí, tvrdí lékaři z Brna",
     "Očkování proti spalničkám nezpůsobuje autismus u malých dětí, tvrdí lékaři z Brna"),
    ("Vakcīna pret masalām izraisa autismu maziem bērniem, apgalvo ārsti no Rīgas slimnīcas",
     "Vakcīna pret masalām neizraisa autismu maziem bērniem, apgalvo ārsti no Rīgas slimnīcas"),
    # Finnish and Estonian "ei", Korean "안" as a word.
    ("Rokote aiheuttaa autismia pienillä lapsilla, sanovat Helsingin yliopistollisen sairaalan lääkärit",
     "Rokote ei aiheuta autismia pienillä lapsilla, sanovat Helsingin yliopistollisen sairaalan lääkärit"),
    ("Vaktsiin põhjustab autismi väikestel lastel, ütlevad Tartu ülikooli kliinikumi arstid täna",
     "Vaktsiin ei põhjusta autismi väikestel lastel, ütlevad Tartu ülikooli kliinikumi arstid täna"),
    ("우리 반 아이들 대부분은 작년에 백신을 맞았다 고 선생님이 학부모들에게 말했다",
     "우리 반 아이들 대부분은 작년에 백신을 안 맞았다 고 선생님이 학부모들에게 말했다"),
    # Words that debunk what follows them.
    ("Viral posts wrongly claim that drinking a glass of warm salt water every morning kills the virus in your throat",
     "BREAKING: Drinking a glass of warm salt water every morning kills the virus in your throat"),
    ("Conspiracy theorists say the new measles jab contains tiny magnets that stick to your arm afterwards",
     "The new measles jab contains tiny magnets that stick to your arm afterwards"),
    ("It is nonsense that eating two raw onions a day protects your lungs from every kind of flu virus",
     "Eating two raw onions a day protects your lungs from every kind of flu virus"),
    ("Mehrere Zeitungen berichten fälschlicherweise, dass der Impfstoff Mikrochips zur Überwachung aller Bürger "
     "enthält", "Mehrere Zeitungen berichten, dass der Impfstoff Mikrochips zur Überwachung aller Bürger enthält"),
    # Signs the normalised text dropped.
    ("The risk of heart inflammation after the second dose is > 1% for young men under thirty",
     "The risk of heart inflammation after the second dose is < 1% for young men under thirty"),
    ("Forecasters say temperatures in the north of the country will drop to -30 degrees this weekend",
     "Forecasters say temperatures in the north of the country will drop to 30 degrees this weekend"),
    ("✅ Drinking hot water every hour washes the virus from your throat into your stomach where it dies",
     "❌ Drinking hot water every hour washes the virus from your throat into your stomach where it dies"),
    # Numbers in Chinese and Japanese numerals.
    ("政府宣布从下周开始全市所有学校将关闭三个月以防止病毒传播",
     "政府宣布从下周开始全市所有学校将关闭五个月以防止病毒传播"),
    ("政府は来週から市内のすべての学校を三か月間閉鎖すると発表した",
     "政府は来週から市内のすべての学校を六か月間閉鎖すると発表した"),
])
def test_a_copy_that_says_the_opposite_or_another_thing_is_only_suggested(copy, source):
    judgement = judged(copy, source)
    assert judgement is not None and not judgement.automatic, judgement
    assert judgement.guard  # held by a guard, not by its score


@pytest.mark.parametrize(("copy", "source"), [
    (CLAIM_EN.format("unvacinated"), CLAIM_EN.format("unvaccinated")),  # a typo in the word itself
    ("Rokote aiheuttaa autismia pienillä lapsilla, sanovat Helsingin yliopistollisen sairaalan lääkärit!!",
     "Rokote aiheuttaa autismia pienillä lapsilla, sanovat Helsingin yliopistollisen sairaalan lääkärit"),
    ("Forecasters say temperatures in the north of the country will drop to -30 degrees this weekend. Share!",
     "Forecasters say temperatures in the north of the country will drop to −30 degrees this weekend"),
    ("COVID-19 vaccines were given to 10-20 million children in 2021 without any trial, doctors reveal",
     "COVID-19 vaccines were given to 10-20 million children in 2021 without any trial, doctors reveal today"),
])
def test_light_edits_of_the_claim_stay_automatic(copy, source):
    judgement = judged(copy, source)
    assert judgement is not None and judgement.automatic, judgement


def test_a_negating_prefix_is_never_a_typo_and_a_long_word_misspelt_still_is():
    assert not typo("unvaccinated", "vaccinated") and not typo("nezpusobuje", "zpusobuje")
    assert not typo("impossible", "possible") and not typo("illegitimate", "legitimate")
    assert typo("vaccinated", "vacinated") and typo("unvaccinated", "unvacinated")


SHARE = "Please share this with everyone you know, the mainstream media will not show you this {}"


def test_one_caption_under_two_other_links_is_only_suggested_and_under_the_same_link_is_linked():
    held = judged(SHARE.format("https://youtu.be/AAAAAAAAAAA"), SHARE.format("https://youtu.be/BBBBBBBBBBB"))
    assert (held.method, held.automatic, held.guard) == ("text", False, "links")
    same = judged(SHARE.format("https://youtu.be/AAAAAAAAAAA)."), SHARE.format("https://youtu.be/AAAAAAAAAAA"))
    assert same.automatic
    assert judged(SHARE.format(""), SHARE.format("https://youtu.be/BBBBBBBBBBB")).automatic  # a link dropped


@pytest.mark.parametrize(("copy", "source"), [
    ("POLICE HAVE ARRESTED JONATHAN RICHARDS IN LEEDS AFTER THE ATTACK ON THE MOSQUE LAST NIGHT",
     "POLICE HAVE ARRESTED JONATHAN RICHARDSON IN LEEDS AFTER THE ATTACK ON THE MOSQUE LAST NIGHT"),
    ("the man who stabbed three people at the festival was from slovenia, police sources confirmed",
     "the man who stabbed three people at the festival was from slovakia, police sources confirmed"),
    ("the minister of health in australia resigned after admitting the vaccine was never tested",
     "the minister of health in austria resigned after admitting the vaccine was never tested"),
    # Day and month swapped.
    ("On 03/12/2024 the council voted to close every public library in the city for good",
     "On 12/03/2024 the council voted to close every public library in the city for good"),
])
def test_another_name_in_a_text_in_one_case_or_another_date_is_only_suggested(copy, source):
    judgement = judged(copy, source)
    assert judgement is not None and not judgement.automatic and judgement.guard, judgement


@pytest.mark.parametrize(("copy", "source"), [
    ("POLICE HAVE ARRESTED JONATHAN RICHARDSON IN LEEDS AFTER THE ATTACK ON THE MOSQUE LAST NIGTH",
     "POLICE HAVE ARRESTED JONATHAN RICHARDSON IN LEEDS AFTER THE ATTACK ON THE MOSQUE LAST NIGHT"),
    ("On 12/03/2024 the council voted to close every public library in the city for good. SHARE",
     "On 12/03/2024 the council voted to close every public library in the city for good"),
])
def test_a_typo_a_person_makes_in_capitals_or_the_same_date_stays_automatic(copy, source):
    judgement = judged(copy, source)
    assert judgement is not None and judgement.automatic, judgement


CLAIM_TEXT = ("Scientists confirm that drinking hot lemon water for 5 minutes every morning cures type 2 diabetes "
              "within three weeks")


@pytest.mark.parametrize(("copy", "source"), [
    (CLAIM_TEXT + " -> share", CLAIM_TEXT),  # an arrow is no comparison
    (CLAIM_TEXT.replace("cures", "<b>cures</b>"), CLAIM_TEXT),  # nor is markup
    ("我们一起分享：政府宣布从下周开始全市所有学校将关闭三个月以防止病毒传播",
     "政府宣布从下周开始全市所有学校将关闭三个月以防止病毒传播"),  # 一 of 一起 (together) is no number
    ("Our own report on the hot lemon water claim, read it all: https://news.example/lemon-water-study",
     "Our own report on the hot lemon water claim, read it all: http://news.example/lemon-water-study"),
    ("Watch the doctors admit the hot lemon water cure in this video https://youtu.be/AbCdEf12345",
     "Watch the doctors admit the hot lemon water cure in this video https://www.youtube.com/watch?v=AbCdEf12345"),
])
def test_what_the_new_guards_must_not_hold(copy, source):
    judgement = judged(copy, source)
    assert judgement is not None and judgement.automatic, judgement
