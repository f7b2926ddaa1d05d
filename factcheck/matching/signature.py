"""Near-duplicate signatures: MinHash of a text's character 5-grams, cut into LSH bands.

Two texts whose 5-gram sets have Jaccard similarity s share at least one of `BANDS` band keys
with probability 1 - (1 - s^ROWS)^BANDS: about 0.996 at s = 0.8, 0.8 at s = 0.6 and 2 in a
million at s = 0.05 (unrelated posts). A post stores its band keys as one string
(`Post.signature`); factcheck.matching.candidates indexes them, so the candidates of a new post
are 12 index probes, whatever the number of posts.

Why 5-grams of characters, not words: a typo or an added hashtag changes a few 5-grams out of a
hundred but a whole word's worth of word shingles, and 5-grams are long enough that unrelated
texts share few of them (common words make 3-grams collide everywhere).

Hand-rolled with numpy instead of datasketch's MinHash: a whole ingest batch is hashed in a
handful of array operations (`minhashes` says what that bought) where datasketch applies every
permutation to every shingle, a post at a time. Pure functions, deterministic across processes
and machines: the hashes come from fixed constants and a fixed seed, never from Python's salted
`hash`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

GRAM = 5
BANDS = 12
ROWS = 4
PERMUTATIONS = BANDS * ROWS

_rng = np.random.default_rng(20261203)
# Mixes a band's four 32-bit values into one key.
_BAND_MIX = (_rng.integers(1, 2**63, size=ROWS, dtype=np.uint64) << np.uint64(1)) | np.uint64(1)
_GRAM_WEIGHTS = np.array([np.uint64(1) << np.uint64(8 * i) for i in range(GRAM)], dtype=np.uint64)
_SHIFT32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_EMPTY = np.uint32(0xFFFFFFFF)
# What an empty bin adds per step to the value it borrows (rotation densification).
_ROTATION = 0x9E3779B9


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: every input bit moves every output bit (uint64 in, uint64 out)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _grams(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every 5-gram of UTF-8 bytes of each text (padded with a space each side), packed into one
    integer, and the index of the text it came from. The whole batch at once: one buffer, one pass.
    A text shorter than three characters has no 5-gram (exact equality still matches it)."""
    encoded = [f" {text} ".encode() if text else b"" for text in texts]
    lengths = np.fromiter((len(e) for e in encoded), dtype=np.int64, count=len(encoded))
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8).astype(np.uint64)
    if len(data) < GRAM:
        return data[:0], lengths[:0]
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    end = len(data) - GRAM + 1
    packed = data[:end].copy()
    for i in range(1, GRAM):
        packed |= data[i : end + i] << np.uint64(8 * i)
    within = owner[:end] == owner[GRAM - 1 :]  # not straddling two texts
    return packed[within], owner[:end][within]


def minhashes(texts: Sequence[str]) -> np.ndarray:
    """(len(texts), PERMUTATIONS) uint32 minimums, one row per normalised text; all 0xFFFFFFFF for a
    text without 5-grams (no band key either: see `band_keys`).

    One-permutation hashing with rotation densification (Li, Owen and Zhang 2012; Shrivastava and
    Li 2014): each gram is hashed once, its hash picks one of PERMUTATIONS bins and the bin keeps its
    smallest value; a bin no gram fell into borrows the next non-empty bin's value. Two texts agree
    in a bin with probability close to their Jaccard similarity, as with PERMUTATIONS separate hash
    functions, at 1/PERMUTATIONS of the cost: 48 multiply-shift permutations per gram took 90 ms per
    1,000 bench posts, a text at a time; this takes about 8 ms.
    """
    result = np.full(len(texts) * PERMUTATIONS, _EMPTY, dtype=np.uint32)
    grams, owner = _grams(texts)
    if not len(grams):
        return result.reshape(len(texts), PERMUTATIONS)
    hashed = _mix(grams)
    bins = ((hashed >> _SHIFT32) % np.uint64(PERMUTATIONS)).astype(np.int64)
    np.minimum.at(result, owner * PERMUTATIONS + bins, (hashed & _LOW32).astype(np.uint32))
    result = result.reshape(len(texts), PERMUTATIONS)
    has_grams = (result != _EMPTY).any(axis=1)
    empty = (result == _EMPTY) & has_grams[:, None]
    step = 1
    while empty.any() and step < PERMUTATIONS:
        borrowed = np.roll(result, -step, axis=1)
        fill = empty & (borrowed != _EMPTY) & ~np.roll(empty, -step, axis=1)
        result[fill] = borrowed[fill] + np.uint32(step * _ROTATION & 0xFFFFFFFF)
        empty &= ~fill
        step += 1
    return result


def band_keys(signatures: np.ndarray) -> list[list[int]]:
    """Each text's BANDS keys: its ROWS minimums per band mixed into a signed 32-bit int (PostgreSQL int4),
    with the band's number mixed in so equal values in different bands are different keys."""
    rows = signatures.reshape(len(signatures), BANDS, ROWS).astype(np.uint64)
    mixed = (rows * _BAND_MIX).sum(axis=2, dtype=np.uint64) + (
        np.arange(BANDS, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    )
    keys = ((mixed >> _SHIFT32) ^ (mixed & np.uint64(0xFFFFFFFF))).astype(np.int64) - 2**31
    empty = (signatures == np.uint32(0xFFFFFFFF)).all(axis=1)
    return [[] if empty[i] else keys[i].tolist() for i in range(len(keys))]


def signatures_of(texts: Sequence[str]) -> list[str]:
    """What `Post.signature` stores for each normalised text: its band keys separated by spaces ("" for no text)."""
    return [" ".join(map(str, keys)) for keys in band_keys(minhashes(texts))]


def keys_of(signature: str) -> list[int]:
    return [int(key) for key in signature.split()]
