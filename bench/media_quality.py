"""Quality of media matching (issue 30): do copies of a photograph match it at FACTDESK_MEDIA_MATCH_DISTANCE,
and do unrelated images stay apart?

Every photograph scikit-image ships (bench/media_images.py says which) is copied through each transformation
of the issue, several variants each; every original and copy is hashed with the app's own code when it is
there (bench.media_images.hasher says which was used). A copy is matched, as factcheck.media decides, when its
PDQ is at most FACTDESK_MEDIA_MATCH_DISTANCE bits from its original's and both hashes have quality >= 50 (an
original under 50 is never matched by the app, and is left out of recall). False matches: every pair of images
of different originals (originals, their copies and `--media-generated` images the bench draws), under the
same rule. With PDQ's dihedral hashes (pdqhash.compute_dihedral) the query's 8 variants (rotations by 90
degrees, flips) are each compared and the least distance counts, for recall and for false matches alike.

    .venv/bin/python -m bench.media_quality
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from bench.media_images import TARGETED, TRANSFORMATIONS, dihedral, encode, generated_images, hasher, photographs
from bench.report import Figure

RECALL_TARGET = 0.9


@dataclass
class Hashed:
    origin: str  # the original's name; a generated image is its own origin
    transformation: str  # "" for an original or a generated image
    variant: str
    pdq: int
    quality: int
    flips: list[int] = field(default_factory=list)  # the 8 dihedral hashes, the image's own first


def _bytes(values: list[int]) -> np.ndarray:
    return np.frombuffer(b"".join(v.to_bytes(32, "big") for v in values), dtype=np.uint8).reshape(-1, 32)


_POPCOUNT = np.array([bin(n).count("1") for n in range(256)], dtype=np.uint16)


def distances(a: list[int], b: list[int]) -> np.ndarray:
    """Bits apart of every hash of `a` from every hash of `b`, as a len(a) x len(b) matrix."""
    x, y = _bytes(a), _bytes(b)
    return _POPCOUNT[x[:, None, :] ^ y[None, :, :]].sum(axis=2)


def hash_all(*, generated: int) -> tuple[dict[str, Hashed], list[Hashed], list[Hashed]]:
    """The originals (by name), their copies, and the generated unrelated images, hashed."""
    hash_bytes, _ = hasher()

    def hashed(origin: str, transformation: str, variant: str, data: bytes) -> Hashed:
        pdq, quality = hash_bytes(data)
        return Hashed(origin, transformation, variant, pdq, quality, dihedral(data))

    originals, copies = {}, []
    for name, image in photographs().items():
        originals[name] = hashed(name, "", "original", encode(image))
        for transformation, make in TRANSFORMATIONS.items():
            copies += [hashed(name, transformation, variant, data) for variant, data in make(image)]
    others = [hashed(f"generated-{n}", "", "generated", data) for n, data in enumerate(generated_images(generated))]
    return originals, copies, others


@dataclass
class Row:
    transformation: str
    variant: str  # "" for a transformation's total
    copies: int
    matched: int
    matched_dihedral: int
    low_quality: int  # copies under MIN_QUALITY (never matched)
    bits: list[int]
    missed: list[str] = field(default_factory=list)  # "photograph (variant, bits apart)" of copies not matched

    @property
    def recall(self) -> float:
        return self.matched / self.copies if self.copies else 0.0

    @property
    def recall_dihedral(self) -> float:
        return self.matched_dihedral / self.copies if self.copies else 0.0

    def cells(self) -> str:
        bits = sorted(self.bits)
        spread = f"{statistics.median(bits):.0f} / {bits[-1]}" if bits else "-"
        return (f"{self.copies} | {self.matched} | {self.recall:.3f} | {spread} | {self.low_quality} | "
                f"{self.recall_dihedral:.3f}")


def recall_rows(originals: dict[str, Hashed], copies: list[Hashed], *, threshold: int,
                min_quality: int) -> list[Row]:
    """Per transformation and per variant: copies of matchable originals, matched plain and with dihedral."""
    rows: dict[tuple[str, str], Row] = {}
    for copy in copies:
        original = originals[copy.origin]
        if original.quality < min_quality:
            continue
        bits = (copy.pdq ^ original.pdq).bit_count()
        least = min((flip ^ original.pdq).bit_count() for flip in copy.flips)
        fine = copy.quality >= min_quality
        for key in ((copy.transformation, ""), (copy.transformation, copy.variant)):
            row = rows.setdefault(key, Row(key[0], key[1], 0, 0, 0, 0, []))
            row.copies += 1
            row.matched += fine and bits <= threshold
            row.matched_dihedral += fine and least <= threshold
            row.low_quality += not fine
            row.bits.append(bits)
            if not (fine and bits <= threshold):
                row.missed.append(f"{copy.origin} ({copy.variant}, {bits} bits"
                                  + (f", quality {copy.quality})" if not fine else ")"))
    return list(rows.values())


@dataclass
class FalseMatches:
    pairs: int  # pairs of images of different origins, both matchable
    plain: list[tuple[Hashed, Hashed, int]]  # at most `threshold` bits apart
    dihedral: list[tuple[Hashed, Hashed, int]]  # the least of the first's 8 variants at most `threshold` apart
    least: int  # the least distance between two unrelated images
    least_dihedral: int
    apart: np.ndarray  # the distance of every unrelated pair, plain
    apart_dihedral: np.ndarray  # and through the dihedral hashes


def false_matches(images: list[Hashed], *, threshold: int, min_quality: int) -> FalseMatches:
    matchable = [h for h in images if h.quality >= min_quality]
    origin = np.array([h.origin for h in matchable])
    unrelated = origin[:, None] != origin[None, :]
    plain = distances([h.pdq for h in matchable], [h.pdq for h in matchable])
    least = np.full(plain.shape, 256)
    for k in range(8):  # the first image's k-th dihedral variant against the second's own hash
        least = np.minimum(least, distances([h.flips[k] for h in matchable], [h.pdq for h in matchable]))
    upper = np.triu(unrelated, 1)
    found = [(matchable[i], matchable[j], int(plain[i, j])) for i, j in zip(*np.nonzero(upper & (plain <= threshold)),
                                                                             strict=True)]
    # With dihedral queries the relation is not symmetric: each ordered pair counts once, either way round.
    both = np.minimum(least, least.T)
    found_dihedral = [(matchable[i], matchable[j], int(both[i, j]))
                      for i, j in zip(*np.nonzero(upper & (both <= threshold)), strict=True)]
    return FalseMatches(pairs=int(upper.sum()), plain=found, dihedral=found_dihedral,
                        least=int(plain[upper].min()), least_dihedral=int(both[upper].min()),
                        apart=plain[upper], apart_dihedral=both[upper])


SWEEP = (31, 36, 40, 44, 47)  # FACTDESK_MEDIA_MATCH_DISTANCE's default, and up to its largest allowed value


def sweep_markdown(originals: dict[str, Hashed], copies: list[Hashed], wrong: FalseMatches, *,
                   min_quality: int) -> str:
    """Recall per transformation and false matches at each distance of SWEEP, on the same hashes."""
    names = list(TRANSFORMATIONS)
    lines = ["| distance | " + " | ".join(names) + " | false matches | with dihedral |",
             "| ---: |" + " ---: |" * (len(names) + 2)]
    for threshold in SWEEP:
        totals = {r.transformation: r for r in recall_rows(originals, copies, threshold=threshold,
                                                           min_quality=min_quality) if not r.variant}
        false, false_dihedral = int((wrong.apart <= threshold).sum()), int((wrong.apart_dihedral <= threshold).sum())
        lines.append(f"| {threshold} | " + " | ".join(f"{totals[n].recall:.3f}" for n in names)
                     + f" | {false} | {false_dihedral} |")
    return "\n".join(lines)


def _pair_text(pair: tuple[Hashed, Hashed, int]) -> str:
    a, b, bits = pair

    def name(h: Hashed) -> str:
        return f"{h.origin} ({h.transformation}: {h.variant})" if h.transformation else h.origin

    return f"{name(a)} and {name(b)}, {bits} bits apart"


def media_quality_figures(*, threshold: int, min_quality: int, generated: int) -> tuple[list[Figure], str]:
    """The recall figures per transformation, the false matches, and the report's section."""
    started = time.perf_counter()
    originals, copies, others = hash_all(generated=generated)
    seconds = time.perf_counter() - started
    rows = recall_rows(originals, copies, threshold=threshold, min_quality=min_quality)
    totals = {r.transformation: r for r in rows if not r.variant}
    wrong = false_matches([*originals.values(), *copies, *others], threshold=threshold, min_quality=min_quality)
    skipped = [f"{h.origin} (quality {h.quality})" for h in originals.values() if h.quality < min_quality]
    _, how = hasher()
    common = (f"{len(originals) - len(skipped)} photographs of scikit-image (quality >= {min_quality}; left out as the "
              f"app would: {', '.join(skipped) or 'none'}); match: PDQ distance <= {threshold} and both qualities >= "
              f"{min_quality}; hashed by {how}.")
    figures = []
    photographs = len(originals) - len(skipped)
    for name, row in totals.items():
        targeted = name in TARGETED
        spread = row.cells().split(" | ")[3]
        figures.append(Figure(
            name=f"media recall: {name}", value=row.recall * 100, unit="%", informational=not targeted,
            target=f">= {RECALL_TARGET:.0%}" if targeted else "",
            passed=row.recall >= RECALL_TARGET if targeted else None,
            notes=[f"{row.matched} of {row.copies} copies matched their original ({row.copies // max(1, photographs)} "
                   f"variants a photograph); distance median / max {spread} bits; {row.low_quality} copies under "
                   f"quality {min_quality}; with the query's dihedral hashes {row.recall_dihedral:.3f}. {common}",
                   *([f"Missed: {', '.join(row.missed)}."] if row.missed and len(row.missed) <= 30 else [])]))
    figures.append(Figure(
        name="media false matches among unrelated images", value=len(wrong.plain), unit="pairs", target="0",
        passed=not wrong.plain,
        notes=[f"{wrong.pairs:,} pairs of images of different originals ({len(originals)} originals, {len(copies)} "
               f"copies, {len(others)} generated images, those of quality >= {min_quality}); the closest two are "
               f"{wrong.least} bits apart (the match distance is {threshold}).",
               *[f"False match: {_pair_text(p)}." for p in wrong.plain[:10]]]))
    for name in ("mirror", "small rotation (2-5 degrees)"):
        row = totals[name]
        figures.append(Figure(
            name=f"media recall with dihedral hashes: {name}", value=row.recall_dihedral * 100, unit="%",
            informational=True, floor=row.recall * 100, floor_name="the plain hash, same copies",
            notes=[f"The query's 8 dihedral hashes (pdqhash.compute_dihedral), the least distance to the original "
                   f"counting: {row.matched_dihedral} of {row.copies} copies, against {row.matched} with the plain "
                   "hash."]))
    figures.append(Figure(
        name="media false matches with dihedral queries", value=len(wrong.dihedral), unit="pairs", informational=True,
        notes=[f"The same {wrong.pairs:,} unrelated pairs, each compared through the 8 dihedral hashes of either "
               f"image; the closest two are {wrong.least_dihedral} bits apart.",
               *[f"False match: {_pair_text(p)}." for p in wrong.dihedral[:10]]]))
    section = "\n".join([
        f"{common} Hashing {len(originals) + len(copies) + len(others)} images took {seconds:.1f} s.", "",
        "| transformation | variant | copies | matched | recall | bits apart (median / max) | under quality "
        f"{min_quality} | recall with dihedral |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *[f"| {r.transformation} | {r.variant or '**all**'} | {r.cells()} |"
          for r in sorted(rows, key=lambda r: (list(TRANSFORMATIONS).index(r.transformation), r.variant != ""))],
        "", f"Unrelated pairs: {wrong.pairs:,}; false matches {len(wrong.plain)} (closest {wrong.least} bits), with "
        f"dihedral queries {len(wrong.dihedral)} (closest {wrong.least_dihedral} bits).",
        "", "Recall (plain hash) and false matches at other match distances (FACTDESK_MEDIA_MATCH_DISTANCE takes "
        "0 to 47), on the same hashes:", "", sweep_markdown(originals, copies, wrong, min_quality=min_quality),
    ])
    return figures, section


def main() -> int:
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django

    django.setup()
    from django.conf import settings

    from bench.report import summary
    from factcheck.media import MIN_QUALITY

    figures, section = media_quality_figures(threshold=settings.FACTDESK_MEDIA_MATCH_DISTANCE,
                                             min_quality=MIN_QUALITY, generated=200)

    class _Run:  # what summary() reads
        seconds = 0.0

    _Run.figures = figures
    print(summary(_Run), "", section, sep="\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
