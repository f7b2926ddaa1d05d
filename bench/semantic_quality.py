"""Semantic matching quality on bench/semantic_pairs.tsv (issue 31; `--only semantic`).

The labelled set: 60 real claims from ../shared/data (PolitiFact and LIAR statements), each with pairs
written for the bench: a paraphrase in English, translations into German, French and Spanish, a negated
variant, a number-changed variant where the claim has a number; and unrelated pairs: each claim with a real
claim sharing one of its topics, with one at random, and with another claim's translation. The file lives in
bench/ (the project's tests never read it); the real claims' own texts come from the file, not ../shared.

With the app's encoder (factcheck.semantic.embed), the cosine of every pair; then, at each candidate threshold,
precision and recall of suggestions for paraphrases and each language's translations against the unrelated
pairs of the same languages, how many negated and number-changed pairs would be suggested, and the guard
factcheck.matching.semantic gives each pair. Beside it, from all pairs of the real texts of ../shared/data
(almost all unrelated claims, a few rechecks of one claim), how many would be suggested per million pairs.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.report import Figure

PAIRS = Path(__file__).resolve().parent / "semantic_pairs.tsv"
THRESHOLDS = [round(0.5 + 0.05 * n, 2) for n in range(9)]  # 0.5 to 0.9
POSITIVE = ("paraphrase", "translation_de", "translation_fr", "translation_es")
LANGUAGE_OF = {"paraphrase": "en", "translation_de": "de", "translation_fr": "fr", "translation_es": "es"}
GUARDED = ("negated", "numbers")
TARGET_PRECISION = 0.95  # the suggestion threshold's floor on the labelled set, this bench's own bar


@dataclass(frozen=True)
class Pair:
    id: str
    kind: str
    claim: str
    claim_language: str
    variant: str
    variant_language: str
    cosine: float
    guard: str


def read_pairs(path: Path = PAIRS) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def guard_of(claim: str, variant: str, *, languages: tuple[str, str]) -> str:
    """The guard factcheck.matching.semantic shows on the pair ("" for none), or "missing" without the function."""
    try:
        from factcheck.matching.semantic import semantic_guard
    except ImportError:
        return "missing"
    from factcheck.matching.similarity import features
    from factcheck.normalise import normalise_text

    a, b = (features(text=t, normalised_text=normalise_text(t), url_key="", text_key="") for t in (claim, variant))
    return semantic_guard(a, b, languages=languages) or ""


def scored_pairs(rows: list[dict[str, str]]) -> list[Pair]:
    from factcheck import semantic

    claims = semantic.embed([semantic.embeddable_text(r["claim"]) for r in rows])
    variants = semantic.embed([semantic.embeddable_text(r["variant"]) for r in rows])
    # Rounded as a match records its score (factcheck.semantic.cosine).
    cosines = np.round((claims * variants).sum(axis=1), 4)
    return [Pair(id=r["id"], kind=r["kind"], claim=r["claim"], claim_language=r["claim_language"],
                 variant=r["variant"], variant_language=r["variant_language"], cosine=float(c),
                 guard=guard_of(r["claim"], r["variant"], languages=(r["claim_language"], r["variant_language"])))
            for r, c in zip(rows, cosines, strict=True)]


def rates(pairs: list[Pair], threshold: float) -> dict[str, tuple[float, float, int, int]]:
    """Per positive kind (and all together): (precision, recall, suggested, unrelated suggested) at `threshold`,
    against the unrelated pairs in the kind's language."""
    out = {}
    unrelated = [p for p in pairs if p.kind == "unrelated"]
    for kind in (*POSITIVE, "all"):
        positives = [p for p in pairs if p.kind in (POSITIVE if kind == "all" else (kind,))]
        negatives = unrelated if kind == "all" else [p for p in unrelated if p.variant_language == LANGUAGE_OF[kind]]
        hits = sum(p.cosine >= threshold for p in positives)
        false = sum(p.cosine >= threshold for p in negatives)
        precision = hits / (hits + false) if hits + false else 1.0
        out[kind] = (precision, hits / len(positives), hits, false)
    return out


def all_pairs_rates(vectors: np.ndarray) -> dict[float, float]:
    """Per threshold, the pairs of the real texts at or above it, per million pairs."""
    cosines = (vectors @ vectors.T)[np.triu_indices(len(vectors), 1)]
    return {t: float((cosines >= t).sum()) * 1e6 / len(cosines) for t in THRESHOLDS}


def choose_threshold(pairs: list[Pair]) -> float:
    """The threshold the measurement suggests: the lowest at which every language's precision on the labelled set
    reaches TARGET_PRECISION and no unrelated pair in the set is suggested, so recall is as high as precision
    allows. (The settled default is FACTDESK_SEMANTIC_SUGGEST; the report says when the two differ.)"""
    for t in THRESHOLDS:
        found = rates(pairs, t)
        if all(found[k][0] >= TARGET_PRECISION for k in POSITIVE) and found["all"][3] == 0:
            return t
    return THRESHOLDS[-1]


def _table(pairs: list[Pair], real_rates: dict[float, float] | None, chosen: float) -> list[str]:
    head = "| threshold | " + " | ".join(f"{k} P / R" for k in POSITIVE) + (
        " | unrelated suggested | negated suggested | number-changed suggested | real pairs per million |")
    lines = [head, "| " + " | ".join(["---"] * (len(POSITIVE) + 5)) + " |"]
    counts = Counter(p.kind for p in pairs)
    for t in THRESHOLDS:
        found = rates(pairs, t)
        cells = [f"{found[k][0]:.2f} / {found[k][1]:.2f}" for k in POSITIVE]
        guarded = [sum(p.cosine >= t for p in pairs if p.kind == k) for k in GUARDED]
        mark = " **(setting)**" if abs(t - chosen) < 1e-9 else ""
        lines.append(f"| {t:.2f}{mark} | " + " | ".join(cells) + f" | {found['all'][3]} of {counts['unrelated']} | "
                     f"{guarded[0]} of {counts['negated']} | {guarded[1]} of {counts['numbers']} | "
                     + (f"{real_rates[t]:,.1f}" if real_rates else "-") + " |")
    return lines


def _spread(pairs: list[Pair]) -> list[str]:
    lines = ["| kind | pairs | min | p10 | median | p90 | max |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for kind in (*POSITIVE, *GUARDED, "unrelated"):
        values = np.array([p.cosine for p in pairs if p.kind == kind])
        lines.append(f"| {kind} | {len(values)} | {values.min():.3f} | {np.percentile(values, 10):.3f} | "
                     f"{np.median(values):.3f} | {np.percentile(values, 90):.3f} | {values.max():.3f} |")
    return lines


def _guards(pairs: list[Pair], threshold: float) -> list[str]:
    lines = []
    for kind in GUARDED:
        shown = [p for p in pairs if p.kind == kind and p.cosine >= threshold]
        guards = Counter(p.guard or "no guard" for p in shown)
        lines.append(f"- {kind}: {len(shown)} of {sum(p.kind == kind for p in pairs)} suggested at {threshold:.2f}, "
                     "with the guard " + ", ".join(f"`{g}` {n}" for g, n in guards.most_common()) + ".")
        lines += [f"  - no guard, cosine {p.cosine:.3f} ({p.id}): \"{p.claim}\" / \"{p.variant}\""
                  for p in shown if not p.guard]
    positives = [p for p in pairs if p.kind in POSITIVE and p.cosine >= threshold]
    lines.append(f"- paraphrases and translations suggested at {threshold:.2f}: {len(positives)}, with the guard "
                 + ", ".join(f"`{g}` {n}" for g, n in Counter(p.guard or "no guard" for p in positives).most_common())
                 + " (a guard on a true pair warns the reviewer needlessly).")
    return lines


def semantic_quality_figures(*, threshold: float, real_vectors: np.ndarray | None = None,
                             path: Path = PAIRS) -> tuple[list[Figure], str]:
    pairs = scored_pairs(read_pairs(path))
    real_rates = all_pairs_rates(real_vectors) if real_vectors is not None and len(real_vectors) > 1 else None
    chosen = choose_threshold(pairs)
    at = rates(pairs, threshold)
    negated = [p for p in pairs if p.kind == "negated" and p.cosine >= threshold]
    unguarded = sum(not p.guard for p in negated)
    counts = Counter(p.kind for p in pairs)
    section = [
        f"bench/semantic_pairs.tsv: {len(pairs)} pairs of 60 real claims ("
        + ", ".join(f"{k} {n}" for k, n in counts.items()) + "). P / R: precision / recall of suggestions at the "
        "threshold, each kind against the unrelated pairs in its language (English: 120 pairs of two real claims, "
        "60 of them sharing a topic; German, French, Spanish: 20 each, a claim and another claim's translation). "
        "Real pairs per million: the pairs of all "
        + (f"{len(real_vectors):,} " if real_vectors is not None else "")
        + "real texts of ../shared/data at or above the threshold (nearly all unrelated claims; the few above "
        "0.8 are mostly rechecks of one claim).",
        "",
        *_table(pairs, real_rates, threshold),
        "",
        "Cosine of each kind of pair:",
        "",
        *_spread(pairs),
        "",
        f"Guards (factcheck.matching.semantic.semantic_guard) at FACTDESK_SEMANTIC_SUGGEST {threshold:.2f}:",
        "",
        *_guards(pairs, threshold),
        "",
        f"The rule's threshold (the lowest at which each language's precision is >= {TARGET_PRECISION} and no "
        f"unrelated pair of the set is suggested): {chosen:.2f}.",
    ]
    figures = [
        Figure(name=f"semantic suggestion precision at {threshold:.2f}, labelled pairs", value=at["all"][0] * 100,
               unit="%", target=f">= {TARGET_PRECISION:.0%}", passed=at["all"][0] >= TARGET_PRECISION,
               notes=[f"{at['all'][2]} paraphrases and translations and {at['all'][3]} unrelated pairs at or above "
                      f"{threshold:.2f}; per kind: " + "; ".join(f"{k} {at[k][0]:.2f}" for k in POSITIVE) + "."]),
        Figure(name=f"semantic suggestion recall at {threshold:.2f}, paraphrases and translations",
               value=at["all"][1] * 100, unit="%", informational=True,
               notes=["per kind: " + "; ".join(f"{k} {at[k][1]:.2f} ({at[k][2]} of {counts[k]})" for k in POSITIVE)
                      + "."]),
        Figure(name=f"negated pairs suggested at {threshold:.2f}, and without a guard", value=len(negated),
               unit=f"of {counts['negated']}", informational=True,
               notes=[f"{unguarded} of the {len(negated)} suggested carry no guard (listed in the section)."]),
    ]
    return figures, "\n".join(section)


if __name__ == "__main__":
    import os
    import sys

    import django

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.conf import settings

    found, text = semantic_quality_figures(threshold=settings.FACTDESK_SEMANTIC_SUGGEST)
    print(text)
