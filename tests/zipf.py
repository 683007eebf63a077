"""A corpus of random words with Zipf-like frequencies, for the tests of pruned top-k scoring."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import write_tree


def zipf_repo(root: Path, n_files: int, seed: int) -> tuple[Path, list[str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    files = {}
    for f in range(n_files):
        paragraphs = []
        for _ in range(rng.randint(1, 4)):
            paragraphs.append(" ".join(rng.choices(vocab, weights, k=rng.randint(5, 60))))
        files[f"doc{f:03d}.txt"] = "\n\n".join(paragraphs) + "\n"
    return write_tree(root, files), vocab


SCORINGS = pytest.mark.parametrize("scoring", ["tfidf", "bm25"])
