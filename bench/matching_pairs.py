"""Labelled pairs of posts for the matching quality benchmark (bench/matching_quality.py).

Pairs: the real statements of ../shared/data (PolitiFact, LIAR test split; read there, never copied
into the repository), edited with a seeded `random.Random`. copy (same): case, spaces, punctuation,
a URL appended. light_edit (same): one or two of typos (words of 4+ letters, never a negation or a
number), halves swapped at ", "/" and ", hashtags, a "BREAKING:"-like prefix, emoji, caps.
paraphrase (same): "X said Y" / "According to X, Y", filler dropped, synonyms. negation: "is" /
"is not", "can" / "cannot", "does not cause" / "causes", "There is no evidence that ...".
changed_number: a number times ten ("2.5" -> "25" too), plus one or a digit dropped.
different_claim_same_topic: two statements sharing an issue, subject or author. unrelated: two
random statements.
"""


from __future__ import annotations

import csv
import itertools
import random
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from factcheck.matching.polarity import CONTRACTED, NEGATIONS
from factcheck.matching.similarity import NUMBER_WORDS
from factcheck.normalise import normalise_text

SEED = 20261203
PER_KIND = 300
KINDS = ("copy", "light_edit", "paraphrase", "negation", "changed_number", "changed_name", "changed_word",
         "different_claim_same_topic", "unrelated")
SAME = frozenset({"copy", "light_edit", "paraphrase"})
# Authors that are a platform, not a person: "same author" says nothing about the claim.
PLATFORM = re.compile(r"posts?$|viral|image|video|social media|blog|email|meme|tweet", re.IGNORECASE)
QUOTES = "\"'“”‘’"


class Statement(NamedTuple):
    text: str
    topics: tuple[str, ...]  # PolitiFact issues, LIAR subjects
    author: str  # "" for a platform ("Facebook posts")


class Pair(NamedTuple):
    a: str
    b: str
    kind: str
    same: bool
    how: str  # the edits that made b from a


def load_statements(data_dir: Path) -> list[Statement]:
    """PolitiFact and LIAR statements, one per normalised text, in file order."""
    found: list[Statement] = []
    politifact, liar = data_dir / "politifact_claims.csv", data_dir / "liar_test.tsv"
    if politifact.exists():
        with politifact.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                author, topics = row["author_name"].strip(), tuple(t for t in row["issues"].split(";") if t)
                found.append(Statement(row["statement_text"], topics, "" if PLATFORM.search(author) else author))
    if liar.exists():
        with liar.open(newline="", encoding="utf-8") as f:
            for cols in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                if len(cols) > 4:
                    author = cols[4].strip().replace("-", " ").title()  # "rick-perry": "Rick Perry"
                    topics = tuple(f"liar:{t}" for t in cols[3].split(",") if t)
                    found.append(Statement(cols[2], topics, "" if PLATFORM.search(author) else author))
    unique: dict[str, Statement] = {}
    for text, topics, author in found:  # one line, quotes around it dropped
        text = " ".join(text.split())
        text = text[1:-1].strip() if len(text) > 1 and text[0] in QUOTES and text[-1] in QUOTES else text
        unique.setdefault(normalise_text(text), Statement(text, topics, author))
    return [statement for key, statement in unique.items() if key]


# Edits: each takes a text and the generator, returns the edited text or None when it does not apply.
Edit = Callable[[str, random.Random], "str | None"]
WORD4 = re.compile(r"\b[A-Za-z]{4,}\b")
PROTECTED = NEGATIONS | CONTRACTED | NUMBER_WORDS
END = re.compile(r"[.!?]+$")


def _pick(pattern: re.Pattern[str], text: str, rng: random.Random) -> re.Match[str] | None:
    matches = list(pattern.finditer(text))
    return rng.choice(matches) if matches else None


def _splice(text: str, match: re.Match[str], new: str) -> str:
    return text[: match.start()] + new + text[match.end() :]


def _one(pattern: str, new: Callable[[re.Match[str]], str]) -> Edit:
    """An edit that replaces one occurrence of `pattern`, chosen at random, by `new(match)`."""
    compiled = re.compile(pattern)
    return lambda text, rng: (m := _pick(compiled, text, rng)) and _splice(text, m, new(m))


def _typo(text: str, rng: random.Random) -> str | None:
    """A letter swapped, dropped or doubled inside a word of 4+ letters (its first and last letters stay)."""
    words = [m for m in WORD4.finditer(text) if m.group().lower() not in PROTECTED]
    if not words:
        return None
    match = rng.choice(words)
    word, i = match.group(), rng.randrange(1, len(match.group()) - 2)
    op = rng.choice(("swap", "drop", "double"))
    if op == "swap" and word[i] != word[i + 1]:
        new = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    else:
        new = word[:i] + word[i + 1 :] if op == "drop" else word[:i] + word[i] + word[i:]
    return None if new.lower() in NEGATIONS else _splice(text, match, new)


def _reorder(text: str, rng: random.Random) -> str | None:
    """The two halves around a ", " or " and " swapped, each of two words or more."""
    end = END.search(text)
    body, stop = (text[: end.start()], end.group()) if end else (text, "")
    cuts = [m for m in re.finditer(r", | and ", body)
            if min(len(body[: m.start()].split()), len(body[m.end() :].split())) > 1]
    cut = rng.choice(cuts) if cuts else None
    return f"{body[cut.end():]}{cut.group()}{body[:cut.start()]}{stop}" if cut else None


COPIES: dict[str, Edit] = {
    "exact": lambda t, r: t,
    "case": lambda t, r: t.lower(),
    "spaces": lambda t, r: re.sub(" ", lambda _: r.choice((" ", "  ", "\n", " \t")), t),
    "punctuation": lambda t, r: END.sub("", t.replace(",", "")) + r.choice(("!!!", "...", " ?!", "")),
    "url": lambda t, r: f"{t} https://t.co/{r.getrandbits(40):x}",
}
LIGHT_EDITS: dict[str, Edit] = {
    "typo": _typo,
    "typos": lambda t, r: (once := _typo(t, r)) and _typo(once, r),
    "reorder": _reorder,
    "hashtags": lambda t, r: t + r.choice((" #fakenews #share", " #viral", " #wakeup #truth")),
    "prefix": lambda t, r: r.choice(("BREAKING: ", "WOW!! ", "Share before they delete this: ")) + t,
    "emoji": lambda t, r: t + r.choice((" 😱😱", " 🙏", " 👇👇👇", " 🤔🤔")),
    "caps": lambda t, r: t.upper(),
}
FILLER = re.compile(r"\b(?:really|actually|just|very|literally|totally|simply|basically) ", re.IGNORECASE)
SYNONYMS = dict(pair for a, b in (
    ("says", "claims"), ("said", "claimed"), ("shows", "reveals"), ("showed", "revealed"), ("show", "reveal"),
    ("kids", "children"), ("buy", "purchase"), ("bought", "purchased"), ("big", "large"), ("nearly", "almost"),
    ("started", "began"), ("help", "assist"), ("photo", "picture"), ("video", "clip"), ("banned", "prohibited"),
    ("doctors", "physicians"), ("people", "folks"), ("huge", "enormous"), ("got", "received"), ("quit", "left"),
) for pair in ((a, b), (b, a)))
SYNONYM = re.compile(r"\b(?:" + "|".join(SYNONYMS) + r")\b")
SAYS = re.compile(r"^Says (?:that )?")  # LIAR's "Says ...": dropped where the statement follows "X said"


def _paraphrase(statement: Statement, rng: random.Random) -> tuple[str, str, str] | None:
    text, how = statement.text, []
    who = statement.author or rng.choice(("a viral post", "reports"))
    b = SYNONYM.sub(lambda m: SYNONYMS[m.group()] if rng.random() < 0.8 else m.group(), FILLER.sub("", text))
    if b != text:
        how.append("synonyms/filler")
    if rng.random() < 0.6 or not how:
        text, b = f"{who} said {SAYS.sub('', text)}", f"According to {who}, {SAYS.sub('', b)}"
        how.append("said/according to")
    return (text, b, "+".join(how)) if normalise_text(b) != normalise_text(text) else None


def _third_person(verb: str) -> str:
    if verb == "have":
        return "has"
    return verb + "es" if re.search(r"(?:s|sh|ch|x|z|o)$", verb) else re.sub(r"([^aeiou])y$", r"\1ie", verb) + "s"


NEGATE_INSERT: dict[str, Edit] = {
    "insert not": _one(r"\b(?:is|are|was|were|will|has|have|should)\b", lambda m: m.group() + " not"),
    "can -> cannot": _one(r"\bcan\b(?![’']t)", lambda m: "cannot"),
    "insert never": _one(r"\b(?:has|have|had)\b", lambda m: m.group() + " never"),
}
NEGATE_REMOVE: dict[str, Edit] = {
    "remove not": _one(r"\b(is|are|was|were|will|has|have|could|should|would) not\b", lambda m: m[1]),
    "remove n't": _one(r"\b(is|are|was|were|has|have|had|does|did|do)n[’']t\b", lambda m: m[1]),
    "does not X -> Xs": _one(r"\b(do|does) not ([a-z]+)", lambda m: _third_person(m[2]) if m[1] == "does" else m[2]),
}
NEGATE_PREFIX: dict[str, Edit] = {
    "no evidence that": lambda t, r: "There is no evidence that " + SAYS.sub("", t),
    "false that": lambda t, r: "It is false that " + SAYS.sub("", t),
}
NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def _change_number(text: str, rng: random.Random) -> tuple[str, str, str] | None:
    """The text, the text with one of its numbers changed, and how: times ten (a decimal's point moved
    right: "2.5" -> "25"), plus one (a year's only change), a digit dropped."""
    if not (match := _pick(NUMBER, text, rng)):
        return None
    written = match.group()
    whole, _, decimals = written.replace(",", "").partition(".")
    value = int(whole)
    ops = ("plus one",) if 1900 <= value <= 2100 and not decimals else ("times ten", "plus one", "drop a digit")
    op = rng.choice(ops[int(not float(written.replace(",", ""))) : 2 + (value >= 10 and not decimals)])  # 0 * 10 = 0
    if op == "times ten" and decimals:
        shown = (f"{value}{decimals[0]}".lstrip("0") or "0") + (f".{decimals[1:]}" if decimals[1:] else "")
    else:
        new = {"times ten": value * 10, "plus one": value + 1, "drop a digit": value // 10}[op]
        shown = (f"{new:,}" if "," in written else str(new)) + (f".{decimals}" if decimals else "")
    return text, _splice(text, match, shown), f"{op}: {written} -> {shown}"


NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})*")
CONTENT_WORD = re.compile(r"(?<= )[a-z]{5,}(?=[ .,])")


def _change_name(text: str, names: Sequence[str], rng: random.Random) -> tuple[str, str, str] | None:
    """Another claim about someone else: a name inside the text swapped for another statement's name."""
    if not (match := _pick(NAME, text, rng)):
        return None
    other = rng.choice(names)
    if other.split()[0].lower() in text.lower():
        return None
    return text, _splice(text, match, other), f"{match.group()} -> {other}"


def _change_word(text: str, words: Sequence[str], rng: random.Random) -> tuple[str, str, str] | None:
    """Another claim about something else: one content word swapped ("vaccines cause autism" / "asthma")."""
    if not (match := _pick(CONTENT_WORD, text, rng)):
        return None
    other = rng.choice(words)
    if other == match.group():
        return None
    return text, _splice(text, match, other), f"{match.group()} -> {other}"


def _edited(edits: dict[str, Edit], text: str, rng: random.Random, count: int) -> tuple[str, str] | None:
    """Up to `count` of `edits` that apply, tried in random order, and their names."""
    done, result = [], text
    for name in rng.sample(sorted(edits), len(edits)):
        if (edited := edits[name](result, rng)) and edited != result:
            done.append(name)
            result = edited
            if len(done) == count:
                break
    return (result, "+".join(done)) if done else None


Made = tuple[str, str, str] | None  # a, b, how


def build_pairs(statements: Sequence[Statement], *, per_kind: int = PER_KIND, seed: int = SEED) -> list[Pair]:
    """Up to `per_kind` pairs of each kind, the same ones for the same statements and seed."""
    rng = random.Random(seed)
    pairs: list[Pair] = []

    def fill(kind: str, make: Callable[[], Made]) -> None:  # per_kind pairs, or what 20 tries per pair make
        made = itertools.islice(filter(None, (make() for _ in range(per_kind * 20))), per_kind)
        pairs.extend(Pair(a, b, kind, kind in SAME, how) for a, b, how in made)

    def one(edits: dict[str, Edit], count: int, pool: Sequence[Statement] = statements) -> Made:
        text = rng.choice(pool).text
        return (text, *edited) if (edited := _edited(edits, text, rng, count)) else None

    # Half inserted in the text, a third removed from it (few statements have one: they repeat), a fifth a prefix.
    negated = [s for s in statements if any(edit(s.text, random.Random(0)) for edit in NEGATE_REMOVE.values())]
    families = ((NEGATE_INSERT, statements), (NEGATE_REMOVE, negated or statements), (NEGATE_PREFIX, statements))

    def negation() -> Made:
        edits, pool = rng.choices(families, (5, 3, 2))[0]
        return one(edits, 1, pool)

    by_topic: dict[str, list[Statement]] = defaultdict(list)
    for s in statements:
        for key in s.topics + ((f"author:{s.author}",) if s.author else ()):
            by_topic[key].append(s)
    topics = sorted(key for key, members in by_topic.items() if len(members) > 1)

    def same_topic() -> Made:
        topic = rng.choice(topics)
        a, b = rng.sample(by_topic[topic], 2)
        return a.text, b.text, topic

    def unrelated() -> Made:
        a, b = rng.sample(list(statements), 2)
        return a.text, b.text, "random"

    fill("copy", lambda: one(COPIES, 1))
    fill("light_edit", lambda: one(LIGHT_EDITS, rng.choice((1, 2))))
    fill("paraphrase", lambda: _paraphrase(rng.choice(statements), rng))
    fill("negation", negation)
    fill("changed_number", lambda: _change_number(rng.choice(statements).text, rng))
    names = sorted({m.group() for s in statements for m in NAME.finditer(s.text)})
    words = sorted({m.group() for s in statements for m in CONTENT_WORD.finditer(s.text)})
    fill("changed_name", lambda: _change_name(rng.choice(statements).text, names, rng))
    fill("changed_word", lambda: _change_word(rng.choice(statements).text, words, rng))
    if topics:
        fill("different_claim_same_topic", same_topic)
    fill("unrelated", unrelated)
    return pairs
