"""Write factcheck/semantic_centre.npy: the mean embedding of the labelled claims and their paraphrases and
translations in bench/semantic_pairs.tsv (English, German, French, Spanish), which factcheck.semantic takes away
from every embedding before it cuts LSH keys. Run `python -m bench.semantic_centre` after changing the encoder or
the labelled set; a new centre changes every key, so change factcheck.semantic.MODEL_NAME with it (every post is
embedded again)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

PAIRS = Path(__file__).with_name("semantic_pairs.tsv")


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from factcheck import semantic

    texts: set[str] = set()
    with PAIRS.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            texts.update((row["claim"], row["variant"]))
    vectors = semantic.embed([semantic.embeddable_text(text) for text in sorted(texts)])
    np.save(semantic.CENTRE_FILE, vectors.mean(axis=0).astype(np.float32))
    print(f"{semantic.CENTRE_FILE}: the mean of {len(texts)} texts' embeddings")


if __name__ == "__main__":
    main()
