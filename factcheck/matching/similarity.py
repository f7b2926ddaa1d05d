"""Whether two posts say the same claim: a score, its method, and the guards against wrong matches.

- Method and score: the same normalised URL (`url`, 1.0), the same normalised text (`text`, 1.0),
  or near-duplicate text (`minhash`: found through the MinHash bands, scored by the exact Jaccard
  similarity of the two texts' character 5-gram sets).
- Automatic at or above `FACTDESK_MATCH_AUTO`, suggested at or above `FACTDESK_MATCH_SUGGEST`.
- Guards, which hold a pair at suggestion whatever its score (PRODUCT.md, Near-duplicates); for
  two posts of one link only `polarity` applies (the link is the claim, captions vary):
  `short_text` (either text under 8 words), `polarity` (the negations or
  polar words differ: "cures" / "does not cure", "is" / "isn't", "no evidence that"),
  `numbers` (the numbers differ: "5 minutes" / "50 minutes"; not the number of a name the other text
  names without it: "COVID-19" / "Covid") and `names` (one names a person, place or body the other does not:
  "Biden said" / "Trump said"; typos forgiven) and `wording` (one word swapped for another, not a typo of it:
  "violent crime" / "violent criticism"). A repost's bait ("BREAKING:", "Share before they delete this!") is left
  out of what is compared; a hashtag or a name with its number written as one word is the words the other text
  writes it as ("#MatthewPerry" / "Matthew Perry", "G7" / "G-7"). What a typo is: factcheck.matching.spelling.

Pure functions over `Features`, which `features` reads off a post's stored fields; the matcher
(factcheck.matching.matcher) and the quality benchmark (bench/matching_quality.py) both judge
pairs here, so what is measured is what runs.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Literal

from factcheck.matching.polarity import polarity_of
from factcheck.matching.signature import GRAM
from factcheck.matching.spelling import name_typo, split_words, typo
from factcheck.normalise import URL_IN_TEXT, ascii_digits, normalise_text, normalise_url

MIN_AUTO_WORDS = 8
# More words than this gone and come (or names missing) is another text, whatever the typos: the
# guards stop comparing word by word there, so judging two long posts stays fast.
MAX_CHANGED_WORDS = 20

Guard = Literal["", "short_text", "links", "polarity", "numbers", "names", "wording"]


# Scripts written without spaces between words, and about how many letters make a word in each: a Chinese or
# Japanese sentence is one "word" to a split on spaces, which held every such copy back as too short to judge.
SPACELESS = ((re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"), 2),  # kana, Han: ~2 a word
             (re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]"), 4))  # Thai, Lao, Myanmar, Khmer: ~4
# What reposts put before a claim ("BREAKING:", "Share before they delete this!"): it says nothing
# about the claim, and "before" would otherwise read as a polar word.
SHARE_BAIT = re.compile(
    r"^(?:(?:breaking(?: news)?|wow|omg|read this|pass it on|share (?:this )?(?:before (?:they|it) "
    r"(?:delete|deletes|remove|removes)(?: (?:this|it))?)?)\s*)+"
)
# Words in capitals inside a sentence: the people, places and bodies a claim is about. A word is taken whole
# (possessive) and kept when a lower-case letter follows its capital (LOWER): written as one
# pattern that asks for that letter, each start backtracked through the rest of a run such as "A-A-A-...",
# 5 s of a matching worker for a 20,000-character post. The capital comes first and the conditions on what precedes
# it are asked after it (not at the start of a word, of the text or of a sentence: `\b`, `^` and ". " before it), so
# that the search jumps from capital to capital instead of trying every position (15x faster, the same matches).
CAPITALISED = re.compile(r"([A-Z](?<!\w.)(?<!^.)(?<![.!?:]\s.)[\w'’-]*+)")
# A sentence's first word is a name only when it owns something ("Pfizer's CEO admitted"): capitalised, any word
# may begin a sentence. Not a word that "'s" shortens ("It's", "Here's": NOT_OWNERS).
# Capital first, as CAPITALISED.
OWNER_FIRST = re.compile(r"([A-Z](?:(?<=^.)|(?<=[.!?:]\s.))[\w-]*+)['’]s\b")
POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
LOWER = re.compile(r"[a-z]")
# Words too common to change a claim by themselves ("the" for "a"); negations are the polarity guard's.
STOPWORDS = frozenset(
    "the a an of to in on for and or but is are was were be been being it its this that these those with as at "
    "by from has have had will would can could should may might do does did so than then there their they "
    "he she we you i his her our your my me us them who which what when where how".split()
)
NOT_OWNERS = STOPWORDS | {"here", "let"}
NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
    "million billion trillion half twice double triple dozen".split()
)
# A decimal digit of any script: a text without one writes no number in digits (NUMBER) nor a name with its number
# (NAMED_NUMBER), and asking first spares most posts those searches, which try every position.
DIGIT = re.compile(r"\d")
# A number; French, Polish or Swedish "25 000" (a space, often a no-break one, between groups of three) too.
NUMBER = re.compile(r"\b\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d.,]\d)|\d+(?:[.,]\d+)*")
# A minus sign before a number, where it stands as a sign and not as a hyphen or a dash between words or numbers
# ("-30 degrees", not "COVID-19", "10-20" nor "2020 - 30"): "-30" and "30" are other temperatures.
MINUS = "-\u2212"
# A date written in numbers ("12/03/2024"), read whole besides its numbers: a copy that swaps its day and month
# ("03/12/2024") states the same numbers, and is another date. Without leading zeros ("3/12/2024").
DATE = re.compile(r"(?<![\d/.-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?![\d/.-])")
# Numbers written in Chinese and Japanese numerals ("三个月" / "五个月": three months / five): what NUMBER_WORDS are
# to English. A run of them is one number, read only before a counter or a unit ("个", "月", "年", "か月", "人"...) or
# after "第": "一" alone begins everyday words ("一起" together, "一定" certainly, "统一" unify), and read there it
# held every Chinese copy with a light edit at suggestion.
CJK_NUMERALS = "[零〇一二两兩三四五六七八九十百千万萬亿億兆]+"
CJK_NUMBER = re.compile(f"(?<=第){CJK_NUMERALS}|{CJK_NUMERALS}"
                        "(?=[个個月年日天次人名倍岁歳かヶケカ件时時分秒周週号號元円条條座家位只隻本枚台度%％])")
# A thousands separator: "5,000", "5.000" and "5 000" are 5000, but "1.5" is not 15.
THOUSANDS = re.compile(r"[.,\u0020\u00a0\u202f](?=\d{3}(?!\d))")
# A name with its number, letters first, as one word or joined by a hyphen: "COVID-19", "MH17", "G7", "F-35".
# Not digits first ("5G", "19-year-old", "10km"): those are quantities.
NAMED_NUMBER = re.compile(r"(?<![\w-])([^\W\d_]+)([-\u2010\u2011]?)(\d+)(?!\w|[.,]\d)")
HASHTAG = re.compile(r"#(\w+)")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")
YOUTU_BE = re.compile(r"^youtu\.be/([\w-]+)$")
# What ends a sentence after a link written in it ("see https://x.example/a)."): not the link's.
TRAILING = ".,;:!?)]}\"'’”»"


@dataclass(frozen=True)
class Features:
    """What the judge compares of one post: its normalised URL and text and what is derived from them."""

    url_key: str
    text_key: str
    words: int
    polarity: tuple[tuple[str, int], ...]
    numbers: tuple[tuple[str, int], ...]
    names: frozenset[str]  # empty when the text has no mixed case to tell names by
    # Written in one case: any word may be a name, so a word two letters from another is another (`wording_differs`).
    one_case: bool
    # Each name with its number: (its word without the hyphen, its letters, its number): ("covid19", "covid", "19").
    named_numbers: tuple[tuple[str, str, str], ...]
    # Letters of a hyphenated name with its number ("g" of "G-7") that the text never writes alone.
    attached: frozenset[str]
    # Words the other text may write as several: hashtags ("matthewperry") and names with their number ("g7").
    joinable: frozenset[str]
    tokens: frozenset[str]
    sequence: tuple[str, ...]  # the tokens in their order
    words_counted: Counter[str]
    grams: frozenset[bytes]
    # The links the text carries, normalised (factcheck.normalise.normalise_url): what a caption is about when the
    # claim is in the picture or the video behind one.
    links: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Judgement:
    method: str  # a MatchMethod value
    score: float
    automatic: bool
    guard: Guard


def _counted(items) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter(items).items()))


def word_count(tokens: list[str]) -> int:
    """How many words the normalised text's tokens are: one each, or for a run of a script written without spaces
    (SPACELESS) its letters over that script's letters a word (at least one)."""
    count = 0
    for token in tokens:
        if token.isascii():  # no spaceless script in it: one word (a regular expression per script cost more)
            count += 1
            continue
        letters = [len(script.findall(token)) // per_word for script, per_word in SPACELESS]
        count += max(1, sum(letters)) if any(letters) else 1
    return count


def numbers_of(text: str, tokens: list[str]) -> tuple[tuple[str, int], ...]:
    """The numbers a post states: digits from its text (URLs left out; "5,000", "5 000" and "5000" alike, "1.5"
    and "15" not) and number words."""
    # Digits of any script as ASCII ("٥", "５" and "5" are one number), as the normalised text has them.
    text = ascii_digits(URL_IN_TEXT.sub(" ", text or ""))
    digits = [_signed(text, m.start()) + THOUSANDS.sub("", m[0]).replace(",", ".") for m in NUMBER.finditer(text)
              ] if DIGIT.search(text) else []
    written = CJK_NUMBER.findall(text) if not text.isascii() else []
    dates = [f"{int(m[1])}/{int(m[3])}/{m[4]}" for m in DATE.finditer(text)] if digits else []
    return _counted(digits + dates + written + [t for t in tokens if t in NUMBER_WORDS])


def one_case(plain: str) -> bool:
    """Whether a text (without its links) in a script with capitals is written in one of its cases (ALL CAPS or all
    lower case), where capitals tell no name from a word. Not a script without capitals (Arabic, Chinese, Thai): their
    typos are forgiven as they were measured."""
    return (plain.upper() == plain) != (plain.lower() == plain)


def _signed(text: str, at: int) -> str:
    """ "-" when a minus sign stands before the number at `at` as its sign (MINUS), else ""."""
    if at and text[at - 1] in MINUS and (at == 1 or not (text[at - 2].isalnum() or text[at - 2] in f".,{MINUS}")):
        return "-"
    return ""


def names_of(text: str) -> frozenset[str]:
    """The capitalised words inside its sentences ("Joe Biden", "Texas") and a sentence's first word when it owns
    something ("Pfizer's CEO"), folded, without the possessive "'s"; none for a text in one case (ALL CAPS or all
    lower case, or a script without capitals), where capitals tell nothing."""
    text = URL_IN_TEXT.sub(" ", text or "").strip()
    if text.upper() == text or text.lower() == text:
        return frozenset()
    owners = (word for word in OWNER_FIRST.findall(text) if normalise_text(word) not in NOT_OWNERS)
    words = (POSSESSIVE.sub("", word) for word in (*CAPITALISED.findall(text), *owners) if LOWER.search(word, 1))
    return frozenset(part for word in words for part in normalise_text(word).split())


def named_numbers_of(text: str) -> tuple[tuple[tuple[str, str, str], ...], Counter[str]]:
    """The names with their number a text writes ("COVID-19", "MH17", "g7"), each as (word, letters, number):
    ("covid19", "covid", "19"); and how many times each name's letters are written with a hyphen before its number
    ("G-7")."""
    text = ascii_digits(URL_IN_TEXT.sub(" ", text or ""))
    matches = NAMED_NUMBER.finditer(text) if DIGIT.search(text) else ()
    found = [(normalise_text(m[1]), bool(m[2]), m[3]) for m in matches]
    return (tuple((letters + number, letters, number) for letters, _, number in found),
            Counter(letters for letters, hyphen, _ in found if hyphen))


def numbers_differ(a: Features, b: Features, *, words: bool = True) -> bool:
    """Whether the two texts state other numbers (digits, and number words when `words`). The number of a name
    ("COVID-19", "MH17", "G7") is the name's, not the claim's, where the other text names it with that number or
    without any ("Covid" for "COVID-19", "#covid19" again); not where it names it with another ("G-20" for "G7"),
    and a number stated besides still counts ("Covid-19 killed 19 people" / "Covid killed people")."""
    ours, theirs = _numbers(a, words=words), _numbers(b, words=words)
    return ours != theirs and bool(_unnamed(ours - theirs, a, b) or _unnamed(theirs - ours, b, a))


def _numbers(features: Features, *, words: bool) -> Counter[str]:
    return Counter({n: count for n, count in features.numbers if words or n not in NUMBER_WORDS})


def _unnamed(extra: Counter[str], text: Features, other: Features) -> Counter[str]:
    """`extra`, the numbers `text` states beyond `other`'s, less those its names' numbers that `other` names."""
    ours = Counter(word for word, _, _ in text.named_numbers)
    theirs = Counter(word for word, _, _ in other.named_numbers)
    # The other text naming it with the number as a word of its own ("Covid 19") names it with its number too: its
    # 19 is the name's, so a 19 of ours beyond it is a number stated besides ("Covid-19 killed 19 people"). Its
    # words are those pairs as well where it writes "COVID-19" (the hyphen splits them): the larger count is right.
    spaced = Counter(zip(other.sequence, other.sequence[1:], strict=False))
    for word, letters, number in dict.fromkeys(text.named_numbers):
        theirs[word] = max(theirs[word], spaced[(letters, number)])
        alone = letters in other.tokens and letters not in other.attached
        if extra[number] > 0 and ours[word] > theirs[word] and (theirs[word] or alone):
            extra[number] -= min(extra[number], ours[word] - theirs[word])
    return +extra


def joined(a: Features, b: Features) -> tuple[Features, Features]:
    """The two texts with a hashtag or a name with its number written as one word ("#MatthewPerry", "G7") read as the
    words the other text writes it as ("Matthew Perry", "G-7"), for the guards that compare words."""
    return _split(a, b), _split(b, a)


def _split(a: Features, b: Features) -> Features:
    parts = split_words(a.joinable - b.tokens, b.sequence)
    if not parts:
        return a
    sequence = tuple(part for token in a.sequence for part in parts.get(token, (token,)))
    return replace(a, sequence=sequence, tokens=frozenset(sequence), words_counted=Counter(sequence),
                   names=frozenset(part for name in a.names for part in parts.get(name, (name,))))


def wording_differs(a: Features, b: Features) -> bool:
    """Whether one text swaps a word of the other for another word ("violent crime" / "violent
    criticism"): a word gone and a word come that are not a typo of each other. Words only added
    (hashtags, "BREAKING", a comment) or only dropped, and words moved, change nothing here."""
    gone = list((a.words_counted - b.words_counted).elements())
    come = list((b.words_counted - a.words_counted).elements())
    if len(gone) > MAX_CHANGED_WORDS and len(come) > MAX_CHANGED_WORDS:
        return True  # that many words in and out is another text, not a light edit (and keeps this linear)
    # In a text in one case any word may be a name, and a name two letters from another is another name
    # ("RICHARDSON" / "RICHARDS", "slovakia" / "slovenia", "austria" / "australia" were forgiven as typos): one
    # edit only. Not a name's rule: a typo in capitals ("YUR", "USIING") is the commonest light edit of a repost.
    one_edit = a.one_case or b.one_case
    gone_unmatched = [w for w in gone if not any(typo(w, x, two_in_long=not one_edit) for x in come)]
    come_unmatched = [x for x in come if not any(typo(w, x, two_in_long=not one_edit) for w in gone)]
    # "the" for "a" is no other claim; "should" for "fought" is.
    return bool(gone_unmatched and come_unmatched) and any(
        w not in STOPWORDS for w in (*gone_unmatched, *come_unmatched)
    )


def names_differ(a: Features, b: Features) -> bool:
    """Whether one text names someone or something that the other does not mention at all (`names_unmentioned`);
    only where both texts have names, that is mixed case to tell them by."""
    return bool(a.names and b.names) and (names_unmentioned(a, b) or names_unmentioned(b, a))


def names_unmentioned(a: Features, b: Features) -> bool:
    """Whether `a` names someone or something `b` does not mention at all (typos forgiven, as
    spelling.name_typo knows them, which Iceland for Ireland is not; a name moved to the start of a sentence by a
    reordering is still mentioned)."""
    absent = [name for name in a.names if name not in b.tokens]
    if len(absent) > MAX_CHANGED_WORDS:
        return True  # no typo makes that many names
    return any(not any(name_typo(name, token) for token in b.tokens) for name in absent)


# At most this many words on each side of an exchange: names and nouns ("Marco Rubio"), not clauses.
EXCHANGED_MOST = 3


def words_exchanged(a: Features, b: Features) -> bool:
    """Whether the two texts say the same words but two of them (or two names of up to EXCHANGED_MOST words) change
    places around words between them: "a car emits more than a cow" / "a cow emits more than a car", "Marco Rubio
    beat Mitt Romney" / "Mitt Romney beat Marco Rubio". That is the other claim, which no other guard sees and the
    5-grams barely tell apart. The words both texts have are compared, stopwords but the comparing ones left out
    (COMPARING: "more Republicans than Democrats"), in each text's order. Two clauses that change places ("X, and Y" /
    "Y, and X", a light edit) have no such word between them; two words side by side that change places ("the mayor
    yesterday", a hashtag of a name put in front of it) are not this either."""
    ours, theirs = _shared_in_order(a.sequence, b.sequence), _shared_in_order(b.sequence, a.sequence)
    if len(ours) != len(theirs) or ours == theirs:
        return False
    apart = [i for i, (x, y) in enumerate(zip(ours, theirs, strict=True)) if x != y]
    mine, yours = ours[apart[0]:apart[-1] + 1], theirs[apart[0]:apart[-1] + 1]
    n = len(mine)
    # As long as each other (one word for one, a name of two for a name of two): a clause moved past a phrase
    # the text says twice ("won in the swing states, and I am winning the swing states") looks like an exchange of
    # three words for one.
    return any(yours == mine[n - size:] + mine[size:n - size] + mine[:size]
               for size in range(1, min(EXCHANGED_MOST, (n - 1) // 2) + 1))


# Stopwords that set two things against each other: kept between the words an exchange moves.
COMPARING = frozenset({"than", "vs", "versus"})


def _shared_in_order(tokens: tuple[str, ...], other: tuple[str, ...]) -> list[str]:
    """`tokens` without the words `other` lacks (each counted: a word twice here and once there is kept once),
    and without stopwords but COMPARING, in their order."""
    left = Counter(other)
    kept = []
    for token in tokens:
        if left[token] > 0 and (token not in STOPWORDS or token in COMPARING):
            left[token] -= 1
            kept.append(token)
    return kept


def grams_of(normalised_text: str) -> frozenset[bytes]:
    """The text's character 5-grams, as the signature hashes them (factcheck.matching.signature)."""
    if not normalised_text:
        return frozenset()
    data = f" {normalised_text} ".encode()
    return frozenset(data[i : i + GRAM] for i in range(len(data) - GRAM + 1))


def features(*, text: str, normalised_text: str, url_key: str, text_key: str) -> Features:
    claim = SHARE_BAIT.sub("", normalised_text)  # what the post claims, without the repost's bait
    tokens = claim.split()
    counted = Counter(tokens)
    named, hyphenated = named_numbers_of(text)
    plain = URL_IN_TEXT.sub(" ", text or "")  # the text without its links
    hashtags = (normalise_text(tag) for tag in HASHTAG.findall(plain))
    return Features(
        url_key=url_key, text_key=text_key, words=word_count(tokens),
        polarity=polarity_of(tokens, text=plain),
        numbers=numbers_of(text, tokens), names=names_of(text), one_case=one_case(plain), named_numbers=named,
        attached=frozenset(letters for letters, n in hyphenated.items() if counted[letters] <= n),
        joinable=frozenset(word for word in (*hashtags, *(word for word, _, _ in named)) if word in counted),
        tokens=frozenset(tokens), sequence=tuple(tokens), words_counted=counted, grams=grams_of(claim),
        links=links_of(text),
    )


def links_of(text: str) -> frozenset[str]:
    """The links written in a text, normalised and without their scheme ("http://" and "https://" lead to one page),
    a YouTube video's short link as its long one, without the punctuation that ends the sentence around them."""
    found = URL_IN_TEXT.findall(text or "") if "://" in (text or "") or "www." in (text or "").lower() else ()
    links = (SCHEME.sub("", normalise_url(_with_scheme(link.rstrip(TRAILING)))) for link in found)
    return frozenset(YOUTU_BE.sub(r"youtube.com/watch?v=\1", link) for link in links if link)


def _with_scheme(link: str) -> str:
    return link if "://" in link else f"http://{link}"  # "www.x.example/q" is read as the host it names


def jaccard(a: frozenset[bytes], b: frozenset[bytes]) -> float:
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def _guard(a: Features, b: Features, *, method: str) -> Guard:
    if method == "url":
        # Two posts of one link make its claim whatever their captions add, unless a caption turns
        # it round ("FALSE:", "not true").
        return "polarity" if a.polarity != b.polarity else ""
    if min(a.words, b.words) < MIN_AUTO_WORDS:
        return "short_text"
    if a.links and b.links and a.links.isdisjoint(b.links):
        # One caption with two other links ("Please share this, the media will not show you this" and a video):
        # the claim is in what each links to, and those differ.
        return "links"
    if a.polarity != b.polarity:
        return "polarity"
    if numbers_differ(a, b):
        return "numbers"
    a, b = joined(a, b)
    if names_differ(a, b):
        return "names"
    if wording_differs(a, b) or words_exchanged(a, b):
        return "wording"
    return ""


def judge(a: Features, b: Features, *, auto: float, suggest: float) -> Judgement | None:
    """How post `a` matches post `b`, or None when it does not even reach a suggestion."""
    if a.url_key and a.url_key == b.url_key:
        method, score = "url", 1.0
    elif a.text_key and a.text_key == b.text_key:
        method, score = "text", 1.0
    else:
        method, score = "minhash", round(jaccard(a.grams, b.grams), 4)
    if score < suggest:
        return None
    guard = _guard(a, b, method=method)
    return Judgement(method=method, score=score, automatic=score >= auto and not guard, guard=guard)
