"""Copies in every script (an audit of text from around the world): a copy that negates a claim in Arabic, Hebrew,
Hindi, Russian, Chinese, Japanese, Thai or Korean is another claim and never takes its rating by itself; an exact
copy in a script written without spaces is long enough to judge; a zero-width character typed inside a word and
digits of another script change nothing; and posts stored before these rules are normalised again by migration
factcheck 0036.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from factcheck.matching.matcher import match_new_posts
from factcheck.matching.signature import keys_of, signatures_of
from factcheck.models import Match, MatchState, Post, QueueState
from factcheck.models_bands import PostBand, RatedBand
from factcheck.normalise import digest, normalise_text
from moderation.models import Action
from tests import scenarios
from tests.factcheck.matching_helpers import arrive, flag, post
from tests.factcheck.test_similarity import judged, of

CLAIMS_AND_NEGATIONS = {
    "arabic": ("وزير الصحة يقول إن اللقاح الجديد يقتل الأطفال في المدارس كل يوم",
               "وزير الصحة يقول إن اللقاح الجديد لا يقتل الأطفال في المدارس كل يوم"),
    "hebrew": ("שר הבריאות אמר שהחיסון החדש הורג ילדים בבתי הספר בכל יום בישראל",
               "שר הבריאות אמר שהחיסון החדש לא הורג ילדים בבתי הספר בכל יום בישראל"),
    "hindi": ("स्वास्थ्य मंत्री ने कहा कि नया टीका बच्चों को स्कूल में हर दिन मार रहा है",
              "स्वास्थ्य मंत्री ने कहा कि नया टीका बच्चों को स्कूल में हर दिन नहीं मार रहा है"),
    "russian": ("Министр здравоохранения сказал что новая вакцина убивает детей в школах каждый день",
                "Министр здравоохранения сказал что новая вакцина не убивает детей в школах каждый день"),
    "chinese": ("卫生部长说新疫苗每天都在学校里杀死儿童这是政府隐瞒的真相",
                "卫生部长说新疫苗每天都没有在学校里杀死儿童这是政府隐瞒的真相"),
    "japanese": ("ワクチンは学校で毎日子供たちを殺していると厚生大臣が言った",
                 "ワクチンは学校で毎日子供たちを殺していないと厚生大臣が言った"),
    "thai": ("รัฐมนตรีสาธารณสุขกล่าวว่าวัคซีนใหม่ฆ่าเด็กในโรงเรียนทุกวันและรัฐบาลปกปิดความจริง",
             "รัฐมนตรีสาธารณสุขกล่าวว่าวัคซีนใหม่ไม่ฆ่าเด็กในโรงเรียนทุกวันและรัฐบาลปกปิดความจริง"),
    "korean": ("보건부 장관은 새 백신이 매일 학교에서 아이들을 죽인다고 말했다 정부가 진실을 숨긴다",
               "보건부 장관은 새 백신이 매일 학교에서 아이들을 죽이지 않는다고 말했다 정부가 진실을 숨긴다"),
}


@pytest.mark.parametrize("language", CLAIMS_AND_NEGATIONS)
def test_a_copy_that_negates_the_claim_is_held_back_in_every_script(language):
    claim, negated = CLAIMS_AND_NEGATIONS[language]
    judgement = judged(negated, claim)
    assert judgement is not None, "close enough to be a candidate at all"
    assert (judgement.automatic, judgement.guard) == (False, "polarity")
    exact = judged(claim + "!!", claim)
    assert (exact.automatic, exact.guard) == (True, ""), "the claim's own copy is long enough to judge"


@pytest.mark.parametrize(("claim", "copy"), [
    ("Vaccinet innehåller mikrochip som spårar alla som tar sprutan i Sverige", "Dela nu! "),  # Swedish "now"
    ("Het vaccin bevat microchips die iedereen volgen die de prik heeft gehad", " Deel dit nu!"),  # Dutch "now"
    ("Szczepionka zawiera mikroczipy które śledzą każdego kto ją przyjął w Polsce", "Tak! "),  # Polish "yes"
    ("The vaccine contains microchips that track everyone who takes the shot in India", " (video in hindi)"),
])
def test_a_copy_that_adds_a_common_word_that_is_a_negation_elsewhere_stays_automatic(claim, copy):
    """Words that negate in one language and are common words in another are not negations (a review found "nu",
    "tak", "hindi" holding back share captions in Swedish, Dutch, Polish and English)."""
    copied = copy + claim if copy.endswith(" ") else claim + copy
    judgement = judged(copied, claim)
    assert (judgement.automatic, judgement.guard) == (True, "")


@pytest.mark.parametrize("text", [
    "ワクチンは完全に安全ですと厚生大臣が言った",  # です: "す", not the negation "ず"
    "บ้านไม้หลังนี้สร้างด้วยไม้สักทั้งหลัง",  # ไม้ (wood), not ไม่ (not)
    "ฉันอยากไปโรงเรียนทุกวันเพื่อเรียนหนังสือ",  # อยาก (want), not อย่า (don't)
    "स्वास्थ्य मंत्री ने कहा कि नया टीका पूरी तरह सुरक्षित है",  # ने (the ergative), not न (not)
    "这是非常安全的疫苗未来特别有用",  # 非常 (very), 未来 (future), 特别 (special)
])
def test_an_affirmative_sentence_holding_the_letters_of_a_negation_is_not_negated(text):
    assert of(text).polarity == ()


@pytest.mark.parametrize("short", ["疫苗杀人", "ワクチン危険", "วัคซีนอันตราย"])
def test_a_few_characters_of_a_script_without_spaces_are_still_too_short_to_judge(short):
    assert judged(short + "!", short).guard == "short_text"


@pytest.mark.parametrize(("copy", "claim"), [
    ("The new va\u200bccine kills chil\u00addren in schools every day says the minister of health",
     "The new vaccine kills children in schools every day says the minister of health"),
    ("الوزير قال إن ٥ أطفال ماتوا بسبب اللقاح الجديد في المدارس هذا الأسبوع",
     "الوزير قال إن 5 أطفال ماتوا بسبب اللقاح الجديد في المدارس هذا الأسبوع"),
    ("Le ministre a dit que ３０ enfants sont morts à cause du nouveau vaccin cette semaine",
     "Le ministre a dit que 30 enfants sont morts à cause du nouveau vaccin cette semaine"),
])
def test_an_invisible_character_inside_a_word_or_another_scripts_digits_change_nothing(copy, claim):
    assert normalise_text(copy) == normalise_text(claim)
    judgement = judged(copy, claim)
    assert (judgement.method, judgement.automatic, judgement.guard) == ("text", True, "")


def test_another_number_in_another_scripts_digits_is_still_another_number():
    judgement = judged("الوزير قال إن ٦ أطفال ماتوا بسبب اللقاح الجديد في المدارس هذا الأسبوع",
                       "الوزير قال إن 5 أطفال ماتوا بسبب اللقاح الجديد في المدارس هذا الأسبوع")
    assert judgement.guard == "numbers"


@pytest.mark.django_db
def test_an_arabic_copy_that_negates_a_rated_claim_is_suggested_not_labelled(factchecker, platform_user):
    claim, negated = CLAIMS_AND_NEGATIONS["arabic"]
    source = scenarios.rated_claim(rater=factchecker, text=claim)
    arrive(flag("negated", negated, page="page-other"), by=platform_user)
    copy = post("negated")
    assert copy.queue_state == QueueState.QUEUED and copy.duplicate_of_id is None
    match = Match.objects.get(post=copy, source=source)
    assert (match.state, match.guard) == (MatchState.SUGGESTED, "polarity")
    assert not Action.objects.filter(post=copy).exists()


@pytest.mark.django_db
def test_an_exact_chinese_copy_of_a_rated_claim_is_matched_on_arrival(factchecker, platform_user):
    claim, _ = CLAIMS_AND_NEGATIONS["chinese"]
    source = scenarios.rated_claim(rater=factchecker, text=claim)
    arrive(flag("copy", f"转发：{claim}！！", page="page-other"), by=platform_user)
    copy = post("copy")
    assert (copy.queue_state, copy.duplicate_of_id) == (QueueState.MATCHED, source.pk)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_migration_normalises_posts_stored_before_and_refiles_their_claims_keys(platform_user):
    claim = "The new va\u200bccine kills children in schools every day says the minister of health"
    arrive(flag("old", claim), by=platform_user)
    old = post("old")
    match_new_posts(post_ids=[old.pk])
    as_before = "the new va ccine kills children in schools every day says the minister of health"
    signed_before = signatures_of([as_before])[0]  # stored as the normalisation before 0036 had it
    Post.objects.filter(pk=old.pk).update(normalised_text=as_before, text_key=digest(as_before),
                                          signature=signed_before)
    PostBand.objects.filter(post=old).delete()
    PostBand.objects.bulk_create([PostBand(band=key, post=old) for key in keys_of(signed_before)])
    Post.objects.filter(pk=old.pk).update(queue_state=QueueState.RATED)
    RatedBand.objects.bulk_create([RatedBand(band=key, post=old) for key in keys_of(signed_before)])
    untouched = set(Post.objects.exclude(pk=old.pk).values_list("pk", "normalised_text", "signature"))

    _migrate_0036_again()

    old.refresh_from_db()
    now = normalise_text(claim)
    assert (old.normalised_text, old.text_key) == (now, digest(now))
    assert old.signature and old.signature != signed_before
    for bands in (PostBand, RatedBand):
        assert set(bands.objects.filter(post=old).values_list("band", flat=True)) == set(keys_of(old.signature))
    assert set(Post.objects.exclude(pk=old.pk).values_list("pk", "normalised_text", "signature")) == untouched


def _migrate_0036_again() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("factcheck", "0035_match_copy_coverage_indexes")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("factcheck", "0036_renormalise_invisible_characters_and_digits")])
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())  # the later migrations back, for the tests after this one


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_migration_refiles_the_claim_of_a_copy_it_normalises(platform_user):
    """A copy's keys are filed under its claim (factcheck.matching.candidates.index_bands): a copy normalised again
    re-files its claim's keys, the claim's own and every copy's as they are now."""
    claim = "The new vaccine kills children in schools every day says the minister of health"
    arrive(flag("root", claim), by=platform_user)
    root = post("root")
    copy_text = "BREAKING: The new va\u200bccine kills children in schools every day says the minister of health"
    as_before = "breaking the new va ccine kills children in schools every day says the minister of health"
    arrive(flag("copy", copy_text, page="page-b"), by=platform_user)
    copy = post("copy")
    signed_before = signatures_of([as_before])[0]
    Post.objects.filter(pk=copy.pk).update(normalised_text=as_before, text_key=digest(as_before),
                                           signature=signed_before, duplicate_of=root)
    PostBand.objects.filter(post__in=[root, copy]).delete()
    PostBand.objects.bulk_create([PostBand(band=key, post=root) for key in {*keys_of(root.signature),
                                                                             *keys_of(signed_before)}])

    _migrate_0036_again()

    copy.refresh_from_db()
    assert copy.normalised_text == normalise_text(copy_text) and copy.signature != signed_before
    filed = set(PostBand.objects.filter(post=root).values_list("band", flat=True))
    assert filed == {*keys_of(root.signature), *keys_of(copy.signature)}
    assert not PostBand.objects.filter(post=copy).exists()
