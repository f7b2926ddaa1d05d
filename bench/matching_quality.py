"""Quality of near-duplicate matching: does `factcheck.matching.similarity` join copies of one claim
automatically and keep different claims apart?

Measures: labelled pairs of posts (a, b, kind, same; bench/matching_pairs.py makes them from the real
statements of ../shared/data) go through the real pipeline (`normalised_fields`, `signatures_of`;
candidates share a band key or a text/URL key; then `judge`). Per kind: pairs auto-matched (automatic
judgement) and suggested (a judgement, not automatic); recall of automatic and of
automatic-or-suggested matching where the pair is one claim, false automatic matches and suggestions
where it is not; overall precision of automatic matching and recall on copy + light_edit.
Targets: precision >= 0.99, no negation auto-matched, recall >= 0.9 on copies and on light edits.
Features and band keys are computed once; each threshold re-runs `judge` on them, so what is
measured is what runs.

    .venv/bin/python -m bench.matching_quality [--auto 0.7 --suggest 0.4] [--examples 5]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from bench.matching_pairs import KINDS, SAME, Pair, build_pairs, load_statements
from factcheck.matching.signature import signatures_of
from factcheck.matching.similarity import Features, Judgement, features, judge
from factcheck.normalise import normalised_fields

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
RECALL_KINDS = ("copy", "light_edit")
SWEEP = tuple(round(0.5 + 0.05 * i, 2) for i in range(9))


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
    feats = [
        features(text=t, normalised_text=f[2], url_key=f[1], text_key=f[3])
        for t, f in zip(texts, fields, strict=True)  # one fields entry per text
    ]
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
        return [
            Figure(name="near-duplicate quality", value=None, unit="%", target="see issue 10", notes=[missing])
        ], missing
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
