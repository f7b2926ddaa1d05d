"""Quality of near-duplicate matching: does `factcheck.matching.similarity` join copies of one claim
automatically and keep different claims apart?

Measures: labelled pairs of posts (a, b, kind, same) go through the real pipeline (`normalised_fields`,
`signatures_of`; candidates share a band key or a text/URL key; then `judge`). Per kind: pairs
auto-matched (automatic judgement) and suggested (a judgement, not automatic); recall of automatic
and of automatic-or-suggested matching where the pair is one claim, false automatic matches and
suggestions where it is not; overall precision of automatic matching and recall on copy + light_edit.
Targets: precision >= 0.99, no negation auto-matched, recall >= 0.9 on copies and on light edits.

Pairs: the real statements of ../shared/data (PolitiFact, LIAR test split; read there, never copied
into the repository), edited with a seeded `random.Random`. copy (same): case, spaces, punctuation,
a URL appended. light_edit (same): one or two of typos (words of 4+ letters, never a negation or a
number), halves swapped at ", "/" and ", hashtags, a "BREAKING:"-like prefix, emoji, caps.
paraphrase (same): "X said Y" / "According to X, Y", filler dropped, synonyms. negation: "is" /
"is not", "can" / "cannot", "does not cause" / "causes", "There is no evidence that ...".
changed_number: a number times ten ("2.5" -> "25" too), plus one or a digit dropped.
different_claim_same_topic: two statements sharing an issue, subject or author. unrelated: two
random statements. Features and band keys are computed once; each threshold re-runs `judge` on
them, so what is measured is what runs.

    .venv/bin/python -m bench.matching_quality [--auto 0.7 --suggest 0.4] [--examples 5]
"""

from __future__ import annotations

import argparse
import csv
import itertools
import random
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from factcheck.matching.signature import signatures_of
from factcheck.matching.similarity import CONTRACTED, NEGATIONS, NUMBER_WORDS, Features, Judgement, features, judge
from factcheck.normalise import normalise_text, normalised_fields

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SEED = 20261203
PER_KIND = 300
KINDS = ("copy", "light_edit", "paraphrase", "negation", "changed_number", "changed_name", "changed_word",
         "different_claim_same_topic", "unrelated")
SAME = frozenset({"copy", "light_edit", "paraphrase"})
RECALL_KINDS = ("copy", "light_edit")
SWEEP = tuple(round(0.5 + 0.05 * i, 2) for i in range(9))
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


class Scored(NamedTuple):  # a pair with what the pipeline knows of its two posts
    pair: Pair
    a: Features
    b: Features
    candidate: bool  # a shared band key, or equal text or URL keys


def score_pairs(pairs: Sequence[Pair]) -> list[Scored]:
    """Normalised fields, features and band keys of every text, computed once, in one batch."""
    texts = [text for p in pairs for text in (p.a, p.b)]
    fields = [normalised_fields(url="", text=text) for text in texts]
    bands = [set(signature.split()) for signature in signatures_of([f[2] for f in fields])]
    feats = [features(text=t, normalised_text=f[2], url_key=f[1], text_key=f[3]) for t, f in zip(texts, fields)]
    scored = []
    for n, pair in enumerate(pairs):
        a, b = feats[2 * n], feats[2 * n + 1]
        equal_key = (a.text_key and a.text_key == b.text_key) or (a.url_key and a.url_key == b.url_key)
        scored.append(Scored(pair, a, b, bool(bands[2 * n] & bands[2 * n + 1]) or bool(equal_key)))
    return scored


class KindRow(NamedTuple):
    kind: str
    same: bool
    pairs: int
    candidates: int
    auto: int
    suggested: int

    @property
    def recall(self) -> float:
        return self.auto / self.pairs if self.pairs else 0.0


@dataclass
class QualityResult:
    auto: float
    suggest: float
    rows: list[KindRow]
    wrong: list[tuple[Pair, Judgement | None]]  # false automatic matches, then copies and light edits missed

    def row(self, kind: str) -> KindRow:
        return next((r for r in self.rows if r.kind == kind), KindRow(kind, kind in SAME, 0, 0, 0, 0))

    @property
    def precision(self) -> float:
        autos = sum(r.auto for r in self.rows)
        return sum(r.auto for r in self.rows if r.same) / autos if autos else 1.0

    @property
    def recall(self) -> float:
        rows = [self.row(kind) for kind in RECALL_KINDS]
        total = sum(r.pairs for r in rows)
        return sum(r.auto for r in rows) / total if total else 0.0

    def targets(self) -> list[tuple[str, bool]]:
        negation = self.row("negation").auto
        return [(f"precision {self.precision:.3f} >= 0.99", self.precision >= 0.99),
                (f"automatic negation matches {negation} == 0", negation == 0),
                *((f"recall {kind} {self.row(kind).recall:.3f} >= 0.9", self.row(kind).recall >= 0.9)
                  for kind in RECALL_KINDS)]

    def markdown(self) -> str:
        lines = [f"Near-duplicate matching at auto >= {self.auto}, suggest >= {self.suggest}", "",
                 "| kind | same claim | pairs | candidates | auto-matched | suggested | recall (auto) | "
                 "precision (auto) | recall (auto or suggest) | false auto | false suggest |",
                 "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in self.rows:
            either = (r.auto + r.suggested) / r.pairs
            cells = ([f"{r.recall:.3f}", "1.000" if r.auto else "-", f"{either:.3f}", "-", "-"] if r.same
                     else ["-", "-", "-", str(r.auto), str(r.suggested)])
            lines.append(f"| {r.kind} | {'yes' if r.same else 'no'} | {r.pairs} | {r.candidates} | {r.auto} | "
                         f"{r.suggested} | " + " | ".join(cells) + " |")
        lines += ["", f"Overall precision of automatic matching: {self.precision:.4f}; "
                  f"recall on copy + light_edit: {self.recall:.4f}", ""]
        return "\n".join(lines + [f"- [{'x' if ok else ' '}] {text}" for text, ok in self.targets()])

    def examples(self, per_kind: int) -> str:
        """Up to `per_kind` wrong pairs of each kind, with the judgement they got."""
        shown: dict[str, int] = defaultdict(int)
        lines = []
        for pair, j in self.wrong:
            shown[pair.kind] += 1
            if shown[pair.kind] <= per_kind:
                verdict = f"{j.method} {j.score:.3f} guard={j.guard or '-'}" if j else "no judgement"
                lines += [f"[{'MISSED' if pair.same else 'FALSE AUTO'} {pair.kind}: {pair.how}] {verdict}",
                          f"  a: {pair.a}", f"  b: {pair.b}"]
        return "\n".join(lines) or "(none)"


def _result(scored: Sequence[Scored], *, auto: float, suggest: float) -> QualityResult:
    counts = {kind: [0, 0, 0, 0] for kind in KINDS}  # pairs, candidates, auto-matched, suggested
    wrong: list[tuple[Pair, Judgement | None]] = []
    for s in scored:
        j = judge(s.a, s.b, auto=auto, suggest=suggest) if s.candidate else None
        automatic = bool(j and j.automatic)
        c = counts[s.pair.kind]
        c[0], c[1], c[2], c[3] = c[0] + 1, c[1] + s.candidate, c[2] + automatic, c[3] + bool(j and not automatic)
        if automatic != s.pair.same and (automatic or s.pair.kind in RECALL_KINDS):
            wrong.append((s.pair, j))
    wrong.sort(key=lambda w: w[0].same)  # false matches first
    rows = [KindRow(kind, kind in SAME, *c) for kind, c in counts.items() if c[0]]
    return QualityResult(auto=auto, suggest=suggest, rows=rows, wrong=wrong)


_SCORED: dict[Path, list[Scored]] = {}


def scored_pairs(data_dir: Path | None = None) -> list[Scored] | None:
    """The evaluation pairs of `data_dir`, built and scored once per process; None (and says so) without data."""
    data_dir = (data_dir or DEFAULT_DATA).resolve()
    if data_dir not in _SCORED:
        statements = load_statements(data_dir) if data_dir.is_dir() else []
        _SCORED[data_dir] = score_pairs(build_pairs(statements)) if statements else []
    if not _SCORED[data_dir]:
        print(f"No statements in {data_dir} (politifact_claims.csv, liar_test.tsv): nothing to evaluate.")
    return _SCORED[data_dir] or None


def evaluate(*, auto: float, suggest: float, data_dir: Path | None = None) -> QualityResult | None:
    """Per-kind counts and the totals at these thresholds; None when the data folder is absent."""
    scored = scored_pairs(data_dir)
    return _result(scored, auto=auto, suggest=suggest) if scored else None


SweepRow = tuple[float, float, float, float, int, int, int]  # as SWEEP_COLUMNS
SWEEP_COLUMNS = ("auto", "precision", "recall copy", "recall light_edit", "false auto negation",
                 "false auto changed_number", "false auto different_claim")


def sweep(*, suggest: float, autos: Sequence[float] = SWEEP, data_dir: Path | None = None) -> list[SweepRow] | None:
    """The headline figures (SWEEP_COLUMNS) at each automatic threshold, on the pairs built and scored once."""
    if not (scored := scored_pairs(data_dir)):
        return None
    results = [_result(scored, auto=auto, suggest=min(suggest, auto)) for auto in autos]
    return [(r.auto, r.precision, r.row("copy").recall, r.row("light_edit").recall, r.row("negation").auto,
             r.row("changed_number").auto, r.row("different_claim_same_topic").auto) for r in results]


def sweep_markdown(rows: Sequence[SweepRow]) -> str:
    lines = ["| " + " | ".join(SWEEP_COLUMNS) + " |", "|" + " ---: |" * len(SWEEP_COLUMNS)]
    lines += [f"| {r[0]:.2f} | {r[1]:.4f} | {r[2]:.3f} | {r[3]:.3f} | {r[4]} | {r[5]} | {r[6]} |" for r in rows]
    return "\n".join(lines)


def quality_figures(*, auto: float, suggest: float, data_dir: Path | None = None) -> tuple[list, str]:
    """The report's figures (precision overall and on negations, recall on copies and light edits, in
    percent) and its section (the per-kind table and the threshold sweep); `make bench` calls this."""
    from bench.report import Figure

    result = evaluate(auto=auto, suggest=suggest, data_dir=data_dir)
    if result is None:
        missing = "not measured: the labelled pairs are made from ../shared/data, which is absent here"
        return [Figure(name="near-duplicate quality", value=None, unit="%", target="see issue 10", notes=[missing])], missing
    negation = result.row("negation")
    rows = [
        ("automatic matching precision, all kinds", result.precision, 0.99),
        ("automatic matching precision on negations", 1.0 - negation.auto / max(negation.pairs, 1), 1.0),
        ("automatic matching recall on copies", result.row("copy").recall, 0.9),
        ("automatic matching recall on light edits", result.row("light_edit").recall, 0.9),
    ]
    figures = [
        Figure(name=name, value=value * 100, unit="%", target=f">= {target:.0%}", passed=value >= target,
               notes=[f"{len(result.rows)} kinds of labelled pairs from the PolitiFact and LIAR statements; auto >= "
                      f"{auto}, suggest >= {suggest}; the table is in 'Near-duplicate matching quality' below."])
        for name, value, target in rows
    ]
    section = "\n".join([
        result.markdown(), "", f"Sweep of the automatic threshold (suggest {suggest}):", "",
        sweep_markdown(sweep(suggest=suggest, data_dir=data_dir) or []),
    ])
    return figures, section


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.matching_quality", description=__doc__.split("\n\n")[0])
    parser.add_argument("--auto", type=float, default=0.7, help="automatic-match threshold")
    parser.add_argument("--suggest", type=float, default=0.4, help="suggestion threshold")
    parser.add_argument("--data-dir", type=Path, default=None, help=f"default {DEFAULT_DATA}")
    parser.add_argument("--examples", type=int, default=5, help="wrong pairs shown per kind")
    args = parser.parse_args(argv)
    if (result := evaluate(auto=args.auto, suggest=args.suggest, data_dir=args.data_dir)) is None:
        return 0
    print(result.markdown(), "", f"Sweep of the automatic threshold (suggest {args.suggest}):", "",
          sweep_markdown(sweep(suggest=args.suggest, data_dir=args.data_dir) or []), "",
          "False automatic matches, then missed copies and light edits:", result.examples(args.examples), sep="\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
