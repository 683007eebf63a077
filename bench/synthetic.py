"""A synthetic corpus of N chunks: Zipf-distributed words over the real corpora's vocabulary.

    python bench/synthetic.py 100000 --out /tmp/synth     # writes /tmp/synth/corpus-100000/

The vocabulary and its frequency ranks come from the shared corpora (every `[^\\W_]+` run of
the files our ingest reads, case kept, so identifiers still split as they would in code).
Words are drawn with P(rank r) ∝ 1 / r^s (s = 1 by default). Each paragraph has 40–80 words
wrapped at 12 words a line, paragraphs are separated by blank lines, 100 to a `.txt` file:
the paragraph chunker keeps such a paragraph as exactly one chunk (it merges only paragraphs
under 25 words and windows only those over 120), so the index has N chunks.

Generation is deterministic (file i is drawn from seed (SEED, i)) and resumable: files are
written atomically and existing ones are kept; a marker beside the corpus records that it is
complete, so a second run with the same parameters does nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import CORPORA, CORPUS_NAMES, require_corpora

PARAGRAPHS_PER_FILE = 100
FILES_PER_DIR = 1000
MIN_WORDS, MAX_WORDS = 40, 80
WORDS_PER_LINE = 12
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Spec:
    """What a synthetic corpus is; two corpora with equal specs are identical."""

    chunks: int
    seed: int = 1
    zipf_s: float = 1.0
    vocabulary: int = 0  # words in the vocabulary (all distinct words of the corpora)


def vocabulary(cache: Path | None = None) -> tuple[list[str], list[int]]:
    """Return the corpora's words, most frequent first, and their counts (cached as JSON)."""
    if cache is not None and cache.is_file():
        data = json.loads(cache.read_text())
        if data.get("corpora") == CORPUS_NAMES:
            return data["words"], data["counts"]
    require_corpora()
    from rag import walk

    counts: Counter[str] = Counter()
    for name in CORPUS_NAMES:
        for f in walk(CORPORA / name).files:
            with open(f.abspath, "rb") as fh:
                counts.update(_WORD.findall(fh.read().decode("utf-8", "replace")))
    ranked = sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))
    words, freqs = [w for w, _ in ranked], [c for _, c in ranked]
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps({"corpora": CORPUS_NAMES, "words": words, "counts": freqs}))
        os.replace(tmp, cache)
    return words, freqs


def zipf_cdf(n_words: int, s: float) -> np.ndarray:
    """Return the cumulative distribution of P(rank r) ∝ 1 / r^s over ranks 1..n_words."""
    weights = 1.0 / np.arange(1, n_words + 1, dtype=np.float64) ** s
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def file_text(words: list[str], cdf: np.ndarray, seed: int, index: int, paragraphs: int) -> str:
    """Return the text of synthetic file `index`: `paragraphs` paragraphs of Zipf words."""
    rng = np.random.Generator(np.random.PCG64([seed, index]))
    lengths = rng.integers(MIN_WORDS, MAX_WORDS + 1, size=paragraphs)
    ranks = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right").tolist()
    out, pos = [], 0
    for n in lengths.tolist():
        para = [words[r] for r in ranks[pos : pos + n]]
        pos += n
        out.append("\n".join(" ".join(para[i : i + WORDS_PER_LINE]) for i in range(0, n, WORDS_PER_LINE)))
    return "\n\n".join(out) + "\n"


def file_path(root: Path, index: int) -> Path:
    """Return where synthetic file `index` lives under `root`."""
    return root / f"d{index // FILES_PER_DIR:03d}" / f"f{index:06d}.txt"


_worker: tuple[list[str], np.ndarray] | None = None


def _write_files(root: str, vocab_cache: str, s: float, seed: int, jobs: list[tuple[int, int]]) -> None:
    global _worker
    if _worker is None:
        words, _ = vocabulary(Path(vocab_cache))
        _worker = (words, zipf_cdf(len(words), s))
    words, cdf = _worker
    for index, paragraphs in jobs:
        path = file_path(Path(root), index)
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(file_text(words, cdf, seed, index, paragraphs))
        os.replace(tmp, path)


def generate(chunks: int, out: Path, seed: int = 1, zipf_s: float = 1.0, workers: int | None = None) -> Path:
    """Write (or finish writing) a corpus of `chunks` paragraphs under out/corpus-<chunks>/; return it."""
    vocab_cache = out / "vocabulary.json"
    words, _ = vocabulary(vocab_cache)
    spec = asdict(Spec(chunks, seed, zipf_s, len(words)))
    root = out / f"corpus-{chunks}"
    marker = out / f"corpus-{chunks}.json"  # {"spec": ..., "complete": bool}, written before any file
    try:
        state = json.loads(marker.read_text())
    except (OSError, ValueError):
        state = None
    if state is not None and state.get("spec") == spec:
        if state.get("complete") and root.is_dir():
            return root
    elif root.exists():  # another spec's files, or files of unknown origin: start again
        shutil.rmtree(root)
    marker.write_text(json.dumps({"spec": spec, "complete": False}))
    n_files = -(-chunks // PARAGRAPHS_PER_FILE)
    plan = [(i, min(PARAGRAPHS_PER_FILE, chunks - i * PARAGRAPHS_PER_FILE)) for i in range(n_files)]
    batches = [plan[i : i + 50] for i in range(0, len(plan), 50)]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        done = pool.map(
            _write_files, *zip(*[(str(root), str(vocab_cache), zipf_s, seed, b) for b in batches])
        )
        for i, _ in enumerate(done, 1):
            if i % 20 == 0 or i == len(batches):
                print(
                    f"  generating {root.name}: {min(chunks, i * 50 * PARAGRAPHS_PER_FILE):,}/{chunks:,} chunks, "
                    f"{time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    marker.write_text(json.dumps({"spec": spec, "complete": True}))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chunks", type=int)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--zipf", type=float, default=1.0, help="exponent s of P(rank r) ∝ 1/r^s")
    args = parser.parse_args()
    root = generate(args.chunks, args.out, args.seed, args.zipf)
    words, counts = vocabulary(args.out / "vocabulary.json")
    size = sum(p.stat().st_size for p in root.rglob("*.txt"))
    print(
        f"{root}: {args.chunks:,} chunks, {size / 1e6:.1f} MB; vocabulary {len(words):,} words "
        f"(top: {', '.join(words[:8])})"
    )


if __name__ == "__main__":
    main()
