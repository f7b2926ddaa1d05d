"""Whether two words are one word written two ways, as the guards of factcheck.matching.similarity read them:
`typo` (a word misspelt), `name_typo` (a name misspelt, the stricter rule) and `split_words` (one word that the
other text writes as two or three: "#MatthewPerry" for "Matthew Perry", "G7" for "G-7").

What a typo is was measured (`python -m bench.typo_quality`: PolitiFact's and LIAR's statements, each with one
word swapped for another word of them one edit away, not a plural or a tense, and each with a typo anywhere in a
word; and the light edits of bench/matching_quality.py). One letter changed for another in a short word often
makes another word ("dead" / "deaf", "taped" / "raped", "rape" / "rate", "year" / "wear"): forgiven in words under
six letters only inside the word and for the key beside it (at five, "taped" / "raped" got through), swaps of
ordinary words taken automatically fell from 2,612 to 1,099 of 2,997 (to 1,049 with no letter changed at all in
short words, which held back 144 more of the typos). A name's letter dropped or added is forgiven only where a
finger slips (the letter doubles one beside it or is the key beside one) or in a name of seven letters or more:
"Walz" / "Waltz" and "Carson" / "Carlson" are two people, and swapped names taken automatically fell from 515 to
177 of 884. Typos taken automatically fell from 3,338 to 3,100 of 3,713 (the others are suggested, for a person
to confirm), more for misspellings that strike no key beside ("lfmon" for "lemon"), which the measured typos do
not make; of the quality benchmark's 300 light edits, whose typos change no letter for another, one ("Pivate
Investment Corporation") is now a suggestion. No vocabulary installed here tells a word from a misspelling: the
encoder's (128,000 pieces of 16 languages) has "dead" but not "deaf", "raped" nor "definitely", and no other
package in requirements.txt carries one.
"""

from __future__ import annotations

# The letters' places on a QWERTY keyboard (row, and across the row as the keys are staggered): a typo strikes a
# key beside the one meant.
_KEYS = {key: (row, col + (0, 0.25, 0.75)[row]) for row, keys in enumerate(("qwertyuiop", "asdfghjkl", "zxcvbnm"))
         for col, key in enumerate(keys)}
# Shorter words than this are forgiven a letter changed for another only inside them, for the key beside it
# (measured: see the docstring).
CHANGED_LETTER_MIN = 6
# Names this long are forgiven any letter dropped or added; shorter ones only a finger's slip.
NAME_LETTER_MIN = 7
# A word written as at most this many words by the other text ("#DonaldJTrump" for "Donald J Trump").
SPLIT_MOST = 3
# Prefixes that make a word its opposite: "vaccinated" / "unvaccinated", "possible" / "impossible", "legitimate" /
# "illegitimate", "documented" / "undocumented", and the "ne-" ("nie-") of Czech, Slovak, Polish, Latvian,
# Lithuanian and South Slavic verbs ("způsobuje" / "nezpůsobuje": causes / does not cause). Two or three letters
# at the start of a long word, which `typo` forgave, and the copy that said the opposite took the claim's rating.
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "non", "dis", "ne", "nie")


def _neighbours(x: str, y: str) -> bool:
    if x not in _KEYS or y not in _KEYS:
        return False
    (row_x, at_x), (row_y, at_y) = _KEYS[x], _KEYS[y]
    return abs(at_x - at_y) == 1 if row_x == row_y else abs(row_x - row_y) == 1 and abs(at_x - at_y) <= 0.75


def typo(a: str, b: str, *, two_in_long: bool = True) -> bool:
    """Equal, or a typo apart: one edit (a letter dropped, added, or two swapped; a letter changed for another, in
    a word under CHANGED_LETTER_MIN letters only for the key beside it and not its first or last letter), two in a
    word of seven letters or more unless not `two_in_long` (optimal string alignment distance)."""
    if a == b:
        return True
    if negated(a, b):
        return False
    most = 2 if two_in_long and min(len(a), len(b)) >= 7 else 1
    if abs(len(a) - len(b)) > most or min(len(a), len(b)) < 3:
        return False
    if len(a) == len(b) < CHANGED_LETTER_MIN:
        # "dead" / "deaf", "taped" / "raped": another word, though the keys are side by side.
        apart = _apart(a, b)
        return _swapped(a, b, apart) or (len(apart) == 1 and 0 < apart[0] < len(a) - 1
                                         and _neighbours(a[apart[0]], b[apart[0]]))
    before, row = None, list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            cost = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (x != y))
            if before is not None and i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        before, row = row, current
        if min(row) > most:
            return False
    return row[-1] <= most


def negated(a: str, b: str) -> bool:
    """Whether one word is the other with a prefix that makes it its opposite (NEGATING_PREFIXES)."""
    short, long = sorted((a, b), key=len)
    return len(long) - len(short) <= 3 and any(long == prefix + short for prefix in NEGATING_PREFIXES)


def name_typo(a: str, b: str) -> bool:
    """Equal, or one typo apart in a name of 3 letters or more: two neighbours swapped, a letter struck for the key
    beside it, or a letter dropped or added where a finger slips (it doubles a letter beside it or is the key beside
    one: "Biiden", "Bidwen") or in a name of NAME_LETTER_MIN letters or more. Not any one letter changed, as `typo`
    forgives in longer words: a name one letter apart is another name (Ireland and Iceland, Iraq and Iran, Berry
    and Perry, Walz and Waltz), and forgiven as typos they gave copies of PolitiFact's ratings to posts about the
    other one (a name misspelt otherwise holds a true copy at suggestion, where a reviewer confirms it)."""
    if a == b:
        return True
    if min(len(a), len(b)) < 3 or abs(len(a) - len(b)) > 1:
        return False
    if len(a) != len(b):
        short, long = sorted((a, b), key=len)
        extra = [i for i in range(len(long)) if long[:i] + long[i + 1:] == short]
        if not extra:
            return False
        if len(short) >= NAME_LETTER_MIN:
            return True
        return any(long[i] == long[k] or _neighbours(long[i], long[k])
                   for i in extra for k in (i - 1, i + 1) if 0 <= k < len(long))
    apart = _apart(a, b)
    return _swapped(a, b, apart) or (len(apart) == 1 and _neighbours(a[apart[0]], b[apart[0]]))


def _apart(a: str, b: str) -> list[int]:
    """Where two words of one length differ."""
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


def _swapped(a: str, b: str, apart: list[int]) -> bool:
    """Whether two words of one length, differing at `apart`, differ by two neighbouring letters swapped."""
    return len(apart) == 2 and apart[1] == apart[0] + 1 and a[apart[0]] == b[apart[1]] and a[apart[1]] == b[apart[0]]


def split_words(words: frozenset[str], other: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Each of `words` that the token sequence `other` writes as two to SPLIT_MOST words in a row, with those words:
    "matthewperry" (from "#MatthewPerry") in "matthew perry died", "g7" in "the g 7 summit" (from "G-7")."""
    if not words:
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for size in range(2, SPLIT_MOST + 1):
        for start in range(len(other) - size + 1):
            parts = other[start : start + size]
            joined = "".join(parts)
            if joined in words and joined not in found:
                found[joined] = parts
    return found
