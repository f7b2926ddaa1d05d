"""What the typo rules forgive (factcheck.matching.spelling): of PolitiFact's and LIAR's statements (../shared/data, as
bench/matching_pairs.py reads them), how many pairs the judge takes automatically when one word is swapped for another
real word one edit away, and when one word has a typo.

- `real_word` (another claim): each statement with one word swapped for a word of the statements (one found in two of
  them or more) one letter changed, dropped, added or two swapped away, not a plural or a tense ("vaccine" /
  "vaccines", "vote" / "voted"), in the word's case: "dead" / "deaf", "Carson" / "Carlson".
- `typo` (the same claim): each statement with one typo anywhere in a word, first and last letters too: a key beside
  struck, a letter dropped, doubled, added from the key beside, or two swapped; not one that makes a word of the
  statements (that is the other kind).

Each split by whether the word is capitalised (a name, to the names guard) or not. The quality benchmark's light edits
(bench/matching_quality.py) have typos of the inner letters only, and no letter changed for another; these have both.

    .venv/bin/python -m bench.typo_quality [--data-dir ../shared/data]
"""

from __future__ import annotations

import argparse
import random
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bench.matching_pairs import PROTECTED, Pair, Statement, load_statements
from bench.matching_quality import DEFAULT_DATA, score_pairs
from factcheck.matching.similarity import STOPWORDS, judge

SEED = 7
WORD = re.compile(r"\b[A-Za-z]{3,}\b")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
KEYS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _one_edit(word: str) -> set[str]:
    """Every string one letter changed, dropped, added or two neighbours swapped away from `word`."""
    found = {word[:i] + c + word[i:] for i in range(len(word) + 1) for c in LETTERS}
    found |= {word[:i] + word[i + 1:] for i in range(len(word))}
    found |= {word[:i] + c + word[i + 1:] for i in range(len(word)) for c in LETTERS}
    found |= {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    return found - {word}


def _inflected(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return long in {short + end for end in "sdeynr"} or (
        len(short) == len(long) and short[:-1] == long[:-1] and {short[-1], long[-1]} <= set("sdy"))


def _beside(letter: str) -> list[str]:
    return [row[k] for row in KEYS if letter.lower() in row
            for k in (row.index(letter.lower()) - 1, row.index(letter.lower()) + 1) if 0 <= k < len(row)]


def _in_case(new: str, old: str) -> str:
    return new.capitalize() if old[0].isupper() else new


def build(statements: Sequence[Statement], *, seed: int = SEED) -> list[Pair]:
    """Up to one pair of each kind per statement, the same ones for the same statements and seed; `how` is the word."""
    rng = random.Random(seed)
    seen = Counter(word.lower() for s in statements for word in set(re.findall(r"[A-Za-z]+", s.text)))
    words = {word for word, n in seen.items() if n >= 2 and len(word) >= 3}
    pairs = []
    for s in statements:
        ordinary = [m for m in WORD.finditer(s.text) if m.group().lower() not in PROTECTED | STOPWORDS]
        rng.shuffle(ordinary)
        for m in ordinary:
            base = m.group().lower()
            others = sorted(w for w in _one_edit(base) & words
                            if not _inflected(w, base) and w not in STOPWORDS and w not in PROTECTED)
            if others:
                new = _in_case(rng.choice(others), m.group())
                pairs.append(Pair(s.text, s.text[:m.start()] + new + s.text[m.end():], "real_word", False, m.group()))
                break
    for s in statements:
        candidates = [m for m in WORD.finditer(s.text) if m.group().lower() not in PROTECTED]
        if not candidates:
            continue
        m = rng.choice(candidates)
        word, i = m.group(), rng.randrange(len(m.group()))
        op = rng.choice(("key beside", "drop", "double", "swap", "add beside"))
        if op == "key beside" and _beside(word[i]):
            key = rng.choice(_beside(word[i]))
            new = word[:i] + (key.upper() if word[i].isupper() else key) + word[i + 1:]
        elif op == "drop":
            new = word[:i] + word[i + 1:]
        elif op == "double":
            new = word[:i] + word[i] + word[i:]
        elif op == "swap" and i + 1 < len(word):
            new = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        elif op == "add beside" and _beside(word[i]):
            new = word[:i] + rng.choice(_beside(word[i])) + word[i:]
        else:
            continue
        if new.lower() not in words:
            pairs.append(Pair(s.text, s.text[:m.start()] + new + s.text[m.end():], "typo", True, word))
    return pairs


def measure(*, data_dir: Path, auto: float, suggest: float) -> Counter[tuple[str, str, bool]]:
    """(kind, "name" or "word", taken automatically) -> pairs."""
    counts: Counter[tuple[str, str, bool]] = Counter()
    for s in score_pairs(build(load_statements(data_dir))):
        j = judge(s.a, s.b, auto=auto, suggest=suggest) if s.candidate else None
        what = "name" if s.pair.how[0].isupper() and not s.pair.how.isupper() else "word"
        counts[s.pair.kind, what, bool(j and j.automatic)] += 1
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.typo_quality", description=__doc__.split("\n\n")[0])
    parser.add_argument("--auto", type=float, default=0.65)
    parser.add_argument("--suggest", type=float, default=0.4)
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    if not args.data_dir.is_dir():
        print(f"No statements in {args.data_dir}: nothing to measure.")
        return 0
    counts = measure(data_dir=args.data_dir, auto=args.auto, suggest=args.suggest)
    print(f"Taken automatically at auto >= {args.auto} (suggest >= {args.suggest}):", "",
          "| kind | same claim | names | other words | all |", "| --- | --- | ---: | ---: | ---: |", sep="\n")
    for kind, same in (("real_word", "no"), ("typo", "yes")):
        cells = [(counts[kind, what, True], counts[kind, what, True] + counts[kind, what, False])
                 for what in ("name", "word")]
        cells.append((sum(a for a, _ in cells), sum(n for _, n in cells)))
        print(f"| {kind} | {same} | " + " | ".join(f"{a} of {n}" for a, n in cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
